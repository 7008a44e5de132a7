"""scripts/bench_apply_step.py's pure parts, no GPU and no PyTorch: the variants each mode runs, the commands a run
is made of (the step under `gemmtune apply` with the db and flags of its variant), the loss comparison against the
plain run, and a record's routed share and speedup taken from the apply report and the plain record."""
import os
import subprocess
import sys
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts")
sys.path.insert(0, SCRIPTS)
import bench_apply_step as bench  # noqa: E402  (the script under test; it imports torch only in its child)


def child(losses, step_ms):
    return {"gpu": "Test GPU", "torch": "2.x", "losses": losses, "step_ms": step_ms}


class Plan(unittest.TestCase):
    def test_fp32_alone_runs_the_fp32_equivalent_variant(self):
        self.assertEqual(bench.variants_for("fp32"), ["plain", "apply", "apply_fp32eq"])
        self.assertEqual(bench.variants_for("tf32"), ["plain", "apply"])

    def test_every_size_asked_for_is_there_with_odd_token_counts_and_one_model_of_odd_widths(self):
        self.assertIn(1024, [m["d"] for m in bench.MODELS.values()])
        self.assertIn(2048, [m["d"] for m in bench.MODELS.values()])
        self.assertTrue(any(m["d"] >= 2560 for m in bench.MODELS.values()))
        self.assertTrue(all(m["tokens"] % 2 == 1 for m in bench.MODELS.values()))
        self.assertTrue(any(m["d"] % 16 and m["hidden"] % 16 for m in bench.MODELS.values()))

    def test_the_step_runs_under_apply_with_its_variants_db_and_flag(self):
        step = bench.child_command("odd", "fp32", 50, 30, "/w/out.json")
        self.assertEqual(step[step.index("--d") + 1], "1030")
        self.assertEqual(step[step.index("--tokens") + 1], "999")
        cmd = bench.apply_command("/b/gemmtune", "/w/x.db.eq", True, "/w/r.json", step)
        self.assertEqual(cmd[:3], ["/b/gemmtune", "apply", "--db"])
        self.assertIn("--fp32-equivalent", cmd)
        self.assertEqual(cmd[cmd.index("--") + 1:], step)
        self.assertNotIn("--fp32-equivalent", bench.apply_command("g", "x.db", False, "r.json", step))


class Records(unittest.TestCase):
    def test_loss_max_rel_is_the_largest_step_by_step_relative_difference(self):
        self.assertAlmostEqual(bench.loss_max_rel([2.0, 1.0], [2.0, 1.01]), 0.01)
        self.assertEqual(bench.loss_max_rel([1.0], [1.0]), 0.0)
        self.assertIsNone(bench.loss_max_rel([1.0, 2.0], [1.0]))

    def test_a_record_takes_its_routed_share_from_the_report_and_its_loss_against_plain(self):
        plain = bench.record("d1024", "tf32", "plain", child([1.0, 0.5], [10.0, 11.0, 12.0]), None, None)
        self.assertEqual(plain["routed_share"], 0.0)
        self.assertEqual(plain["loss_max_rel"], 0.0)
        self.assertEqual(plain["step_ms"], 11.0)
        report = {"calls": 10, "routed_calls": 8, "routed_share": 0.8, "rows": []}
        applied = bench.record("d1024", "tf32", "apply", child([1.0, 0.55], [8.0, 9.0, 10.0]), [1.0, 0.5], report)
        self.assertEqual(applied["routed_share"], 0.8)
        self.assertAlmostEqual(applied["loss_max_rel"], 0.1)
        self.assertEqual((applied["d_model"], applied["tokens"]), (1024, 777))
        [speedup] = bench.speedups([plain, applied])
        self.assertAlmostEqual(speedup["speedup"], 11.0 / 9.0)
        self.assertEqual(speedup["variant"], "apply")


class Arguments(unittest.TestCase):
    def test_an_unknown_model_or_no_steps_is_a_usage_error(self):
        script = os.path.join(SCRIPTS, "bench_apply_step.py")
        for args in (["--models", "d999"], ["--steps", "0"]):
            done = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
            self.assertEqual(done.returncode, 2, done.stderr)


if __name__ == "__main__":
    unittest.main()
