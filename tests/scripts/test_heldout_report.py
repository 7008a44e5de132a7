"""scripts/heldout_report.py's view against PyTorch eager (issue 48), no GPU and no PyTorch: per mode x epilogue x
launch x condition, the share of records below 0.99x eager, those below 0.97x and the geomean, each held to its
target."""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts"))
import heldout_report  # noqa: E402


def record(shape, epilogue, runtime_us, torch_us):
    return {"mode": "tf32", "epilogue": epilogue, "launch": "stream", "condition": "warm", "shape": shape,
            "runtime_us": runtime_us, "torch_us": torch_us, "selection": "exact", "candidate": "lt/x"}


class EagerRows(unittest.TestCase):
    def test_a_group_above_eager_everywhere_meets_its_targets(self):
        rows, below = heldout_report.eager_rows([record(f"{i}x1x1", "bias+gelu", 100, 130) for i in range(60)])
        self.assertEqual(len(rows), 1)
        self.assertTrue(rows[0]["met"])
        self.assertEqual(below, [])

    def test_one_record_in_fifty_below_the_band_is_allowed_two_are_not(self):
        fast = [record(f"{i}x1x1", "none", 100, 120) for i in range(49)]
        one = heldout_report.eager_rows(fast + [record("a", "none", 100, 98)])[0][0]
        self.assertAlmostEqual(one["share_below_band"], 1 / 50)
        self.assertTrue(one["met"])
        two = heldout_report.eager_rows(fast + [record("a", "none", 100, 98), record("b", "none", 100, 98)])[0][0]
        self.assertFalse(two["met"])

    def test_a_record_below_the_floor_or_a_low_geomean_misses(self):
        fast = [record(f"{i}x1x1", "none", 100, 120) for i in range(99)]
        rows, below = heldout_report.eager_rows(fast + [record("a", "none", 100, 96)])
        self.assertEqual(rows[0]["below_floor"], 1)
        self.assertFalse(rows[0]["met"])
        self.assertEqual([r["shape"] for _, r in below], ["a"])
        slow = heldout_report.eager_rows([record(f"{i}x1x1", "bias+gelu", 100, 115) for i in range(10)])[0]
        self.assertFalse(slow[0]["met"])  # 1.15x < 1.2x with bias+gelu

    def test_records_without_a_pytorch_time_are_left_out(self):
        r = record("a", "none", 100, 120)
        del r["torch_us"]
        self.assertEqual(heldout_report.eager_rows([r]), ([], []))


class EagerCallRows(unittest.TestCase):
    def test_only_cublas_sgemm_with_no_epilogue_counts_and_both_views_are_ranged_per_condition(self):
        def call(shape, runtime_us, torch_us, candidate="cublas/sgemm", epilogue="none", one=None):
            r = dict(record(shape, epilogue, runtime_us, torch_us), candidate=candidate)
            if one:
                r["one_process"] = {"runtime_us": one[0], "torch_us": one[1]}
            return r
        rows = heldout_report.eager_call_rows([
            call("a", 100, 97, one=(100, 100.5)), call("b", 100, 104, one=(100, 99.5)),
            call("c", 100, 50, candidate="lt/x"), call("d", 100, 50, epilogue="bias+gelu")])
        row, = rows
        self.assertEqual((row["launch"], row["condition"], row["n"]), ("stream", "warm", 2))
        self.assertAlmostEqual(row["across_min"], 0.97)
        self.assertAlmostEqual(row["across_max"], 1.04)
        self.assertAlmostEqual(row["one_process_min"], 0.995)
        self.assertAlmostEqual(row["one_process_max"], 1.005)
        no_one, = heldout_report.eager_call_rows([call("a", 100, 99)])
        self.assertIsNone(no_one["one_process_min"])


class ByProblemClass(unittest.TestCase):
    def test_decode_sized_shapes_are_split_off_and_heuristic_firsts_distance_to_the_limits_is_their_median(self):
        def rec(shape, heuristic_us, runtime_us):
            return dict(record(shape, "none", runtime_us, None), heuristic_us=heuristic_us)
        # 1x4096x4096 tf32 in 20 us: 4*(4096 + 4096*4096 + 4096) bytes, 67.1 MB at 3.36 TB/s, 70% of 4.8 TB/s.
        recs = [rec("1x4096x4096", 20.0, 20.0), rec("64x1024x1024", 10.0, 8.0), rec("4096x4096x4096", 400.0, 320.0)]
        decode, rest = heldout_report.by_problem_class(recs, "nvidia-h200")
        self.assertEqual((decode["class"], decode["n"], rest["class"], rest["n"]), ("decode", 2, "rest", 1))
        self.assertAlmostEqual(decode["vs_heuristic"], (1.0 * 1.25) ** 0.5)
        self.assertAlmostEqual(rest["heuristic_pct_peak_median"], 100 * 2 * 4096 ** 3 / 400e-6 / 494.7e12)
        self.assertAlmostEqual(decode["heuristic_pct_dram_max"], 100 * 4 * (4096 + 4096 * 4096 + 4096) / 20e-6 / 4.8e12)
        with_bias = dict(record("1x4096x4096", "bias+gelu", 20.0, None), heuristic_us=20.0)
        decode_bias, _ = heldout_report.by_problem_class([with_bias, recs[2]], "nvidia-h200")
        self.assertAlmostEqual(decode_bias["heuristic_pct_dram_max"],
                               100 * 4 * (4096 + 4096 * 4096 + 4096 + 4096) / 20e-6 / 4.8e12, msg="the bias is read too")
        unknown, _ = heldout_report.by_problem_class(recs, "some-other-gpu")
        self.assertNotIn("heuristic_pct_dram_max", unknown, "no limits are guessed for a GPU not in the table")


class EagerByClass(unittest.TestCase):
    def test_decode_sized_problems_are_split_off_per_condition_with_eagers_share_of_the_peak(self):
        def rec(shape, launch, condition, ours, eager):
            return dict(record(shape, "none", 99.0, eager), mode="fp32", launch=launch, condition=condition,
                        runtime_here_us=ours, seed=1)
        recs = [rec("4x4096x4096", "stream", "warm", 10.0, 15.0), rec("4x4096x4096", "graph", "cold", 10.0, 12.0),
                rec("8x1024x1024", "stream", "warm", 10.0, 12.0),
                rec("1024x1024x1024", "stream", "warm", 40.0, 50.0), rec("1024x1024x1024", "graph", "warm", 40.0, None),
                rec("1024x1024x1024", "graph", "cold", 40.0, 20.0)]
        decode, rest = heldout_report.eager_by_class(recs, "nvidia-h100-80gb-hbm3")
        self.assertEqual((decode["class"], decode["problems"], rest["class"], rest["problems"]),
                         ("decode", 2, "rest", 1))
        self.assertAlmostEqual(decode["geomean"]["stream/warm"], (1.5 * 1.2) ** 0.5)
        self.assertAlmostEqual(decode["geomean"]["graph/cold"], 1.2)
        self.assertTrue(math.isnan(rest["geomean"]["graph/warm"]), "a record without eager's time is left out")
        self.assertAlmostEqual(rest["eager_pct_peak_median"], 100 * 2 * 1024 ** 3 / 50e-6 / 66.9e12,
                               msg="eager's share from its stream/warm time alone")
        unknown = heldout_report.eager_by_class(recs, "some-other-gpu")
        self.assertNotIn("eager_pct_peak_median", unknown[1], "no limits are guessed for a GPU not in the table")


class EagerRepeatRows(unittest.TestCase):
    def test_eager_against_itself_is_held_to_the_same_targets_in_the_benchmarks_direction(self):
        rs = [dict(record(f"{i}x1x1", "none", 0, 100.0), torch_repeat_us=100.0) for i in range(48)]
        rs += [dict(record("slow", "none", 0, 100.0), torch_repeat_us=98.0),  # the later run faster: 0.98x
               dict(record("fast", "none", 0, 100.0), torch_repeat_us=102.0)]
        row, = heldout_report.eager_repeat_rows(rs)
        self.assertEqual(row["n"], 50)
        self.assertAlmostEqual(row["min"], 0.98)
        self.assertEqual(row["min_case"], "slow")
        self.assertAlmostEqual(row["share_below_band"], 1 / 50)
        self.assertAlmostEqual(row["share_outside_band"], 2 / 50)
        self.assertTrue(row["met"])  # 2% below the band, none below the floor; no geomean asked of 1.0x
        rs.append(dict(record("floor", "none", 0, 100.0), torch_repeat_us=96.0))
        row, = heldout_report.eager_repeat_rows(rs)
        self.assertEqual(row["below_floor"], 1)
        self.assertFalse(row["met"])

    def test_records_without_both_pytorch_runs_are_left_out(self):
        self.assertEqual(heldout_report.eager_repeat_rows([record("a", "none", 100, 120)]), [])


class ExplainedCandidate(unittest.TestCase):
    def test_the_candidate_is_the_word_after_the_problem_key_and_a_missing_line_is_a_question_mark(self):
        line = ("fwd:632x5120x3072:nn:row:bias+gelu:tf32: lt/a43-t24-s34-k-1-r2-w1-c0-cl5-i0+bias [default] cuBLASLt "
                "heuristic's first algo with its BIAS epilogue: faster")
        self.assertEqual(heldout_report.explained_candidate(line), "lt/a43-t24-s34-k-1-r2-w1-c0-cl5-i0+bias")
        self.assertEqual(heldout_report.explained_candidate(None), "?")
        self.assertEqual(heldout_report.explained_candidate("no key here"), "?")


def case(shape, epilogue, ratio):
    return {"shape": shape, "mode": "tf32", "epilogue": epilogue, "seed": 1,
            "one_process_stream_warm": {"runtime_us": 100.0, "torch_us": 100.0 * ratio, "ratio": ratio}}


class Usage(unittest.TestCase):
    def test_a_missing_or_malformed_bench_file_is_a_usage_error_naming_it(self):
        script = os.path.join(os.path.dirname(os.path.abspath(heldout_report.__file__)), "heldout_report.py")
        with tempfile.TemporaryDirectory() as d:
            bench = os.path.join(d, "bench.json")
            with open(bench, "w") as f:
                json.dump({"records": []}, f)
            for args in (["--bench", "/nonexistent/b.json"],
                         ["--bench", bench, "--same-process", "/nonexistent/s.json"],
                         ["--bench", bench, "--torch-repeat", "/nonexistent/t.json"],
                         ["--bench", bench, "--compiled", "/nonexistent/c.json"]):
                r = subprocess.run([sys.executable, script, *args, "--out", os.path.join(d, "o.json")],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 2)
                self.assertIn("no file /nonexistent/", r.stderr)
                self.assertNotIn("Traceback", r.stderr)
            r = subprocess.run([sys.executable, script, "--bench", bench, "--out", os.path.join(d, "o.json")],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("is no heldout_bench JSON (no device, method)", r.stderr)
            self.assertNotIn("Traceback", r.stderr)


class SameProcessRows(unittest.TestCase):
    def test_the_one_process_cases_are_held_to_the_same_targets_per_mode_and_epilogue(self):
        good = [case(f"{i}x1x1", "none", 1.1) for i in range(50)]
        rows = heldout_report.same_process_rows(good)
        self.assertEqual(len(rows), 1)
        self.assertTrue(rows[0]["met"])
        self.assertAlmostEqual(rows[0]["geomean"], 1.1)
        one_low = heldout_report.same_process_rows(good[:49] + [case("9x9x9", "none", 0.985)])[0]
        self.assertTrue(one_low["met"])  # 1 of 50 below the band: 2% is allowed
        self.assertEqual(one_low["min_case"], "9x9x9")
        floor = heldout_report.same_process_rows(good[:49] + [case("9x9x9", "none", 0.96)])[0]
        self.assertFalse(floor["met"])
        self.assertEqual(floor["below_floor"], 1)
        slow = heldout_report.same_process_rows([case(f"{i}x1x1", "bias+gelu", 1.1) for i in range(50)])[0]
        self.assertFalse(slow["met"])  # bias+gelu asks for a geomean of 1.2x

    def test_the_report_names_each_one_process_case_below_the_band(self):
        script = os.path.join(os.path.dirname(os.path.abspath(heldout_report.__file__)), "heldout_report.py")
        with tempfile.TemporaryDirectory() as d:
            bench, same = os.path.join(d, "bench.json"), os.path.join(d, "same.json")
            with open(bench, "w") as f:
                json.dump({"device": "NVIDIA H200", "method": "", "records": []}, f)
            with open(same, "w") as f:
                explained = dict(case("9x9x9", "none", 0.95),
                                 explain="fwd:9x9x9:nn:row:none:tf32: lt/a1+epi [default] x")
                json.dump({"records": [explained, case("8x8x8", "none", 0.95), case("7x7x7", "none", 1.2)]}, f)
            r = subprocess.run([sys.executable, script, "--bench", bench, "--same-process", same, "--out",
                                os.path.join(d, "o.json")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("below 0.99x eager in one process: x0.950 tf32 9x9x9 none (ours 100.0 us with lt/a1+epi, "
                      "eager 95.0)", r.stdout)
        self.assertIn("x0.950 tf32 8x8x8 none (ours 100.0 us with ?,", r.stdout)  # equal ratios: both named
        self.assertNotIn("7x7x7 none (ours", r.stdout)

    def test_the_python_loop_view_is_reported_beside_the_targets_and_not_held_to_them(self):
        cases = [case(f"{i}x1x1", "none", 1.1) for i in range(4)]
        for i, c in enumerate(cases):  # host-bound: the Python loop puts half the cases below torch.mm
            c["one_process_python_loop"] = {"runtime_us": 10.0, "torch_us": 9.0 if i % 2 else 11.0,
                                            "ratio": 0.9 if i % 2 else 1.1}
        row = heldout_report.same_process_rows(cases)[0]
        self.assertTrue(row["met"])
        self.assertAlmostEqual(row["python_loop_share_below_band"], 0.5)
        self.assertIsNone(heldout_report.same_process_rows([case("1x1x1", "none", 1.1)])[0]
                          ["python_loop_share_below_band"], "an older file without the view")


class OneProcessAllConditions(unittest.TestCase):
    @staticmethod
    def here(shape, launch, condition, runtime_here_us, torch_us, seed=1):
        return {"seed": seed, "mode": "fp32", "epilogue": "none", "launch": launch, "condition": condition,
                "shape": shape, "torch_us": torch_us, "runtime_here_us": runtime_here_us}

    def test_each_condition_is_held_to_the_targets_apart_and_records_without_the_runtime_are_left_out(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "here.json")
            records = [self.here(f"{i}x1x1", "stream", "warm", 10.0, 11.0) for i in range(50)]
            records += [self.here(f"{i}x1x1", "stream", "cold", 10.0, 11.0) for i in range(48)]
            records += [self.here("7x7x7", "stream", "cold", 10.0, 9.85),
                        self.here("8x8x8", "stream", "cold", 10.0, 9.8)]
            records.append({**self.here("9x9x9", "graph", "warm", 10.0, 5.0), "runtime_here_us": None})
            records.append(self.here("6x6x6", "graph", "cold", 10.0, 5.0, seed=2))
            with open(path, "w") as f:
                json.dump({"records": records}, f)
            rows, below = heldout_report.here_rows(heldout_report.records_of_seeds([path], {1}))
        by = {(r["launch"], r["condition"]): r for r in rows}
        self.assertEqual(set(by), {("stream", "warm"), ("stream", "cold")}, "no runtime time, or another seed")
        self.assertTrue(by[("stream", "warm")]["met"])
        cold = by[("stream", "cold")]
        self.assertFalse(cold["met"])  # 2 of 50 below the band: more than 2%
        self.assertAlmostEqual(cold["share_below_band"], 0.04)
        self.assertEqual(cold["min_case"], "8x8x8")
        self.assertEqual([r["shape"] for _, r in below], ["8x8x8", "7x7x7"])

    def test_the_joined_file_keeps_each_records_one_process_times_and_choice_beside_its_own(self):
        script = os.path.join(os.path.dirname(os.path.abspath(heldout_report.__file__)), "heldout_report.py")
        bench_rec = {"seed": 1, "mode": "fp32", "epilogue": "none", "launch": "stream", "shape": "3x5x7",
                     "runtime_us": 5.0, "heuristic_us": 5.0, "speedup": 1.0, "selection": "exact",
                     "runtime_source": "exact", "candidate": "lt/a1"}
        with tempfile.TemporaryDirectory() as d:
            bench, here, out = (os.path.join(d, n) for n in ("bench.json", "here.json", "o.json"))
            with open(bench, "w") as f:
                json.dump({"device": "NVIDIA H200", "method": "", "records": [
                    dict(bench_rec, condition="warm"), dict(bench_rec, condition="cold")]}, f)
            with open(here, "w") as f:
                json.dump({"records": [dict(self.here("3x5x7", "stream", "warm", 4.9, 5.2),
                                            runtime_here_explain="fwd:3x5x7: lt/a1 [exact]"),
                                       self.here("3x5x7", "stream", "cold", None, 6.0)]}, f)
            subprocess.run([sys.executable, script, "--bench", bench, "--here", here, "--out", out],
                           capture_output=True, text=True, check=True)
            with open(out) as f:
                by = {r["condition"]: r for r in json.load(f)["records"]}
        self.assertEqual(by["warm"]["one_process"],
                         {"runtime_us": 4.9, "torch_us": 5.2, "explain": "fwd:3x5x7: lt/a1 [exact]"})
        self.assertNotIn("one_process", by["cold"], "no runtime time in that process")
        self.assertEqual(by["warm"]["runtime_us"], 5.0, "heldout_bench's own time stays as it was")

    def test_joined_files_pooled_without_here_files_keep_their_one_process_view(self):
        script = os.path.join(os.path.dirname(os.path.abspath(heldout_report.__file__)), "heldout_report.py")
        rec = {"mode": "fp32", "epilogue": "none", "launch": "stream", "condition": "warm", "runtime_us": 5.0,
               "heuristic_us": 5.0, "speedup": 1.0, "selection": "exact", "runtime_source": "exact",
               "candidate": "lt/a1", "torch_us": 5.5}
        with tempfile.TemporaryDirectory() as d:
            paths = [os.path.join(d, f"seed{seed}.json") for seed in (1, 2)]
            for seed, path in zip((1, 2), paths):
                records = [dict(rec, seed=seed, shape=f"{i}x1x1", one_process={"runtime_us": 5.0, "torch_us": 5.5})
                           for i in range(24)]
                records[0]["one_process"] = {"runtime_us": 5.0, "torch_us": 4.9} if seed == 2 else None
                with open(path, "w") as f:
                    json.dump({"device": "NVIDIA H200", "method": "", "records": records}, f)
            out = os.path.join(d, "o.json")
            printed = subprocess.run([sys.executable, script, "--bench", paths[0], "--bench", paths[1], "--out", out],
                                     capture_output=True, text=True, check=True).stdout
            with open(out) as f:
                rows = json.load(f)["vs_torch_eager_one_process_all_conditions"]
        self.assertEqual([(r["n"], r["share_below_band"], r["below_floor"], r["min_case"]) for r in rows],
                         [(47, 1 / 47, 0, "0x1x1")], "seed 1's first record has no one-process time")
        self.assertIn("below 0.99x eager in one process: x0.980 fp32 0x1x1", printed)

    def test_a_record_below_eager_names_the_same_problems_ratios_in_its_other_conditions(self):
        recs = [{"seed": 1, "shape": "2x3x4", "mode": "fp32", "epilogue": "bias+gelu", "launch": launch,
                 "condition": condition, "torch_us": torch_us, "runtime_here_us": 10.0}
                for launch, condition, torch_us in (("stream", "warm", 9.6), ("stream", "cold", 13.0),
                                                    ("graph", "warm", 10.1), ("graph", "cold", None))]
        recs.append(dict(recs[1], shape="9x9x9", torch_us=5.0))  # another problem: not named
        self.assertEqual(heldout_report.other_conditions(recs[0], recs), "graph/warm x1.010, stream/cold x1.300",
                         "a condition without eager's time is left out")

    def test_records_below_eager_across_processes_are_counted_again_as_timed_in_one_process(self):
        def rec(condition, torch_us, one_torch_us):
            return {"launch": "stream", "condition": condition, "torch_us": torch_us, "runtime_us": 10.0,
                    "one_process": {"torch_us": one_torch_us, "runtime_us": 10.0}}
        recs = [rec("cold", 9.5, 10.4), rec("cold", 9.7, 9.8), rec("cold", 9.8, 9.95), rec("cold", 10.5, 9.0),
                dict(rec("cold", 9.0, 0), one_process=None), rec("warm", 9.0, 10.0)]
        self.assertEqual(heldout_report.across_below_in_one_process(recs), [
            {"launch": "stream", "condition": "cold", "below_across": 3, "below_in_one": 1, "at_least_1_in_one": 1},
            {"launch": "stream", "condition": "warm", "below_across": 1, "below_in_one": 0, "at_least_1_in_one": 1}],
            "a record at or above the band across processes, or without one-process times, is not counted")

    def test_a_record_below_no_entry_names_the_same_problems_ratios_over_no_entry_in_its_other_conditions(self):
        recs = [{"seed": 1, "shape": "3x880x768", "mode": "fp32", "epilogue": "bias+gelu", "launch": launch,
                 "condition": condition, "vs_no_entry": {"speedup": x} if x else None}
                for launch, condition, x in (("stream", "cold", 0.954), ("stream", "warm", 1.062),
                                             ("graph", "warm", 1.094), ("graph", "cold", None))]
        recs.append(dict(recs[1], seed=2))  # another seed's draw of the same shape: not named
        self.assertEqual(heldout_report.other_conditions(recs[0], recs, heldout_report.no_entry_ratio),
                         "graph/warm x1.094, stream/warm x1.062", "a condition not compared with no entry is left out")
        self.assertAlmostEqual(heldout_report.problem_geomean(recs[0], recs, heldout_report.no_entry_ratio),
                               (0.954 * 1.062 * 1.094) ** (1 / 3), msg="ahead over its conditions: a trade")


class CompiledRows(unittest.TestCase):
    def test_the_compiled_op_is_set_beside_the_runtime_across_and_within_processes_and_kept_in_each_record(self):
        script = os.path.join(os.path.dirname(os.path.abspath(heldout_report.__file__)), "heldout_report.py")
        bench_rec = {"seed": 1, "mode": "tf32", "epilogue": "bias+gelu", "launch": "stream", "condition": "warm",
                     "heuristic_us": 20.0, "speedup": 2.0, "selection": "exact", "runtime_source": "exact",
                     "candidate": "own/x"}

        def compiled(shape, compiled_us, runtime_here_us, mode="tf32"):
            return {"seed": 1, "mode": mode, "epilogue": "bias+gelu", "launch": "stream", "condition": "warm",
                    "shape": shape, "torch_us": 12.0, "compiled_us": compiled_us, "runtime_here_us": runtime_here_us,
                    "compile_s": 15.0, "compiled_rel_err": 1e-4}
        with tempfile.TemporaryDirectory() as d:
            bench, comp, out = (os.path.join(d, n) for n in ("bench.json", "compiled.json", "o.json"))
            with open(bench, "w") as f:
                json.dump({"device": "NVIDIA H200", "method": "", "records": [
                    dict(bench_rec, shape="1x2x3", runtime_us=10.0), dict(bench_rec, shape="4x5x6", runtime_us=10.0),
                    dict(bench_rec, shape="7x8x9", runtime_us=10.0, mode="fp32")]}, f)
            with open(comp, "w") as f:
                # 7x8x9 fp32 was not compiled (--compiled-modes tf32): eager's time alone, no compiled_us.
                json.dump({"records": [compiled("1x2x3", 12.0, 10.0), compiled("4x5x6", 9.8, 9.0),
                                       {**compiled("7x8x9", None, 10.0, mode="fp32")}]}, f)
            r = subprocess.run([sys.executable, script, "--bench", bench, "--compiled", comp, "--out", out],
                               capture_output=True, text=True, check=True)
            with open(out) as f:
                doc = json.load(f)
        row, = doc["vs_torch_compiled"]
        self.assertEqual((row["mode"], row["n"], row["below_band"], row["min_case"]), ("tf32", 2, 1, "4x5x6"))
        self.assertAlmostEqual(row["geomean"], (1.2 * 0.98) ** 0.5)
        self.assertAlmostEqual(row["one_process_min"], 9.8 / 9.0)
        self.assertEqual(row["one_process_below_band"], 0)
        self.assertAlmostEqual(row["compiled_over_eager"], (1.0 * 12.0 / 9.8) ** 0.5)
        self.assertAlmostEqual(doc["torch_compile_s_total"], 30.0)
        by = {x["shape"]: x for x in doc["records"]}
        self.assertEqual(by["4x5x6"]["compiled"]["compiled_us"], 9.8)
        self.assertNotIn("compiled", by["7x8x9"])
        self.assertIn("over torch.compile max-autotune", r.stdout)


class NoEntryRows(unittest.TestCase):
    def test_a_tuned_entry_below_no_entry_is_named_and_says_when_both_sides_ran_the_same_candidate(self):
        script = os.path.join(os.path.dirname(os.path.abspath(heldout_report.__file__)), "heldout_report.py")

        def tuned(shape, entry, no_entry, ratio):
            return {"seed": 1, "mode": "fp32", "epilogue": "none", "launch": "graph", "condition": "warm",
                    "shape": shape, "runtime_us": 5.0, "heuristic_us": 5.0, "speedup": 1.0, "selection": "exact",
                    "candidate": entry, "vs_no_entry": {"speedup": ratio, "speedup_interval": [ratio - 0.001,
                                                                                               ratio + 0.001],
                                                        "no_entry_candidate": no_entry}}
        with tempfile.TemporaryDirectory() as d:
            bench = os.path.join(d, "bench.json")
            with open(bench, "w") as f:
                json.dump({"device": "NVIDIA H200", "method": "", "records": [
                    tuned("3x117x335", "lt/a20", "lt/a20", 0.981), tuned("1x120x8192", "lt/a13", "lt/a13+epi", 0.959),
                    tuned("64x64x64", "lt/a1", "lt/a1", 1.0)]}, f)
            r = subprocess.run([sys.executable, script, "--bench", bench, "--out", os.path.join(d, "o.json")],
                               capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("below 0.99 of no entry: fp32 3x117x335 none graph/warm x0.981 (95% interval 0.980-0.982), "
                      "entry lt/a20 vs no entry lt/a20 (the same candidate on both sides)", r.stdout)
        self.assertIn("x0.959 (95% interval 0.958-0.960), entry lt/a13 vs no entry lt/a13+epi\n", r.stdout)
        self.assertNotIn("64x64x64 none graph/warm", r.stdout)
        self.assertIn("where the entry differs from no entry's candidate: 1 records, min x0.959: MISSED; "
                      "1 same-candidate records below 0.99", r.stdout)
        self.assertIn("every tuned entry >= 0.99x no entry: MISSED", r.stdout)

    def test_same_candidate_pairs_alone_below_the_bar_still_miss_the_strict_target_and_meet_the_choice_one(self):
        records = [{"seed": 1, "mode": "fp32", "epilogue": "none", "launch": "stream", "condition": "warm",
                    "shape": s, "runtime_us": 5.0, "heuristic_us": 5.0, "speedup": 1.0, "selection": "exact",
                    "runtime_source": "exact", "candidate": c, "vs_no_entry": {"speedup": x, "no_entry_candidate": n}}
                   for s, c, n, x in (("1x1x1", "lt/a1", "lt/a1", 0.96), ("2x2x2", "lt/a2", "lt/a3", 1.01))]
        with tempfile.TemporaryDirectory() as d:
            bench, out = os.path.join(d, "bench.json"), os.path.join(d, "o.json")
            with open(bench, "w") as f:
                json.dump({"device": "NVIDIA H200", "method": "", "records": records}, f)
            subprocess.run([sys.executable, os.path.join(os.path.dirname(heldout_report.__file__),
                                                         "heldout_report.py"), "--bench", bench, "--out", out],
                           capture_output=True, text=True, check=True)
            with open(out) as f:
                doc = json.load(f)
        self.assertFalse(doc["met"])
        self.assertEqual(doc["vs_no_entry_where_the_candidate_differs"],
                         {"n": 1, "min": 1.01, "same_candidate_below": 1, "met_min": True, "below": 0,
                          "below_but_ahead_over_its_conditions": 0})


class EagerByCondition(unittest.TestCase):
    def test_a_condition_pools_its_modes_and_epilogues_and_holds_each_groups_geomean(self):
        def rec(shape, mode, epilogue, condition, torch_us):
            return dict(record(shape, epilogue, 100, torch_us), mode=mode, condition=condition)
        recs = []
        for mode in ("tf32", "fp32"):
            for epilogue, fast in (("none", 110), ("bias+gelu", 130)):
                recs += [rec(f"{i}x1x1", mode, epilogue, "warm", fast) for i in range(16)]
                recs += [rec(f"{i}x1x1", mode, epilogue, "cold", fast) for i in range(16)]
        recs[0]["torch_us"] = 98.5  # one of warm's 64 records below the band: 1.6%, its group's 6.2%
        recs[16]["torch_us"] = 98.5  # and one of cold's
        recs[17]["torch_us"] = 98.5  # and a second: 3.1% of cold's 64
        rows, _ = heldout_report.eager_rows(recs)
        self.assertFalse(all(r["met"] for r in rows), "each group of 16 misses with one record below")
        by = {c["condition"]: c for c in heldout_report.eager_by_condition(rows)}
        self.assertEqual((by["warm"]["n"], by["warm"]["below_band"]), (64, 1))
        self.assertTrue(by["warm"]["met"])
        self.assertEqual(by["cold"]["below_band"], 2)
        self.assertFalse(by["cold"]["met"])
        slow = [dict(r, torch_us=115) if r["epilogue"] == "bias+gelu" and r["condition"] == "warm" else r
                for r in recs]
        by = {c["condition"]: c for c in heldout_report.eager_by_condition(heldout_report.eager_rows(slow)[0])}
        self.assertFalse(by["warm"]["met"], "1.15x < 1.2x with bias+gelu")


if __name__ == "__main__":
    unittest.main()
