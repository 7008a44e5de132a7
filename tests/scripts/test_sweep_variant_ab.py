"""scripts/dev/sweep_variant_ab.py, no GPU: two builds' sweeps compared candidate by candidate, per tile shape and for
each problem's fastest of the family; candidates outside the family, unverified ones and ones only one side timed are
left out; sweeps that share no candidate of the family are a one-line error."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

DEV = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts", "dev")
sys.path.insert(0, DEV)
import sweep_variant_ab  # noqa: E402


def result(key, candidate, us, status="ok"):
    return {"problem_key": key, "candidate": {"id": candidate}, "median_us": us, "status": status}


class SweepVariantAb(unittest.TestCase):
    def test_ratios_are_before_over_after_per_tile_and_for_each_problems_fastest(self):
        a, b = "fwd:1x1024x13824:nn:row:none:tf32", "fwd:1x560x5120:nn:row:none:tf32"
        small, wide = "own/skinny_tf32_8x128x32_s4", "own/skinny_mma_tf32_16x256x16_s3"
        with tempfile.TemporaryDirectory() as d:
            before, after = os.path.join(d, "before.json"), os.path.join(d, "after.json")
            with open(before, "w") as f:
                json.dump({"results": [result(a, small, 24.0), result(a, wide, 30.0), result(b, small, 12.0),
                                       result(b, "lt/a13", 7.0), result(b, wide, 9.0, "verify_failed")]}, f)
            with open(after, "w") as f:
                json.dump({"results": [result(a, small, 20.0), result(a, wide, 30.0), result(b, small, 10.0),
                                       result(b, "lt/a13", 5.0), result(b, wide, 8.0)]}, f)
            r = sweep_variant_ab.compare(sweep_variant_ab.medians(before, "own/skinny"),
                                         sweep_variant_ab.medians(after, "own/skinny"))
            self.assertEqual(len(r["pairs"]), 3, "the lt candidate and the unverified one are left out")
            self.assertAlmostEqual(r["by_tile"]["8x128"]["geomean"], (1.2 * 1.2) ** 0.5)
            self.assertAlmostEqual(r["by_tile"]["16x256"]["geomean"], 1.0)
            # b's fastest after (8.0, verified only after) is held against its fastest before (12.0)
            self.assertAlmostEqual(r["fastest"]["max"], 12.0 / 8.0)
            self.assertAlmostEqual(r["fastest"]["min"], 24.0 / 20.0)
            run = subprocess.run([sys.executable, os.path.join(DEV, "sweep_variant_ab.py"), "--round", before, after,
                                  "--family", "own/wgmma"], capture_output=True, text=True)
            self.assertEqual(run.returncode, 2)
            self.assertEqual(run.stderr.count("\n"), 1)
            self.assertIn("share no own/wgmma candidate", run.stderr)


if __name__ == "__main__":
    unittest.main()
