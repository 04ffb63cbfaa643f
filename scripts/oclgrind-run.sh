#!/usr/bin/env bash
# Runs one package's test binary (.cache/bin/<pkg with - for />.test, built by make
# test-bins) under Oclgrind at small sizes, from the repository root, and prints its result
# lines at once, so that two packages can run side by side (make oclgrind runs two at a
# time). Fails when a test fails or Oclgrind's log is not empty. cmd/prism runs only the
# OpenCL C corpus (TestCorpus), without --uninitialized: Oclgrind 21.10 crashes with it on
# a swizzle assigned from a swizzle (a.hi = a.lo.yx, in halves.cl).
set -uo pipefail
pkg=$1
root=$PWD
n=$(echo "$pkg" | tr / -)
log=$root/.cache/oclgrind/$n.log out=$root/.cache/oclgrind/$n.out
checks=(--check-api --data-races --uninitialized)
args=(-test.skip Split)
if [ "$pkg" = cmd/prism ]; then
  checks=(--check-api --data-races)
  args=(-test.run '^TestCorpus$')
fi
rm -f "$log"
start=$(date +%s)
(cd "$pkg" && PRISM_TEST_SIZE=small oclgrind "${checks[@]}" --log "$log" "$root/.cache/bin/$n.test" -test.count=1 -test.v "${args[@]}") > "$out" 2>&1
rc=$?
summary=$(echo "oclgrind: $pkg ($(( $(date +%s) - start )) s)"; grep -E '^\s*--- |^(ok|FAIL|PASS)' "$out")
if [ "$rc" != 0 ]; then
  summary+=$'\n'"oclgrind: $pkg failed (exit $rc):"$'\n'$(tail -40 "$out")
elif [ -s "$log" ]; then
  summary+=$'\n'"oclgrind reported errors in $pkg:"$'\n'$(head -50 "$log")
  rc=1
fi
printf '%s\n' "$summary"
exit "$rc"
