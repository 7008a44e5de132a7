"""scripts/same_algo_spread.py, no GPU and no PyTorch: only records where the runtime ran heuristic-first's very
candidate count, grouped per launch x condition and call length, from --min-seed on."""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts")
sys.path.insert(0, SCRIPTS)
import same_algo_spread  # noqa: E402


def record(seed, launch, condition, heuristic_us, speedup, same_algo=True, shape="1x2x3"):
    return {"seed": seed, "mode": "tf32", "shape": shape, "epilogue": "none", "launch": launch,
            "condition": condition, "heuristic_us": heuristic_us, "runtime_us": heuristic_us / speedup,
            "speedup": speedup, "same_algo": same_algo, "candidate": "lt/a1"}


class Groups(unittest.TestCase):
    def test_other_candidates_and_earlier_seeds_are_left_out_and_calls_split_by_length(self):
        recs = [record(5, "stream", "warm", 8.0, 1.05), record(5, "stream", "warm", 8.0, 0.95, shape="9x9x9"),
                record(5, "stream", "warm", 40.0, 1.0), record(5, "stream", "warm", 8.0, 0.5, same_algo=False),
                record(4, "stream", "warm", 8.0, 0.5), record(5, "graph", "cold", 8.0, 1.0)]
        by = same_algo_spread.groups(recs, min_seed=5, short_us=15)
        self.assertEqual(sorted(by), [("graph", "cold", "short"), ("stream", "warm", "long"),
                                      ("stream", "warm", "short")])
        row = same_algo_spread.group_row(("stream", "warm", "short"), by[("stream", "warm", "short")])
        self.assertEqual(row["n"], 2)
        self.assertAlmostEqual(row["geomean"], (1.05 * 0.95) ** 0.5)
        self.assertEqual(row["below_band"], 1)
        self.assertEqual(row["min"], 0.95)
        self.assertIn("9x9x9", row["min_case"])


class Command(unittest.TestCase):
    def test_a_gzipped_joined_file_is_read_and_a_file_without_records_is_a_one_line_error(self):
        with tempfile.TemporaryDirectory() as d:
            good, bad, out = (os.path.join(d, n) for n in ("h.json.gz", "bad.json", "o.json"))
            with gzip.open(good, "wt") as f:
                json.dump({"records": [record(7, "stream", "warm", 8.0, 0.98)]}, f)
            with open(bad, "w") as f:
                json.dump([1, 2], f)
            script = os.path.join(SCRIPTS, "same_algo_spread.py")
            r = subprocess.run([sys.executable, script, good, "--json", out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("stream warm short |     1    0.980      1  0.980 | seed 7 tf32 1x2x3 none", r.stdout)
            with open(out) as f:
                self.assertEqual(json.load(f)["groups"][0]["below_band"], 1)
            r = subprocess.run([sys.executable, script, bad], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("no heldout_report.py records", r.stderr)


if __name__ == "__main__":
    unittest.main()
