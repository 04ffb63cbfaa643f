#!/usr/bin/env bash
# Runs one package's test binary (.cache/bin/<pkg with - for />.test, built once by make
# test-bins) in the package's directory, as go test does, writing its whole output to
# $LOGDIR/<name>.out (default .cache/unit), and prints the package's result lines with its
# time at once, so that two packages can run side by side (make unit runs three at a time).
# Further arguments go to the binary (-test.run ...). Fails when the binary fails.
#
# PKG@K/M runs the K-th of M shards of the package's tests (its tests, examples and fuzz
# seeds as -test.list gives them, every M-th from the K-th: shard 1/2 the first, third, ...),
# logged as <name>@KofM.out, so that a package whose tests take long can run in two lanes.
set -uo pipefail
pkg=$1; shift
shard=
case $pkg in *@*/*) shard=${pkg#*@}; pkg=${pkg%@*} ;; esac
root=$PWD
n=$(echo "$pkg" | tr / -)
[ "$pkg" = . ] && n=root
logdir=${LOGDIR:-$root/.cache/unit}
mkdir -p "$logdir"
bin=$root/.cache/bin/$n.test
if [ ! -x "$bin" ]; then
  echo "ok   $pkg (no test binary: no tests)"
  exit 0
fi
if [ -n "$shard" ]; then
  k=${shard%/*} m=${shard#*/}
  n=$n@${k}of$m
  names=$(cd "$pkg" && "$bin" -test.list '.*' | grep -E '^(Test|Example|Fuzz)' | awk -v k="$k" -v m="$m" '(NR - 1) % m == k - 1' | paste -sd '|')
  if [ -z "$names" ]; then
    echo "ok   $pkg shard $shard (no tests in it)"
    exit 0
  fi
  set -- -test.run "^($names)\$" "$@"
fi
out=$logdir/$n.out
# The time line: wall, then CPU (user and system, the test's child processes included).
TIMEFORMAT='%0R s, %0U+%0S s CPU'
{ time { (cd "$pkg" && "$bin" -test.count=1 -test.v -test.timeout=30m "$@") > "$out" 2>&1; }; } 2> "$out.time"
rc=$?
took=$(cat "$out.time"); rm -f "$out.time"
if [ "$rc" = 0 ]; then
  echo "ok   $pkg${shard:+ @$shard} (${took})"
else
  echo "FAIL $pkg${shard:+ @$shard} (${took}, exit $rc):"
  grep -E -B2 -A20 -- '--- FAIL|^panic|^FAIL' "$out" | head -80
fi
exit "$rc"
