"""scripts/bench_decode.py's arithmetic and target, no GPU: the share of DRAM bandwidth per problem, the policy sweep's
fp32 problems only, "met" only with three weights over 60 MB at the target at every m, and one-line errors (exit 2)
for what it cannot read."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts"))
import bench_decode  # noqa: E402

HEADS = [(50257, 1600), (32001, 4096), (50257, 4096), (250002, 1024)]


def min_bytes(m, n, k):
    return 4.0 * (m * k + k * n + n + m * n)


def sweep(share_of, modes=("tf32", "fp32"), dram_gbps=4800.0):
    """A sweep JSON whose best candidate of each problem streams share_of(m, n, k, mode) percent of dram_gbps."""
    problems = []
    for n, k in HEADS:
        for m in (1, 4, 16):
            for mode in modes:
                us = min_bytes(m, n, k) / (share_of(m, n, k, mode) / 100 * dram_gbps * 1e9) * 1e6
                problems.append({"problem_key": f"fwd:{m}x{n}x{k}:nn:row:bias+gelu:{mode}", "best_us": us,
                                 "best_candidate": f"own/skinny_{mode}_x", "heuristic_first_us": 2 * us})
    return {"device": {"name": "test GPU"}, "problems": problems}


def run_main(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = bench_decode.main(argv)
    return code, out.getvalue(), err.getvalue()


class Records(unittest.TestCase):
    def test_a_record_is_the_bytes_the_gemm_must_move_over_its_time_as_a_share_of_the_bandwidth(self):
        p = {"problem_key": "fwd:4x50257x4096:nn:row:bias+gelu:tf32", "best_us": 200.0, "best_candidate": "own/x",
             "heuristic_first_us": 400.0}
        (r,) = bench_decode.records_from_sweep({"problems": [p]}, "exact", 4800.0)
        expected = 100 * min_bytes(4, 50257, 4096) / 200e-6 / 4.8e12
        self.assertAlmostEqual(r["pct_dram"], expected, places=9)
        self.assertAlmostEqual(r["heuristic_pct_dram"], expected / 2, places=9)
        self.assertAlmostEqual(r["weight_mb"], 4.0 * 50257 * 4096 / 1e6)
        self.assertEqual((r["m"], r["n"], r["k"], r["mode"], r["policy"]), (4, 50257, 4096, "tf32", "exact"))

    def test_the_policy_sweep_contributes_its_fp32_problems_only(self):
        rs = bench_decode.records_from_sweep(sweep(lambda *a: 85.0, modes=("fp32", "3xtf32")), "fp32_equivalent",
                                             4800.0)
        self.assertEqual({r["mode"] for r in rs}, {"fp32"})
        self.assertEqual(len(rs), 12)

    def test_a_problem_without_a_verified_candidate_is_an_error_not_a_zero(self):
        p = {"problem_key": "fwd:1x2x3:nn:row:none:tf32", "best_us": 0, "best_candidate": ""}
        with self.assertRaises(bench_decode.BenchError):
            bench_decode.records_from_sweep({"problems": [p]}, "exact", 4800.0)


class Target(unittest.TestCase):
    def test_met_takes_three_weights_at_the_target_at_every_m(self):
        # tf32: every head at 85% but 50257x1600 at m = 16 (79%): three weights meet it. fp32: two heads fall short.
        def share(m, n, k, mode):
            if mode == "tf32":
                return 79.0 if (m, n, k) == (16, 50257, 1600) else 85.0
            return 85.0 if k == 4096 else 70.0
        groups = {(g["mode"], g["policy"]): g
                  for g in bench_decode.summary(bench_decode.records_from_sweep(sweep(share), "exact", 4800.0), 80.0)}
        tf32, fp32 = groups[("tf32", "exact")], groups[("fp32", "exact")]
        self.assertTrue(tf32["met"])
        self.assertEqual(tf32["weights_meeting"], ["250002x1024", "32001x4096", "50257x4096"])
        self.assertEqual(tf32["worst"]["shape"], "16x50257x1600")
        self.assertAlmostEqual(tf32["worst"]["pct_dram"], 79.0, places=6)
        self.assertFalse(fp32["met"])
        self.assertEqual(fp32["weights_meeting"], ["32001x4096", "50257x4096"])

    def test_weights_that_fit_in_l2_do_not_count(self):
        small = {"problems": [{"problem_key": f"fwd:{m}x4096x1024:nn:row:none:tf32", "best_us": 1.0,
                               "best_candidate": "own/x"} for m in (1, 4, 16)]}  # 16.8 MB of weight
        (g,) = bench_decode.summary(bench_decode.records_from_sweep(small, "exact", 4800.0), 80.0)
        self.assertEqual(g["weights"], 0)
        self.assertFalse(g["met"])


class CommandLine(unittest.TestCase):
    def test_from_sweeps_it_prints_the_table_and_writes_the_records_and_the_verdicts(self):
        with tempfile.TemporaryDirectory() as d:
            exact, policy, out = (os.path.join(d, f) for f in ("exact.json", "policy.json", "out/decode.json"))
            with open(exact, "w") as f:
                json.dump(sweep(lambda *a: 85.0), f)
            with open(policy, "w") as f:
                json.dump(sweep(lambda *a: 82.0, modes=("fp32",)), f)
            code, text, err = run_main(["--from-sweep", exact, "--from-policy-sweep", policy, "--dram-gbps", "4800",
                                        "--out", out])
            self.assertEqual(code, 0, err)
            with open(out) as f:
                doc = json.load(f)
        self.assertEqual(len(doc["records"]), 36)
        self.assertEqual(doc["device"], "test GPU")
        self.assertEqual({(g["mode"], g["policy"], g["met"]) for g in doc["summary"]},
                         {("fp32", "exact", True), ("tf32", "exact", True), ("fp32", "fp32_equivalent", True)})
        self.assertIn("16x250002x1024", text)
        self.assertIn("met", text)

    def test_what_it_cannot_read_is_one_line_and_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            broken = os.path.join(d, "broken.json")
            with open(broken, "w") as f:
                f.write("{not json")
            cases = [(["--from-sweep", os.path.join(d, "missing.json"), "--dram-gbps", "4800"], "cannot read"),
                     (["--from-sweep", broken, "--dram-gbps", "4800"], "is not JSON"),
                     (["--from-sweep", broken], "needs --dram-gbps"),
                     (["--from-policy-sweep", broken, "--dram-gbps", "4800"], "goes with --from-sweep"),
                     (["--from-sweep", broken, "--dram-gbps", "-1"], "must be positive")]
            for name, doc, message in [("nolist.json", {"results": []}, "has none"),
                                       ("badkey.json", {"problems": [{"problem_key": "fwd:AxB", "best_us": 1,
                                                                      "best_candidate": "x"}]}, "is not pass:MxNxK"),
                                       ("nokey.json", {"problems": [{"best_us": 1}]}, "problem_key")]:
                path = os.path.join(d, name)
                with open(path, "w") as f:
                    json.dump(doc, f)
                cases.append((["--from-sweep", path, "--dram-gbps", "4800"], message))
            for argv, message in cases:
                code, text, err = run_main(argv)
                self.assertEqual(code, 2, argv)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn(message, err)
                self.assertEqual(text, "")


if __name__ == "__main__":
    unittest.main()
