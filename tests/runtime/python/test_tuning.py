"""gemmtune.sweep_misses runs `gemmtune sweep --from-misses` with this process's cuBLASLt preloaded and turns the
CLI's exit codes into gemmtune's exceptions; checked with a stand-in CLI that records how it was called. No GPU."""
import os
import stat
import tempfile
import unittest

import gemmtune
from gemmtune import tuning

FAKE_CLI = """#!/bin/sh
printf '%s\\n' "$@" > "$0.args"
printf '%s\\n' "$LD_PRELOAD" > "$0.preload"
exit {code}
"""


class SweepMissesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def fake_cli(self, code):
        path = os.path.join(self.tmp.name, f"gemmtune{code}")
        with open(path, "w") as f:
            f.write(FAKE_CLI.format(code=code))
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def read(self, path):
        with open(path) as f:
            return f.read().split("\n")[:-1]

    def test_runs_sweep_from_misses_on_the_db_with_this_processs_cublaslt(self):
        cli = self.fake_cli(0)
        gemmtune.sweep_misses("t.db", fp32_equivalent=True, device=1, profile="quick", cli=cli, args=["--top-k", "8"])
        self.assertEqual(self.read(cli + ".args"), ["sweep", "--from-misses", "--db", "t.db", "--device", "1",
                                                    "--fp32-equivalent", "--profile", "quick", "--top-k", "8"])
        lt = tuning.loaded_cublaslt()
        self.assertIsNotNone(lt, "the extension links cuBLASLt, so this process has one loaded")
        self.assertEqual(self.read(cli + ".preload")[0].split()[0], lt)

    def test_without_a_db_the_cli_sweeps_its_default_which_this_environment_places(self):
        cli = self.fake_cli(0)
        gemmtune.sweep_misses(cli=cli)
        self.assertEqual(self.read(cli + ".args"), ["sweep", "--from-misses", "--device", "0"])

    def test_exit_codes_become_gemmtune_exceptions(self):
        for code, error in ((1, gemmtune.CheckError), (2, gemmtune.InputError), (3, gemmtune.NoGpuError),
                            (9, gemmtune.Error)):
            with self.subTest(code=code), self.assertRaisesRegex(error, f"exited with {code}"):
                gemmtune.sweep_misses("t.db", cli=self.fake_cli(code))
        self.assertEqual(gemmtune.sweep_misses("t.db", cli=self.fake_cli(1), check=False).returncode, 1)

    def test_a_missing_cli_is_an_input_error(self):
        with self.assertRaisesRegex(gemmtune.InputError, "^cli: "):
            gemmtune.sweep_misses("t.db", cli=os.path.join(self.tmp.name, "absent"))


if __name__ == "__main__":
    unittest.main()
