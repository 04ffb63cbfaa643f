#!/usr/bin/env bash
# Runs one package's test binary (.cache/bin/<pkg with - for />.test, built by make
# test-bins) under Oclgrind at small sizes, from the repository root, and prints its result
# lines at once, so that two packages can run side by side (make oclgrind runs two at a
# time). Fails when a test fails or Oclgrind reported anything (its log is not empty).
# cmd/prism runs only the OpenCL C corpus (TestCorpus), without --uninitialized: Oclgrind
# 21.10 crashes with it on a swizzle assigned from a swizzle (a.hi = a.lo.yx, in halves.cl).
# Further arguments replace the test binary's default ones (-test.skip Split).
#
# The log: Oclgrind 21.10 opens its --log file anew, truncating it, for every OpenCL context
# the process creates, so a plain file keeps only the reports made after the last context
# was created (the tests open many). So --log names a FIFO that cat copies into the log,
# kept open for writing here while the tests run: each reopening only adds a writer to the
# pipe, and every report reaches the log (test processes started by the tests, which
# inherit Oclgrind's environment, write there too). make oclgrind checks this first with a
# known report (cl's TestOclgrindReportKept: a race in a first context, then a second).
#
# A false report to know of: a buffer made after a smaller one was released can have the
# words past the smaller one's size reported uninitialized when a kernel reads them, even
# after another kernel wrote them (a kernel writing 93 words of a new buffer, a second
# reading them, after a Guarded buffer of 81 words was closed: the reads of words 81 to 92
# were reported, with the right values read back, with or without engine's pool). Code
# whose kernels pass data to each other through a buffer made per call meets it at random;
# sort_merge finds its tiles' inputs inside the kernel partly for that reason.
set -uo pipefail
pkg=$1; shift
root=$PWD
n=$(echo "$pkg" | tr / -)
log=$root/.cache/oclgrind/$n.log out=$root/.cache/oclgrind/$n.out
checks=(--check-api --data-races --uninitialized)
# Splits and sharded ops run the families' kernels, which their own tests run here; their
# planning, scatter and combining happen on the host (tested on PoCL and Rusticl).
args=(-test.skip 'Split|Sharded|PlanShares')
# A second pass, where set, runs more of the binary with checks2 and args2.
checks2=() args2=()
# second_pass SKIP TESTS: the tests TESTS (a -test.run pattern) run in the second pass,
# which checks the API, races and bounds, not initialization; the first skips them and SKIP.
second_pass() {
  args=(-test.skip "$1|$2")
  checks2=(--check-api --data-races) args2=(-test.run "$2")
}
# The initialization check (--uninitialized) costs two to three times the simulation of
# the other checks (kernels/sort: 109 s against 34, kernels/conv 59 against 20). Each
# family's kernels run with it in the tests that check them; tests that run the same
# kernels again (other precisions' loads, other tiles or shapes, the ops' set-up) take
# races and bounds alone, in the second pass.
case $pkg in
cmd/prism)
  checks=(--check-api --data-races)
  args=(-test.run '^TestCorpus$')
  ;;
kernels/gemm)
  # TestGEMM and TestCLMMAEmulated run gemm.cl and gemm_mma.cl with every check; the other
  # precisions' conversions (TestPrecisions), tilings (TestGEMMTiles), tuned set-ups and
  # skinny shapes through the ops (TestOpShapes) run the same kernels.
  second_pass 'Split|Sharded|PlanShares' '^(TestOpShapes|TestPrecisions|TestGEMMTiles|TestTunedSetup)$'
  ;;
kernels/conv)
  # TestConv and TestRegtile with every check; the register-tiled kernel again with small
  # work-groups and through its op.
  second_pass 'Split|Sharded|PlanShares' '^(TestRegtileSmallGroups|TestRegtileOp)$'
  ;;
kernels/attention)
  # The ops at shapes run the kernels that TestAttention and TestFlash check.
  second_pass 'Split|Sharded|PlanShares' '^TestOpsAtShapes$'
  ;;
kernels/suite)
  # TestOps takes each op's set-up and rotation through the families' kernels, which their
  # own tests run here with every check; races and bounds are checked here too, not
  # initialization, which more than doubles the simulation (15 s against 32).
  checks=(--check-api --data-races)
  ;;
cl)
  # Oclgrind 21.10 marks what a write from the host at a non-zero offset stores as
  # uninitialized (a Write at offset 5 after a whole upload: the kernel that then reads it
  # is reported, though its results check), and the conformance suite's host-buffer and
  # graph cases write at offsets on purpose.
  second_pass 'Split|Sharded' 'TestConformance/[^/]*/(HostBuffers|Graphs)$'
  ;;
kernels/elementwise)
  # TestShardedMap chains map_relu on the output of a map over data laid out in blocks, and
  # Oclgrind 21.10 reports the values map_relu reads there as uninitialized, though every
  # element checks bit for bit against the one-device op on PoCL and Rusticl (rows give no
  # report; the blocks are written whole since shard.Scatter puts each part together on
  # the host, which cleared reduce's and gemm's reports). Narrowed, not explained: the
  # reports need the memory pool (none with PRISM_POOL=off) and a second Device opened on
  # the same Oclgrind device (SplitDevices opens it twice) that recycles the blocks of the
  # one-device op's buffers at n=7 for the sharded case at n=257 (axpy alone, blocks of
  # 100, reproduces it; none when the one-device op runs on the first Device only).
  second_pass 'Split' 'TestShardedMap'
  ;;
esac
[ $# -gt 0 ] && { args=("$@"); checks2=(); }
rm -f "$log"
fifodir=$(mktemp -d) || exit 1
trap 'rm -rf "$fifodir"' EXIT
fifo=$fifodir/log
mkfifo "$fifo" || exit 1
cat "$fifo" > "$log" &
reader=$!
exec 3> "$fifo"  # the pipe's writer until the tests end: cat sees no end between contexts
start=$(date +%s)
(cd "$pkg" && PRISM_TEST_SIZE=small oclgrind "${checks[@]}" --log "$fifo" "$root/.cache/bin/$n.test" -test.count=1 -test.v "${args[@]}") > "$out" 2>&1
rc=$?
if [ "$rc" = 0 ] && [ ${#checks2[@]} -gt 0 ]; then
  (cd "$pkg" && PRISM_TEST_SIZE=small oclgrind "${checks2[@]}" --log "$fifo" "$root/.cache/bin/$n.test" -test.count=1 -test.v "${args2[@]}") >> "$out" 2>&1
  rc=$?
fi
exec 3>&-
wait "$reader"
summary=$(echo "oclgrind: $pkg ($(( $(date +%s) - start )) s)"; grep -E '^\s*--- |^(ok|FAIL|PASS)' "$out")
if [ "$rc" != 0 ]; then
  summary+=$'\n'"oclgrind: $pkg failed (exit $rc):"$'\n'$(tail -40 "$out")
elif [ -s "$log" ]; then
  summary+=$'\n'"oclgrind reported errors in $pkg:"$'\n'$(head -50 "$log")
  rc=1
fi
printf '%s\n' "$summary"
exit "$rc"
