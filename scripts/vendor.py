"""Times the vendor libraries (cuBLAS, cuFFT, CUB/Thrust through PyTorch) on the shapes of
Prism's default bench sizes, with CUDA events, so a Prism report can state its ratio to the
vendor library measured on the same machine in the same session.

Usage: python3 scripts/vendor.py > vendor.json   (on the GPU machine; needs PyTorch)
"""
import json
import math
import sys

import torch


def timed(fn, count=20, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(count):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    times.sort()
    return times[len(times) // 2]


def main():
    torch.backends.cuda.matmul.allow_tf32 = False  # plain fp32 FMA, as Prism's GEMM
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(1)
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "results": []}

    def add(case, shape, seconds, flops=0.0, nbytes=0.0):
        out["results"].append({"case": case, "shape": shape, "seconds": seconds,
                               "gflops": flops / seconds / 1e9 if flops else 0.0,
                               "gbs": nbytes / seconds / 1e9 if nbytes else 0.0})

    for dtype, name in ((torch.float32, "float32"), (torch.float64, "float64")):
        n = 4096
        a = torch.rand(n, n, device=dev, dtype=dtype, generator=g)
        b = torch.rand(n, n, device=dev, dtype=dtype, generator=g)
        add(f"gemm/nn/{name}", f"M=N=K={n}", timed(lambda: a @ b), 2.0 * n ** 3, 3.0 * n * n * a.element_size())

    n = 1 << 24
    x = torch.complex(torch.rand(n, device=dev, generator=g), torch.rand(n, device=dev, generator=g))
    add("fft/c2c/float32", f"n={n}", timed(lambda: torch.fft.fft(x)), 5.0 * n * math.log2(n), 2.0 * n * 8)

    n = 1 << 25
    f = torch.rand(n, device=dev, generator=g)
    add("reduce/sum/float32", f"n={n}", timed(lambda: f.sum()), n, 4.0 * n)
    add("scan/inclusive/float32", f"n={n}", timed(lambda: torch.cumsum(f, 0)), n, 8.0 * n)
    n = 1 << 24
    k = torch.randint(0, 2 ** 31 - 1, (n,), device=dev, dtype=torch.int64, generator=g).to(torch.int32)
    add("sort/keys/uint32", f"n={n}", timed(lambda: torch.sort(k, stable=True)), 0, 8.0 * n)
    rows, cols = (1 << 26) // 1024, 1024
    m = torch.rand(rows, cols, device=dev, generator=g)
    add("softmax/rows/float32", f"rows={rows} cols={cols}", timed(lambda: torch.softmax(m, 1)), 0, 8.0 * rows * cols)
    w, bias = torch.rand(cols, device=dev, generator=g), torch.rand(cols, device=dev, generator=g)
    add("layernorm/rows/float32", f"rows={rows} cols={cols}",
        timed(lambda: torch.nn.functional.layer_norm(m, (cols,), w, bias)), 0, 8.0 * rows * cols)
    b_, h, s, d = 1, 8, 4096, 64
    q = torch.rand(b_, h, s, d, device=dev, generator=g)
    kk = torch.rand(b_, h, s, d, device=dev, generator=g)
    v = torch.rand(b_, h, s, d, device=dev, generator=g)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    add("attention/full/float32", f"b={b_} h={h} seq={s} dim={d}", timed(lambda: sdpa(q, kk, v)), 4.0 * b_ * h * s * s * d)
    add("attention/causal/float32", f"b={b_} h={h} seq={s} dim={d}",
        timed(lambda: sdpa(q, kk, v, is_causal=True)), 2.0 * b_ * h * s * s * d)
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
