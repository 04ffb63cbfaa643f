"""Tests of scripts/ncu_stalls.py on small CSVs written as ncu writes its source page: the
blocks a kernel, the sums by opcode and reason, the hot instructions, and the errors.
Run: python3 scripts/test_ncu_stalls.py (bench's TestNcuStallsPy runs it too)."""
import contextlib
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ncu_stalls  # noqa: E402

HEADER = ('"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)",'
          '"Instructions Executed","stall_barrier","stall_branch_resolving","stall_wait","stall_wait (Not Issued)"\n')


def block(name, rows):
    lines = [f'"Kernel Name","{name}",\n', HEADER]
    for addr, sass, n, executed, barrier, branch, wait in rows:
        lines.append(f'"{addr}","{sass}","{n}","{n}","{executed}","{barrier}","{branch}","{wait}","{wait}"\n')
    return "".join(lines)


SOFTMAX = block("attention_wgmma", [
    ("0x10", "      BSSY B0, 0x7fe6ff7a6930", 30, "1,015,808", 0, 20, 10),
    ("0x20", "      @!P1  BRA 0x7fe6ff7a6920", 25, 1015808, 0, 25, 0),
    ("0x30", "      BSYNC B0", 5, 1015808, 0, 0, 5),
    ("0x40", "      HGMMA.64x128x16.F32.BF16 R88, R152, gdesc[UR24].tnspB, R88", 12, 1015808, 0, 0, 12),
    ("0x50", "      @UP0  BRA 0x7fe6ff7a6a20", 3, "-", 0, 3, 0),
    ("0x60", "      WARPGROUP.DEPBAR.LE gsb0, 0x1", 25, 1015808, 25, 0, 0),
])
DGEMM = block("gemm_mma", [
    ("0x10", "      NOP", 40, 16777216, 0, 0, 40),
    ("0x20", "      DMMA.16x8x16 R144, R32, R168, R144", 60, 16777216, 0, 0, 10),
])


class Opcode(unittest.TestCase):
    def test_predicates_dropped(self):
        self.assertEqual(ncu_stalls.opcode("  @!P1  BRA 0x7f"), "BRA")
        self.assertEqual(ncu_stalls.opcode("@UP0 BRA 0x7f"), "BRA")
        self.assertEqual(ncu_stalls.opcode("@PT FADD R1, R2, R3"), "FADD")
        self.assertEqual(ncu_stalls.opcode("HGMMA.64x128x16.F32.BF16 R88, R152"), "HGMMA.64x128x16.F32.BF16")


class Summaries(unittest.TestCase):
    def test_one_block_a_kernel(self):
        blocks = ncu_stalls.kernels(SOFTMAX + DGEMM)
        self.assertEqual([b[0] for b in blocks], ["attention_wgmma", "gemm_mma"])
        self.assertEqual([len(b[2]) for b in blocks], [6, 2])

    def test_sums(self):
        s = ncu_stalls.summarize(*ncu_stalls.kernels(SOFTMAX)[0], top=3)
        self.assertEqual(s["samples"], 100)
        self.assertEqual(s["instructions"], 6)
        self.assertEqual(dict(s["by_opcode"]), {"BSSY": 30, "BRA": 28, "WARPGROUP.DEPBAR.LE": 25, "HGMMA.64x128x16.F32.BF16": 12, "BSYNC": 5})
        self.assertEqual([op for op, _ in s["by_opcode"]], ["BSSY", "BRA", "WARPGROUP.DEPBAR.LE", "HGMMA.64x128x16.F32.BF16", "BSYNC"])
        # The "(Not Issued)" columns are not counted twice.
        self.assertEqual(dict(s["by_reason"]), {"branch_resolving": 48, "wait": 27, "barrier": 25})

    def test_hot_in_program_order_with_reasons(self):
        s = ncu_stalls.summarize(*ncu_stalls.kernels(SOFTMAX)[0], top=3)
        self.assertEqual([h[0] for h in s["hot"]], [0, 1, 5])
        i, n, sass, executed, main = s["hot"][0]
        self.assertEqual((n, executed), (30, 1015808))
        self.assertEqual(main, [(20, "branch_resolving"), (10, "wait")])
        self.assertEqual(s["hot"][2][4], [(25, "barrier")])  # reasons with no samples are left out

    def test_render_shares(self):
        text = ncu_stalls.render(ncu_stalls.summarize(*ncu_stalls.kernels(DGEMM)[0]))
        self.assertIn("kernel gemm_mma: 100 warp stall samples over 2 SASS instructions", text)
        self.assertRegex(text, r"DMMA\.16x8x16\s+60\s+60\.0%")
        self.assertRegex(text, r"NOP\s+40\s+40\.0%")

    def test_main_prints_every_kernel(self):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ncu_stalls_test_{os.getpid()}.csv")
        with open(path, "w") as f:
            f.write(SOFTMAX + DGEMM)
        try:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(ncu_stalls.main([path, "--title", "two kernels", "--top", "2"]), 0)
        finally:
            os.remove(path)
        text = out.getvalue()
        self.assertTrue(text.startswith("two kernels\n"))
        self.assertIn("kernel attention_wgmma:", text)
        self.assertIn("kernel gemm_mma:", text)


class Errors(unittest.TestCase):
    def run_main(self, text, *args):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ncu_stalls_err_{os.getpid()}.csv")
        with open(path, "w") as f:
            f.write(text)
        try:
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                rc = ncu_stalls.main([path, *args])
        finally:
            os.remove(path)
        return rc, err.getvalue()

    def test_empty_input(self):
        rc, err = self.run_main("")
        self.assertEqual(rc, 2)
        self.assertIn("no CSV header found", err)

    def test_no_samples_column(self):
        rc, err = self.run_main('"Kernel Name","k",\n"Address","Source"\n"0x0","NOP"\n')
        self.assertEqual(rc, 2)
        self.assertIn("kernel k: no column 'Warp Stall Sampling (All Samples)'", err)

    def test_bad_counter(self):
        rc, err = self.run_main(SOFTMAX.replace('"30","30"', '"thirty","30"'))
        self.assertEqual(rc, 2)
        self.assertIn("'thirty' is not a number", err)

    def test_missing_file(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(ncu_stalls.main(["/nonexistent/r.csv"]), 2)
        self.assertIn("No such file", err.getvalue())


if __name__ == "__main__":
    unittest.main()
