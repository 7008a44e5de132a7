"""run_test_file.py, the runner ctest runs each Python test file with, on small test files of each kind: a failure is
reported as one even where the file also printed a skip line, a file whose tests all skipped with the mark as
Skipped (77), a passing file as passed, and a file that ran nothing as failed. No GPU."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

RUNNER_DIR = os.path.dirname(os.path.abspath(__file__))

FILES = {
    "skips_and_fails": """
        import unittest
        class T(unittest.TestCase):
            def test_skips(self):
                self.skipTest("gemmtune test skipped: a skip line beside a failure")
            def test_fails(self):
                self.fail("a failure beside a skip line")
    """,
    "skips_in_setup_module_and_fails_in_a_class": """
        import unittest
        def setUpModule():
            print("gemmtune test skipped: printed, not raised")
        class T(unittest.TestCase):
            def test_fails(self):
                self.fail("a failure after a printed skip line")
    """,
    "skips_every_test": """
        import unittest
        def setUpModule():
            raise unittest.SkipTest("gemmtune test skipped: no GPU here")
        class T(unittest.TestCase):
            def test_needs_a_gpu(self):
                self.fail("never runs")
    """,
    "passes": """
        import unittest
        class T(unittest.TestCase):
            def test_passes(self):
                self.assertEqual(1 + 1, 2)
            def test_skips_without_the_mark(self):
                self.skipTest("CuPy is not installed")
    """,
    "runs_nothing": """
        import unittest
    """,
}


class RunTestFileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        for name, text in FILES.items():
            with open(os.path.join(cls.tmp.name, name + ".py"), "w") as f:
                f.write(textwrap.dedent(text))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_file(self, name):
        env = dict(os.environ, PYTHONPATH=RUNNER_DIR, PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run([sys.executable, "-m", "run_test_file", name], cwd=self.tmp.name, env=env,
                              capture_output=True, text=True, timeout=60)

    def test_a_failure_beside_a_skip_line_fails(self):
        for name in ("skips_and_fails", "skips_in_setup_module_and_fails_in_a_class"):
            with self.subTest(name):
                done = self.run_file(name)
                self.assertIn("gemmtune test skipped: ", done.stdout + done.stderr)
                self.assertEqual(done.returncode, 1, done.stdout + done.stderr)

    def test_a_file_whose_tests_all_skip_with_the_mark_is_skipped(self):
        done = self.run_file("skips_every_test")
        self.assertEqual(done.returncode, 77, done.stdout + done.stderr)

    def test_a_passing_file_passes_and_a_skip_without_the_mark_stays_a_pass(self):
        done = self.run_file("passes")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)

    def test_a_file_that_runs_no_test_fails(self):
        done = self.run_file("runs_nothing")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)


if __name__ == "__main__":
    unittest.main()
