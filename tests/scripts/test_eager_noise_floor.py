"""scripts/eager_noise_floor.py, no GPU and no PyTorch: issue 48's share and floor targets held per condition to the
runtime against eager and to eager against itself, records without both PyTorch runs left out, and a file with none
named."""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts")
sys.path.insert(0, SCRIPTS)
import eager_noise_floor  # noqa: E402


def record(i, launch, condition, runtime_us, torch_us, torch_repeat_us, seed=1):
    return {"seed": seed, "shape": f"{i}x1x1", "mode": "tf32", "epilogue": "none", "launch": launch,
            "condition": condition, "runtime_us": runtime_us, "torch_us": torch_us, "torch_repeat_us": torch_repeat_us}


class RunRows(unittest.TestCase):
    def test_each_side_is_held_per_condition_and_one_record_below_the_floor_misses(self):
        recs = [record(i, "stream", "warm", 10.0, 11.0, 11.0) for i in range(50)]
        recs += [record(i, "graph", "cold", 10.0, 11.0, 11.0) for i in range(49)]
        recs.append(record(99, "graph", "cold", 10.0, 9.85, 9.75))  # ours 0.985x; eager's later run 0.990x
        row, = eager_noise_floor.run_rows("f.json", recs)
        ours, itself = row["runtime_vs_eager"], row["eager_vs_itself"]
        self.assertEqual(row["records"], 100)
        self.assertAlmostEqual(ours["worst_condition_share"], 1 / 50)
        self.assertEqual(ours["worst_condition"], "graph/cold")
        self.assertTrue(ours["met"], "one record in 50 is 2%")
        self.assertTrue(itself["met"])
        recs.append(record(100, "graph", "cold", 10.0, 11.0, 10.6))  # eager against itself 0.964x: below the floor
        row, = eager_noise_floor.run_rows("f.json", recs)
        self.assertEqual(row["eager_vs_itself"]["below_floor"], 1)
        self.assertFalse(row["eager_vs_itself"]["met"])

    def test_a_condition_above_two_percent_misses_though_the_run_as_a_whole_is_below(self):
        recs = [record(i, "stream", "warm", 10.0, 11.0, 11.0) for i in range(150)]
        recs += [record(i, "stream", "cold", 10.0, 11.0, 11.0) for i in range(48)]
        recs += [record(98, "stream", "cold", 10.0, 9.85, 11.0), record(99, "stream", "cold", 10.0, 9.85, 11.0)]
        row, = eager_noise_floor.run_rows("f.json", recs)
        self.assertAlmostEqual(row["runtime_vs_eager"]["share_below_band"], 0.01)
        self.assertAlmostEqual(row["runtime_vs_eager"]["worst_condition_share"], 0.04)
        self.assertFalse(row["runtime_vs_eager"]["met"])

    def test_records_without_both_pytorch_runs_are_left_out_and_seeds_kept_apart(self):
        recs = [record(i, "stream", "warm", 10.0, 11.0, 11.0, seed=i) for i in (1, 2)]
        recs.append(record(3, "stream", "warm", 10.0, 11.0, None))
        rows = eager_noise_floor.run_rows("f.json", recs)
        self.assertEqual([(r["seed"], r["records"]) for r in rows], [(1, 1), (2, 1)])


class Cli(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([sys.executable, os.path.join(SCRIPTS, "eager_noise_floor.py"), *args],
                              capture_output=True, text=True)

    def test_a_gzipped_run_is_read_and_one_without_repeat_runs_is_named_and_skipped(self):
        with tempfile.TemporaryDirectory() as d:
            good, bare = os.path.join(d, "good.json.gz"), os.path.join(d, "bare.json")
            with gzip.open(good, "wt") as f:
                json.dump({"records": [record(i, "stream", "warm", 10.0, 11.0, 11.0) for i in range(10)]}, f)
            with open(bare, "w") as f:
                json.dump({"records": [record(1, "stream", "warm", 10.0, 11.0, None)]}, f)
            out = os.path.join(d, "o.json")
            r = self.run_script(good, bare, "--json", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"{bare}: no record with both PyTorch runs, skipped", r.stderr)
            self.assertIn("the runtime against eager 1 of 1; eager against itself 1 of 1", r.stdout)
            with open(out) as f:
                self.assertEqual(len(json.load(f)["runs"]), 1)

    def test_a_missing_or_foreign_file_is_a_one_line_usage_error(self):
        with tempfile.TemporaryDirectory() as d:
            r = self.run_script(os.path.join(d, "none.json"))
            self.assertEqual(r.returncode, 2)
            self.assertIn("none.json", r.stderr.strip().splitlines()[-1])
            foreign = os.path.join(d, "list.json")
            with open(foreign, "w") as f:
                json.dump([1, 2], f)
            r = self.run_script(foreign)
            self.assertEqual(r.returncode, 2)
            self.assertIn("no heldout_report.py records", r.stderr)


if __name__ == "__main__":
    unittest.main()
