"""scripts/dev/ncu_sass_regions.py, no GPU: a source page's samples and stall reasons add up per region (fixed windows
or given ranges, offsets from the kernel's first instruction), instructions never executed count for nothing, and a
file that is not an ncu source page or a malformed region is refused in one line."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

DEV = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts", "dev")
sys.path.insert(0, DEV)
import ncu_sass_regions  # noqa: E402

HEADER = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed", "stall_barrier",
          "stall_no_inst", "stall_barrier (Not Issued)"]


def page(rows):
    """An ncu --page source --csv file: the kernel's name line, the header, one row per instruction."""
    lines = ['"Kernel Name","k"', ",".join(f'"{h}"' for h in HEADER)]
    lines += [",".join(f'"{v}"' for v in r) for r in rows]
    return "\n".join(lines) + "\n"


# (address, source, samples, executed, barrier, no_inst, barrier not issued)
ROWS = [("0x7f0000000000", "LDC R1, c[0x0][0x28]", 3, 10, 0, 3, 0),
        ("0x7f0000000010", "@!P0 BRA 0x7f0000000000", 5, 10, 5, 0, 5),
        ("0x7f0000001000", "STS [R2], R3", 7, 20, 2, 5, 1),
        ("0x7f0000001010", "FADD R4, R4, R5", 0, 0, 0, 0, 0),
        ("0x7f0000002000", "EXIT", 1, 4, 0, 1, 0)]


class Regions(unittest.TestCase):
    def setUp(self):
        f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
        f.write(page(ROWS))
        f.close()
        self.path = f.name
        self.header, self.rows = ncu_sass_regions.read_source_page(self.path)

    def tearDown(self):
        os.unlink(self.path)

    def test_windows_add_up_samples_and_stall_reasons_of_their_instructions(self):
        s = ncu_sass_regions.summarize(self.header, self.rows, [], 0x1000)
        self.assertEqual(list(s), [(0, 0x1000), (0x1000, 0x2000), (0x2000, 0x3000)])
        first = s[(0, 0x1000)]
        self.assertEqual(first["samples"], 8)
        self.assertEqual(first["stalls"]["barrier"], 5)
        self.assertEqual(first["stalls"]["no_inst"], 3)
        self.assertNotIn("barrier (Not Issued)", first["stalls"])
        self.assertEqual(first["opcodes"]["BRA"], 1)  # the predicate is not the opcode
        self.assertEqual(sum(v["samples"] for v in s.values()), sum(r[2] for r in ROWS))

    def test_an_instruction_never_executed_counts_for_no_static_instruction(self):
        s = ncu_sass_regions.summarize(self.header, self.rows, [], 0x1000)
        self.assertEqual(s[(0x1000, 0x2000)]["static"], 1)
        self.assertEqual(s[(0x1000, 0x2000)]["dynamic"], 20)

    def test_given_ranges_take_only_their_instructions(self):
        s = ncu_sass_regions.summarize(self.header, self.rows, [(0x10, 0x1001)], 0x1000)
        self.assertEqual(list(s), [(0x10, 0x1001)])
        self.assertEqual(s[(0x10, 0x1001)]["samples"], 5 + 7)

    def test_the_table_prints_each_regions_share(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(ncu_sass_regions.main([self.path, "--window", "0x1000"]), 0)
        self.assertIn("50.0%", out.getvalue())  # 8 of 16 samples in the first window


class Refusals(unittest.TestCase):
    def run_main(self, argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                rc = ncu_sass_regions.main(argv)
            except SystemExit as e:
                rc = e.code
        return rc, err.getvalue()

    def test_a_file_that_is_no_source_page_is_refused_in_one_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv") as f:
            f.write("a,b\n1,2\n")
            f.flush()
            rc, err = self.run_main([f.name])
        self.assertEqual(rc, 2)
        self.assertEqual(len(err.strip().splitlines()), 1)
        self.assertIn("not an ncu --page source --csv file", err)

    def test_a_missing_file_is_refused_in_one_line(self):
        rc, err = self.run_main(["/nonexistent/sass.csv"])
        self.assertEqual(rc, 2)
        self.assertEqual(len(err.strip().splitlines()), 1)

    def test_a_region_that_is_not_lo_below_hi_is_refused(self):
        for bad in ("0x100", "0x200:0x100", "zz:0x100"):
            rc, err = self.run_main(["x.csv", "--region", bad])
            self.assertEqual(rc, 2, bad)
            self.assertIn("region", err)


if __name__ == "__main__":
    unittest.main()
