"""The torch.compile comparison's plumbing (issue 49), no GPU and no PyTorch: scripts/heldout_shapes.py --compile
draws what the issue asks (256..8192, half with k and n both not multiples of 4, all tuned, bias+gelu only, the same
shapes for the same seed), and scripts/compile_report.py joins a run, computes the ratios, holds a shape below 0.99x
compiled against the target, gives the unaligned half's share of a burst's tensor rate beside the peak's, and refuses
a run whose compiled side is missing or a burst rate above the peak."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts")
CONDITIONS = [("stream", "warm"), ("stream", "cold"), ("graph", "warm"), ("graph", "cold")]


def draw(out, seed):
    subprocess.run([sys.executable, os.path.join(SCRIPTS, "heldout_shapes.py"), "--compile", "--seed", str(seed),
                    "--count", "8", "--out", out, "--max-mnk", "3.2e10"], check=True, capture_output=True)
    with open(os.path.join(out, "shapes.json")) as f:
        shapes = json.load(f)
    with open(os.path.join(out, "profile.json")) as f:
        return shapes, json.load(f)


class HeldoutShapesCompile(unittest.TestCase):
    def test_half_the_shapes_are_both_unaligned_all_in_range_and_tuned(self):
        with tempfile.TemporaryDirectory() as d:
            shapes, profile = draw(d, 7)
        both = [s for s in shapes["shapes"] if s["n"] % 4 and s["k"] % 4]
        aligned = [s for s in shapes["shapes"] if s["n"] % 4 == 0 and s["k"] % 4 == 0]
        self.assertEqual(len(both), 4)
        self.assertEqual(len(aligned), 4)
        for s in shapes["shapes"]:
            self.assertTrue(all(256 <= s[d] <= 8192 for d in "mnk"), s)
            self.assertTrue(s["tuned"])
            self.assertLessEqual(s["m"] * s["n"] * s["k"], 3.2e10)
        self.assertEqual(profile["epilogues"], ["bias+gelu"])
        self.assertEqual(len(profile["shapes"]), 8)

    def test_slices_split_the_draw_in_order_each_half_unaligned_and_a_bad_slice_is_refused(self):
        def sliced(spec):
            return subprocess.run([sys.executable, os.path.join(SCRIPTS, "heldout_shapes.py"), "--compile", "--seed",
                                   "7", "--count", "8", "--max-mnk", "3.2e10", "--slice", spec],
                                  capture_output=True, text=True)
        with tempfile.TemporaryDirectory() as d:
            whole = [f"{s['m']}x{s['n']}x{s['k']}" for s in draw(d, 7)[0]["shapes"]]
        halves = [sliced(f"{i}/2").stdout.strip().split(",") for i in (1, 2)]
        self.assertEqual(halves[0] + halves[1], whole)
        for half in halves:
            unaligned = [s for s in half if int(s.split("x")[1]) % 4 and int(s.split("x")[2]) % 4]
            self.assertEqual(len(unaligned), 2, half)
        bad = sliced("3/2")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--slice 3/2", bad.stderr)

    def test_the_same_seed_draws_the_same_shapes_and_another_seed_others(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b, \
                tempfile.TemporaryDirectory() as c:
            self.assertEqual(draw(a, 3)[0], draw(b, 3)[0])
            self.assertNotEqual(draw(a, 3)[0]["shapes"], draw(c, 4)[0]["shapes"])


def run_files(d, compiled_us, runtime_here_us=None):
    """A two-shape run (one both-unaligned) in tf32: ours 100 us everywhere, compiled as given per shape, and where
    runtime_here_us is given, the runtime timed again in the compiled op's process at that time."""
    shapes = {"seed": 1, "shapes": [{"m": 1000, "n": 1001, "k": 999, "tuned": True},
                                    {"m": 1000, "n": 1000, "k": 1000, "tuned": True}]}
    bench, torch_doc, sweep = {"device": "NVIDIA H200|sm_90", "seed": 1, "method": "m", "records": []}, \
        {"torch": "t", "method": "m", "records": []}, {"problems": []}
    for s in shapes["shapes"]:
        shape = f"{s['m']}x{s['n']}x{s['k']}"
        sweep["problems"].append({"problem_key": f"fwd:{shape}:nn:row:bias+gelu:tf32", "best_us": 90.0,
                                  "best_candidate": "own/x", "cost": {"wall_s": 2.5}})
        for launch, cond in CONDITIONS:
            key = {"shape": shape, "mode": "tf32", "epilogue": "bias+gelu", "launch": launch, "condition": cond}
            bench["records"].append({**key, "runtime_us": 100.0, "heuristic_us": 300.0, "candidate": "own/x"})
            if compiled_us.get(shape) is not None:
                torch_doc["records"].append({**key, "torch_us": 250.0, "compiled_us": compiled_us[shape],
                                             "compile_s": 9.0})
                if runtime_here_us is not None:
                    torch_doc["records"][-1]["runtime_here_us"] = runtime_here_us
    paths = {}
    for name, doc in (("shapes", shapes), ("bench", bench), ("torch", torch_doc), ("sweep", sweep)):
        paths[name] = os.path.join(d, name + ".json")
        with open(paths[name], "w") as f:
            json.dump(doc, f)
    return paths


def report(d, paths, *flags):
    out = os.path.join(d, "out.json")
    proc = subprocess.run([sys.executable, os.path.join(SCRIPTS, "compile_report.py"), "--bench", paths["bench"],
                           "--torch", paths["torch"], "--sweep", paths["sweep"], "--shapes", paths["shapes"],
                           "--out", out, *flags], capture_output=True, text=True)
    doc = None
    if proc.returncode == 0:
        with open(out) as f:
            doc = json.load(f)
    return proc, doc


class CompileReport(unittest.TestCase):
    def joined(self, compiled_us, *flags):
        """The report of a run with these compiled times, which must succeed: (its JSON, what it printed)."""
        with tempfile.TemporaryDirectory() as d:
            proc, doc = report(d, run_files(d, compiled_us), *flags)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return doc, proc.stdout

    def test_ratios_peak_share_and_sweep_time_come_from_the_run(self):
        doc, _ = self.joined({"1000x1001x999": 150.0, "1000x1000x1000": 130.0})
        r = doc["records"][0]
        self.assertAlmostEqual(r["vs_compiled"], 1.5)
        self.assertAlmostEqual(r["vs_heuristic"], 3.0)
        self.assertAlmostEqual(r["runtime_tflops"], 2 * 1000 * 1001 * 999 / 100e-6 / 1e12)
        self.assertTrue(r["both_unaligned"])
        self.assertEqual(r["sweep_s"], 2.5)
        s = doc["summary"][0]
        self.assertTrue(s["target_every_shape_0.99"])
        self.assertEqual(s["unaligned_shapes"], 1)
        self.assertFalse(s["target_unaligned_50pct_peak"])  # 20 TFLOP/s is 4% of the H200's peak
        self.assertTrue(s["target_unaligned_2x_heuristic"])

    def test_the_unaligned_half_is_also_given_as_a_share_of_what_the_pipes_deliver_in_a_burst(self):
        doc, printed = self.joined({"1000x1001x999": 150.0, "1000x1000x1000": 130.0})
        s = doc["summary"][0]
        self.assertAlmostEqual(doc["burst_tf32_tflops"], 2048 * 132 * 1.568e9 / 1e12)
        self.assertAlmostEqual(s["unaligned_geomean_pct_of_burst"],
                               s["unaligned_geomean_pct_of_peak"] * 494.7 / doc["burst_tf32_tflops"])
        self.assertIn("% of a burst's", printed)
        self.assertNotIn("target_unaligned_50pct_burst", s, "the burst share is a distance, not a target")
        doc, _ = self.joined({"1000x1001x999": 150.0, "1000x1000x1000": 130.0}, "--burst-tf32-tflops", "247.35")
        self.assertAlmostEqual(doc["summary"][0]["unaligned_geomean_pct_of_burst"],
                               2 * doc["summary"][0]["unaligned_geomean_pct_of_peak"])

    def test_a_burst_rate_above_the_peak_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            proc, _ = report(d, run_files(d, {"1000x1001x999": 150.0, "1000x1000x1000": 130.0}),
                             "--burst-tf32-tflops", "600")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--burst-tf32-tflops 600", proc.stderr)

    def test_a_shape_below_099x_compiled_misses_the_target(self):
        doc, printed = self.joined({"1000x1001x999": 150.0, "1000x1000x1000": 98.0})
        s = doc["summary"][0]
        self.assertEqual(s["below_0.99"], 1)
        self.assertEqual(s["min_shape"], "1000x1000x1000")
        self.assertFalse(s["target_every_shape_0.99"])
        self.assertIn("MISSED: target_every_shape_0.99", printed)

    def test_the_runtime_timed_in_the_compiled_ops_process_gives_the_one_process_ratio_beside_the_other(self):
        with tempfile.TemporaryDirectory() as d:
            proc, doc = report(d, run_files(d, {"1000x1001x999": 150.0, "1000x1000x1000": 98.0}, runtime_here_us=96.0))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        r = next(r for r in doc["records"] if r["shape"] == "1000x1000x1000")
        self.assertAlmostEqual(r["vs_compiled"], 0.98)
        self.assertAlmostEqual(r["vs_compiled_here"], 98.0 / 96.0)
        s = doc["summary"][0]
        self.assertEqual(s["below_0.99"], 1, "the two-process target is still judged on its own ratio")
        self.assertEqual(s["below_0.99_here"], 0)
        self.assertEqual(s["same_process_shapes"], 2)
        self.assertAlmostEqual(s["min_vs_compiled_here"], 98.0 / 96.0)
        self.assertTrue(s["target_every_shape_0.99_here"])
        self.assertFalse(s["target_every_shape_0.99"])
        self.assertIn("in one process: geomean", proc.stdout)
        self.assertIn("MISSED: target_every_shape_0.99", proc.stdout)
        self.assertRegex(proc.stdout, r"met: [^;]*target_every_shape_0\.99_here")
        doc_without, _ = self.joined({"1000x1001x999": 150.0, "1000x1000x1000": 98.0})
        self.assertNotIn("below_0.99_here", doc_without["summary"][0], "no same-process side, no such count")
        self.assertNotIn("target_every_shape_0.99_here", doc_without["summary"][0])

    def test_a_shape_below_099x_compiled_in_one_process_misses_the_one_process_target(self):
        with tempfile.TemporaryDirectory() as d:
            proc, doc = report(d, run_files(d, {"1000x1001x999": 150.0, "1000x1000x1000": 98.0}, runtime_here_us=99.5))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        s = doc["summary"][0]
        self.assertEqual(s["below_0.99_here"], 1)
        self.assertFalse(s["target_every_shape_0.99_here"])
        self.assertIn("target_every_shape_0.99_here", proc.stdout.split("MISSED:")[1])

    def test_a_run_without_the_compiled_side_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            proc, _ = report(d, run_files(d, {"1000x1001x999": 150.0}))
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("no compiled timing", proc.stderr)

    def test_a_run_cut_short_is_reported_on_what_both_sides_timed_and_names_the_rest(self):
        doc, _ = self.joined({"1000x1001x999": 150.0}, "--allow-missing")
        self.assertEqual(doc["not_compared"], ["tf32 1000x1000x1000"])
        self.assertEqual({r["shape"] for r in doc["records"]}, {"1000x1001x999"})
        self.assertEqual(doc["summary"][0]["shapes"], 1)


    def test_a_runs_parts_timed_in_two_calls_join_into_one_report(self):
        with tempfile.TemporaryDirectory() as d:
            paths = run_files(d, {"1000x1001x999": 150.0, "1000x1000x1000": 130.0})
            for name in ("bench", "torch", "sweep"):
                with open(paths[name]) as f:
                    doc = json.load(f)
                fp32 = json.loads(json.dumps(doc).replace("tf32", "fp32"))
                paths[name + "_fp32"] = os.path.join(d, name + "_fp32.json")
                with open(paths[name + "_fp32"], "w") as f:
                    json.dump(fp32, f)
            proc, doc = report(d, paths, "--bench", paths["bench_fp32"], "--torch", paths["torch_fp32"],
                               "--sweep", paths["sweep_fp32"])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual({r["mode"] for r in doc["records"]}, {"tf32", "fp32"})
            self.assertEqual(len(doc["records"]), 2 * 2 * len(CONDITIONS))
            self.assertTrue(all(r["sweep_s"] == 2.5 for r in doc["records"]))

            with open(paths["bench_fp32"]) as f:
                other = json.load(f)
            other["device"] = "NVIDIA A100|sm_80"
            with open(paths["bench_fp32"], "w") as f:
                json.dump(other, f)
            proc, _ = report(d, paths, "--bench", paths["bench_fp32"], "--torch", paths["torch_fp32"],
                             "--sweep", paths["sweep_fp32"])
            self.assertNotEqual(proc.returncode, 0)
            self.assertIn("another device", proc.stderr)


class UnalignedVsAligned(unittest.TestCase):
    """scripts/unaligned_vs_aligned.py: the both-unaligned shapes of a comparison beside their aligned twins."""

    def test_the_plan_pairs_each_both_unaligned_shape_with_its_twin_and_the_report_joins_them(self):
        sys.path.insert(0, SCRIPTS)
        import unaligned_vs_aligned as uva
        compile_doc = {"records": [{"shape": "1000x1001x999"}, {"shape": "1000x1000x1000"}, {"shape": "64x68x63"}]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "compile.json")
            with open(path, "w") as f:
                json.dump(compile_doc, f)
            profile = uva.plan(path, d)
        self.assertEqual(profile["shapes"], [[1000, 1001, 999], [1000, 1004, 1000]])
        key = lambda s: "fwd:" + "x".join(map(str, s)) + ":nn:row:bias+gelu:tf32"
        rows, summary = uva.report({"problems": [
            {"problem_key": key([1000, 1001, 999]), "best_us": 30.0, "best_candidate": "lt/x+pad"},
            {"problem_key": key([1000, 1004, 1000]), "best_us": 10.0, "best_candidate": "own/y"}]})
        self.assertEqual(len(rows), 1)
        self.assertAlmostEqual(rows[0]["ratio"], 3.0)
        self.assertAlmostEqual(rows[0]["aligned_pct_peak"], 3 * rows[0]["unaligned_pct_peak"])
        self.assertEqual(summary["shapes"], 1)


if __name__ == "__main__":
    unittest.main()
