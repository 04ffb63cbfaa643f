#!/usr/bin/env bash
# Runs on the lent GPU machine from the repository root, with .gpu/ carried there
# (make gpu-bundle). Writes at most 7 files (machine, devices.json, three test logs, bench.json, bench.txt) under $OUT (the device tool returns 8); the
# caller tees stdout into an eighth.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PRISM_REQUIRE=${PRISM_REQUIRE:-cuda,opencl}
export POCL_WORK_GROUP_SPECIALIZATION=0 POCL_CACHE_DIR=/tmp/pocl-cache
BENCH_ARGS=${BENCH_ARGS:---size 67108864 --count 20}
status=0
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; echo "commit $(cat .gpu/COMMIT)"; date -u; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
echo "== prism devices"
.gpu/prism devices 2>&1
.gpu/prism devices --json > "$OUT/devices.json"
for t in ${TESTS:-cl cuda kernels}; do
  echo "== tests: $t (PRISM_REQUIRE=$PRISM_REQUIRE)"
  (cd "$t" && ../.gpu/$t.test -test.count=1 -test.v 2>&1) | grep -v -E '^=== (RUN|PAUSE|CONT)' > "$OUT/test-$t.log"
  rc=${PIPESTATUS[0]}
  grep -E -- '^--- |^(ok|PASS|FAIL)' "$OUT/test-$t.log" | sort | uniq -c | sort -rn | head -40
  grep -B2 -A10 -- '--- FAIL' "$OUT/test-$t.log" | head -60
  [ "$rc" = 0 ] || status=1
done
if [ -x .gpu/cuda.test ] && command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer --tool memcheck cuda.test (conformance)"
  (cd cuda && compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 ../.gpu/cuda.test -test.count=1 -test.run 'Conformance' 2>&1 | tail -8)
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
# A fresh kernel cache, so the first build of each device in the bench is cold.
export PRISM_CACHE_DIR=$(mktemp -d)
echo "== prism bench $BENCH_ARGS"
.gpu/prism bench $BENCH_ARGS --json -q > "$OUT/bench.json" || status=1
.gpu/prism bench $BENCH_ARGS > "$OUT/bench.txt" 2>&1 || status=1
cat "$OUT/bench.txt" | grep -v '^\S*: \['
exit $status
