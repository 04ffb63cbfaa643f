"""Tests of scripts/vendor.py that need no PyTorch and no GPU: the command line
(--attention-shapes), the attention cases it builds and the result records it writes.
Run: python3 scripts/test_vendor.py (bench's TestVendorPyAttentionShapes runs it too)."""
import contextlib
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vendor  # noqa: E402


class ParseArgs(unittest.TestCase):
    def test_default_is_the_default_sizes(self):
        self.assertIsNone(vendor.parse_args([]).attention_shapes)

    def test_shapes_read_each_once(self):
        args = vendor.parse_args(["--attention-shapes", "4x32x4096x64, 4X32X4096X128,4x32x4096x256,4x32x4096x64"])
        self.assertEqual(args.attention_shapes, [(4, 32, 4096, 64), (4, 32, 4096, 128), (4, 32, 4096, 256)])

    def test_bad_shapes_are_usage_errors(self):
        for text, want in (
            ("4096x4096x4096", "3 numbers; an attention shape is four, batch x heads x seq x dim written BxHxSxD"),
            ("0x32x4096x128", "batch is 0; every dimension is at least 1"),
            ("4x32x4096x300", "dim 300 is above 256"),
            ("4x32x4Kx128", "seq '4k' is not a whole number"),
            ("4x-1x64x64", "heads is -1"),
            ("64x64x8192x64", "2147483648 elements a tensor, above 2^31-1"),
            (",", "no attention shape given"),
        ):
            err = io.StringIO()
            with self.subTest(text=text), contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as cm:
                vendor.parse_args(["--attention-shapes", text])
            self.assertEqual(cm.exception.code, 2, text)
            self.assertIn("--attention-shapes: ", err.getvalue())
            self.assertIn(want, err.getvalue())


class AttentionCases(unittest.TestCase):
    def test_default_sizes(self):
        cases = vendor.attention_cases(None, 4 * 32 * 4096 * 128)
        got = [(c["case"], c["size"], c["dims"], c["shape"]) for c in cases]
        self.assertEqual(got, [
            ("attention/full/float32", 2097152, "", "batch=1 heads=8 seq=4096 dim=64"),
            ("attention/causal/float32", 2097152, "", "batch=1 heads=8 seq=4096 dim=64"),
            ("attention/full/float16", 67108864, "", "batch=4 heads=32 seq=4096 dim=128"),
            ("attention/causal/float16", 67108864, "", "batch=4 heads=32 seq=4096 dim=128"),
            ("attention/full/bfloat16", 67108864, "", "batch=4 heads=32 seq=4096 dim=128"),
            ("attention/causal/bfloat16", 67108864, "", "batch=4 heads=32 seq=4096 dim=128"),
        ])

    def test_shapes(self):
        shapes = [(4, 32, 4096, 64), (4, 32, 4096, 128), (1, 8, 4096, 64)]
        cases = vendor.attention_cases(shapes, 123)
        self.assertEqual(len(cases), 3 * 2 * len(shapes))
        by = {(c["case"], c["size"], c["dims"]) for c in cases}
        # The shape a size gives is that size's case (no dims), as prism bench records it.
        for want in (("attention/full/bfloat16", 1 << 25, "4x32x4096x64"), ("attention/causal/float16", 1 << 26, ""),
                     ("attention/full/float32", 1 << 26, "4x32x4096x128"), ("attention/causal/float32", 1 << 21, ""),
                     ("attention/full/bfloat16", 1 << 21, "1x8x4096x64")):
            self.assertIn(want, by)
        c = next(c for c in cases if c["case"] == "attention/causal/bfloat16" and c["d"] == 64 and c["h"] == 32)
        self.assertEqual(c["flops"], 2.0 * 4 * 32 * 4096 * 4096 * 64)
        self.assertEqual(c["bytes"], 4.0 * (1 << 25) * 2)
        c = next(c for c in cases if c["case"] == "attention/full/float32" and c["d"] == 128)
        self.assertEqual(c["flops"], 4.0 * 4 * 32 * 4096 * 4096 * 128)
        self.assertEqual(c["bytes"], 4.0 * (1 << 26) * 4)

    def test_size_shape(self):
        for typ, size, want in (("float32", 1, (1, 8, 1, 64)), ("float32", 512 * 7, (1, 8, 7, 64)),
                                ("bfloat16", 4 * 32 * 128, (4, 32, 1, 128)), ("float16", 4 * 32 * 128 - 1, (1, 32, 1, 128)),
                                ("bfloat16", 384, (1, 3, 1, 128)), ("bfloat16", 1, (1, 1, 1, 128))):
            self.assertEqual(vendor.attention_size_shape(typ, size), want, (typ, size))


class Records(unittest.TestCase):
    def test_dims_only_where_set(self):
        r = vendor.record("attention/full/bfloat16", 1 << 25, "batch=4 heads=32 seq=4096 dim=64", "4x32x4096x64", 1.0, 2.0, "SDPA")
        self.assertEqual((r["case"], r["family"], r["type"], r["size"], r["dims"], r["variant"], r["vendor_library"], r["library"]),
                         ("attention/full/bfloat16", "attention", "bfloat16", 1 << 25, "4x32x4096x64", "vendor", True, "SDPA"))
        self.assertFalse(r["verified"])
        r = vendor.record("attention/full/bfloat16", 1 << 26, "batch=4 heads=32 seq=4096 dim=128", "", 1.0, 2.0, "SDPA")
        self.assertNotIn("dims", r)
        self.assertNotIn("link", r)
        self.assertTrue(vendor.record("transfer/h2d-pinned/uint8", 4096, "n=4096", "", 0.0, 4096.0, "x", link=True)["link"])


class MainWithStandInTorch(unittest.TestCase):
    """main end to end with a stand-in for torch whose every call returns a mock: no case
    can verify (a mock's error is not small), but every case the options ask for is
    written, failed, with its size and dims: the attention cases at --attention-shapes."""

    def run_main(self, argv):
        from unittest import mock
        fake = mock.MagicMock(name="torch")
        fake.__version__, fake.version.cuda = "0.0-stand-in", "0.0"
        fake.cuda.mem_get_info.return_value = (1 << 30, 1 << 34)
        fake.cuda.get_device_properties.return_value = mock.Mock(multi_processor_count=132)
        fake.cuda.get_device_properties.return_value.name = "Stand-in GPU"
        modules = {"torch": fake, "torch.nn": fake.nn, "torch.nn.attention": fake.nn.attention}
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.dict(sys.modules, modules), mock.patch.object(vendor, "torch", fake), \
                mock.patch.object(sys, "argv", ["vendor.py"] + argv), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            vendor.main()
        import json
        return json.loads(out.getvalue()), err.getvalue()

    def test_attention_shapes(self):
        rep, log = self.run_main(["--only", "attention", "--attention-shapes", "4x32x4096x64,4x32x4096x128,1x8x4096x64"])
        dev = rep["devices"][0]
        self.assertEqual(dev["device"]["id"], "vendor:cuda:0")
        got = [(r["case"], r["size"], r.get("dims", "")) for r in dev["results"]]
        want = []
        for typ in ("float32", "float16", "bfloat16"):
            for shape, size in (("4x32x4096x64", 1 << 25), ("4x32x4096x128", 1 << 26), ("1x8x4096x64", 1 << 21)):
                default = vendor.attention_size_shape(typ, size) == tuple(int(x) for x in shape.split("x"))
                for kind in ("full", "causal"):
                    want.append((f"attention/{kind}/{typ}", size, "" if default else shape))
        self.assertEqual(got, want)
        for r in dev["results"]:
            self.assertFalse(r["verified"], r)
            self.assertIn("error", r)
            if r["type"] != "float32":  # every backend timed and named, the fastest chosen
                self.assertRegex(r["library"], r"^SDPA \w+ backend, the fastest of: cudnn [0-9.]+ us, flash [0-9.]+ us, efficient [0-9.]+ us; PyTorch")
        self.assertIn("attention/full/bfloat16: relative error", log)

    def test_default_shapes(self):
        rep, _ = self.run_main(["--only", "attention/causal"])
        got = [(r["case"], r["size"], r.get("dims", ""), r["shape"]) for r in rep["devices"][0]["results"]]
        self.assertEqual(got, [
            ("attention/causal/float32", 1 << 21, "", "batch=1 heads=8 seq=4096 dim=64"),
            ("attention/causal/float16", 1 << 26, "", "batch=4 heads=32 seq=4096 dim=128"),
            ("attention/causal/bfloat16", 1 << 26, "", "batch=4 heads=32 seq=4096 dim=128"),
        ])


if __name__ == "__main__":
    unittest.main()
