#!/usr/bin/env bash
# Runs on the lent GPU machine from the repository root, with .gpu/ carried there
# (make gpu-bundle). Writes every log and report under $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PRISM_REQUIRE=${PRISM_REQUIRE:-opencl}
export POCL_WORK_GROUP_SPECIALIZATION=0 POCL_CACHE_DIR=/tmp/pocl-cache
status=0
step() { echo "== $*" | tee -a "$OUT/summary.txt"; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; git rev-parse HEAD 2>/dev/null; date -u; } > "$OUT/machine.txt" 2>&1
step "prism devices"
.gpu/prism devices 2>&1 | tee "$OUT/devices.txt"
.gpu/prism devices --json > "$OUT/devices.json" 2>&1
for t in ${TESTS:-cl kernels}; do
  step "tests: $t"
  (cd "$t" && ../.gpu/$t.test -test.count=1 -test.v 2>&1) | grep -v -E '^=== (RUN|PAUSE|CONT)' > "$OUT/test-$t.log"
  rc=${PIPESTATUS[0]}; tail -3 "$OUT/test-$t.log" | tee -a "$OUT/summary.txt"
  [ "$rc" = 0 ] || status=1
done
step "prism bench ${BENCH_ARGS:---size 67108864 --count 20}"
.gpu/prism bench ${BENCH_ARGS:---size 67108864 --count 20} --json > "$OUT/bench.json" 2> "$OUT/bench.err" || status=1
.gpu/prism bench ${BENCH_ARGS:---size 67108864 --count 20} -q 2>&1 | tee "$OUT/bench.txt" || status=1
exit $status
