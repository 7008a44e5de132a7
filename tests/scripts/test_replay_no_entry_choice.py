"""scripts/dev/replay_no_entry_choice.py, no GPU: the replay keeps what choose_over_no_entry keeps on the inputs of its
C++ tests (tests/problem/candidate_choice_test.cpp, NoEntryKeepRule), with and without the rule that a member beating
a challenger beyond noise in any condition keeps it out; an unreadable sweep is a one-line error."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

DEV = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts", "dev")
sys.path.insert(0, DEV)
import replay_no_entry_choice as replay  # noqa: E402

CONDITIONS = ["stream/warm", "stream/cold", "graph/warm", "graph/cold"]


def four(*us):
    return [{"condition": c, "median_us": t, "rel_spread": 0.004} for c, t in zip(CONDITIONS, us)]


class ReplayNoEntryChoice(unittest.TestCase):
    heuristic = four(15.10, 16.28, 13.58, 14.56)
    plus_bias = four(12.68, 13.78, 11.36, 12.14)

    def test_a_challenger_a_member_beats_beyond_noise_anywhere_is_kept_only_without_the_rule(self):
        simt = four(12.44, 13.03, 11.70, 12.16)  # 3.0% behind the member from a warm graph
        no_entry, noise = [self.heuristic, self.plus_bias], [replay.MIN_NOISE]
        self.assertEqual(replay.choose(no_entry, [simt], noise, trails_rule=False), ("challenger", 0))
        self.assertEqual(replay.choose(no_entry, [simt], noise, trails_rule=True), ("member", 1))
        within = four(12.44, 13.03, 11.57, 12.16)  # 1.9% behind: weighed, and its worst case leads
        self.assertEqual(replay.choose(no_entry, [within], noise, trails_rule=True), ("challenger", 0))

    def test_a_worst_case_within_noise_of_the_members_leaves_the_member(self):
        heuristic, plus_bias = four(14.56, 15.74, 13.23, 14.15), four(12.29, 13.42, 11.20, 12.01)
        for rule in (False, True):
            self.assertEqual(replay.choose([heuristic, plus_bias], [four(12.29, 13.10, 11.40, 12.11)],
                                           [replay.MIN_NOISE], rule), ("member", 1))
            self.assertEqual(replay.choose([heuristic, plus_bias], [four(12.29, 13.02, 10.87, 12.11)],
                                           [replay.MIN_NOISE], rule), ("challenger", 0))

    def test_split_k_and_clustered_algos_get_the_workspace_placement_bound(self):
        self.assertEqual(replay.placement_noise("lt/a55-t15-s31-k2-r2-w0-c0-cl0-i0+bias"), replay.PLACEMENT_NOISE)
        self.assertEqual(replay.placement_noise("lt/a43-t24-s34-k1-r0-w1-c0-cl5-i0"), replay.PLACEMENT_NOISE)
        self.assertEqual(replay.placement_noise("lt/a55-t15-s31-k1-r0-w0-c0-cl0-i0"), replay.MIN_NOISE)
        self.assertEqual(replay.placement_noise("own/fp32_64x64x16_w32x32_t8x4_s2"), replay.MIN_NOISE)

    def test_a_sweep_file_names_the_problem_the_rule_changes_and_a_missing_one_is_an_error(self):
        finalists = [{"candidate": "lt/a55-t15-s31-k1-r0-w0-c0-cl0-i0", "role": "heuristic_first",
                      "conditions": self.heuristic},
                     {"candidate": "lt/a55-t15-s31-k1-r0-w0-c0-cl0-i0+bias", "role": "no_entry",
                      "conditions": self.plus_bias},
                     {"candidate": "own/fp32_64x64x16_w32x32_t8x4_s2", "role": "challenger",
                      "conditions": four(12.44, 13.03, 11.70, 12.16)}]
        sweep = {"problems": [{"problem_key": "fwd:211x4096x103:nn:row:bias+gelu:fp32",
                               "best_candidate": "own/fp32_64x64x16_w32x32_t8x4_s2",
                               "finalist_stage": {"finalists": finalists}}]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "sweep.json")
            with open(path, "w") as f:
                json.dump(sweep, f)
            script = os.path.join(DEV, "replay_no_entry_choice.py")
            run = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("own/fp32_64x64x16_w32x32_t8x4_s2 -> lt/a55-t15-s31-k1-r0-w0-c0-cl0-i0+bias", run.stdout)
            self.assertIn("picks what the sweep kept in 1; the rule changes 1", run.stdout)
            missing = subprocess.run([sys.executable, script, os.path.join(d, "none.json")],
                                     capture_output=True, text=True)
            self.assertNotEqual(missing.returncode, 0)
            self.assertEqual(len(missing.stderr.strip().splitlines()), 1, missing.stderr)
            self.assertIn("cannot read", missing.stderr)


if __name__ == "__main__":
    unittest.main()
