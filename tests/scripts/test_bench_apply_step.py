"""scripts/bench_apply_step.py's pure parts, no GPU: the variants each mode runs, the commands a run is made of (the
step under `gemmtune apply` with the db and flags of its variant), the loss comparison against the plain run, a
record's routed share and speedup taken from the apply report and the plain record, and (where PyTorch is installed,
CPU-only will do) the host attribution of a step's GEMM ops."""
import argparse
import contextlib
import io
import json
import importlib.util
import os
import subprocess
import sys
import types
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts")
sys.path.insert(0, SCRIPTS)
import bench_apply_step as bench  # noqa: E402  (the script under test; it imports torch only in its child)


def child(losses, step_ms):
    return {"gpu": "Test GPU", "torch": "2.x", "losses": losses, "step_ms": step_ms}


class Plan(unittest.TestCase):
    def test_fp32_alone_runs_the_fp32_equivalent_variant_and_the_fp64_reference(self):
        self.assertEqual(bench.variants_for("fp32"), ["plain", "apply", "apply_fp32eq", "plain_fp64"])
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
        self.assertNotIn("--no-host-yield", cmd)
        no_yield = bench.apply_command("g", "x.db", False, "r.json", step, host_yield=False)
        self.assertLess(no_yield.index("--no-host-yield"), no_yield.index("--"))
        self.assertEqual(bench.variants_for("tf32", no_yield=True), ["plain", "apply", "apply_no_yield"])
        self.assertNotIn("apply_no_yield", bench.variants_for("fp32"))
        self.assertNotIn("--graph", step)
        self.assertIn("--graph", bench.child_command("odd", "fp32", 50, 30, "/w/out.json", "graph"))


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

    def test_a_graph_step_is_compared_with_the_plain_graph_step_not_the_eager_one(self):
        plain = bench.record("d1024", "tf32", "plain", child([1.0], [10.0]), None, None)
        plain_graph = bench.record("d1024", "tf32", "plain", child([1.0], [8.0]), None, None, "graph")
        applied_graph = bench.record("d1024", "tf32", "apply", child([1.0], [4.0]), [1.0], None, "graph")
        [speedup] = bench.speedups([plain, plain_graph, applied_graph])
        self.assertEqual(speedup["capture"], "graph")
        self.assertAlmostEqual(speedup["speedup"], 2.0)

    def test_repeated_runs_pool_their_steps_and_the_worst_runs_losses_count(self):
        runs = bench.combine([child([1.0, 0.5], [10.0, 10.0]), child([1.0, 0.6], [14.0, 14.0])])
        r = bench.record("d1024", "tf32", "apply", runs, [1.0, 0.5], None)
        self.assertEqual(r["runs"], 2)
        self.assertEqual(r["run_step_ms"], [10.0, 14.0])
        self.assertEqual(r["step_ms"], 12.0)
        self.assertAlmostEqual(r["loss_max_rel"], 0.2)

    def test_interleaved_runs_pair_into_per_process_ratios_beside_the_pooled_one(self):
        plain = bench.record("d1024", "tf32", "plain",
                             bench.combine([child([1.0], [10.0]), child([1.0], [20.0])]), None, None)
        applied = bench.record("d1024", "tf32", "apply",
                               bench.combine([child([1.0], [8.0]), child([1.0], [25.0])]), [1.0], None)
        [speedup] = bench.speedups([plain, applied])
        self.assertEqual(len(speedup["pair_speedups"]), 2)
        self.assertAlmostEqual(speedup["pair_speedups"][0], 10.0 / 8.0)
        self.assertAlmostEqual(speedup["pair_speedups"][1], 20.0 / 25.0)
        self.assertIn("processes 0.800-1.250", bench.summary_line(speedup))

    def test_the_drift_from_fp64_is_shown_beside_plain_fp32s_own(self):
        fp64 = [1.0, 0.5]
        plain = bench.record("d2048", "fp32", "plain", child([1.0, 0.501], [10.0]), None, None, "eager", fp64)
        eq = bench.record("d2048", "fp32", "apply_fp32eq", child([1.0, 0.502], [7.0]), [1.0, 0.501], None,
                          "eager", fp64)
        [speedup] = bench.speedups([plain, eq])
        self.assertAlmostEqual(speedup["plain_loss_max_rel_fp64"], 0.002)
        self.assertAlmostEqual(speedup["loss_max_rel_fp64"], 0.004)
        self.assertIn("vs fp64 4.0e-03 (plain's 2.0e-03)", bench.summary_line(speedup))

    def test_steps_within_a_band_count_until_the_first_step_outside_it(self):
        self.assertEqual(bench.steps_within([1.0, 1.0, 1.0], [1.0, 1.0 + 1e-6, 1.1], 1e-5), 2)
        self.assertEqual(bench.steps_within([1.0, 2.0], [1.0, 2.0], 1e-5), 2)
        self.assertEqual(bench.steps_within([1.0], [1.5], 1e-5), 0)
        self.assertIsNone(bench.steps_within(None, [1.0], 1e-5))

    def test_the_fp64_runs_steps_within_plains_band_sit_beside_the_variants(self):
        plain = bench.record("d2048", "fp32", "plain", child([1.0, 0.5, 0.25], [10.0]), None, None)
        exact = bench.record("d2048", "fp32", "plain_fp64", child([1.0, 0.5, 0.26], [15.0]), [1.0, 0.5, 0.25], None)
        eq = bench.record("d2048", "fp32", "apply_fp32eq", child([1.0, 0.51, 0.25], [7.0]), [1.0, 0.5, 0.25], None)
        [speedup] = bench.speedups([plain, exact, eq])
        self.assertEqual(speedup["steps_within_1e-5"], 1)
        self.assertEqual(speedup["fp64_steps_within_1e-5"], 2)
        self.assertIn("within 1e-5 of plain for 1 steps (fp64: 2)", bench.summary_line(dict(speedup,
                      loss_max_rel_fp64=0.04, plain_loss_max_rel_fp64=0.04)))

    def test_the_gemm_ops_host_time_is_summed_per_step_apart_from_every_others(self):
        totals = [("aten::addmm", 40, 400.0), ("aten::mm", 80, 1200.0), ("aten::gelu", 40, 100.0),
                  ("Optimizer.step#AdamW.step", 10, 300.0)]
        host = bench.gemm_host(totals, 10)
        self.assertEqual(host["gemm_calls_per_step"], 12.0)
        self.assertEqual(host["gemm_self_us_per_step"], 160.0)
        self.assertEqual(host["all_ops_self_us_per_step"], 200.0)

    def test_the_gemm_host_of_several_runs_is_each_fields_median_and_shows_beside_plains(self):
        runs = [dict(child([1.0], [10.0]), gemm_host={"gemm_calls_per_step": 11, "gemm_self_us_per_step": u,
                                                      "all_ops_self_us_per_step": 2 * u}) for u in (100.0, 300.0, 200.0)]
        applied = bench.record("odd", "tf32", "apply", bench.combine(runs), [1.0], None)
        self.assertEqual(applied["gemm_host"]["gemm_self_us_per_step"], 200.0)
        plain = bench.record("odd", "tf32", "plain", bench.combine([dict(child([1.0], [10.0]), gemm_host={
            "gemm_calls_per_step": 11, "gemm_self_us_per_step": 150.0, "all_ops_self_us_per_step": 390.0})]),
            None, None)
        [speedup] = bench.speedups([plain, applied])
        self.assertIn("GEMM ops' host 200 us/step (plain's 150), all ops' 400 (390)", bench.summary_line(speedup))
        graph = bench.record("odd", "tf32", "plain", child([1.0], [9.0]), None, None, "graph")
        self.assertIsNone(graph["gemm_host"])

    @unittest.skipUnless(importlib.util.find_spec("torch"), "needs PyTorch (Debian's python3-torch will do)")
    def test_the_profiler_finds_a_linear_steps_gemm_ops_on_the_cpu(self):
        import torch

        layer, x = torch.nn.Linear(64, 32), torch.randn(17, 64, requires_grad=True)

        def step():
            torch.nn.functional.gelu(layer(x)).sum().backward()

        no_gpu = types.SimpleNamespace(cuda=types.SimpleNamespace(synchronize=lambda: None))
        host = bench.profile_gemm_host(no_gpu, step)
        self.assertEqual(host["gemm_calls_per_step"], 3.0)  # forward addmm; backward mm for x's and the weight's grads
        self.assertGreater(host["gemm_self_us_per_step"], 0.0)
        self.assertGreater(host["all_ops_self_us_per_step"], host["gemm_self_us_per_step"])

    def test_the_routed_flop_share_weighs_each_problems_calls_by_its_flops(self):
        rows = [{"problem": "fwd:10x10x10:nn:row:none:fp32", "calls": 2, "routed_calls": 2},
                {"problem": "30x10x10", "calls": 1, "routed_calls": 0}]
        self.assertAlmostEqual(bench.routed_flop_share(rows), 2000 * 2 / (2000 * 2 + 6000))
        self.assertIsNone(bench.routed_flop_share([{"problem": "?", "calls": 1, "routed_calls": 1}]))
        self.assertIsNone(bench.routed_flop_share([]))
        kept = [{"problem": "10x10x10", "calls": 2, "routed_calls": 0,
                 "reason": "the db's entry is cuBLAS's own choice (cublas/sgemm), which the call already makes"},
                {"problem": "10x10x10", "calls": 2, "routed_calls": 0, "reason": "beta = 1 (accumulates into C)"}]
        self.assertAlmostEqual(bench.routed_flop_share(kept, count_cublas_entries=True), 0.5)
        self.assertEqual(bench.routed_flop_share(kept), 0.0)

    def test_the_yielded_flop_share_counts_the_calls_that_went_to_cublas_on_a_drained_stream(self):
        rows = [{"problem": "10x10x10", "calls": 3, "routed_calls": 3, "reason": ""},
                {"problem": "10x10x10", "calls": 1, "routed_calls": 0,
                 "reason": "the stream had drained (the GPU waited for the host), and this entry costs more"},
                {"problem": "20x10x10", "calls": 1, "routed_calls": 0, "reason": "beta = 1 (accumulates into C)"}]
        self.assertAlmostEqual(bench.yielded_flop_share(rows), 2000 / (4 * 2000 + 4000))
        self.assertEqual(bench.yielded_flop_share(rows[:1]), 0.0)
        self.assertIsNone(bench.yielded_flop_share([{"problem": "?", "calls": 1, "routed_calls": 0}]))


class Driver(unittest.TestCase):
    """The driver end to end with its commands faked: every command it would run is recorded, the child's and the
    report's files written as the real ones would be, so a run on the GPU cannot fail on its own bookkeeping."""

    def fake_run(self, commands, pinned=None):
        def run(cmd, log, cpus=None):
            if pinned is not None:
                pinned.append(cpus)
            commands.append(cmd)
            if cmd[1] == "trace":
                open(cmd[cmd.index("--db") + 1], "w").close()
            if "--child-out" in cmd:
                out = cmd[cmd.index("--child-out") + 1]
                applied = cmd[1] == "apply"
                eq = "--fp32-equivalent" in cmd[:cmd.index("--")] if applied else False
                losses = [1.0, 0.502 if "--fp64" in cmd else 0.5 * (1.01 if eq else 1.0)]
                with open(out, "w") as f:
                    json.dump({"gpu": "Test GPU", "torch": "2.x", "losses": losses,
                               "step_ms": [9.0, 10.0, 11.0] if applied else [12.0, 12.0, 12.0]}, f)
                if applied:
                    with open(cmd[cmd.index("--report") + 1], "w") as f:
                        json.dump({"calls": 10, "routed_calls": 9, "routed_share": 0.9, "rows": []}, f)
        return run

    def drive(self, args, pinned=None):
        """bench_apply_step's driver on `args` with its commands faked: the document it wrote and the commands."""
        with tempfile.TemporaryDirectory() as tmp:
            commands = []
            original = bench.run
            bench.run = self.fake_run(commands, pinned)
            try:
                out = os.path.join(tmp, "apply_step.json")
                with contextlib.redirect_stdout(io.StringIO()):
                    bench.main(args + ["--steps", "2", "--timed-steps", "3", "--gemmtune", "/b/gemmtune",
                                       "--db-dir", tmp, "--out", out])
            finally:
                bench.run = original
            with open(out) as f:
                return json.load(f), commands

    def test_only_the_measured_steps_are_pinned_not_the_trace_or_the_sweep(self):
        pinned = []
        _, commands = self.drive(["--models", "d1024", "--modes", "tf32", "--captures", "graph", "--cpus", "2-3"],
                                 pinned)
        by_verb = {c[1]: p for c, p in zip(commands, pinned)}
        self.assertIsNone(by_verb["trace"])
        self.assertIsNone(by_verb["sweep"])
        self.assertEqual(by_verb["apply"], {2, 3})

    def test_both_captures_run_every_variant_once_tuned(self):
        doc, commands = self.drive(["--models", "d1024", "--modes", "tf32"])
        self.assertEqual([(r["variant"], r["capture"]) for r in doc["records"]],
                         [("plain", "eager"), ("apply", "eager"), ("plain", "graph"), ("apply", "graph")])
        self.assertEqual([c[1] for c in commands].count("sweep"), 1)
        self.assertEqual(doc["records"][0]["runs"], 3)  # eager variants run --repeats (3) processes each
        self.assertEqual(doc["records"][2]["runs"], 1)
        graph_runs = [c for c in commands if "--graph" in c]
        self.assertEqual(len(graph_runs), 2)
        self.assertEqual(sum(c[1] == "apply" for c in graph_runs), 1)  # the other is the plain step's own

    def test_an_eager_steps_variants_run_in_an_order_rotated_at_each_repeat(self):
        _, commands = self.drive(["--models", "odd", "--modes", "tf32", "--captures", "eager", "--no-yield-variant"])

        def variant(cmd):
            if cmd[1] != "apply":
                return "plain"
            return "apply_no_yield" if "--no-host-yield" in cmd[:cmd.index("--")] else "apply"
        ran = [variant(c) for c in commands if "--child-out" in c and c[1] != "trace"]
        self.assertEqual(ran, ["plain", "apply", "apply_no_yield", "apply", "apply_no_yield", "plain",
                               "apply_no_yield", "plain", "apply"])

    def test_each_model_and_mode_is_tuned_then_run_plain_and_applied_into_one_document(self):
        doc, commands = self.drive(["--models", "odd", "--captures", "eager"])
        self.assertNotIn("partial", doc)
        self.assertEqual([(r["mode"], r["variant"]) for r in doc["records"]],
                         [("fp32", "plain"), ("fp32", "apply"), ("fp32", "apply_fp32eq"), ("fp32", "plain_fp64"),
                          ("tf32", "plain"), ("tf32", "apply")])
        eq = doc["records"][2]
        self.assertAlmostEqual(eq["loss_max_rel"], 0.01)
        # Against the fp64 run, whose command alone asked for fp64 and ran without apply.
        self.assertAlmostEqual(eq["loss_max_rel_fp64"], 0.003 / 0.502)
        self.assertAlmostEqual(doc["records"][0]["loss_max_rel_fp64"], 0.002 / 0.502)
        self.assertIsNone(doc["records"][4]["loss_max_rel_fp64"])  # tf32 has no fp64 run
        fp64_runs = [c for c in commands if "--fp64" in c]
        self.assertTrue(fp64_runs and all(c[1] != "apply" for c in fp64_runs))
        self.assertNotIn("plain_fp64", [x["variant"] for x in doc["speedups"]])
        self.assertEqual(eq["routed_share"], 0.9)
        self.assertEqual((eq["d_model"], eq["hidden"], eq["tokens"]), (1030, 4111, 999))
        self.assertAlmostEqual(doc["speedups"][0]["speedup"], 12.0 / 10.0)
        verbs = [c[1] for c in commands]
        self.assertEqual(verbs.count("trace"), 2)
        self.assertEqual(verbs.count("sweep"), 3)  # fp32: plain and --fp32-equivalent dbs; tf32: one
        eq_sweeps = [c for c in commands if c[1] == "sweep" and "--fp32-equivalent" in c]
        self.assertEqual(len(eq_sweeps), 1)
        self.assertTrue(eq_sweeps[0][eq_sweeps[0].index("--db") + 1].endswith(".eq"))

    def test_a_rounding_band_reruns_plain_and_fp32_equivalent_on_reordered_rows_and_sets_them_side_by_side(self):
        doc, commands = self.drive(["--models", "d4096", "--modes", "fp32", "--captures", "eager", "--repeats", "1",
                                    "--rounding-band", "2"])
        self.assertEqual([r["variant"] for r in doc["records"]],
                         ["plain", "apply", "apply_fp32eq", "plain_fp64", "plain_rows1", "apply_fp32eq_rows1",
                          "plain_rows2", "apply_fp32eq_rows2"])
        seeds = {c[c.index("--rows-seed") + 1] for c in commands if "--rows-seed" in c}
        self.assertEqual(seeds, {"1", "2"})
        reordered_eq = [c for c in commands if "--rows-seed" in c and c[1] == "apply"]
        self.assertEqual(len(reordered_eq), 2)
        self.assertTrue(all("--fp32-equivalent" in c[:c.index("--")] for c in reordered_eq))
        self.assertTrue(all(c[c.index("--db") + 1].endswith(".eq") for c in reordered_eq))
        [band] = doc["rounding_band"]
        self.assertEqual((band["model"], band["capture"], band["row_orders"]), ("d4096", "eager", 2))
        self.assertEqual(band["plain_vs_plain"], [0.0, 0.0])  # the fake child's losses ignore the row order
        self.assertEqual([round(v, 6) for v in band["fp32eq_vs_plain"]], [0.01] * 3)
        self.assertEqual(len(band["plain_vs_fp64"]), 3)
        self.assertEqual(bench.split_variant("apply_fp32eq_rows12"), ("apply_fp32eq", 12))
        self.assertEqual(bench.split_variant("plain_fp64"), ("plain_fp64", 0))
        self.assertNotIn("rounding_band", self.drive(["--models", "d1024", "--modes", "tf32", "--captures", "graph",
                                                      "--rounding-band", "2"])[0])


class Pinning(unittest.TestCase):
    def test_a_cpu_list_reads_as_taskset_reads_it_and_a_bad_one_is_a_usage_error(self):
        self.assertEqual(bench.cpu_list("2-4,8"), {2, 3, 4, 8})
        self.assertEqual(bench.cpu_list("0"), {0})
        for bad in ("", "a-b", "3-1", "2,x"):
            with self.assertRaises(argparse.ArgumentTypeError):
                bench.cpu_list(bad)


class Merge(unittest.TestCase):
    def part(self, records, partial=False):
        doc = {"schema": "gemmtune.apply_step", "gpu": "Test GPU", "models": {}, "commands": ["part"],
               "records": records}
        if partial:
            doc["partial"] = True
        return doc

    def test_parts_join_a_later_record_replaces_an_earlier_one_and_speedups_are_recomputed(self):
        plain = bench.record("d1024", "tf32", "plain", child([1.0], [12.0]), None, None)
        old = bench.record("d1024", "tf32", "apply", child([1.0], [12.0]), [1.0], None)
        new = bench.record("d1024", "tf32", "apply", child([1.0], [10.0]), [1.0], None)
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for i, doc in enumerate([self.part([plain, old], partial=True), self.part([new])]):
                paths.append(os.path.join(tmp, f"part{i}.json"))
                with open(paths[-1], "w") as f:
                    json.dump(doc, f)
            out = os.path.join(tmp, "merged.json")
            self.assertEqual(bench.main(["--merge", *paths, "--out", out]), 0)
            with open(out) as f:
                merged = json.load(f)
        self.assertTrue(merged["partial"])
        self.assertEqual(len(merged["records"]), 2)
        [speedup] = merged["speedups"]
        self.assertAlmostEqual(speedup["speedup"], 1.2)


class Arguments(unittest.TestCase):
    def test_an_unknown_model_or_no_steps_is_a_usage_error(self):
        script = os.path.join(SCRIPTS, "bench_apply_step.py")
        for args in (["--models", "d999"], ["--steps", "0"]):
            done = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
            self.assertEqual(done.returncode, 2, done.stderr)


if __name__ == "__main__":
    unittest.main()
