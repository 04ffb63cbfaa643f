"""Where a kernel's warps wait, instruction by instruction: a summary of Nsight Compute's
source page.

Nsight Compute samples each warp's program counter and the reason it did not issue (its
SourceCounters section). `ncu --import R.ncu-rep --page source --csv --print-source sass`
writes those samples for every SASS instruction of each profiled kernel, one CSV block a
kernel (a "Kernel Name" line, a header, a row an instruction). This script sums them three
ways for each kernel: by opcode (the predicate dropped: "@!P1 BRA" counts as BRA), by stall
reason, and the instructions with the most samples, in program order, with their two main
reasons. That is the view that shows, say, a branch a score in a softmax loop, or four NOPs
padding successive DMMAs, where the top-level metrics only say "stall wait" or "branch
resolving".

Usage (on the GPU machine, or anywhere with the CSV):
    ncu --section SourceCounters --section WarpStateStats -k regex:NAME -c 1 -o R prism bench ...
    ncu --import R.ncu-rep --page source --csv --print-source sass > R.csv
    python3 scripts/ncu_stalls.py R.csv [--top 20] [--title "what ran, at which commit"]
scripts/gpu-run.sh's MODE=profile does all three.
"""
import argparse
import csv
import io
import re
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
SOURCE = "Source"
EXECUTED = "Instructions Executed"
PREDICATE = re.compile(r"^@!?U?P[T0-9]+\s+")


class FormatError(Exception):
    """The input is not ncu's source page as CSV; the message says what is missing."""


def opcode(sass):
    """The instruction's opcode with its modifiers ("HGMMA.64x128x16.F32.BF16"), without a
    guard predicate ("@!P1 BRA 0x..." is "BRA")."""
    return PREDICATE.sub("", sass.strip()).split(" ")[0]


def number(cell):
    """A counter cell as an int: ncu writes "" or "-" where there is none, and may group
    thousands with commas."""
    cell = cell.strip().replace(",", "")
    if cell in ("", "-"):
        return 0
    try:
        return int(float(cell))
    except ValueError as e:
        raise FormatError(f"counter cell {cell!r} is not a number") from e


def kernels(text):
    """Splits the CSV text into (kernel name, header, rows) blocks. A block starts at a
    "Kernel Name" line; input without one is taken as one unnamed kernel."""
    blocks, name, header, rows = [], None, None, []
    for row in csv.reader(io.StringIO(text)):
        if not row or not any(c.strip() for c in row):
            continue
        if row[0] == "Kernel Name":
            if header is not None:
                blocks.append((name, header, rows))
            name, header, rows = (row[1] if len(row) > 1 else ""), None, []
        elif header is None:
            header = row
        else:
            rows.append(row)
    if header is not None:
        blocks.append((name, header, rows))
    if not blocks:
        raise FormatError("no CSV header found: is this `ncu --page source --csv --print-source sass` output?")
    return blocks


def summarize(name, header, rows, top=20):
    """The summary of one kernel's block as a dict: total samples, instructions, and the
    three tables (lists of tuples, largest first; the top instructions in program order)."""
    ix = {h: i for i, h in enumerate(header)}
    for col in (SOURCE, SAMPLES):
        if col not in ix:
            raise FormatError(f"kernel {name or '(unnamed)'}: no column {col!r} (was SourceCounters collected, "
                              "and the page printed with --print-source sass?)")
    reasons = [h for h in header if h.startswith("stall_") and "(Not Issued)" not in h]
    total = sum(number(r[ix[SAMPLES]]) for r in rows)
    by_op, by_reason = {}, {h: 0 for h in reasons}
    for r in rows:
        n = number(r[ix[SAMPLES]])
        op = opcode(r[ix[SOURCE]])
        by_op[op] = by_op.get(op, 0) + n
        for h in reasons:
            by_reason[h] += number(r[ix[h]])
    order = sorted(range(len(rows)), key=lambda i: -number(rows[i][ix[SAMPLES]]))[:top]
    hot = []
    for i in sorted(order):
        r = rows[i]
        main = sorted(((number(r[ix[h]]), h[len("stall_"):]) for h in reasons), reverse=True)[:2]
        hot.append((i, number(r[ix[SAMPLES]]), r[ix[SOURCE]].strip(),
                    number(r[ix[EXECUTED]]) if EXECUTED in ix else None, [m for m in main if m[0] > 0]))
    return {
        "kernel": name,
        "samples": total,
        "instructions": len(rows),
        "by_opcode": sorted(by_op.items(), key=lambda kv: (-kv[1], kv[0])),
        "by_reason": sorted(((h[len("stall_"):], v) for h, v in by_reason.items()), key=lambda kv: (-kv[1], kv[0])),
        "hot": hot,
    }


def share(n, total):
    return 100.0 * n / total if total else 0.0


def render(s, top=20):
    """The summary as text."""
    out = [f"kernel {s['kernel'] or '(unnamed)'}: {s['samples']} warp stall samples over {s['instructions']} SASS instructions"]
    out.append("\nsamples by opcode:")
    for op, n in s["by_opcode"][:top]:
        out.append(f"  {op:32s} {n:10d} {share(n, s['samples']):5.1f}%")
    out.append("\nsamples by reason:")
    for reason, n in s["by_reason"][:12]:
        if n:
            out.append(f"  {reason:20s} {n:10d} {share(n, s['samples']):5.1f}%")
    out.append(f"\nthe {len(s['hot'])} instructions with the most samples, in program order (index, samples, share, SASS, executed, main reasons):")
    for i, n, sass, executed, main in s["hot"]:
        why = ", ".join(f"{reason} {m}" for m, reason in main)
        ex = "" if executed is None else f" x{executed}"
        out.append(f"  {i:5d} {n:9d} {share(n, s['samples']):5.1f}%  {sass[:64]:64s}{ex}  [{why}]")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="ncu --page source --csv --print-source sass output ('-': standard input)")
    ap.add_argument("--top", type=int, default=20, help="opcodes and instructions listed (default 20)")
    ap.add_argument("--title", default="", help="a first line: what ran, where, at which commit")
    args = ap.parse_args(argv)
    if args.top < 1:
        ap.error(f"--top {args.top}: list at least one")
    try:
        text = sys.stdin.read() if args.csv == "-" else open(args.csv, encoding="utf-8", errors="replace").read()
    except OSError as e:
        print(f"ncu_stalls.py: {e}", file=sys.stderr)
        return 2
    try:
        blocks = kernels(text)
        parts = [render(summarize(*b, top=args.top), args.top) for b in blocks]
    except FormatError as e:
        print(f"ncu_stalls.py: {args.csv}: {e}", file=sys.stderr)
        return 2
    if args.title:
        print(args.title)
    print("\n".join(parts), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
