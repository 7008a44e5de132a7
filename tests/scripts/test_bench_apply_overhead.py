"""scripts/bench_apply_overhead.py's pure parts, no GPU: the commands it wraps the program in, each record's extra
host time against the plain runs, the outcome read from the apply report, and the target each record is held to
(routed +2 us, passed through +1 us)."""
import os
import sys
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts")
sys.path.insert(0, SCRIPTS)
import bench_apply_overhead as bench  # noqa: E402  (the script under test)


def caller_run(host_us):
    """A caller's output: one spec, its two calls, host_us = (gemm, gemm_beta1)."""
    return {"gpu": "Test GPU", "records": [
        {"spec": "tf32:64x32x16", "mode": "tf32", "m": 64, "n": 32, "k": 16, "call": call, "host_us": us,
         "host_us_p10": us, "host_us_p90": us, "gpu_us": 3.0} for call, us in zip(("gemm", "gemm_beta1"), host_us)]}


REPORT_TUNED = {"rows": [
    {"api": "cublasSgemm_v2", "problem": "fwd:32x64x16:nn:row:none:tf32", "calls": 10, "routed_calls": 10,
     "candidate": "own/x", "reason": ""},
    {"api": "cublasSgemm_v2", "problem": "64x32x16", "calls": 10, "routed_calls": 0, "candidate": "",
     "reason": "beta = 1.000000 (accumulates into C)"}]}
REPORT_NO_ENTRY = {"rows": [
    {"api": "cublasSgemm_v2", "problem": "fwd:32x64x16:nn:row:none:tf32", "calls": 10, "routed_calls": 0,
     "candidate": "", "reason": "no usable exact entry on GPU 0"},
    {"api": "cublasSgemm_v2", "problem": "64x32x16", "calls": 10, "routed_calls": 0, "candidate": "",
     "reason": "beta = 1.000000 (accumulates into C)"}]}


class Records(unittest.TestCase):
    def setUp(self):
        runs = {"plain_first": caller_run((4.0, 4.0)), "plain_last": caller_run((4.2, 4.0)),
                "apply_no_entry": caller_run((4.5, 4.3)), "apply_tuned": caller_run((7.0, 4.3))}
        self.records = bench.records_of(runs, {"apply_no_entry": REPORT_NO_ENTRY, "apply_tuned": REPORT_TUNED})
        self.by = {(r["variant"], r["call"]): r for r in self.records}

    def test_extra_time_is_against_the_mean_of_both_plain_runs_whose_spread_is_the_noise(self):
        plain = self.by[("plain", "gemm")]
        self.assertAlmostEqual(plain["host_us"], 4.1)
        self.assertAlmostEqual(plain["extra_us"], 0.0)
        self.assertAlmostEqual(plain["plain_noise_us"], 0.2)
        self.assertAlmostEqual(self.by[("apply_tuned", "gemm")]["extra_us"], 2.9)

    def test_the_outcome_is_read_from_the_report_rows_of_the_calls_shape(self):
        self.assertEqual(self.by[("apply_tuned", "gemm")]["outcome"], "routed: own/x")
        self.assertTrue(self.by[("apply_tuned", "gemm_beta1")]["outcome"].startswith("passed through: beta"))
        self.assertTrue(self.by[("apply_no_entry", "gemm")]["outcome"].startswith("passed through: no usable"))
        self.assertEqual(self.by[("plain", "gemm")]["outcome"], "plain")

    def test_routed_calls_may_add_two_us_and_passed_through_ones_one(self):
        checks = {(c["variant"], c["call"]): c for c in bench.verdicts(self.records)}
        self.assertEqual(len(checks), 4)  # the plain records are the baseline, not checked
        routed = checks[("apply_tuned", "gemm")]
        self.assertEqual((routed["kind"], routed["limit_us"], routed["met"]), ("routed", 2.0, False))
        passed = checks[("apply_no_entry", "gemm")]
        self.assertEqual((passed["kind"], passed["limit_us"], passed["met"]), ("pass_through", 1.0, True))


class Commands(unittest.TestCase):
    def test_the_program_runs_unchanged_under_apply_with_the_db_and_a_report(self):
        program = bench.caller_command("/b/apply_call_overhead", "/w/o.json", ["fp32:8x8x8"], 5)
        self.assertEqual(program, ["/b/apply_call_overhead", "--json", "/w/o.json", "--rounds", "5", "fp32:8x8x8"])
        cmd = bench.apply_command("/b/gemmtune", "/w/t.db", "/w/r.json", program)
        self.assertEqual(cmd[:2], ["/b/gemmtune", "apply"])
        self.assertEqual(cmd[cmd.index("--db") + 1], "/w/t.db")
        self.assertEqual(cmd[cmd.index("--") + 1:], program)


if __name__ == "__main__":
    unittest.main()
