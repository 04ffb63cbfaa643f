"""The bus bandwidth torch.distributed (NCCL) reaches for all-reduce and all-gather on
the GPUs of this machine, timed as nccl-tests and `prism bench --ops collective/*` time
them: one process per GPU, each collective verified once, then the median over --count
runs of the host time of one collective and a synchronize, after a barrier. Bus
bandwidth = bytes / time x 2(n-1)/n for all-reduce, (n-1)/n for all-gather; bytes are
each rank's send buffer for all-reduce, the gathered buffer for all-gather (nccl-tests'
"size"). NVLink multicast (NVLS) is left off, as Prism leaves it.

Usage (on a machine with 2+ GPUs and PyTorch): python3 scripts/collective.py [--sizes 16M,256M] [--count 20] > torch-collectives.json
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)


def worker(rank, world, port, sizes, count, warmup, out):
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    results = []
    for kind in ("all-reduce", "all-gather"):
        for n in sizes:
            x = torch.full((n,), float(rank + 1), device="cuda", dtype=torch.float32)
            if kind == "all-reduce":
                def run():
                    dist.all_reduce(x)
                nbytes, factor = n * 4, 2 * (world - 1) / world
            else:
                y = torch.empty(n * world, device="cuda", dtype=torch.float32)
                def run():
                    dist.all_gather_into_tensor(y, x)
                nbytes, factor = n * world * 4, (world - 1) / world
            run()
            torch.cuda.synchronize()
            if kind == "all-reduce":
                ok = bool((x == world * (world + 1) / 2).all())
                x.fill_(float(rank + 1))
            else:
                want = torch.arange(1, world + 1, device="cuda", dtype=torch.float32).repeat_interleave(n)
                ok = bool((y == want).all())
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
            med = statistics.median(times)
            algbw = nbytes / med  # bytes per ns = GB/s
            results.append({"case": f"collective/{kind}/float32", "count": n, "bytes": nbytes, "ranks": world,
                            "library": f"torch.distributed {torch.__version__} NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}",
                            "median_ns": med, "algbw_gbs": algbw, "busbw_gbs": algbw * factor, "verified": ok})
    if rank == 0:
        out.put(results)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="16M,256M", help="elements per rank's send buffer, K/M/G suffixes")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--port", type=int, default=29531)
    a = ap.parse_args()
    world = torch.cuda.device_count()
    if world < 2:
        sys.exit("collective.py: needs two GPUs or more; found %d" % world)
    sizes = [parse_size(s) for s in a.sizes.split(",")]
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, world, a.port, sizes, a.count, a.warmup, q)) for r in range(world)]
    for p in procs:
        p.start()
    res = q.get()
    for p in procs:
        p.join()
    json.dump({"gpus": [torch.cuda.get_device_name(i) for i in range(world)], "collectives": res}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
