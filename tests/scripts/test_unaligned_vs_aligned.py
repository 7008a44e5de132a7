"""scripts/unaligned_vs_aligned.py, no GPU: plan --split adds each both-unaligned shape's two half-aligned forms, and
report puts each form's time beside the twin's, and --out keeps the sweep's cost; without --split the plan and report
stay twins only; a missing or malformed file is a one-line error."""
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts")
sys.path.insert(0, SCRIPTS)
import unaligned_vs_aligned as uva  # noqa: E402


def problem(m, n, k, us, cand="own/x"):
    return {"problem_key": f"fwd:{m}x{n}x{k}:nn:row:bias+gelu:tf32", "best_us": us, "best_candidate": cand}


class UnalignedVsAligned(unittest.TestCase):
    def plan(self, split):
        with tempfile.TemporaryDirectory() as d:
            compare = os.path.join(d, "c.json")
            with open(compare, "w") as f:
                json.dump({"records": [{"shape": "100x30x7"}, {"shape": "100x32x7"}, {"shape": "64x31x33"}]}, f)
            return uva.plan(compare, os.path.join(d, "out"), split)["shapes"]

    def test_split_plan_adds_the_k_and_the_n_unaligned_forms_of_both_unaligned_shapes_only(self):
        self.assertEqual(sorted(map(tuple, self.plan(False))),
                         [(64, 31, 33), (64, 32, 36), (100, 30, 7), (100, 32, 8)])
        self.assertEqual(sorted(map(tuple, self.plan(True))),
                         [(64, 31, 33), (64, 31, 36), (64, 32, 33), (64, 32, 36),
                          (100, 30, 7), (100, 30, 8), (100, 32, 7), (100, 32, 8)])

    def test_report_gives_each_form_as_a_ratio_to_the_twin(self):
        doc = {"problems": [problem(100, 30, 7, 13.0), problem(100, 32, 8, 10.0), problem(100, 32, 7, 12.0, "own/s"),
                            problem(100, 30, 8, 11.0)]}
        rows, summary = uva.report(doc)
        self.assertEqual(len(rows), 1)
        self.assertAlmostEqual(rows[0]["ratio"], 1.3)
        self.assertAlmostEqual(rows[0]["k_unaligned_ratio"], 1.2)
        self.assertEqual(rows[0]["k_unaligned_candidate"], "own/s")
        self.assertAlmostEqual(summary["geomean_n_unaligned_ratio"], 1.1)

    def test_report_without_the_forms_has_no_split_summary(self):
        rows, summary = uva.report({"problems": [problem(100, 30, 7, 13.0), problem(100, 32, 8, 10.0)]})
        self.assertNotIn("k_unaligned_ratio", rows[0])
        self.assertNotIn("geomean_k_unaligned_ratio", summary)
        with tempfile.TemporaryDirectory() as d:
            sweep = os.path.join(d, "s.json")
            with open(sweep, "w") as f:
                json.dump({"problems": [problem(100, 30, 7, 13.0), problem(100, 32, 8, 10.0)]}, f)
            argv, out = sys.argv, io.StringIO()
            sys.argv = ["unaligned_vs_aligned.py", "report", sweep]
            try:
                with redirect_stdout(out):
                    self.assertEqual(uva.main(), 0)
            finally:
                sys.argv = argv
        self.assertIn("x1.300;", out.getvalue())

    def test_report_out_keeps_the_sweeps_cost_so_a_no_prune_run_says_so(self):
        with tempfile.TemporaryDirectory() as d:
            sweep, out_json = os.path.join(d, "s.json"), os.path.join(d, "r.json")
            with open(sweep, "w") as f:
                json.dump({"cost": {"sampled": 7, "pruned": 0},
                           "problems": [problem(100, 30, 7, 13.0), problem(100, 32, 8, 10.0)]}, f)
            argv = sys.argv
            sys.argv = ["unaligned_vs_aligned.py", "report", sweep, "--out", out_json]
            try:
                with redirect_stdout(io.StringIO()):
                    self.assertEqual(uva.main(), 0)
            finally:
                sys.argv = argv
            with open(out_json) as f:
                self.assertEqual(json.load(f)["sweep_cost"], {"sampled": 7, "pruned": 0})

    def test_a_missing_or_malformed_file_is_one_line_and_a_nonzero_exit(self):
        script = os.path.join(SCRIPTS, "unaligned_vs_aligned.py")
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write("{\"problems\": [{}]}")
            for argv in (["plan", os.path.join(d, "none.json"), d, "--split"], ["report", os.path.join(d, "none.json")],
                         ["report", bad]):
                run = subprocess.run([sys.executable, script] + argv, capture_output=True, text=True)
                self.assertNotEqual(run.returncode, 0, argv)
                self.assertEqual(len(run.stderr.strip().splitlines()), 1, run.stderr)
                self.assertTrue(run.stderr.startswith("unaligned_vs_aligned: "), run.stderr)


if __name__ == "__main__":
    unittest.main()
