"""When the Python GPU tests run, skip or fail (gpu_support.require_gpu_and_torch), on any machine, a GPU one
included: skipped where CUDA sees no GPU, failed where GEMMTUNE_REQUIRE_GPU=1 forbids the skip, and failed, naming
the reason, where a libcuda.so.1 loads that CUDA cannot use (the toolkit's stub library, GEMMTUNE_CUDA_STUB_LIBCUDA,
stands in for a driver older than the runtime). The C++ tests' counterpart: tests/support/check_gpu_test_gate.sh."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = textwrap.dedent("""
    import unittest
    import gpu_support
    try:
        gpu_support.require_gpu_and_torch()
    except unittest.SkipTest as e:
        print("skipped:", e)
    except gpu_support.GpuTestCannotRun as e:
        print("failed:", e)
    else:
        print("runs")
""")


class GpuTestGateTest(unittest.TestCase):
    def answer(self, **env):
        path = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH")) if p)
        done = subprocess.run([sys.executable, "-c", CHILD], env=dict(os.environ, PYTHONPATH=path, **env),
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout.strip().splitlines()[-1]

    def test_no_gpu_visible_skips_with_the_mark(self):
        self.assertRegex(self.answer(CUDA_VISIBLE_DEVICES="", GEMMTUNE_REQUIRE_GPU="0"),
                         r"^skipped: gemmtune test skipped: no usable GPU \(no usable CUDA GPU: .+\)$")

    def test_require_gpu_turns_the_skip_into_a_failure(self):
        self.assertRegex(self.answer(CUDA_VISIBLE_DEVICES="", GEMMTUNE_REQUIRE_GPU="1"),
                         r"^failed: GEMMTUNE_REQUIRE_GPU is set, so this GPU test fails where it would skip: ")

    def test_a_driver_cuda_cannot_use_fails_naming_the_reason(self):
        stub = os.environ.get("GEMMTUNE_CUDA_STUB_LIBCUDA")
        self.assertTrue(stub and os.path.exists(stub), f"GEMMTUNE_CUDA_STUB_LIBCUDA={stub!r}: set by ctest")
        with tempfile.TemporaryDirectory() as tmp:
            os.symlink(stub, os.path.join(tmp, "libcuda.so.1"))
            library_path = os.pathsep.join(p for p in (tmp, os.environ.get("LD_LIBRARY_PATH")) if p)
            answer = self.answer(LD_LIBRARY_PATH=library_path, GEMMTUNE_REQUIRE_GPU="0")
        self.assertRegex(answer, r"^failed: this GPU test cannot run: no usable CUDA GPU: .+ \(this machine has .*"
                                 r"libcuda\.so\.1 loads\)$")


if __name__ == "__main__":
    unittest.main()
