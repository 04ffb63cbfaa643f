"""The bus bandwidth torch.distributed (NCCL) reaches for all-reduce, all-gather,
reduce-scatter and broadcast on the GPUs of this machine, timed as nccl-tests and `prism
bench --ops collective/*` time them: one process per GPU, each collective verified once,
then the median over --count runs of the host time of one collective and a synchronize,
after a barrier, on every rank; a case's time is the mean of the ranks' medians, as
nccl-tests averages its ranks' times (rank 0's alone would time a broadcast's root, done
once it has sent). Prism's one process driving every GPU times the collective and the
finish of all of them. Sizes are elements of each rank's send buffer, as prism bench's --sizes
(for reduce-scatter: of each rank's received part). Bytes are nccl-tests' "size": each
rank's send buffer for all-reduce and broadcast, the gathered buffer for all-gather, the
send buffer for reduce-scatter; all-reduce and broadcast run in place (torch.distributed has
no other form; `prism bench --in-place` times Prism's alike); bus bandwidth = bytes / time x 2(n-1)/n for all-reduce,
(n-1)/n for all-gather and reduce-scatter, 1 for broadcast. NVLink multicast (NVLS) is
left off, as Prism leaves it.

Usage (on a machine with 2+ GPUs and PyTorch):
  python3 scripts/collective.py [--sizes 16M,256M] [--count 20] [--kinds all-reduce,...] > torch.json
  python3 scripts/collective.py --compare prism.json torch.json   # Markdown table of the ratios
  python3 scripts/collective.py --compare p1.json,p2.json t1.json,t2.json  # rounds run in turn: medians
where prism.json is `prism bench --ops collective/... --json` at the same sizes.
"""
import argparse
import json
import os
import statistics
import sys
import time

torch = dist = None  # imported by load_torch: --compare runs without PyTorch


def load_torch():
    global torch, dist
    import torch
    import torch.distributed as dist


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)


KINDS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast")


def setup(kind, n, rank, world):
    """The buffers, the call, nccl-tests' bytes and bus factor, and the check of one kind."""
    x = torch.full((n,), float(rank + 1), device="cuda", dtype=torch.float32)
    if kind == "all-reduce":
        def run():
            dist.all_reduce(x)
        def check():
            return bool((x == world * (world + 1) / 2).all())
        def reset():
            x.fill_(float(rank + 1))
        return run, check, reset, n * 4, 2 * (world - 1) / world
    if kind == "all-gather":
        y = torch.empty(n * world, device="cuda", dtype=torch.float32)
        def run():
            dist.all_gather_into_tensor(y, x)
        def check():
            want = torch.arange(1, world + 1, device="cuda", dtype=torch.float32).repeat_interleave(n)
            return bool((y == want).all())
        return run, check, lambda: None, n * world * 4, (world - 1) / world
    if kind == "reduce-scatter":
        big = torch.full((n * world,), float(rank + 1), device="cuda", dtype=torch.float32)
        y = torch.empty(n, device="cuda", dtype=torch.float32)
        def run():
            dist.reduce_scatter_tensor(y, big)
        def check():
            return bool((y == world * (world + 1) / 2).all())
        return run, check, lambda: None, n * world * 4, (world - 1) / world
    # broadcast from rank 0
    def run():
        dist.broadcast(x, src=0)
    def check():
        return bool((x == 1.0).all())
    return run, check, lambda: x.fill_(float(rank + 1)), n * 4, 1.0


def worker(rank, world, port, sizes, kinds, count, warmup, out):
    load_torch()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    library = f"torch.distributed {torch.__version__} NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}"
    results = []
    for kind in kinds:
        for n in sizes:
            run, check, reset, nbytes, factor = setup(kind, n, rank, world)
            run()
            torch.cuda.synchronize()
            ok = check()
            reset()
            for _ in range(warmup):
                run()
            torch.cuda.synchronize()
            times = []
            for _ in range(count):
                dist.barrier()
                torch.cuda.synchronize()
                t0 = time.perf_counter_ns()
                run()
                torch.cuda.synchronize()
                times.append(time.perf_counter_ns() - t0)
            # Each rank's median, averaged over the ranks as nccl-tests averages its ranks'
            # times: rank 0 alone would time a broadcast's root, which is done when it has
            # sent, before the others have received.
            mine = torch.tensor([statistics.median(times)], dtype=torch.float64, device="cuda")
            every = [torch.empty_like(mine) for _ in range(world)]
            dist.all_gather(every, mine)
            per_rank = [float(x.item()) for x in every]
            med = sum(per_rank) / world
            algbw = nbytes / med  # bytes per ns = GB/s
            results.append({"case": f"collective/{kind}/float32", "count": n, "bytes": nbytes, "ranks": world,
                            "library": library, "median_ns": med, "rank_median_ns": per_rank, "algbw_gbs": algbw,
                            "busbw_gbs": algbw * factor, "verified": ok,
                            "in_place": kind in ("all-reduce", "broadcast")})
            del run, check, reset
            torch.cuda.empty_cache()
    if rank == 0:
        out.put(results)
    dist.destroy_process_group()


def human(nbytes):
    for unit, m in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= m and nbytes % m == 0:
            return f"{nbytes // m} {unit}"
    return f"{nbytes} B"


def compare(prism_paths, torch_paths):
    """Prints Prism's bus bandwidth beside torch.distributed's, case by case and size by size.
    Each argument is one report or several, comma-separated (rounds run in turn in one
    call): a side's figure is then the median over its rounds of each round's median, and
    the table says how many rounds each figure has and the range of the round ratios."""
    prism_rounds, torch_rounds = [], []
    for path in prism_paths.split(","):
        with open(path) as f:
            prism_rounds.append({(c["case"], c["count"]): c for c in json.load(f).get("collectives", [])})
    for path in torch_paths.split(","):
        with open(path) as f:
            torch_rounds.append({(c["case"], c["count"]): c for c in json.load(f)["collectives"]})
    keys = list(torch_rounds[0])
    print("| collective | bytes | Prism | torch.distributed | Prism busbw | torch busbw | ratio | rounds | round ratios |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    worst = None
    mismatched = set()
    for key in keys:
        ts = [r[key] for r in torch_rounds if key in r]
        ps = [r[key] for r in prism_rounds if key in r]
        bad = [p for p in ps if p.get("error") or not p.get("verified")]
        t0 = ts[0]
        if not ps or bad:
            print(f"| {key[0]} | {human(t0['bytes'])} | {'failed' if bad else 'not run'} | | | {t0['busbw_gbs']:.1f} | | | |")
            continue
        p_bw = statistics.median(p["busbw_gbs"] for p in ps)
        t_bw = statistics.median(t["busbw_gbs"] for t in ts)
        p_ns = statistics.median(p["stats"]["median_ns"] for p in ps)
        t_ns = statistics.median(t["median_ns"] for t in ts)
        if any(bool(p.get("in_place")) != bool(t0.get("in_place", key[0].split("/")[1] in ("all-reduce", "broadcast")))
               for p in ps):
            mismatched.add(key[0])
        ratio = p_bw / t_bw
        pairs = [p["busbw_gbs"] / t["busbw_gbs"] for p, t in zip(ps, ts)]
        worst = ratio if worst is None else min(worst, ratio)
        print(f"| {key[0]} | {human(t0['bytes'])} | {p_ns / 1e3:.1f} µs | {t_ns / 1e3:.1f} µs "
              f"| {p_bw:.1f} GB/s | {t_bw:.1f} GB/s | {ratio:.2f} | {len(ps)}/{len(ts)} | {min(pairs):.2f}-{max(pairs):.2f} |")
    if worst is not None:
        print(f"\nworst ratio of the medians: {worst:.2f}")
    if mismatched:
        print("\nnot like for like: " + ", ".join(sorted(mismatched)) + " ran in place on one side and out of place on the"
              " other (torch.distributed runs all-reduce and broadcast in place: give prism bench --in-place)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="16M,256M", help="elements per rank's send buffer, K/M/G suffixes")
    ap.add_argument("--kinds", default=",".join(KINDS), help="collectives to time, comma-separated")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--port", type=int, default=29531)
    ap.add_argument("--compare", nargs=2, metavar=("PRISM_JSON", "TORCH_JSON"), help="print the ratio table and exit (each a report or comma-separated rounds)")
    a = ap.parse_args()
    if a.compare:
        compare(*a.compare)
        return
    kinds = a.kinds.split(",")
    for k in kinds:
        if k not in KINDS:
            sys.exit(f"collective.py: unknown collective {k!r}; known: {', '.join(KINDS)}")
    load_torch()
    import torch.multiprocessing as mp
    world = torch.cuda.device_count()
    if world < 2:
        sys.exit("collective.py: needs two GPUs or more; found %d" % world)
    sizes = [parse_size(s) for s in a.sizes.split(",")]
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, world, a.port, sizes, kinds, a.count, a.warmup, q)) for r in range(world)]
    for p in procs:
        p.start()
    res = q.get()
    for p in procs:
        p.join()
    json.dump({"gpus": [torch.cuda.get_device_name(i) for i in range(world)], "collectives": res}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
