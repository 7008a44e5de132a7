"""scripts/dev/k_slope.py, no GPU: a synthetic candidate whose time is a + b·(k/32) gives back b in clocks at the
sweep's clock and a as the intercept; cuBLASLt's per-k best becomes one row; a missing file is refused."""
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

DEV = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts", "dev")
sys.path.insert(0, DEV)
import k_slope  # noqa: E402


def record(cand, m, n, k, us, clock=1980.0):
    return {"status": "ok", "candidate": {"id": cand}, "median_us": us, "sm_clock_mhz": clock,
            "problem": {"m": m, "n": n, "k": k}}


class KSlope(unittest.TestCase):
    def test_fit_returns_the_line_a_synthetic_candidate_was_made_from(self):
        recs = [record("own/x", 1408, 1536, k, 4.0 + 0.5 * k / 32, clock=1800.0) for k in (64, 1024, 8192)]
        times = k_slope.families(recs)[(1408, 1536, True)]["own/x"]
        slope, clocks, share, intercept = k_slope.fit(times, 1408, 1536)
        self.assertAlmostEqual(slope, 0.5)
        self.assertAlmostEqual(clocks, 900.0)
        self.assertAlmostEqual(intercept, 4.0)
        self.assertAlmostEqual(share, 2.0 * 1408 * 1536 * 32 / 132 / 900.0 / 2048)

    def test_unaligned_twins_fall_in_their_own_family_and_lt_best_is_one_row(self):
        recs = [record("lt/a1", 1408, 1535, 1023, 30.0), record("lt/a2", 1408, 1535, 1023, 20.0),
                record("lt/a1", 1408, 1535, 8191, 100.0), record("own/y", 1408, 1536, 1024, 10.0),
                record("own/y", 1408, 1536, 8192, 90.0)]
        fams = k_slope.families(recs)
        self.assertEqual(set(fams), {(1408, 1536, False), (1408, 1536, True)})
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.json")
            with open(path, "w") as f:
                json.dump({"results": recs}, f)
            out = io.StringIO()
            sys.argv = ["k_slope.py", path]
            with redirect_stdout(out):
                k_slope.main()
        self.assertIn("lt (best algo at each k)                       k=1023:   20.00 us", out.getvalue())

    def test_refuses_a_missing_file(self):
        with tempfile.TemporaryDirectory() as d:
            run = subprocess.run([sys.executable, os.path.join(DEV, "k_slope.py"), os.path.join(d, "none.json")],
                                 capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("k_slope:", run.stderr)


if __name__ == "__main__":
    unittest.main()
