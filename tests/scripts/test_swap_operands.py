"""scripts/dev/swap_operands.py, no GPU: the plan keeps only the both-unaligned shapes and poses each one transposed
(n x m x k, layout tt, output col); the report pairs a shape with its transposed twin and prints their time ratio; a missing or wrong file is refused in one
line."""
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
import swap_operands  # noqa: E402


class SwapOperands(unittest.TestCase):
    def test_plan_poses_only_the_both_unaligned_shapes_transposed(self):
        records = [{"shape": s} for s in ("4408x578x1473", "4408x578x1473", "1000x1000x1000", "300x401x500",
                                          "277x7482x7222")]
        with tempfile.TemporaryDirectory() as d:
            compare = os.path.join(d, "compare.json")
            with open(compare, "w") as f:
                json.dump({"records": records}, f)
            swap_operands.plan(compare, d)
            with open(os.path.join(d, "swap_nn.json")) as f:
                nn = json.load(f)
            with open(os.path.join(d, "swap_tt.json")) as f:
                tt = json.load(f)
        self.assertEqual(nn["shapes"], [[277, 7482, 7222], [4408, 578, 1473]])
        self.assertEqual((nn["layouts"], nn["outputs"]), (["nn"], ["row"]))
        self.assertEqual(tt["shapes"], [[7482, 277, 7222], [578, 4408, 1473]])
        self.assertEqual((tt["layouts"], tt["outputs"]), (["tt"], ["col"]))
        self.assertEqual(nn["epilogues"], ["gelu"])

    def test_report_pairs_each_shape_with_its_transposed_twin(self):
        def sweep(key, us):
            return {"problems": [{"problem_key": key, "best_us": us, "best_own_us": us, "best_candidate": "own/x"}]}
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name, doc in (("nn", sweep("fwd:4408x578x1473:nn:row:gelu:tf32", 50.0)),
                              ("tt", sweep("fwd:578x4408x1473:tt:col:gelu:tf32", 80.0))):
                paths.append(os.path.join(d, name + ".json"))
                with open(paths[-1], "w") as f:
                    json.dump(doc, f)
            out = io.StringIO()
            with redirect_stdout(out):
                swap_operands.report(*paths)
        self.assertIn("asked / transposed 0.625", out.getvalue())
        self.assertIn("the transposed form faster on 0", out.getvalue())

    def test_a_missing_or_wrong_file_is_refused_in_one_line(self):
        script = os.path.join(DEV, "swap_operands.py")
        with tempfile.TemporaryDirectory() as d:
            wrong = os.path.join(d, "wrong.json")
            with open(wrong, "w") as f:
                json.dump({"records": []}, f)
            for args in (["plan", os.path.join(d, "none.json"), d], ["report", wrong, wrong]):
                run = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
                self.assertNotEqual(run.returncode, 0, args)
                self.assertEqual(len(run.stderr.strip().splitlines()), 1, run.stderr)
                self.assertIn("swap_operands: ", run.stderr)


if __name__ == "__main__":
    unittest.main()
