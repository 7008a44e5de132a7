"""scripts/trial_trades.py, no GPU and no PyTorch: the kept challenger's four trial medians are read from the explain
string's first clause only, one problem per (seed, mode, shape, epilogue), and counted against each limit; with
--eager-ties, cuBLAS's sgemm's own clause beside it."""
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


def timed(rec, runtime_us, heuristic_us, launch="stream"):
    """A record with the benchmark's times beside its trial."""
    return dict(rec, launch=launch, runtime_us=runtime_us, heuristic_us=heuristic_us)


class Carry(unittest.TestCase):
    # KEPT's trial ratios: stream warm 18.79/19.98 = 0.940, stream cold 21.38/20.54 = 1.041, graph warm 0.937,
    # graph cold 1.016.
    def test_the_benchmarks_ratio_over_the_trials_in_the_records_condition_once_per_record(self):
        recs = [timed(record(9668, KEPT, "23x11008x1024"), 18.05, 19.0),  # bench 0.95 over trial 0.940
                timed(record(9668, KEPT, "23x11008x1024"), 30.0, 20.0),   # the same record again: not counted
                timed(record(9668, KEPT, "23x11008x1024", "cold"), 21.0, 20.0),
                timed(record(9668, KEPT, "23x11008x1024"), 40.0, 40.0, launch="graph"),
                timed(record(9668, DEFAULT, "8x8x8"), 9.0, 8.0)]          # no kept trial
        found, seeds = trial_trades.carry(recs, 0, 20.0)
        self.assertEqual(seeds, [9668])
        rows = {(r["launch"], r["condition"], r["calls"]): r for r in found}
        self.assertEqual(set(rows), {("stream", "warm", "short"), ("stream", "cold", "long"),
                                     ("graph", "warm", "long")})
        self.assertEqual(rows["stream", "warm", "short"]["n"], 1)
        self.assertAlmostEqual(rows["stream", "warm", "short"]["median"], 0.95 / (18.79 / 19.98))
        self.assertAlmostEqual(rows["stream", "cold", "long"]["median"], 1.05 / (21.38 / 20.54))
        self.assertAlmostEqual(rows["graph", "warm", "long"]["median"], 1 / (17.99 / 19.21))

    def test_near_keeps_the_trials_near_ties_and_a_trial_win_the_benchmark_times_slower_is_counted(self):
        recs = [timed(record(9668, KEPT, "23x11008x1024"), 20.4, 20.0),   # trial 0.940 faster, bench 1.02
                timed(record(9668, KEPT, "23x11008x1024", "cold"), 21.0, 20.0)]  # trial 1.041
        rows, _ = trial_trades.carry(recs, 0, 20.0)
        self.assertEqual({r["condition"]: r["flipped"] for r in rows}, {"warm": 1, "cold": 0})
        near, _ = trial_trades.carry(recs, 0, 20.0, near=0.05)
        self.assertEqual([(r["condition"], r["n"]) for r in near], [("cold", 1)])


def sgemm_clause(scale):
    """cuBLAS's sgemm timed in all four conditions at `scale` times KEPT's medians."""
    t = [x * scale for x in (18.79, 21.38, 17.99, 20.38)]
    return (f"cublas/sgemm (cuBLAS's own choice, as torch.mm calls it, then our epilogue kernel) also beat "
            f"heuristic-first, but lt/a43 took the least time over the four conditions: stream warm {t[0]:.2f} us per "
            f"call (slowest batch 19.00) vs heuristic-first 19.98 us (fastest batch 19.94), stream cold {t[1]:.2f} "
            f"(slowest 21.50) vs 20.54 (fastest 20.47), graph warm {t[2]:.2f} (slowest 18.10) vs 19.21 (fastest "
            f"19.14), graph cold {t[3]:.2f} (slowest 20.50) vs 20.05 (fastest 20.03)")


def tie(seed, sgemm, epilogue="none", candidate="lt/a43", launch="stream", condition="warm", one=None):
    """A record whose kept challenger is KEPT's, with `sgemm` as a later clause."""
    return {"seed": seed, "mode": "tf32", "shape": f"{seed}x64x64", "epilogue": epilogue, "launch": launch,
            "condition": condition, "candidate": candidate, "explain": KEPT + "; " + sgemm,
            "runtime_us": 10.0, "torch_us": 10.5, "one_process": one}


class EagerTies(unittest.TestCase):
    def test_a_problem_whose_sgemm_trial_lies_within_the_band_of_the_kept_one_is_listed_once_with_its_records(self):
        early = ("cublas/sgemm (cuBLAS's own choice) was not faster in a first-use trial on this problem: stopped "
                 "early: stream cold 30.00 us per call (slowest batch 30.00) vs heuristic-first 20.00 us")
        recs = [tie(1, sgemm_clause(1.02), one={"runtime_us": 10.0, "torch_us": 9.7}),
                tie(1, sgemm_clause(1.02), launch="graph", condition="cold",
                    one={"runtime_us": 10.0, "torch_us": 10.3}),
                tie(2, sgemm_clause(1.03)),                        # beyond a band of 2.5%
                tie(3, early),                                     # sgemm not timed in all four conditions
                tie(4, sgemm_clause(1.0), epilogue="bias+gelu"),  # eager's call is addmm's, not sgemm
                tie(5, sgemm_clause(1.0), candidate="cublas/sgemm"),  # eager's call already runs
                tie(6, sgemm_clause(0.99))]                        # sgemm faster yet not kept: a tie all the same
        found = trial_trades.eager_ties(recs, 0, 0.025)
        self.assertEqual([t["seed"] for t in found], [6, 1])
        one = found[1]
        self.assertAlmostEqual(one["eager_over_kept"], 1.02, places=3)
        self.assertAlmostEqual(one["call_us"], (18.79 + 21.38 + 17.99 + 20.38) / 4)
        self.assertEqual(set(one["one_process"]), {"stream/warm", "graph/cold"})
        self.assertAlmostEqual(one["one_process"]["stream/warm"], 0.97)
        self.assertAlmostEqual(one["across"]["graph/cold"], 1.05)
        self.assertEqual([t["seed"] for t in trial_trades.eager_ties(recs, 0, 0.01)], [6])


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
            r = subprocess.run([sys.executable, script, "--carry", good], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, "a record without the benchmark's times has nothing to carry to")
            r = subprocess.run([sys.executable, script, "--eager-ties", "--carry", good], capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 2, "two reports at once")
            r = subprocess.run([sys.executable, script, bare], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("no record's explain string holds", r.stderr)


if __name__ == "__main__":
    unittest.main()
