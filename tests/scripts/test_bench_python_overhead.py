"""scripts/bench_python_overhead.py's targets (issue 48), no GPU and no PyTorch: a record whose Python call costs the
host more than torch.mm's, or whose GPU time per call sits more than 2 us above the C++ runtime's, misses its target
and is named; records within both hold them."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts"))
import bench_python_overhead as bench  # noqa: E402  (the script under test; it imports torch only in main)


def record(shape, arrays, rt_host, mm_host, rt_gpu, cpp_gpu, rt_loop=None, cpp_loop=None, protocol=0.5,
           same_host=None):
    return {"shape": shape, "arrays": arrays, "rt_host_us": rt_host, "torch_mm_host_us": mm_host,
            "protocol_host_us": protocol, "torch_mm_same_objects_host_us": mm_host if same_host is None else same_host,
            "rt_gpu_us": rt_gpu, "cpp_gpu_us": cpp_gpu, "rt_loop_us": rt_gpu if rt_loop is None else rt_loop,
            "cpp_loop_us": cpp_gpu if cpp_loop is None else cpp_loop}


class Targets(unittest.TestCase):
    def test_records_within_both_bounds_meet_both_targets(self):
        s = bench.summarize([record("64x64x64", "torch", 9.0, 9.5, 11.0, 10.0),
                             record("64x64x64", "cai", 9.5, 9.5, 12.0, 10.0)])
        self.assertTrue(s["host_not_above_torch_mm"])
        self.assertTrue(s["gpu_within_2us_of_cpp"])
        self.assertAlmostEqual(s["max_gpu_gap_us"], 2.0)

    def test_a_slower_host_call_and_a_gpu_gap_past_2us_are_each_named(self):
        s = bench.summarize([record("64x64x64", "torch", 9.0, 9.5, 11.0, 10.0),
                             record("256x256x256", "dlpack", 12.0, 10.0, 15.0, 12.5)])
        self.assertFalse(s["host_not_above_torch_mm"])
        self.assertEqual(s["host_above_torch_mm"], ["256x256x256 dlpack"])
        self.assertFalse(s["gpu_within_2us_of_cpp"])
        self.assertEqual(s["gpu_more_than_2us_above_cpp"], ["256x256x256 dlpack"])
        self.assertAlmostEqual(s["max_host_ratio_to_torch_mm"], 1.2)

    def test_a_loop_gap_whose_call_is_issued_slower_than_the_cpp_loop_runs_is_named_host_bound(self):
        s = bench.summarize([record("64x64x64", "torch", 9.0, 14.0, 3.0, 2.9, rt_loop=9.5, cpp_loop=3.7),
                             record("4096x4096x4096", "cai", 7.0, 15.0, 392.0, 391.8, rt_loop=394.2, cpp_loop=391.8)])
        self.assertTrue(s["gpu_within_2us_of_cpp"])
        self.assertEqual(s["loop_more_than_2us_above_cpp"], ["64x64x64 torch", "4096x4096x4096 cai"])
        self.assertEqual(s["of_those_host_bound"], ["64x64x64 torch"])

    def test_a_protocol_dearer_than_torch_mm_is_named_and_held_to_torch_mm_on_the_same_objects(self):
        s = bench.summarize([record("256x256x256", "dlpack", 46.0, 10.0, 5.3, 5.3, protocol=35.0, same_host=52.0),
                             record("1024x1024x1024", "dlpack", 47.0, 14.0, 13.6, 13.6, protocol=34.0, same_host=45.0),
                             record("1024x1024x1024", "cai", 6.0, 14.0, 13.6, 13.6, protocol=0.1, same_host=20.0)])
        self.assertFalse(s["host_not_above_torch_mm"])
        self.assertEqual(s["protocol_alone_above_torch_mm"], ["256x256x256 dlpack", "1024x1024x1024 dlpack"])
        self.assertFalse(s["host_not_above_torch_mm_on_same_objects"])
        self.assertEqual(s["host_above_torch_mm_on_same_objects"], ["1024x1024x1024 dlpack"])


if __name__ == "__main__":
    unittest.main()
