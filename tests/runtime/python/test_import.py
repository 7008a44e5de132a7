"""The package imports from the build tree, its errors are the classes a caller catches, its problems are the db's
keys, and no GPU is a Python exception. None of these needs a GPU."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import gemmtune


class ImportTest(unittest.TestCase):
    def test_package_and_extension_import_from_the_build_tree(self):
        self.assertTrue(gemmtune.__version__)
        extension = sys.modules["gemmtune._gemmtune"].__file__
        self.assertEqual(os.path.dirname(extension), os.path.dirname(gemmtune.__file__))

    def test_error_classes_are_gemmtune_errors_and_builtin_ones(self):
        self.assertTrue(issubclass(gemmtune.Error, RuntimeError))
        for cls in (gemmtune.InputError, gemmtune.NoGpuError, gemmtune.CheckError):
            self.assertTrue(issubclass(cls, gemmtune.Error), cls)
        self.assertTrue(issubclass(gemmtune.InputError, ValueError))
        self.assertEqual(gemmtune.InputError.__module__, "gemmtune")


class ProblemTest(unittest.TestCase):
    def test_problem_key_is_the_db_key_and_parses_back(self):
        p = gemmtune.Problem(1000, 4096, 1024, trans_b=True, bias=True, act="gelu", save_z=True, mode="tf32")
        self.assertEqual(p.key, "fwd:1000x4096x1024:nt:row:bias+gelu+z:tf32")
        self.assertEqual(gemmtune.Problem.parse(p.key), p)
        self.assertEqual(hash(gemmtune.Problem.parse(p.key)), hash(p))
        self.assertNotEqual(gemmtune.Problem(1000, 4096, 1024, trans_b=True), p)

    def test_problem_fields_read_back(self):
        p = gemmtune.Problem(3, 5, 7, trans_a=True, out="col", act="leaky_relu", leaky_slope=0.25, dropout=0.5,
                             mode="fp32")
        self.assertEqual((p.m, p.n, p.k, p.trans_a, p.trans_b, p.out), (3, 5, 7, True, False, "col"))
        self.assertEqual((p.act, p.leaky_slope, p.dropout, p.mode, p.pass_), ("leaky_relu", 0.25, 0.5, "fp32", "fwd"))

    def test_bad_problem_fields_raise_input_error_naming_the_argument(self):
        for kwargs, word in (({"act": "swish"}, "act:"), ({"mode": "fp16"}, "mode:"), ({"out": "diag"}, "out:"),
                             ({"pass_": "sideways"}, "pass_:")):
            with self.subTest(**kwargs), self.assertRaisesRegex(gemmtune.InputError, word):
                gemmtune.Problem(8, 8, 8, **kwargs)
        with self.assertRaisesRegex(gemmtune.InputError, "m, n and k must be >= 1"):
            gemmtune.Problem(0, 8, 8)
        with self.assertRaisesRegex(gemmtune.InputError, "dropout"):
            gemmtune.Problem(8, 8, 8, dropout=1.0)


class RuntimeArgumentTest(unittest.TestCase):
    def test_runtime_arguments_are_checked_before_the_gpu_is_asked(self):
        with self.assertRaisesRegex(TypeError, "^db: "):
            gemmtune.Runtime(3)
        with self.assertRaisesRegex(TypeError, "^device: "):
            gemmtune.Runtime("t.db", "cuda:0")


class NoGpuTest(unittest.TestCase):
    def test_runtime_without_a_gpu_raises_no_gpu_error_and_the_process_lives_on(self):
        # In a child process, so that an abort (the failure this guards against) fails the test instead of the run;
        # CUDA shows it no GPU, so that this is checked on a GPU machine too.
        child = textwrap.dedent("""
            import sys, gemmtune
            try:
                gemmtune.Runtime(sys.argv[1])
            except gemmtune.NoGpuError as e:
                print("NoGpuError:", e)
                sys.exit(0)
            print("constructed")
            sys.exit(5)
        """)
        with tempfile.TemporaryDirectory() as tmp:
            done = subprocess.run([sys.executable, "-c", child, os.path.join(tmp, "t.db")], capture_output=True,
                                  text=True, timeout=120, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertRegex(done.stdout, r"NoGpuError: \S")


if __name__ == "__main__":
    unittest.main()
