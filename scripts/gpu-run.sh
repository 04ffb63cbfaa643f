#!/usr/bin/env bash
# Runs on the lent GPU machine from the repository root, with .gpu/ carried there
# (make gpu-bundle). MODE=test runs the test binaries with PRISM_REQUIRE (logs, sanitizer);
# MODE=bench runs `prism bench $BENCH_ARGS` once (every device, with the vendor libraries:
# cuBLAS/cuFFT, and CLBlast/clFFT from .gpu/lib), scripts/vendor.py's PyTorch baselines, and
# renders both together (JSON, Markdown, HTML page, bar chart, rooflines); MODE=all does
# both. MODE=compare runs the same bench with an earlier build ($BEFORE, default
# .gpu/prism-before) and this one, in the order RUNS gives (default: before after before,
# so that the spread of one build against itself is measured too), and compares them.
# MODE=launch measures launch overheads (every device's, from a small bench) beside CuPy's
# and PyTorch's (scripts/launch.py). MODE=targets runs the memory-roof and launch targets
# in one call (below). MODE=gemm runs the tensor-core GEMM figures against cuBLASLt: every
# precision at 8192, the shape sweep, the launch ops, PyTorch's float8 and SDPA (below).
# MODE=tune runs prism tune over the GEMM tunables, then the bench with the winners (below).
# MODE=split runs the split suite over the GPUs and over a GPU with the CPU (below).
# MODE=profile runs Nsight Compute on one case's kernel and summarizes where its warps wait,
# instruction by instruction (scripts/ncu_stalls.py; below).
# Writes at most 8 files under $OUT per mode.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
MODE=${MODE:-all}
export PRISM_REQUIRE=${PRISM_REQUIRE:-cuda,opencl}
export POCL_WORK_GROUP_SPECIALIZATION=0 POCL_CACHE_DIR=/tmp/pocl-cache
# CLBlast and clFFT travel in .gpu/lib (make gpu-bundle); cuBLAS and cuFFT are on the loader path.
export PRISM_VENDOR_PATH=${PRISM_VENDOR_PATH:-$PWD/.gpu/lib}
# SQLite, which the binaries link, from the bundle where the machine has none; the results
# store comes back with the other files.
if ! ldconfig -p 2>/dev/null | grep -q libsqlite3.so.0; then
  export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib/link
fi
export PRISM_STORE=${PRISM_STORE:-$OUT/results.db}
BENCH_ARGS=${BENCH_ARGS:---all-devices --count 10 --vendor}
LAUNCH_ARGS=${LAUNCH_ARGS:---all-devices --ops stream/triad/float32 --sizes 1M --count 3}
status=0
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; echo "commit $(cat .gpu/COMMIT)"; date -u; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
echo "== prism devices"
.gpu/prism devices 2>&1
if [ "$MODE" = test ] || [ "$MODE" = all ]; then
  root=$PWD
  # TESTS names packages or package trees: "kernels" runs .gpu/kernels.test and every
  # .gpu/kernels-<package>.test, each in its package's directory (kernels-gemm: kernels/gemm);
  # one log per name.
  for t in ${TESTS:-cl cuda kernels}; do
    echo "== tests: $t (PRISM_REQUIRE=$PRISM_REQUIRE)"
    : > "$OUT/test-$t.log"
    rc=0
    for bin in .gpu/$t.test .gpu/$t-*.test; do
      [ -x "$bin" ] || continue
      name=$(basename "$bin" .test)
      (cd "${name//-//}" && "$root/$bin" -test.count=1 -test.v ${TEST_ARGS:-} 2>&1) | grep -v -E '^=== (RUN|PAUSE|CONT)' >> "$OUT/test-$t.log"
      r=${PIPESTATUS[0]}
      echo "$name: exit $r"
      [ "$r" = 0 ] || rc=$r
    done
    grep -E -- '^--- |^(ok|PASS|FAIL)' "$OUT/test-$t.log" | sort | uniq -c | sort -rn | head -20
    grep -B2 -A12 -- '--- FAIL' "$OUT/test-$t.log" | head -80
    [ "$rc" = 0 ] || status=1
  done
  # SANITIZE names the compute-sanitizer tools run over the whole suite on cuda:0 (TestOps,
  # small sizes, every variant; SANITIZE_RUN narrows it, as -test.run), API errors
  # included; one log, sanitizer.log, with the number of cases that ran.
  if [ -x .gpu/kernels-suite.test ] && command -v compute-sanitizer >/dev/null; then
    : > "$OUT/sanitizer.log"
    for tool in ${SANITIZE:-memcheck racecheck synccheck initcheck}; do
      echo "== compute-sanitizer --tool $tool kernels-suite.test -test.run TestOps/cuda:0" | tee -a "$OUT/sanitizer.log"
      log=/tmp/sanitizer-$tool.log
      (cd kernels/suite && PRISM_TEST_SIZE=small timeout "${SANITIZE_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --print-limit 100000 \
        "$root/.gpu/kernels-suite.test" -test.count=1 -test.v -test.run "${SANITIZE_RUN:-TestOps/cuda:0}" > "$log" 2>&1)
      r=$?
      # API errors by call, then every other finding. An API error is a finding too: Prism
      # makes no call it expects to fail.
      grep -o 'on CUDA API call to [A-Za-z_0-9]*' "$log" | sort | uniq -c >> "$OUT/sanitizer.log"
      grep -v -E 'on CUDA API call to|Saved host backtrace|Host Frame' "$log" | grep '^=========' | head -200 >> "$OUT/sanitizer.log"
      grep -E '^(--- FAIL|ok|PASS|FAIL)' "$log" | sort | uniq -c >> "$OUT/sanitizer.log"
      echo "$tool: $(grep -c -- '--- PASS' "$log") cases passed, $(grep -c -- '--- SKIP' "$log") skipped" >> "$OUT/sanitizer.log"
      findings=$(grep -E '^========= (Invalid|Uninitialized|Race|Barrier|Error|Warning)' "$log" | grep -v -E 'on CUDA API call to|SUMMARY' | wc -l)
      api=$(grep -c 'on CUDA API call to' "$log")
      echo "$tool: exit $r; $findings findings, $api API errors $(grep -o 'on CUDA API call to [A-Za-z_0-9]*' "$log" | sort | uniq -c | tr '\n' ' ') $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^(ok|PASS|FAIL)$' "$log" | tail -2 | tr '\n' ' ')"
      { [ "$r" = 0 ] && [ "$findings" = 0 ] && [ "$api" = 0 ]; } || status=1
    done
  fi
fi
if [ "$MODE" = bench ] || [ "$MODE" = all ]; then
  # A fresh kernel cache, so the first build of each device in the bench is cold.
  export PRISM_CACHE_DIR=$(mktemp -d)
  echo "== prism bench $BENCH_ARGS"
  .gpu/prism bench $BENCH_ARGS --json > "$OUT/bench.json" 2> /tmp/bench.err || status=1
  grep -v "^\S*: \[" /tmp/bench.err | tail -20
  reports="$OUT/bench.json"
  if [ "${VENDOR:-1}" = 1 ] && python3 -c "import torch" 2>/dev/null; then
    echo "== vendor baselines through PyTorch (scripts/vendor.py)"
    python3 .gpu/vendor.py --count 10 > "$OUT/vendor.json" || status=1
    reports="$reports $OUT/vendor.json"
  fi
  .gpu/prism report $reports > /tmp/bench.txt && cat /tmp/bench.txt
  .gpu/prism report $reports --markdown > "$OUT/bench.md" || status=1
  .gpu/prism report $reports --html "$OUT/bench.html" || status=1
  .gpu/prism plot $reports -o "$OUT/bench.png" || status=1
  .gpu/prism plot $reports -o "$OUT/roofline.png" --roofline || status=1
fi
if [ "$MODE" = launch ] || [ "$MODE" = all ]; then
  # Launch overheads: Prism's (the overheads of a bench report, every device) beside
  # CuPy's and PyTorch's, measured the same way (scripts/launch.py).
  echo "== launch overheads: prism bench $LAUNCH_ARGS"
  PRISM_CACHE_DIR=$(mktemp -d) .gpu/prism bench $LAUNCH_ARGS --json > "$OUT/launch.json" 2> /tmp/launch.err || status=1
  grep -v "^\S*: \[" /tmp/launch.err | tail -5
  .gpu/prism report "$OUT/launch.json" | head -40
  if command -v python3 >/dev/null; then
    python3 .gpu/launch.py > "$OUT/launch-vendor.json" || status=1
    cat "$OUT/launch-vendor.json"
  fi
fi
if [ "$MODE" = targets ]; then
  # The memory-roof and launch targets (docs/PERFORMANCE.md) in one call: every target case
  # on cuda:0 and NVIDIA's OpenCL with all its variants, the copy ceiling in each bench,
  # PyTorch's and CuPy's figures from the same call. Eight files: machine.txt,
  # targets-{roof,sort,ops,stencil}.json, vendor.json, launch-vendor.json, targets.txt.
  D=${TARGET_DEVICES:-cuda:0,opencl:1:0}
  export PRISM_CACHE_DIR=$(mktemp -d)
  bench() { # name, then prism bench arguments
    local name=$1; shift
    echo "== prism bench $* ($name)"
    timeout 300 .gpu/prism bench --variant all --count 10 --json -q "$@" > "$OUT/targets-$name.json" || status=1
  }
  bench roof --device "$D" --ops stream/triad/float32,stream/copy/float32,reduce/sum/float32,scan/inclusive/float32 --sizes 256M
  bench sort --device "${D%%,*}" --ops sort/pairs/uint32,sort/keys/uint32,stream/copy/float32 --sizes 16M,256M
  bench ops --device "$D" --ops launch,softmax,layernorm,attention/full/float32,attention/causal/float32,conv/3x3/float32,transpose,fft/c2c/float32,fft/batched/float32,fft/2d/float32,fft/r2c/float32,stream/copy/float32
  bench stencil --device "$D" --ops stencil/7pt,stencil/27pt,histogram/bins256,stream/copy/float32 --sizes 128M
  if python3 -c "import torch" 2>/dev/null; then
    echo "== vendor baselines through PyTorch (scripts/vendor.py)"
    python3 .gpu/vendor.py --count 10 --reduce-size 268435456 \
      --only fft/c2c,stream,reduce,scan,sort,softmax,layernorm,conv,attention/full/float32,attention/causal/float32 > "$OUT/vendor.json" || status=1
    python3 .gpu/launch.py > "$OUT/launch-vendor.json" || status=1
  fi
  : > "$OUT/targets.txt"
  for name in roof sort ops stencil; do
    reports="$OUT/targets-$name.json"
    [ -s "$OUT/vendor.json" ] && reports="$reports $OUT/vendor.json"
    .gpu/prism report $reports >> "$OUT/targets.txt" 2>&1 || status=1
  done
  cat "$OUT/targets.txt"
fi
if [ "$MODE" = gemm ]; then
  # The tensor-core GEMM figures in one call: every precision at 8192 against cuBLASLt (or
  # cuBLAS) with the tensor-core roofs, the shape sweep for SWEEP_PRECISIONS (default
  # bfloat16) against the same baselines, the launch ops (graphs), attention at head dims
  # 64, 128 and 256 (ATTN_SHAPES), and PyTorch's float8 and SDPA baselines (SDPA at the
  # attention shapes too). Eight files: machine.txt, gemm-8192.json, gemm-beta0.json (the
  # tensor-core GEMMs as D = alpha A B, which vendor.py's PyTorch figures pair with),
  # gemm-sweep.json, attention-shapes.json, launch.json, vendor.json, gemm.txt.
  export PRISM_CACHE_DIR=$(mktemp -d)
  D=${GEMM_DEVICE:-cuda:0}
  echo "== prism bench gemm 8192, every precision, --vendor"
  timeout 240 .gpu/prism bench --device "$D" --ops 'gemm/nn/,gemm/nt/float8e4m3,attention/full/bfloat16,attention/causal/bfloat16' \
    --sizes 64M --vendor --count 10 --json -q > "$OUT/gemm-8192.json" || status=1
  # The same GEMMs as D = alpha A B (beta 0, C not read): the op PyTorch's matmul and
  # _scaled_mm compute, so that vendor.py's figures meet their like.
  echo "== prism bench gemm 8192x8192x8192:beta=0, the tensor-core precisions, --vendor"
  timeout 150 .gpu/prism bench --device "$D" --ops 'gemm/nn/tf32,gemm/nn/float16,gemm/nn/bfloat16,gemm/nt/float8e4m3' \
    --shapes 8192x8192x8192:beta=0 --vendor --count 10 --json -q > "$OUT/gemm-beta0.json" || status=1
  echo "== prism bench gemm --shapes sweep (${SWEEP_PRECISIONS:-bfloat16})"
  timeout 300 .gpu/prism bench --device "$D" --ops gemm/nn --precision "${SWEEP_PRECISIONS:-bfloat16}" \
    --shapes sweep --vendor --count 5 --json -q > "$OUT/gemm-sweep.json" || status=1
  timeout 60 .gpu/prism bench --device "$D${LAUNCH_OPENCL:+,$LAUNCH_OPENCL}" --ops launch --count 10 --json -q > "$OUT/launch.json" || status=1
  # Attention at head dims 64, 128 and 256 (ATTN_SHAPES), full and causal, beside SDPA's
  # backends at the same shapes.
  AS=${ATTN_SHAPES:-4x32x4096x64,4x32x4096x128,4x32x4096x256}
  timeout 180 .gpu/prism bench --device "$D" --ops attention/full/bfloat16,attention/causal/bfloat16,attention/full/float16 \
    --shapes "$AS" --count 10 --json -q > "$OUT/attention-shapes.json" || status=1
  if python3 -c "import torch" 2>/dev/null; then
    python3 .gpu/vendor.py --count 10 --gemm-n 8192 --only gemm,attention --attention-shapes "$AS" > "$OUT/vendor.json" || status=1
  fi
  : > "$OUT/gemm.txt"
  for f in gemm-8192 gemm-beta0 gemm-sweep attention-shapes launch; do
    reports="$OUT/$f.json"
    [ -s "$OUT/vendor.json" ] && [ "$f" != launch ] && reports="$reports $OUT/vendor.json"
    .gpu/prism report $reports >> "$OUT/gemm.txt" 2>&1 || status=1
  done
  cat "$OUT/gemm.txt"
fi
if [ "$MODE" = tune ]; then
  # prism tune over the tunables of the GEMMs (8192), the wgmma attention (STAGES, SCHED;
  # batch 4, 32 heads, seq 4096, dim 128), onesweep (16M pairs) and the look-back scan
  # (2^28) (TUNE_OPS: op:variant:size), the winners saved for this call, each
  # op then benched against the vendor with its tuned set. Files: machine.txt, tune.txt,
  # tune-bench.json (every op's bench, merged), tune-bench.txt (and the store).
  export PRISM_CACHE_DIR=$(mktemp -d)
  : > "$OUT/tune.txt"
  # Each entry is op:variant:size.
  for ovs in ${TUNE_OPS:-gemm/nn/float16:cuda-wgmma:64M gemm/nn/bfloat16:cuda-wgmma:64M gemm/nt/float8e4m3:cuda-wgmma:64M gemm/nn/tf32:cuda-wgmma:64M gemm/nn/float64:cuda-mma:64M attention/full/bfloat16:cuda-wgmma:64M attention/causal/bfloat16:cuda-wgmma:64M sort/pairs/uint32:cuda-onesweep:16M scan/inclusive/float32:cuda-lookback:256M}; do
    op=${ovs%%:*} rest=${ovs#*:}; variant=${rest%%:*} size=${rest#*:}
    echo "== prism tune $op --variant $variant --size $size" | tee -a "$OUT/tune.txt"
    timeout 150 .gpu/prism tune "$op" --variant "$variant" --device "${GEMM_DEVICE:-cuda:0}" --size "$size" --count 10 >> "$OUT/tune.txt" 2>&1 || status=1
    timeout 120 .gpu/prism bench --device "${GEMM_DEVICE:-cuda:0}" --ops "$op" --sizes "$size" --vendor --count 10 --json -q > "/tmp/tune-bench-${op//\//-}.json" || status=1
  done
  grep -E "winner|==" "$OUT/tune.txt"
  # One report of all the ops (the files that come back are few).
  .gpu/prism report /tmp/tune-bench-*.json --json -o "$OUT/tune-bench.json" || status=1
  .gpu/prism report "$OUT/tune-bench.json" > "$OUT/tune-bench.txt" 2>&1 || status=1
  cat "$OUT/tune-bench.txt"
fi
if [ "$MODE" = split ]; then
  # The split suite with the planner's defaults (its plans checked by each split's second
  # run): every op that splits, on host and sharded data, over SPLIT_DEVICES (default every
  # CUDA GPU found) and over GPU+CPU (SPLIT_MIXED, default cuda:0 and the first PoCL
  # device), each against its devices alone. Files: machine.txt, split-gpus.json,
  # split-mixed.json, split.txt (both reports; a plan's summary says what its check found).
  export PRISM_CACHE_DIR=$(mktemp -d)
  gpus=${SPLIT_DEVICES:-$(.gpu/prism devices 2>/dev/null | grep -o '^ *cuda:[0-9]*' | tr -d ' ' | paste -sd, -)}
  pocl=$(.gpu/prism devices 2>/dev/null | grep -i -m1 'portable computing\|pthread\|cpu' | grep -o 'opencl:[0-9]*:[0-9]*' | head -1)
  mixed=${SPLIT_MIXED:-cuda:0${pocl:+,$pocl}}
  : > "$OUT/split.txt"
  for set in "gpus:$gpus" "mixed:$mixed"; do
    name=${set%%:*} devs=${set#*:}
    case "$devs" in *,*) ;; *) echo "== split-$name: one device ($devs), nothing to split" | tee -a "$OUT/split.txt"; continue ;; esac
    echo "== prism bench --split --device $devs ${SPLIT_ARGS:---count 10}" | tee -a "$OUT/split.txt"
    timeout "${SPLIT_TIMEOUT:-250}" .gpu/prism bench --split --device "$devs" ${SPLIT_ARGS:---count 10} --json -q > "$OUT/split-$name.json" || status=1
    .gpu/prism report "$OUT/split-$name.json" --wide >> "$OUT/split.txt" 2>&1 || status=1
  done
  cat "$OUT/split.txt"
fi
if [ "$MODE" = compare ]; then
  BEFORE=${BEFORE:-.gpu/prism-before}
  COMPARE_ARGS=${COMPARE_ARGS:---device cuda:0 --count 10}
  i=0
  for run in ${RUNS:-before after before}; do
    i=$((i+1)); bin=.gpu/prism; [ "$run" = before ] && bin=$BEFORE
    echo "== $i: $run: $bin bench $COMPARE_ARGS"
    PRISM_CACHE_DIR=$(mktemp -d) "$bin" bench $COMPARE_ARGS --json > "$OUT/$i-$run.json" 2> /tmp/compare.err || status=1
    grep -v "^\S*: \[" /tmp/compare.err | tail -5
  done
  first=$(ls "$OUT"/1-*.json) second=$(ls "$OUT"/2-*.json)
  .gpu/prism compare "$first" "$second" > "$OUT/compare.txt"; tail -3 "$OUT/compare.txt"
  if [ -f "$OUT/3-before.json" ]; then
    echo "== the same build twice (1 against 3: the spread)" >> "$OUT/compare.txt"
    .gpu/prism compare "$first" "$OUT/3-before.json" >> "$OUT/compare.txt"; tail -2 "$OUT/compare.txt"
  fi
fi
if [ "$MODE" = profile ]; then
  # Nsight Compute on the first launch of one kernel: PROFILE_ARGS are prism bench's
  # (default the wgmma attention, full bfloat16, on cuda:0), PROFILE_KERNEL the kernel's
  # name as a regular expression (default attention_wgmma); the speed-of-light, warp-state,
  # source-counter, launch and occupancy sections. Files: machine.txt, profile.ncu-rep,
  # profile.txt (every section's details) and profile-stalls.txt (scripts/ncu_stalls.py:
  # the warp stall samples by opcode, by reason and the hottest SASS instructions).
  export PRISM_CACHE_DIR=$(mktemp -d)
  args=${PROFILE_ARGS:---device cuda:0 --ops attention/full/bfloat16 --variant cuda-wgmma --sizes 64M}
  echo "== ncu -k regex:${PROFILE_KERNEL:-attention_wgmma} prism bench $args"
  timeout "${PROFILE_TIMEOUT:-300}" ncu --section SpeedOfLight --section WarpStateStats --section SourceCounters \
    --section LaunchStats --section Occupancy -k "regex:${PROFILE_KERNEL:-attention_wgmma}" -c 1 -f -o "$OUT/profile" \
    .gpu/prism bench $args --count 1 --warmup 0 > /tmp/profile-run.txt 2>&1 || status=1
  if [ -f "$OUT/profile.ncu-rep" ]; then
    ncu --import "$OUT/profile.ncu-rep" --print-details all > "$OUT/profile.txt" 2>&1 || status=1
    ncu --import "$OUT/profile.ncu-rep" --page source --csv --print-source sass > /tmp/profile-sass.csv 2>&1 || status=1
    python3 .gpu/ncu_stalls.py /tmp/profile-sass.csv --title "ncu -k regex:${PROFILE_KERNEL:-attention_wgmma} prism bench $args (commit $(cat .gpu/COMMIT))" \
      > "$OUT/profile-stalls.txt" || status=1
    head -45 "$OUT/profile-stalls.txt"
  else
    echo "no profile written: the kernel did not run, or ncu failed"; tail -20 /tmp/profile-run.txt; status=1
  fi
fi
exit $status
