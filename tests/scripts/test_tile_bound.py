"""scripts/dev/tile_bound.py, no GPU: the tiled bound is a bound (never above the roofline's share), it charges whole
waves of tiles; the design bound charges A's copy exactly where k % 4 != 0 and is no faster than the roofline; a
slower SM clock slows the tensor pipes alone; a run without tf32 records, a missing file or a clock that is no SM's
is refused with a message."""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

DEV = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts", "dev")
sys.path.insert(0, DEV)
import tile_bound  # noqa: E402


def drawn_shapes(seed, count=200):
    import random
    rng = random.Random(seed)
    return [tuple(rng.randint(256, 8192) for _ in range(3)) for _ in range(count)]


class TiledBound(unittest.TestCase):
    def test_is_never_faster_than_the_roofline_on_drawn_shapes(self):
        for m, n, k in drawn_shapes(4901):
            t, _, _ = tile_bound.bound_us(m, n, k)
            self.assertGreaterEqual(t, tile_bound.roofline_us(m, n, k) * (1 - 1e-12), (m, n, k))

    def test_one_tile_more_than_the_sms_costs_a_second_wave(self):
        # 133 tiles of 256x128 at k = 8192, no split worth it: two waves of one tile's tensor time at least.
        m, n, k = 256 * 7, 128 * 19, 8192
        t, _, _ = tile_bound.bound_us(m, n, k)
        one_tile_s = 2.0 * 256 * 128 * k / (tile_bound.TENSOR / tile_bound.SMS)
        whole_gpu_s = 2.0 * m * n * k / tile_bound.TENSOR
        self.assertGreater(t * 1e-6, whole_gpu_s * 1.05)
        self.assertLessEqual(t * 1e-6, 2 * one_tile_s + tile_bound.CALL_US * 1e-6 + 1e-12)

    def test_design_bound_charges_the_copy_of_a_only_where_its_rows_are_unaligned(self):
        for m, n, k in ((1000, 999, 1023), (4408, 578, 1473), (1000, 999, 1024), (4408, 578, 1472)):
            tiles_us = tile_bound.bound_us(m, n, k, tile_bound.SM_INTAKE, tile_bound.PAIR_L2_SHARE)[0]
            copy_us = 2 * 4.0 * m * k / tile_bound.COPY * 1e6 if k % 4 else 0.0
            self.assertAlmostEqual(tile_bound.design_bound_us(m, n, k), tiles_us + copy_us, places=9)
            self.assertEqual(copy_us > 0, k % 4 != 0)

    def test_design_bound_is_never_faster_than_the_roofline_on_drawn_shapes(self):
        for m, n, k in drawn_shapes(9718):
            self.assertGreaterEqual(tile_bound.design_bound_us(m, n, k), tile_bound.roofline_us(m, n, k) * (1 - 1e-12),
                                    (m, n, k))

    def test_a_slower_clock_never_speeds_a_bound_and_slows_a_tensor_bound_wave_in_proportion(self):
        slow = 1.568e9
        for m, n, k in drawn_shapes(9719):
            self.assertGreaterEqual(tile_bound.bound_us(m, n, k, clock=slow)[0], tile_bound.bound_us(m, n, k)[0] - 1e-9)
            self.assertGreaterEqual(tile_bound.design_bound_us(m, n, k, slow),
                                    tile_bound.design_bound_us(m, n, k) - 1e-9)
            self.assertGreaterEqual(tile_bound.roofline_us(m, n, k, slow), tile_bound.roofline_us(m, n, k) - 1e-9)
        # 4096^3 is tensor-bound in the roofline: its compute time scales with the clock alone.
        m = n = k = 4096
        fast, slower = (tile_bound.roofline_us(m, n, k, c) - tile_bound.CALL_US for c in (tile_bound.CLOCK, slow))
        self.assertAlmostEqual(slower / fast, tile_bound.CLOCK / slow, places=9)

    def test_refuses_a_clock_that_is_no_sms(self):
        script = os.path.join(DEV, "tile_bound.py")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tf32.json")
            with open(path, "w") as f:
                json.dump({"records": [{"mode": "tf32", "shape": "256x256x256", "both_unaligned": False,
                                        "runtime_pct_of_tf32_peak": 1.0}]}, f)
            for clock in ("5", "1e9"):
                run = subprocess.run([sys.executable, script, path, "--clock", clock], capture_output=True, text=True)
                self.assertNotEqual(run.returncode, 0)
                self.assertIn("--clock", run.stderr)
            ok = subprocess.run([sys.executable, script, path, "--clock", "1568"], capture_output=True, text=True)
            self.assertEqual(ok.returncode, 0, ok.stderr)
            self.assertIn("1568 MHz", ok.stdout)

    def test_refuses_a_missing_file_and_a_run_without_tf32_records(self):
        script = os.path.join(DEV, "tile_bound.py")
        with tempfile.TemporaryDirectory() as d:
            missing = subprocess.run([sys.executable, script, os.path.join(d, "none.json")], capture_output=True,
                                     text=True)
            self.assertNotEqual(missing.returncode, 0)
            self.assertIn("tile_bound:", missing.stderr)
            path = os.path.join(d, "fp32.json")
            with open(path, "w") as f:
                json.dump({"records": [{"mode": "fp32", "shape": "256x256x256", "both_unaligned": False,
                                        "runtime_pct_of_tf32_peak": 1.0}]}, f)
            empty = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
            self.assertNotEqual(empty.returncode, 0)
            self.assertIn("no tf32 record", empty.stderr)


if __name__ == "__main__":
    unittest.main()
