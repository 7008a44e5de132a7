"""`cmake --install` puts a package that imports from the install prefix alone: the extension finds
libgemmtune_runtime.so through its install RPATH, not through the build tree. No GPU needed."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest


class InstallTest(unittest.TestCase):
    def test_installed_package_imports_and_loads_the_installed_runtime_library(self):
        build, package_dir = os.environ.get("GEMMTUNE_BUILD_DIR"), os.environ.get("GEMMTUNE_PYTHON_INSTALL_DIR")
        if not build or not package_dir:
            self.skipTest("GEMMTUNE_BUILD_DIR and GEMMTUNE_PYTHON_INSTALL_DIR are set by ctest")
        with tempfile.TemporaryDirectory() as prefix:
            subprocess.run([os.environ.get("GEMMTUNE_CMAKE", "cmake"), "--install", build, "--prefix", prefix],
                           check=True, capture_output=True, timeout=300)
            site = package_dir if os.path.isabs(package_dir) else os.path.join(prefix, package_dir)
            child = textwrap.dedent("""
                import gemmtune
                print(gemmtune.__file__)
                print(next(line.split()[-1] for line in open("/proc/self/maps") if "libgemmtune_runtime.so" in line))
            """)
            env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
            env["PYTHONPATH"] = site
            done = subprocess.run([sys.executable, "-c", child], cwd="/", env=env, capture_output=True, text=True,
                                  timeout=120)
            self.assertEqual(done.returncode, 0, done.stderr)
            package, library = done.stdout.split()
            self.assertTrue(package.startswith(os.path.join(prefix, "")), package)
            self.assertTrue(os.path.realpath(library).startswith(os.path.realpath(prefix)), library)


if __name__ == "__main__":
    unittest.main()
