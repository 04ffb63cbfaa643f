#!/usr/bin/env bash
# gate-eval.sh: measures the regression gate of `prism check` on this machine.
#
#   false alarms  A/A: AA runs of one build and one command are recorded in a temporary
#                 store; every pair (i < j) is checked (prism check --run j --against i),
#                 and every series called a regression (or, counted apart, an improvement)
#                 is a false alarm.
#   detection     SLOW runs of the same command with a worse tunable of one kernel
#                 (SLOW_OP at SLOW_TUNABLES, through the tuning file prism bench reads),
#                 each checked as a report file against an A/A run in turn: the share of
#                 trials where SLOW_OP is called a regression. The slow runs alternate with
#                 the A/A runs, so that both see the same load; the slowdown they measure
#                 is printed beside the rate.
#
# Usage: scripts/gate-eval.sh            (about 5 minutes on PoCL; settings below, from the
#        environment: PRISM, DEVICE, OPS, SIZES, AA, SLOW, SLOW_OP, SLOW_TUNABLES, CHECK_FLAGS
#        for prism check's flags (--threshold, --alpha), KEEP=1 to keep the store)
# PRISM is best built with its commit (make build): the noise is learnt per build.
set -euo pipefail

PRISM=${PRISM:-bin/prism}
DEVICE=${DEVICE:-opencl:0:0}
OPS=${OPS:-stream/triad/float32,transpose/2d/float32,stencil/7pt/float32}
SIZES=${SIZES:-1M}
AA=${AA:-15}
SLOW=${SLOW:-20}
SLOW_OP=${SLOW_OP:-transpose/2d/float32}
SLOW_TUNABLES=${SLOW_TUNABLES:-TILE=64 WG=512 VEC=2}
CHECK_FLAGS=${CHECK_FLAGS:-}

command -v jq >/dev/null || { echo "gate-eval: needs jq" >&2; exit 1; }
PRISM=$(realpath "$PRISM")
work=$(mktemp -d)
if [[ -n ${KEEP:-} ]]; then
	echo "gate-eval: keeping the store and reports in $work (KEEP is set)" >&2
else
	trap 'rm -rf "$work"' EXIT
fi
# One environment for both kinds of run: the device's fingerprint is the same.
export PRISM_CACHE_DIR=$work/cache PRISM_STORE=$work/results.db
bench() { "$PRISM" bench --device "$DEVICE" --ops "$OPS" --sizes "$SIZES" -q "$@"; }

# The slow tunables: prism tune writes the device's tuning file, then it is edited to the
# worse set and moved aside; it is in place only during the slow runs.
"$PRISM" --no-store tune "$SLOW_OP" --device "$DEVICE" --count 1 >/dev/null 2>&1
tuned=$(ls "$PRISM_CACHE_DIR"/tuning/*.json)
jq --arg op "$SLOW_OP" --arg t "$SLOW_TUNABLES" '.entries |= map(select(.op == $op) | .tunables = $t)' "$tuned" >"$work/slow-tuning.json"
rm "$tuned"

echo "gate-eval: $(date -u +%FT%TZ), prism $("$PRISM" --version | sed -n 's/^commit: *//p'); load: $(uptime | sed 's/.*load/load/')"
echo "gate-eval: $AA A/A runs and $SLOW slow runs ($SLOW_OP at $SLOW_TUNABLES) of: bench --device $DEVICE --ops $OPS --sizes $SIZES"
bench --no-store >/dev/null # a first run builds the kernels into the cache: not counted
for ((i = 1; i <= AA || i <= SLOW; i++)); do
	if ((i <= AA)); then bench >/dev/null 2>>"$work/bench.log"; fi
	if ((i <= SLOW)); then
		cp "$work/slow-tuning.json" "$tuned"
		bench --no-store --json -o "$work/slow-$i.json"
		rm "$tuned"
	fi
	echo -n . >&2
done
echo >&2
echo "gate-eval: load after the runs: $(uptime | sed 's/.*load/load/')"

check() { "$PRISM" check $CHECK_FLAGS --json "$@"; }
# A/A: every pair of runs.
: >"$work/aa.jsonl"
for ((i = 1; i <= AA; i++)); do
	for ((j = i + 1; j <= AA; j++)); do
		check --against "$i" --run "$j" | jq -c '.series[]' >>"$work/aa.jsonl"
	done
done
# Detection: each slow run against an A/A run.
: >"$work/slow.jsonl"
for ((k = 1; k <= SLOW; k++)); do
	check --against $(((k - 1) % AA + 1)) --run "$work/slow-$k.json" | jq -c '.series[]' >>"$work/slow.jsonl"
done

jq -rs '
  def pct(a; b): if b == 0 then "-" else "\(100 * a / b | . * 10 | round / 10)%" end;
  (map(select(.verdict == "regression" or .verdict == "improvement" or .verdict == "no change"))) as $c
  | ($c | map(select(.verdict == "regression")) | length) as $r
  | ($c | map(select(.verdict == "improvement")) | length) as $i
  | "A/A: \($c | length) comparisons: \($r) regressions (false alarms \(pct($r; $c | length))), \($i) improvements (\(pct($i; $c | length)))",
    ($c | group_by(.case)[] | "  \(.[0].case): \(length) comparisons, \(map(select(.verdict == "regression")) | length) regressions, \(map(select(.verdict == "improvement")) | length) improvements, thresholds \(map(.threshold * 1000 | round / 10) | min)%..\(map(.threshold * 1000 | round / 10) | max)%, changes \(map(.change * 1000 | round / 10) | min)%..\(map(.change * 1000 | round / 10) | max)%")
' "$work/aa.jsonl"
jq -rs --arg op "$SLOW_OP" '
  def pct(a; b): if b == 0 then "-" else "\(100 * a / b | . * 10 | round / 10)%" end;
  (map(select(.case == $op and .change != null))) as $s
  | ($s | map(select(.verdict == "regression")) | length) as $d
  | ($s | map(.change) | sort | .[length / 2 | floor]) as $med
  | (map(select(.case != $op and .change != null))) as $o
  | "detection: \($op) at the slow tunables: \($d) of \($s | length) trials called a regression (\(pct($d; $s | length))); median change \($med * 1000 | round / 10)%, thresholds \($s | map(.threshold * 1000 | round / 10) | min)%..\($s | map(.threshold * 1000 | round / 10) | max)%",
    "  the other cases of the slow runs: \($o | length) comparisons, \($o | map(select(.verdict == "regression")) | length) regressions"
' "$work/slow.jsonl"
