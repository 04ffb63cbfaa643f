#!/usr/bin/env bash
# Runs one package's test binary (.cache/bin/<pkg with - for />.test, built once by make
# test-bins) in the package's directory, as go test does, writing its whole output to
# $LOGDIR/<name>.out (default .cache/unit), and prints the package's result lines with its
# time at once, so that two packages can run side by side (make unit runs three at a time).
# Further arguments go to the binary (-test.run ...). Fails when the binary fails.
set -uo pipefail
pkg=$1; shift
root=$PWD
n=$(echo "$pkg" | tr / -)
[ "$pkg" = . ] && n=root
logdir=${LOGDIR:-$root/.cache/unit}
mkdir -p "$logdir"
out=$logdir/$n.out
bin=$root/.cache/bin/$n.test
if [ ! -x "$bin" ]; then
  echo "ok   $pkg (no test binary: no tests)"
  exit 0
fi
# The time line: wall, then CPU (user and system, the test's child processes included).
TIMEFORMAT='%0R s, %0U+%0S s CPU'
{ time { (cd "$pkg" && "$bin" -test.count=1 -test.v -test.timeout=30m "$@") > "$out" 2>&1; }; } 2> "$out.time"
rc=$?
took=$(cat "$out.time"); rm -f "$out.time"
if [ "$rc" = 0 ]; then
  echo "ok   $pkg (${took})"
else
  echo "FAIL $pkg (${took}, exit $rc):"
  grep -E -B2 -A20 -- '--- FAIL|^panic|^FAIL' "$out" | head -80
fi
exit "$rc"
