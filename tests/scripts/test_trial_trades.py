"""scripts/trial_trades.py, no GPU and no PyTorch: the kept challenger's four trial medians are read from the explain
string's first clause only, one problem per (seed, mode, shape, epilogue), and counted against each limit."""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts")
sys.path.insert(0, SCRIPTS)
import trial_trades  # noqa: E402

# Seed 9668's 23x11008x1024 tf32 none as runtime.cpp wrote it (trimmed after the first clause's medians).
KEPT = ("fwd:23x11008x1024:nn:row:none:tf32: lt/a43 [default] faster than at the runtime's in a first-use trial on this "
        "problem: stream warm 18.79 us per call (slowest batch 19.22) vs heuristic-first 19.98 us (fastest batch "
        "19.94), stream cold 21.38 (slowest 21.44) vs 20.54 (fastest 20.47), graph warm 17.99 (slowest 18.07) vs 19.21 "
        "(fastest 19.14), graph cold 20.38 (slowest 20.46) vs 20.05 (fastest 20.03); the stand-in own/x was not faster")
# The default kept: a refused challenger's medians follow in a later clause and must not count.
DEFAULT = ("fwd:8x8x8:nn:row:none:tf32: lt/a1 [default] cuBLASLt heuristic default (its first algo), because no "
           "challenger beat it on this problem; lt/a2 was not faster in a first-use trial on this problem: stream warm "
           "9.0 us per call (slowest batch 9.1) vs heuristic-first 8.0 us (fastest batch 8.0), stream cold 9.0 (slowest "
           "9.1) vs 8.0 (fastest 8.0), graph warm 9.0 (slowest 9.1) vs 8.0 (fastest 8.0), graph cold 9.0 (slowest 9.1) "
           "vs 8.0 (fastest 8.0)")


def record(seed, explain, shape, condition="warm"):
    return {"seed": seed, "mode": "tf32", "shape": shape, "epilogue": "none", "launch": "stream",
            "condition": condition, "candidate": "lt/a43", "explain": explain}


class Trades(unittest.TestCase):
    def test_the_first_clauses_medians_count_once_per_problem_and_a_refused_challengers_do_not(self):
        recs = [record(9668, KEPT, "23x11008x1024"), record(9668, KEPT, "23x11008x1024", "cold"),
                record(9668, DEFAULT, "8x8x8"), record(9600, KEPT, "23x11008x1024")]
        found = trial_trades.trades(recs, min_seed=9649)
        self.assertEqual(len(found), 1)
        t = found[0]
        self.assertAlmostEqual(t["ratios"][1], 21.38 / 20.54)
        self.assertAlmostEqual(t["worst"], 21.38 / 20.54)
        self.assertLess(t["geomean"], 1)
        self.assertIsNone(trial_trades.kept_trial(DEFAULT))


class Command(unittest.TestCase):
    def test_each_limit_lists_the_problems_above_it_and_a_file_without_medians_is_a_one_line_error(self):
        with tempfile.TemporaryDirectory() as d:
            good, bare = os.path.join(d, "h.json.gz"), os.path.join(d, "bare.json")
            with gzip.open(good, "wt") as f:
                json.dump({"records": [record(9668, KEPT, "23x11008x1024")]}, f)
            with open(bare, "w") as f:
                json.dump({"records": [record(9668, DEFAULT, "8x8x8")]}, f)
            script = os.path.join(SCRIPTS, "trial_trades.py")
            r = subprocess.run([sys.executable, script, good, "--limit", "1.05", "--limit", "1.02"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("worst condition above 1.02: 1\n  seed 9668 tf32 23x11008x1024 none", r.stdout)
            self.assertIn("worst condition above 1.05: 0", r.stdout)
            r = subprocess.run([sys.executable, script, bare], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("no record's explain string holds", r.stderr)


if __name__ == "__main__":
    unittest.main()
