"""scripts/bench_torch_step.py without a GPU: --merge joins parts (a later part's record replaces an earlier one's,
a part cut by a time limit marks the whole partial) and the summary's speedups and loss differences are computed from
the records, not taken from them."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts",
                      "bench_torch_step.py")


def record(variant, step_ms, losses, mode="tf32", d=1024, tokens=1000):
    return {"d_model": d, "tokens": tokens, "mode": mode, "variant": variant, "step_ms": step_ms, "losses": losses}


def part(records, tuning=(), partial=False):
    doc = {"schema": "gemmtune.torch_step", "schema_version": 1, "gpu": "Test GPU", "gpu_slug": "test-gpu",
           "commands": ["bench_torch_step.py part"], "records": list(records), "tuning": list(tuning)}
    if partial:
        doc["partial"] = True
    return doc


class MergeTest(unittest.TestCase):
    def merge(self, *parts):
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for i, doc in enumerate(parts):
                paths.append(os.path.join(tmp, f"part{i}.json"))
                with open(paths[-1], "w") as f:
                    json.dump(doc, f)
            out = os.path.join(tmp, "merged.json")
            done = subprocess.run([sys.executable, SCRIPT, "--merge", *paths, "--out", out], capture_output=True,
                                  text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(out) as f:
                return json.load(f)

    def test_a_later_parts_record_replaces_an_earlier_one_and_the_ratios_are_recomputed(self):
        merged = self.merge(part([record("nn_eager", 2.0, [1.0, 0.9]), record("fused_eager", 4.0, [1.0, 0.9])]),
                            part([record("fused_eager", 1.6, [1.0, 0.909])]))
        fused = [r for r in merged["records"] if r["variant"] == "fused_eager"]
        self.assertEqual([r["step_ms"] for r in fused], [1.6])
        self.assertAlmostEqual(merged["speedups"][0]["fused_eager_vs_nn_eager"], 2.0 / 1.6)
        self.assertAlmostEqual(fused[0]["loss_rel_diff_max_vs_nn_eager"], 0.009 / 0.9)
        self.assertNotIn("partial", merged)
        self.assertEqual(len(merged["commands"]), 2)

    def test_a_part_cut_by_a_time_limit_marks_the_merge_partial(self):
        merged = self.merge(part([record("nn_eager", 2.0, [1.0])]),
                            part([record("fused_eager", 1.6, [1.0])], partial=True))
        self.assertTrue(merged["partial"])

    def test_fp32_equivalent_is_compared_with_fp32s_nn_side(self):
        merged = self.merge(part([record("nn_eager", 6.0, [1.0, 0.5], mode="fp32"),
                                  record("fused_eager", 4.0, [1.0, 0.5], mode="fp32_equivalent")]))
        entry = next(e for e in merged["speedups"] if e["mode"] == "fp32_equivalent")
        self.assertAlmostEqual(entry["fused_eager_vs_nn_eager"], 1.5)

    def test_a_missing_or_foreign_part_is_a_one_line_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            foreign = os.path.join(tmp, "foreign.json")
            with open(foreign, "w") as f:
                json.dump([1, 2], f)
            for path, why in ((os.path.join(tmp, "absent.json"), "No such file"),
                              (foreign, "not a bench_torch_step output")):
                done = subprocess.run([sys.executable, SCRIPT, "--merge", path, "--out",
                                       os.path.join(tmp, "m.json")], capture_output=True, text=True)
                self.assertEqual(done.returncode, 1)
                self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
                self.assertIn(f"cannot merge {path}: ", done.stderr)
                self.assertIn(why, done.stderr)

    def test_parts_of_two_gpus_are_refused(self):
        other = part([record("nn_eager", 2.0, [1.0])])
        other["gpu"] = "Other GPU"
        with tempfile.TemporaryDirectory() as tmp:
            paths = [os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")]
            for path, doc in zip(paths, (part([record("nn_eager", 2.0, [1.0])]), other)):
                with open(path, "w") as f:
                    json.dump(doc, f)
            done = subprocess.run([sys.executable, SCRIPT, "--merge", *paths, "--out", os.path.join(tmp, "m.json")],
                                  capture_output=True, text=True)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("compare within one GPU", done.stderr)


if __name__ == "__main__":
    unittest.main()
