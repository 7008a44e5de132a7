"""scripts/heldout_shapes.py --decode, no GPU and no PyTorch: every drawn m is a decode step's 1..16 rows, none of the
shapes a profile names, half of them tuned, the same shapes for the same seed; --decode with --compile is refused."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts")
PROFILES = os.path.join(SCRIPTS, os.pardir, "profiles")


def run(*args):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, "heldout_shapes.py"), *args],
                          capture_output=True, text=True)


def draw(out, seed, count=12):
    done = run("--decode", "--seed", str(seed), "--count", str(count), "--out", out)
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    with open(os.path.join(out, "shapes.json")) as f:
        return json.load(f)["shapes"]


def profile_named():
    named = set()
    for name in os.listdir(PROFILES):
        if name.endswith(".json"):
            with open(os.path.join(PROFILES, name)) as f:
                for s in json.load(f).get("shapes", []):
                    named.add(tuple(s[:3]) if isinstance(s, list) else (s["m"], s["n"], s["k"]))
    return named


class HeldoutShapesDecode(unittest.TestCase):
    def test_every_m_is_a_decode_steps_rows_and_half_are_tuned(self):
        with tempfile.TemporaryDirectory() as d:
            shapes = draw(d, 11)
        self.assertEqual(len(shapes), 12)
        self.assertTrue(all(1 <= s["m"] <= 16 for s in shapes), shapes)
        self.assertTrue(all(64 <= s["n"] <= 16384 and 64 <= s["k"] <= 16384 for s in shapes), shapes)
        self.assertEqual(sum(s["tuned"] for s in shapes), 6)
        named = profile_named()
        self.assertFalse([s for s in shapes if (s["m"], s["n"], s["k"]) in named])

    def test_the_same_seed_draws_the_same_shapes_and_another_seed_others(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b, \
                tempfile.TemporaryDirectory() as c:
            self.assertEqual(draw(a, 5), draw(b, 5))
            self.assertNotEqual(draw(a, 5), draw(c, 6))

    def test_decode_with_compile_is_refused_in_one_line(self):
        done = run("--decode", "--compile", "--seed", "1", "--count", "4", "--slice", "1/1")
        self.assertEqual(done.returncode, 2)
        self.assertIn("--decode and --compile", done.stderr)


if __name__ == "__main__":
    unittest.main()
