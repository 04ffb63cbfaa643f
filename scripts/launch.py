"""Launch overheads of the vendor stacks, measured as prism bench measures its own
(bench/overheads.go): an empty kernel enqueued 1000 times back to back, then one
synchronize (host time per launch, "async"), and the median of 200 launches each followed
by a synchronize ("round trip"). CuPy launches a RawKernel (NVRTC-compiled, raw
cuLaunchKernel under Python); PyTorch has no empty kernel, so it is timed on the smallest
one it has (a one-element fill). A CUDA graph of 100 empty kernels captured from a CuPy stream gives
the time per kernel in a graph ("cupy_graph"). Prints one JSON object.

Usage (on the GPU machine): python3 scripts/launch.py [--device N] > launch-vendor.json
"""
import argparse
import json
import statistics
import sys
import time


def measure(launch, sync, n=1000, rounds=200):
    for _ in range(20):
        launch()
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        launch()
    sync()
    async_ns = (time.perf_counter() - t0) / n * 1e9
    trips = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        launch()
        sync()
        trips.append((time.perf_counter() - t0) * 1e9)
    return {"launch_async_ns": round(async_ns), "launch_sync_ns": round(statistics.median(trips))}


def graph_per_kernel(cp, k, x, kernels=100, launches=200):
    """A CUDA graph of `kernels` empty kernels captured from a CuPy stream, launched
    `launches` times back to back, then one synchronize: host time per kernel, as prism
    bench times launch/graph."""
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        for _ in range(kernels):
            k((1,), (32,), (x,))
        g = s.end_capture()
    for _ in range(5):
        g.launch(s)
    s.synchronize()
    t0 = time.perf_counter()
    for _ in range(launches):
        g.launch(s)
    s.synchronize()
    per_graph = (time.perf_counter() - t0) / launches * 1e9
    return {"kernels": kernels, "graph_launch_ns": round(per_graph), "per_kernel_ns": round(per_graph / kernels)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", type=int, default=0)
    args = p.parse_args()
    out = {"device": args.device}
    try:
        import cupy as cp
        with cp.cuda.Device(args.device):
            k = cp.RawKernel(r'extern "C" __global__ void empty(float *x) {}', "empty")
            x = cp.zeros(1, dtype=cp.float32)
            out["cupy"] = measure(lambda: k((1,), (32,), (x,)), cp.cuda.Device(args.device).synchronize)
            out["cupy"]["version"] = cp.__version__
            out["cupy_graph"] = graph_per_kernel(cp, k, x)
    except Exception as e:  # the report says why a baseline is missing
        out["cupy_absent"] = repr(e)
    try:
        import torch
        dev = torch.device("cuda", args.device)
        t = torch.zeros(1, device=dev)
        out["torch_fill"] = measure(lambda: t.fill_(1.0), lambda: torch.cuda.synchronize(dev))
        out["torch_fill"]["version"] = torch.__version__
    except Exception as e:
        out["torch_absent"] = repr(e)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
