"""Runs one test file for ctest (`python -m run_test_file MODULE`, as `python -m unittest -v MODULE` would) and says
how it went by its exit code alone: 1 where a test failed or errored, or none ran; 77, which ctest reports as Skipped,
where the file's tests could not run here and said so with "gemmtune test skipped: <reason>"; 0 where they passed.
A failure wins over a skip: ctest's match of a skip line in the output would report a file that skipped some tests
and failed others as Skipped."""
import sys
import unittest

SKIP_MARK = "gemmtune test skipped: "
EXIT_SKIPPED = 77


def exit_code(result):
    if not result.wasSuccessful():
        return 1
    if any(reason.startswith(SKIP_MARK) for _, reason in result.skipped):
        return EXIT_SKIPPED
    if result.testsRun == 0:
        print("run_test_file: no test ran", file=sys.stderr)
        return 1
    return 0


def main(module):
    suite = unittest.defaultTestLoader.loadTestsFromName(module)
    return exit_code(unittest.TextTestRunner(verbosity=2).run(suite))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
