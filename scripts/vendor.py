"""Vendor baselines that have no library Prism can call (CUB's sort and scan, PyTorch's
SDPA, softmax, layer norm, host-device copies) and the cuBLAS/cuFFT cases again, timed
through PyTorch with CUDA events on the shapes of Prism's default bench sizes, and written
as a Prism bench report (docs/bench.schema.json) whose one device is the pseudo-device
"vendor:cuda:N".
`prism report run.json vendor.json`, `prism plot` and the "vs vendor" columns then put each
baseline beside Prism's result for the same case, size and device.

Every case is checked before it is timed, against float64 on the same inputs (or, for the
sort, against the sorted order; for a copy, against its source, byte for byte): a result
that does not verify is reported as failed, not timed. Times are the median of --count runs
after --warmup, like prism bench. The copies (Prism's transfer family) run at each of
--transfer-sizes: Tensor.copy_ between a CUDA tensor and a pinned CPU tensor with
non_blocking=True, timed by CUDA events like Prism's pinned copies (the ceiling of the
link), and with a pageable CPU tensor, blocking, timed by the host clock like Prism's
pageable ones.

The attention cases run at the shapes of Prism's default sizes, or with --attention-shapes
at explicit shapes written BxHxSxD (batch x heads x seq x dim, as prism bench --shapes reads
them), e.g. --attention-shapes 4x32x4096x64,4x32x4096x128,4x32x4096x256: each result carries
the size prism bench gives that shape and, where that size alone does not give it, its dims,
so that it pairs with Prism's result of the same shape.

Usage (on the GPU machine; needs PyTorch): python3 scripts/vendor.py [--device N] [--count 10] > vendor.json
"""
import argparse
import datetime
import json
import math
import platform
import socket
import sys
import time

try:
    import torch
except ImportError:  # the helpers below that build cases and records need no torch; main does
    torch = None


def timed(fn, count, warmup):
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
        times.append(int(start.elapsed_time(end) * 1e6))  # ns
    return times


def host_timed(fn, count, warmup):
    """The host time of each of count calls of fn (each synchronized), after warmup: as
    Prism times a blocking copy, which enqueues nothing with a device event."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(count):
        start = time.perf_counter_ns()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter_ns() - start)
    return times


def parse_size(s):
    """A size as prism bench --sizes reads it: digits with an optional K, M or G (powers of 1024)."""
    s = s.strip().upper().removesuffix("I")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
    return int(s[:-1] if mult > 1 else s) * mult


def rel_err(got, want):
    got, want = got.double(), want.double()
    return float(torch.linalg.vector_norm(got - want) / max(float(torch.linalg.vector_norm(want)), 1e-300))


# The attention ops' shapes, as kernels/attention/shape.go defines them: the float32 ops
# are batch 1, 8 heads of dim 64, seq = size/512 (at least 1); the float16 and bfloat16 ops
# batch 4, 32 heads of dim 128, seq = size/16384, and below 16384 batch 1, size/128 heads
# (1 to 32), seq 1. ATTN_MAX_DIM is the largest head dim Prism's kernels take.
ATTN_MAX_DIM = 256
ATTN_DEFAULT_FLOAT32_SIZE = 1 * 8 * 4096 * 64
ATTN_SHAPE_FORM = "batch x heads x seq x dim written BxHxSxD, e.g. 4x32x4096x128"


def parse_attention_shape(text):
    """A shape as prism bench --shapes reads an attention shape: four whole numbers of
    decimal digits, each at least 1, separated by x (or X); the head dim at most
    ATTN_MAX_DIM and a tensor within 2^31-1 elements. Returns (batch, heads, seq, dim);
    raises ValueError saying what is wrong."""
    t = text.strip().lower()
    if not t:
        raise ValueError(f"attention shape {text!r}: empty; write {ATTN_SHAPE_FORM}")
    parts = t.split("x")
    if len(parts) != 4:
        n = len([p for p in parts if p])
        raise ValueError(f"attention shape {text!r}: {n} numbers; an attention shape is four, {ATTN_SHAPE_FORM}")
    dims = []
    for name, p in zip(("batch", "heads", "seq", "dim"), parts):
        if not p.lstrip("-").isdigit() or not p.lstrip("-").isascii():
            raise ValueError(f"attention shape {text!r}: {name} {p!r} is not a whole number of decimal digits")
        n = int(p)
        if n < 1:
            raise ValueError(f"attention shape {text!r}: {name} is {p}; every dimension is at least 1")
        dims.append(n)
    b, h, s, d = dims
    if d > ATTN_MAX_DIM:
        raise ValueError(f"attention shape {text!r}: dim {d} is above {ATTN_MAX_DIM}, the largest head dimension Prism's attention takes")
    if b * h * s * d > 2 ** 31 - 1:
        raise ValueError(f"attention shape {text!r}: {b * h * s * d} elements a tensor, above 2^31-1, the range Prism's kernels index in")
    return b, h, s, d


def parse_attention_shapes(text):
    """The --attention-shapes list: comma-separated shapes, each once, in the order given."""
    out = []
    for t in text.split(","):
        if t.strip():
            s = parse_attention_shape(t)
            if s not in out:
                out.append(s)
    if not out:
        raise ValueError("no attention shape given; write " + ATTN_SHAPE_FORM)
    return out


def attention_size_shape(typ, size):
    """The shape Prism's attention op in typ sets up at size (attention.SizeShape)."""
    if typ == "float32":
        return 1, 8, max(size // 512, 1), 64
    if size < 4 * 32 * 128:  # less than one query per head: fewer heads
        return 1, min(max(size // 128, 1), 32), 1, 128
    return 4, 32, size // (4 * 32 * 128), 128


def attention_cases(shapes, attn_size):
    """The attention cases: for each type (float32, then float16 and bfloat16, Prism's
    order) and mask (full, then causal), one per shape: shapes, or, where None, the shape of
    Prism's default size (float32: 2M elements; float16 and bfloat16: attn_size). Each is
    a dict: case, type, causal, b, h, s, d, size (batch*heads*seq*dim, the size prism bench
    gives the shape), dims (the shape BxHxSxD where that size alone does not give it, as
    prism bench's results record it; else ""), shape (as Prism writes it), flops and bytes
    (Prism's model)."""
    out = []
    for typ, elem in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        default = attention_size_shape(typ, ATTN_DEFAULT_FLOAT32_SIZE if typ == "float32" else attn_size)
        for b, h, s, d in shapes or [default]:
            size = b * h * s * d
            dims = "" if attention_size_shape(typ, size) == (b, h, s, d) else f"{b}x{h}x{s}x{d}"
            for causal, kind in ((False, "full"), (True, "causal")):
                flops = (2.0 if causal else 4.0) * b * h * s * s * d
                out.append({"case": f"attention/{kind}/{typ}", "type": typ, "causal": causal, "b": b, "h": h, "s": s, "d": d,
                            "size": size, "dims": dims, "shape": f"batch={b} heads={h} seq={s} dim={d}",
                            "flops": flops, "bytes": 4.0 * size * elem})
    return out


def record(case, size, shape, dims, flops, nbytes, library, link=False):
    """A result as Prism's bench report writes it (docs/bench.schema.json), not yet timed:
    the vendor's variant, its library, the case's size and, where set, its dims."""
    family, _, typ = case.split("/")
    res = {"case": case, "family": family, "type": typ, "size": size, "shape": shape,
           "stats": {"runs": 0, "median_ns": 0, "min_ns": 0, "max_ns": 0},
           "flops": flops, "bytes": nbytes, "gbs": 0.0, "gflops": 0.0, "attainable_gflops": 0.0,
           "fraction": 0.0, "verified": False, "variant": "vendor", "vendor_library": True, "library": library}
    if dims:  # a shape its size does not give: part of the case's identity, as in Prism's results
        res["dims"] = dims
    if link:  # bytes across the host-device link, as Prism's transfer ops count them
        res["link"] = True
    return res


def parse_args(argv=None):
    """The command line; --attention-shapes is read here (a bad shape is a usage error,
    exit 2, before PyTorch is touched) into a list of (batch, heads, seq, dim)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--gemm-n", type=int, default=4096, help="M = N = K of the GEMM cases (prism bench --sizes n*n)")
    ap.add_argument("--attn-size", type=int, default=4 * 32 * 4096 * 128,
                    help="elements of Q in the float16/bfloat16 attention cases (batch 4, heads 32, dim 128: seq = size/16384)")
    ap.add_argument("--transfer-sizes", default="4K,64K,1M,16M,256M,1G",
                    help="bytes of the host-device copies (transfer/*), comma-separated, K/M/G suffixes as prism bench --sizes")
    ap.add_argument("--stream-size", type=int, default=1 << 28,
                    help="elements of the stream cases (prism bench --sizes 256M: 2^28)")
    ap.add_argument("--reduce-size", type=int, default=1 << 25,
                    help="elements of the reduce and scan cases (prism bench --sizes 32M: 2^25; the issue's targets are at 2^28)")
    ap.add_argument("--attention-shapes", default="",
                    help="run the attention cases (float32, float16, bfloat16; full and causal) at these shapes BxHxSxD, "
                         "comma-separated, as prism bench --shapes (e.g. 4x32x4096x64,4x32x4096x128,4x32x4096x256), "
                         "instead of the shapes of Prism's default sizes (--attn-size)")
    ap.add_argument("--only", default="", help="run only the cases whose name starts with one of these comma-separated prefixes (gemm, fft/c2c, softmax,layernorm ...)")
    args = ap.parse_args(argv)
    try:
        args.attention_shapes = parse_attention_shapes(args.attention_shapes) if args.attention_shapes.strip() else None
    except ValueError as e:
        ap.error(f"--attention-shapes: {e}")
    return args


def main():
    args = parse_args()
    if torch is None:
        sys.exit("vendor.py: needs PyTorch (import torch failed)")
    torch.backends.cuda.matmul.allow_tf32 = False  # true fp32, as Prism's fp32 GEMM
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    props = torch.cuda.get_device_properties(dev)
    g = torch.Generator(device=dev).manual_seed(1)
    lib = f"cuBLAS/cuFFT/CUB via PyTorch {torch.__version__} (CUDA {torch.version.cuda})"
    results = []

    def add(case, size, shape, fn, check, flops, nbytes, timer=timed, link=False, library=None, dims=""):
        if not any(case.startswith(p) for p in args.only.split(",")):
            return
        res = record(case, size, shape, dims, flops, nbytes, library or lib, link)
        try:
            err = check()
        except Exception as e:  # a failing library call is a failed case, not a crash
            err = f"{type(e).__name__}: {e}"
        if err:
            res["error"], res["mismatch"] = str(err), True
            results.append(res)
            print(f"vendor.py: {case}: {err}", file=sys.stderr)
            return
        res["verified"] = True
        t = sorted(timer(fn, args.count, args.warmup))
        med = t[len(t) // 2]
        res["stats"] = {"runs": len(t), "median_ns": med, "min_ns": t[0], "max_ns": t[-1], "samples_ns": t}
        res["gbs"] = nbytes / (med * 1e-9) / 1e9 if nbytes else 0.0
        res["gflops"] = flops / (med * 1e-9) / 1e9 if flops else 0.0
        results.append(res)
        print(f"vendor.py: {case} {dims or shape}: {med / 1e3:.1f} us", file=sys.stderr)

    def tol_check(got_fn, want_fn, tol):
        def check():
            e = rel_err(got_fn(), want_fn())
            return None if e <= tol else f"relative error {e:.3g} > {tol:.3g}"
        return check

    # GEMM: size counts elements of C; M = N = K = sqrt(size). PyTorch computes D = A B (no C
    # read): Prism's op with the shape NxNxN:beta=0 (prism bench --shapes), whose dims these
    # results carry, so that a report pairs them with that case and not with the op's default
    # D = alpha A B + beta C (which the in-process --vendor baseline computes).
    n = args.gemm_n
    sub = slice(0, 256)
    gd, gs = f"{n}x{n}x{n}:beta=0", f"M=N=K={n} beta=0"  # dims, shape
    for dtype, name, tol in ((torch.float32, "float32", 1e-5), (torch.float64, "float64", 1e-12)):
        a = torch.rand(n, n, device=dev, dtype=dtype, generator=g) * 2 - 1
        b = torch.rand(n, n, device=dev, dtype=dtype, generator=g) * 2 - 1
        add(f"gemm/nn/{name}", n * n, gs, lambda: a @ b,
            tol_check(lambda: (a[sub] @ b), lambda: a[sub].double() @ b.double(), tol),
            2.0 * n ** 3, 3.0 * n * n * a.element_size(), dims=gd)  # A, B read, D written: Prism's model

    # The precision GEMMs (cuBLAS through PyTorch): tf32 on float32 inputs, float16 and
    # bfloat16 inputs with float32 accumulation (PyTorch writes a 16-bit C; Prism a float32
    # one), float8 E4M3 through torch._scaled_mm (B column-major, that is stored N x K: Prism's
    # gemm/nt layout; unit scales, float32 C).
    a = torch.rand(n, n, device=dev, generator=g) * 2 - 1
    b = torch.rand(n, n, device=dev, generator=g) * 2 - 1

    def tf32_mm(x, y):
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return x @ y
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False
    add("gemm/nn/tf32", n * n, gs, lambda: tf32_mm(a, b),
        tol_check(lambda: tf32_mm(a[sub], b), lambda: a[sub].double() @ b.double(), 2e-3),
        2.0 * n ** 3, (2.0 * 4 + 4) * n * n, dims=gd)
    for dtype, name in ((torch.float16, "float16"), (torch.bfloat16, "bfloat16")):
        a16, b16 = a.to(dtype), b.to(dtype)
        add(f"gemm/nn/{name}", n * n, gs, lambda: a16 @ b16,
            tol_check(lambda: (a16[sub] @ b16), lambda: a16[sub].double() @ b16.double(), 1e-2),
            2.0 * n ** 3, (2.0 * 2 + 4) * n * n, dims=gd)
    if hasattr(torch, "float8_e4m3fn") and hasattr(torch, "_scaled_mm"):
        a8 = a.to(torch.float8_e4m3fn)
        b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm needs
        one = torch.ones((), device=dev)

        def fp8_mm(x=a8):
            return torch._scaled_mm(x, b8, scale_a=one, scale_b=one, out_dtype=torch.float32)
        add("gemm/nt/float8e4m3", n * n, gs, fp8_mm,
            tol_check(lambda: fp8_mm(a8[sub].contiguous()), lambda: a8[sub].double() @ b8.double(), 1e-2),
            2.0 * n ** 3, (2.0 * 1 + 4) * n * n, dims=gd)

    # FFT c2c: n = size complex points.
    n = 1 << 24
    x = torch.complex(torch.rand(n, device=dev, generator=g) * 2 - 1, torch.rand(n, device=dev, generator=g) * 2 - 1)
    add("fft/c2c/float32", n, f"n={n}", lambda: torch.fft.fft(x),
        tol_check(lambda: torch.view_as_real(torch.fft.fft(x)), lambda: torch.view_as_real(torch.fft.fft(x.to(torch.complex128))), 1e-5),
        5.0 * n * math.log2(n), 2.0 * n * 8)

    # STREAM triad and copy at --stream-size: a = b + s*c in one kernel (torch.add with
    # alpha), c = a (copy_), as stream/triad and stream/copy compute them.
    if any(p == "" or "stream/".startswith(p) or p.startswith("stream/") for p in args.only.split(",")):
        ns = args.stream_size
        sb = torch.rand(ns, device=dev, generator=g)
        sc = torch.rand(ns, device=dev, generator=g)
        sa = torch.empty(ns, device=dev)
        add("stream/triad/float32", ns, f"n={ns}", lambda: torch.add(sb, sc, alpha=3.0, out=sa),
            tol_check(lambda: torch.add(sb[:4096], sc[:4096], alpha=3.0), lambda: sb[:4096].double() + 3.0 * sc[:4096].double(), 1e-6),
            2.0 * ns, 12.0 * ns)
        add("stream/copy/float32", ns, f"n={ns}", lambda: sa.copy_(sb),
            lambda: None if torch.equal(sa.copy_(sb)[:4096], sb[:4096]) else "the copy differs", 0.0, 8.0 * ns)
        del sa, sb, sc

    # Reduce and scan: n = size elements.
    n = args.reduce_size
    f = torch.rand(n, device=dev, generator=g) * 2 - 1
    add("reduce/sum/float32", n, f"n={n}", lambda: f.sum(),
        lambda: None if abs(float(f.sum()) - float(f.double().sum())) <= 1e-4 * float(f.abs().double().sum()) else "sum differs",
        float(n), 4.0 * n)
    add("scan/inclusive/float32", n, f"n={n}", lambda: torch.cumsum(f, 0),
        tol_check(lambda: torch.cumsum(f, 0)[-4096:], lambda: torch.cumsum(f.double(), 0)[-4096:], 1e-3), float(n), 8.0 * n)

    # Sort: n = size keys, stable ascending (CUB radix sort through torch.sort, which returns
    # the sorting permutation too: the pairs case, keys with their indices).
    for n in (1 << 24, 1 << 28):
        k = torch.randint(0, 2 ** 31 - 1, (n,), device=dev, dtype=torch.int64, generator=g).to(torch.int32)
        check = lambda k=k: None if bool((torch.sort(k, stable=True).values.diff() >= 0).all()) else "not sorted"
        for case, per in (("sort/keys/uint32", 4.0), ("sort/pairs/uint32", 8.0)):
            add(case, n, f"n={n}", lambda k=k: torch.sort(k, stable=True), check,
                0.0, 8 * 2 * per * n)  # 8 passes of 4-bit digits, read and written: Prism's portable model
        del k

    # Rows: cols = min(size, 1024) (rows ops) or min(size, 8192) (rows8k ops), rows = size / cols.
    ln = torch.nn.functional.layer_norm
    for kind, size, cols in (("rows", 1 << 26, 1024), ("rows8k", 1 << 27, 8192)):
        rows = size // cols
        m = torch.rand(rows, cols, device=dev, generator=g) * 16 - 8
        add(f"softmax/{kind}/float32", rows * cols, f"rows={rows} cols={cols}", lambda m=m: torch.softmax(m, 1),
            tol_check(lambda m=m: torch.softmax(m[:64], 1), lambda m=m: torch.softmax(m[:64].double(), 1), 1e-5),
            4.0 * rows * cols, 8.0 * rows * cols)
        w = torch.rand(cols, device=dev, generator=g) + 0.5
        bias = torch.rand(cols, device=dev, generator=g) - 0.5
        add(f"layernorm/{kind}/float32", rows * cols, f"rows={rows} cols={cols}",
            lambda m=m, cols=cols, w=w, bias=bias: ln(m, (cols,), w, bias),
            tol_check(lambda m=m, cols=cols, w=w, bias=bias: ln(m[:64], (cols,), w, bias),
                      lambda m=m, cols=cols, w=w, bias=bias: ln(m[:64].double(), (cols,), w.double(), bias.double()), 1e-5),
            8.0 * rows * cols, (8.0 * rows * cols + 8.0 * cols))

    # Convolution 3x3, stride 1, pad 1, NCHW with bias, as Prism's conv/3x3 at its default
    # size: N = 8, C = K = 64, H = W = round(sqrt(size / 512)) (cuDNN; TF32 is off above).
    if any("conv/".startswith(p) or p.startswith("conv/") for p in args.only.split(",")):
        torch.backends.cudnn.benchmark = True  # cuDNN's fastest algorithm for the shape
        size = 1 << 24
        hw = round((size / 512) ** 0.5)
        x = torch.rand(8, 64, hw, hw, device=dev, generator=g) * 2 - 1
        w = (torch.rand(64, 64, 3, 3, device=dev, generator=g) * 2 - 1) / 24.0
        bc = torch.rand(64, device=dev, generator=g) * 2 - 1
        conv = lambda: torch.nn.functional.conv2d(x, w, bc, padding=1)
        add("conv/3x3/float32", size, f"N=8 C=64 H={hw} W={hw} K=64 R=3 stride=1 pad=1", conv,
            tol_check(conv, lambda: torch.nn.functional.conv2d(x.double(), w.double(), bc.double(), padding=1), 1e-5),
            2.0 * 8 * 64 * hw * hw * 576 + 8 * 64 * hw * hw, 4.0 * (2 * 8 * 64 * hw * hw + 64 * 576 + 64))

    sdpa = torch.nn.functional.scaled_dot_product_attention

    # SDPA's backends, each forced in turn (torch.nn.attention.sdpa_kernel): the 16-bit
    # attention baseline is the fastest that runs, and its library names it and every
    # backend's median (or why it did not run).
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backends = [(name, getattr(SDPBackend, attr)) for name, attr in
                    (("cudnn", "CUDNN_ATTENTION"), ("flash", "FLASH_ATTENTION"), ("efficient", "EFFICIENT_ATTENTION"))
                    if hasattr(SDPBackend, attr)]
    except ImportError:
        sdpa_kernel, backends = None, []

    def fastest_sdpa(fn):
        """Times fn under each SDPA backend (5 runs after 2 warm-ups); returns the fastest
        backend's name and a function that runs fn under it, and each backend's median in
        us or why it failed; (None, fn, {}) where backends cannot be forced."""
        seen, best = {}, None
        for name, b in backends:
            try:
                with sdpa_kernel([b]):
                    t = sorted(timed(fn, 5, 2))
                seen[name] = t[len(t) // 2] / 1e3
                if best is None or seen[name] < seen[best[0]]:
                    best = (name, b)
            except Exception as e:  # a backend that refuses the shape or the type
                seen[name] = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
        if best is None:
            return None, fn, seen

        def under(b=best[1]):
            with sdpa_kernel([b]):
                return fn()
        return best[0], under, seen

    # Attention (attention_cases): float32 through SDPA's default choice (as Prism's
    # float32 ops: q, k in [-0.5, 0.5)), float16 and bfloat16 through SDPA's fastest backend
    # (q, k in [-2, 2), v in [-1, 1), as Prism's inputs), at the shapes of Prism's default
    # sizes or at --attention-shapes. Checked on the first head against float64.
    dtypes = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
    tensors = {}  # (type, shape) -> q, k, v: one set for the full and the causal case
    q = kk = v = fn = None
    for c in attention_cases(args.attention_shapes, args.attn_size):
        case, typ, shape4 = c["case"], c["type"], (c["b"], c["h"], c["s"], c["d"])
        if not any(case.startswith(p) for p in args.only.split(",")):
            continue
        if (typ, shape4) not in tensors:
            # One set alive at a time (4x32x4096x256 in float32 is 512 MiB a tensor): the
            # last set's references dropped before the next is made.
            tensors.clear()
            q = kk = v = fn = None
            if typ == "float32":
                qkv = [torch.rand(*shape4, device=dev, generator=g) - 0.5 for _ in range(3)]
            else:
                qkv = [(torch.rand(*shape4, device=dev, generator=g) * w - w / 2).to(dtypes[typ]) for w in (4, 4, 2)]
            tensors[(typ, shape4)] = qkv
        q, kk, v = tensors[(typ, shape4)]
        fn = lambda c=c["causal"], q=q, kk=kk, v=v: sdpa(q, kk, v, is_causal=c)
        library = None
        if typ != "float32":
            chosen, fn, seen = fastest_sdpa(fn)
            if seen:
                each = ", ".join(f"{k} {t:.1f} us" if isinstance(t, float) else f"{k}: {t}" for k, t in seen.items())
                library = f"SDPA {chosen or 'default'} backend, the fastest of: {each}; PyTorch {torch.__version__} (CUDA {torch.version.cuda})"
        tol = 1e-4 if typ == "float32" else 2e-2
        add(case, c["size"], c["shape"], fn,
            tol_check(lambda c=c["causal"], q=q, kk=kk, v=v: sdpa(q[:1, :1], kk[:1, :1], v[:1, :1], is_causal=c).double(),
                      lambda c=c["causal"], q=q, kk=kk, v=v: sdpa(q[:1, :1].double(), kk[:1, :1].double(), v[:1, :1].double(), is_causal=c),
                      tol),
            c["flops"], c["bytes"], library=library, dims=c["dims"])
    tensors.clear()
    q = kk = v = fn = None

    # Host-device copies (Prism's transfer family): size = n bytes. Pinned: copy_ with
    # non_blocking=True from and into page-locked memory, timed by CUDA events (a DMA of the
    # copy engines: the link's ceiling). Pageable: copy_ from and into ordinary memory, which
    # the driver stages and which returns when done, timed by the host clock.
    def copy_check(fn, dst, src):
        def check():
            dst.zero_()  # a copy that moves nothing cannot pass
            fn()
            torch.cuda.synchronize()
            return None if torch.equal(dst.cpu(), src.cpu()) else "the copy differs from its source"
        return check
    wanted = any("transfer/".startswith(p) or p.startswith("transfer/") for p in args.only.split(","))
    for n in (parse_size(x) for x in args.transfer_sizes.split(",") if x.strip() and wanted):
        gpu = torch.randint(0, 256, (n,), device=dev, dtype=torch.uint8, generator=g)
        gpu_dst = torch.empty(n, device=dev, dtype=torch.uint8)
        for mem, pin in (("pinned", True), ("pageable", False)):
            host = torch.empty(n, dtype=torch.uint8, pin_memory=pin)
            host.copy_(gpu)
            host_dst = torch.empty(n, dtype=torch.uint8, pin_memory=pin)
            timer = timed if pin else host_timed
            h2d = lambda d=gpu_dst, h=host, p=pin: d.copy_(h, non_blocking=p)
            d2h = lambda d=host_dst, s=gpu, p=pin: d.copy_(s, non_blocking=p)
            add(f"transfer/h2d-{mem}/uint8", n, f"n={n} host={mem}", h2d, copy_check(h2d, gpu_dst, host), 0.0, float(n), timer, True)
            add(f"transfer/d2h-{mem}/uint8", n, f"n={n} host={mem}", d2h, copy_check(d2h, host_dst, gpu), 0.0, float(n), timer, True)
            del host, host_dst
        del gpu, gpu_dst

    free, total = torch.cuda.mem_get_info(dev)
    report = {
        "schema": 1, "prism_version": "scripts/vendor.py", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "host": socket.gethostname(), "go_version": "python " + platform.python_version(), "goos": sys.platform,
        "goarch": platform.machine(), "command": sys.argv,
        "config": {"quick": False, "count": args.count, "warmup": args.warmup, "seed": 1, "portable": False},
        "devices": [{
            "device": {"id": f"vendor:cuda:{args.device}", "name": props.name, "vendor": "NVIDIA", "platform": lib,
                       "kind": "gpu", "api_version": f"CUDA {torch.version.cuda}", "driver_version": "",
                       "compute_units": props.multi_processor_count, "clock_mhz": 0, "global_mem_bytes": total,
                       "max_alloc_bytes": total, "local_mem_bytes": 0, "max_work_group_size": 1024,
                       "max_work_item_sizes": [1024, 1024, 64], "fp64": True, "fp16": True},
            "backend": "vendor",
            "ceilings": {"copy_gbs": 0, "copy_how": "not measured", "copy_bytes": 0, "fp32_gflops": 0, "fp64_gflops": 0,
                         "peak_how": "not measured"},
            "overheads": {"first_build_ns": 0, "second_build_ns": 0, "launch_async_ns": 0, "launch_sync_ns": 0},
            "telemetry": {"available": False, "samples": 0, "interval_ms": 0, "reason": "not sampled by vendor.py"},
            "results": results,
        }],
    }
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
