"""scripts/dev/ranking_replay.py, no GPU: the first-use ranking replayed with each shape left out, on sweeps built by
hand; staged twins count as one variant, whole waves are charged, and sweeps without two shapes of a kind are a
one-line error."""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

DEV = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts", "dev")
sys.path.insert(0, DEV)
import ranking_replay  # noqa: E402


def sweep(shape, heuristic_us, variants):
    m, n, k = shape
    key = f"fwd:{m}x{n}x{k}:nn:row:none:tf32"
    problem = {"m": m, "n": n, "k": k, "mode": "tf32", "act": "none", "bias": False}
    results = [{"problem_key": key, "problem": problem, "candidate": {"backend": "own", "variant": v},
                "median_us": us, "status": "ok"} for v, us in variants.items()]
    results.append({"problem_key": key, "problem": problem, "candidate": {"backend": "lt", "id": "lt/a1"},
                    "median_us": heuristic_us, "status": "ok"})
    return {"problems": [{"problem_key": key, "heuristic_first_us": heuristic_us}], "results": results}


WIDE, SPLIT = "wgmma_tf32_128x128x32_s4", "wgmma_tf32_128x128x32_s4_split4"


class RankingReplay(unittest.TestCase):
    def write(self, d, sweeps):
        paths = []
        for i, s in enumerate(sweeps):
            paths.append(os.path.join(d, f"sweep{i}.json.gz"))
            with gzip.open(paths[-1], "wt") as f:
                json.dump(s, f)
        return paths

    def test_wave_efficiency_charges_whole_waves_of_blocks(self):
        self.assertAlmostEqual(ranking_replay.wave_efficiency(WIDE, (256, 256, 64), 132), 4 / 132)
        self.assertAlmostEqual(ranking_replay.wave_efficiency(SPLIT, (171, 1024, 5120), 132), 64 / 132)
        self.assertAlmostEqual(ranking_replay.wave_efficiency(WIDE, (128, 128 * 133, 64), 132), 133 / 264)
        self.assertEqual(ranking_replay.wave_efficiency("wgmma_tf32_128x128x32_s4_streamk", (1, 1, 1), 132), 1.0)

    def test_left_out_shape_is_ranked_from_the_others_and_staged_twins_are_one_variant(self):
        near_a, near_b, far = (512, 512, 512), (512, 1024, 512), (4096, 4096, 4096)
        with tempfile.TemporaryDirectory() as d:
            paths = self.write(d, [
                sweep(near_a, 10.0, {WIDE: 5.0, SPLIT: 8.0, SPLIT + "_staged": 7.5}),
                sweep(near_b, 10.0, {WIDE: 4.0, SPLIT: 8.0}),
                sweep(far, 100.0, {WIDE: 80.0, SPLIT: 50.0})])
            kinds = ranking_replay.measured_speeds(paths, "tf32")
            self.assertEqual(kinds["none"][near_a], {WIDE: 2.0, SPLIT: 10.0 / 7.5}, "the faster twin stands")
            # Top 1: near_a and near_b rank WIDE first from each other (the far shape weighs nothing), which is
            # their best; far is ranked from them too and gets WIDE, 1.25x, where SPLIT was 2x.
            geo, n, geo_far, n_far, worst = ranking_replay.replay(kinds, top=1, sigma=1.0)
            self.assertEqual(n, 3)
            self.assertAlmostEqual(geo, (1.25 / 2.0) ** (1 / 3))
            self.assertEqual((n_far, worst[1]), (1, "4096x4096x4096 none"))
            self.assertAlmostEqual(geo_far, 1.25 / 2.0)
            self.assertAlmostEqual(ranking_replay.replay(kinds, top=2, sigma=1.0)[0], 1.0, msg="both tried: the best")
            run = subprocess.run([sys.executable, os.path.join(DEV, "ranking_replay.py"), *paths],
                                 capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("runtime (sigma 1)", run.stdout)

    def test_sweeps_without_two_shapes_of_a_kind_are_a_one_line_error(self):
        with tempfile.TemporaryDirectory() as d:
            paths = self.write(d, [sweep((64, 64, 64), 1.0, {WIDE: 1.0})])
            for args in ([*paths], [os.path.join(d, "missing.json")]):
                run = subprocess.run([sys.executable, os.path.join(DEV, "ranking_replay.py"), *args],
                                     capture_output=True, text=True)
                self.assertNotEqual(run.returncode, 0)
                self.assertEqual(len(run.stderr.strip().splitlines()), 1, run.stderr)
                self.assertTrue(run.stderr.startswith("ranking_replay: "), run.stderr)


if __name__ == "__main__":
    unittest.main()
