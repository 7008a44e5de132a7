"""scripts/dev/sweep_finalists.py, no GPU: a sweep's finalists per condition with their roles, each problem's fastest
verified own kernels (unverified ones and cuBLASLt's left out), a condition a finalist lacks shown as '-', and a file
that is not a sweep JSON refused in one line."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

DEV = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts", "dev")
sys.path.insert(0, DEV)
import sweep_finalists  # noqa: E402

KEY = "fwd:459x856x798:nn:row:bias+gelu:fp32"


def result(candidate, us, status="ok"):
    return {"problem_key": KEY, "candidate": {"id": candidate}, "median_us": us, "status": status}


def finalist(candidate, role, times):
    return {"candidate": candidate, "role": role,
            "conditions": [{"condition": c, "median_us": t} for c, t in times.items()]}


SWEEP = {
    "results": [result("own/fp32_128x64x16_w32x32_t8x4_s2_c2", 27.5), result("own/fp32_64x64x16_w32x32_t8x4_s2", 31.0),
                result("own/fp32_64x128x16_w32x64_t8x8_s2_c2", 20.0, "verify_failed"),
                result("lt/a55-t15-s31-k3-r2-w0-c0-cl0-i0", 26.0)],
    "problems": [{"problem_key": KEY, "heuristic_first_us": 26.0, "best_lt_us": 25.5, "best_own_us": 27.5,
                  "finalist_stage": {"kept": "lt/a55-t15-s31-k1-r0-w0-c0-cl0-i0+bias", "finalists": [
                      finalist("lt/a55-t15-s31-k3-r2-w0-c0-cl0-i0", "heuristic_first",
                               {"stream/warm": 31.81, "stream/cold": 33.37, "graph/warm": 29.38, "graph/cold": 30.95}),
                      finalist("lt/a55-t15-s31-k1-r0-w0-c0-cl0-i0+bias", "no_entry",
                               {"stream/warm": 29.62, "stream/cold": 42.86, "graph/warm": 28.2}),
                  ]}}],
}


class SweepFinalists(unittest.TestCase):
    def test_finalists_per_condition_and_the_fastest_verified_own_kernels(self):
        lines = sweep_finalists.table(SWEEP["results"], SWEEP["problems"], 6)
        own = [line.split() for line in lines if line.startswith("    ")]
        self.assertEqual(own, [["own/fp32_128x64x16_w32x32_t8x4_s2_c2", "27.50"],
                               ["own/fp32_64x64x16_w32x32_t8x4_s2", "31.00"]],
                         "fastest first; the unverified tile and cuBLASLt's algo are left out")
        rows = {line.split()[0]: line.split()[1:] for line in lines if line.startswith("  lt/")}
        self.assertEqual(rows["lt/a55-t15-s31-k3-r2-w0-c0-cl0-i0"], ["heuristic_first", "31.81", "33.37", "29.38",
                                                                      "30.95"])
        self.assertEqual(rows["lt/a55-t15-s31-k1-r0-w0-c0-cl0-i0+bias"], ["no_entry", "29.62", "42.86", "28.20", "-"],
                         "a condition the finalist was not timed in is a dash, not a zero")
        self.assertIn("kept lt/a55-t15-s31-k1-r0-w0-c0-cl0-i0+bias", "\n".join(lines))
        self.assertEqual(len(sweep_finalists.table(SWEEP["results"], SWEEP["problems"], 1)), len(lines) - 1)

    def test_a_file_that_is_not_a_sweep_json_is_refused_in_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "not_a_sweep.json")
            with open(path, "w") as f:
                json.dump({"records": []}, f)
            for args in ([path], [os.path.join(d, "missing.json")], [path, "six"]):
                run = subprocess.run([sys.executable, os.path.join(DEV, "sweep_finalists.py"), *args],
                                     capture_output=True, text=True)
                self.assertEqual(run.returncode, 2, args)
                self.assertEqual(run.stderr.count("\n"), 1, run.stderr)
                self.assertTrue(run.stderr.startswith("sweep_finalists: "), run.stderr)


if __name__ == "__main__":
    unittest.main()
