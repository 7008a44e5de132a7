"""scripts/bench_apply_overhead.py's pure parts, no GPU: the commands it wraps the program in, the control's noise
beside each record, the outcome read from the apply report, and the target each record is held to (routed +2 us,
passed through +1 us)."""
import os
import sys
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts")
sys.path.insert(0, SCRIPTS)
import bench_apply_overhead as bench  # noqa: E402  (the script under test)


def caller_run(extra_us):
    """A caller's output: one spec, its two calls, extra_us = (gemm, gemm_beta1)."""
    return {"gpu": "Test GPU", "records": [
        {"spec": "tf32:64x32x16", "mode": "tf32", "m": 64, "n": 32, "k": 16, "call": call, "host_us": 5.0 + us,
         "real_host_us": 5.0, "extra_us": us, "gpu_us": 3.0} for call, us in zip(("gemm", "gemm_beta1"), extra_us)]}


BETA_ROW = {"api": "cublasSgemm_v2", "problem": "fp32 m 64 n 32 k 16 NN ld 64/16/64", "calls": 10, "routed_calls": 0,
            "candidate": "", "reason": "beta = 1.000000 (accumulates into C)"}
REPORT_TUNED = {"rows": [
    {"api": "cublasSgemm_v2", "problem": "fwd:32x64x16:nn:row:none:fp32", "calls": 10, "routed_calls": 0,
     "candidate": "", "reason": "the fp32 twin, not this call"},
    {"api": "cublasSgemm_v2", "problem": "fwd:32x64x16:nn:row:none:tf32", "calls": 10, "routed_calls": 10,
     "candidate": "own/x", "reason": ""}, BETA_ROW]}
REPORT_NO_ENTRY = {"rows": [
    {"api": "cublasSgemm_v2", "problem": "fwd:32x64x16:nn:row:none:tf32", "calls": 10, "routed_calls": 0,
     "candidate": "", "reason": "no usable exact entry on GPU 0"}, BETA_ROW]}


class Records(unittest.TestCase):
    def setUp(self):
        runs = {"plain": caller_run((0.1, -0.3)), "apply_no_entry": caller_run((0.5, 0.3)),
                "apply_tuned": caller_run((2.9, 0.3))}
        self.records = bench.records_of(runs, {"apply_no_entry": REPORT_NO_ENTRY, "apply_tuned": REPORT_TUNED})
        self.by = {(r["variant"], r["call"]): r for r in self.records}

    def test_the_plain_runs_pairing_is_the_noise_of_every_variants_record(self):
        self.assertAlmostEqual(self.by[("apply_tuned", "gemm")]["plain_noise_us"], 0.1)
        self.assertAlmostEqual(self.by[("apply_tuned", "gemm_beta1")]["plain_noise_us"], 0.3)
        self.assertAlmostEqual(self.by[("apply_tuned", "gemm")]["extra_us"], 2.9)

    def test_the_outcome_is_read_from_the_report_row_of_the_calls_problem_and_mode(self):
        self.assertEqual(self.by[("apply_tuned", "gemm")]["outcome"], "routed: own/x")
        self.assertTrue(self.by[("apply_tuned", "gemm_beta1")]["outcome"].startswith("passed through: beta"))
        self.assertTrue(self.by[("apply_no_entry", "gemm")]["outcome"].startswith("passed through: no usable"))
        self.assertEqual(self.by[("plain", "gemm")]["outcome"], "plain")

    def test_a_cublasLt_bias_call_is_told_from_the_sgemm_call_of_the_same_shape(self):
        lt_row = {"api": "cublasLtMatmul", "problem": "fwd:32x64x16:nn:row:bias:tf32", "calls": 10,
                  "routed_calls": 0, "candidate": "", "reason": "the db's entry is cuBLAS's own choice"}
        report = {"rows": REPORT_TUNED["rows"] + [lt_row]}
        lt = {"call": "lt_bias", "m": 64, "n": 32, "k": 16, "mode": "tf32"}
        self.assertEqual(bench.outcome(report, lt), "passed through: the db's entry is cuBLAS's own choice")
        self.assertEqual(bench.outcome(report, dict(lt, call="gemm")), "routed: own/x")

    def test_routed_calls_may_add_two_us_and_passed_through_ones_one(self):
        checks = {(c["variant"], c["call"]): c for c in bench.verdicts(self.records)}
        self.assertEqual(len(checks), 4)  # the plain records are the control, not checked
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
