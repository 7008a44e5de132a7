"""scripts/dev/kernel_ceiling.py, no GPU: the profile asks for every candidate of every kind at the given shapes; the
report takes each problem's fastest verified candidate against cuBLAS's sgemm and heuristic-first, leaves a ratio out
where that side was not timed, and a missing file or one that is no sweep's is a one-line error."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

DEV = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts", "dev")
sys.path.insert(0, DEV)
import kernel_ceiling  # noqa: E402


def result(key, candidate, us, status="ok"):
    return {"problem_key": key, "candidate": {"id": candidate}, "median_us": us, "status": status}


class KernelCeiling(unittest.TestCase):
    def test_the_profile_asks_for_the_widest_cublaslt_search_at_every_shape(self):
        p = kernel_ceiling.profile(kernel_ceiling.shapes_of({"shapes": [{"m": 8, "n": 2048, "k": 352}]}), ["fp32"],
                                   ["none"])
        self.assertEqual(p["shapes"], [[8, 2048, 352]])
        self.assertEqual(p["lt"]["search"], "by_algo_id")
        self.assertEqual(kernel_ceiling.shapes_of([[1, 2, 3]]), [[1, 2, 3]])

    def test_the_fastest_verified_candidate_is_held_against_cublas_and_heuristic_first(self):
        a, b = "fwd:8x2048x352:nn:row:none:fp32", "fwd:8x2048x352:nn:row:none:3xtf32"
        sweep = {"problems": [{"problem_key": a, "heuristic_first_us": 9.0}, {"problem_key": b}],
                 "results": [result(a, "cublas/sgemm", 8.8), result(a, "own/skinny", 6.0),
                             result(a, "own/wrong", 1.0, status="verify_failed"), result(b, "own/x", 5.0)]}
        rows, summary = kernel_ceiling.report(sweep)
        row = next(r for r in rows if r["problem_key"] == a)
        self.assertEqual(row["best"], "own/skinny")
        self.assertAlmostEqual(row["over_cublas"], 8.8 / 6.0)
        self.assertAlmostEqual(row["over_heuristic"], 1.5)
        other = next(r for r in rows if r["problem_key"] == b)
        self.assertIsNone(other["over_cublas"])
        self.assertIsNone(other["over_heuristic"])
        fp32 = next(s for s in summary if s["mode"] == "fp32")
        self.assertAlmostEqual(fp32["geomean_over_cublas"], 8.8 / 6.0)

    def test_a_missing_or_malformed_file_is_one_line_and_a_nonzero_exit(self):
        script = os.path.join(DEV, "kernel_ceiling.py")
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                json.dump({"results": [{}]}, f)
            for argv in (["report", os.path.join(d, "none.json")], ["report", bad],
                         ["profile", bad, os.path.join(d, "out.json")]):
                run = subprocess.run([sys.executable, script] + argv, capture_output=True, text=True)
                self.assertNotEqual(run.returncode, 0, argv)
                self.assertEqual(len(run.stderr.strip().splitlines()), 1, run.stderr)
                self.assertTrue(run.stderr.startswith("kernel_ceiling: "), run.stderr)


if __name__ == "__main__":
    unittest.main()
