"""gemmtune.default_db(): the db a Runtime, gemmtune.torch's default runtime and sweep_misses use when given none, read
from the environment by the C++ rule the CLI uses (common/default_db.hpp): $GEMMTUNE_DB, else the XDG cache file. No
GPU: that a flush creates its directories, or refuses naming the variable, is tested in C++ (tests/common,
tests/runtime/miss_log_test.cpp) and on a GPU (test_gpu_runtime.py)."""
import os
import subprocess
import tempfile
import unittest

import gemmtune

VARIABLES = ("GEMMTUNE_DB", "XDG_CACHE_HOME", "HOME")


class DefaultDbTest(unittest.TestCase):
    def setUp(self):
        saved = {name: os.environ.get(name) for name in VARIABLES}

        def restore():
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        self.addCleanup(restore)
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def test_gemmtune_db_wins_over_the_cache_directories(self):
        os.environ.update(GEMMTUNE_DB="/data/tune.db", XDG_CACHE_HOME="/xdg", HOME="/home/u")
        self.assertEqual(gemmtune.default_db(), "/data/tune.db")

    def test_the_xdg_cache_file_where_gemmtune_db_is_unset(self):
        os.environ.pop("GEMMTUNE_DB", None)
        os.environ.update(XDG_CACHE_HOME="/xdg", HOME="/home/u")
        self.assertEqual(gemmtune.default_db(), "/xdg/gemmtune/gemmtune.db")
        os.environ.pop("XDG_CACHE_HOME")
        self.assertEqual(gemmtune.default_db(), "/home/u/.cache/gemmtune/gemmtune.db")

    def test_reading_the_default_creates_nothing(self):
        os.environ.pop("GEMMTUNE_DB", None)
        os.environ["XDG_CACHE_HOME"] = os.path.join(self.tmp.name, "cache")
        gemmtune.default_db()
        self.assertEqual(os.listdir(self.tmp.name), [])

    def test_no_variable_to_place_it_is_an_input_error_saying_what_to_set(self):
        for name in VARIABLES:
            os.environ.pop(name, None)
        with self.assertRaisesRegex(gemmtune.InputError, "set GEMMTUNE_DB"):
            gemmtune.default_db()

    def test_the_cli_prints_the_same_db(self):
        cli = os.environ.get("GEMMTUNE_CLI")
        if not cli:
            self.skipTest("GEMMTUNE_CLI is not set")
        os.environ.pop("GEMMTUNE_DB", None)
        os.environ["XDG_CACHE_HOME"] = os.path.join(self.tmp.name, "cache")
        done = subprocess.run([cli, "paths"], capture_output=True, text=True, check=True)
        self.assertIn("db    " + gemmtune.default_db() + "\n", done.stdout)


if __name__ == "__main__":
    unittest.main()
