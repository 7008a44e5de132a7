"""scripts/eager_same_process.py's cases, no GPU and no PyTorch: a seed's shapes give every shape x mode x epilogue
with the seed; a held-out run gives each case with a record below 0.99x eager once, with its worst and its
stream/warm two-process numbers; bad arguments are usage errors before anything is imported; and its timing loop runs
end to end over stand-ins for torch and gemmtune (a name the loop rebound once broke it on the GPU only)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts")
sys.path.insert(0, SCRIPTS)
import eager_same_process  # noqa: E402


def record(shape, epilogue, launch, condition, runtime_us, torch_us):
    return {"shape": shape, "mode": "tf32", "epilogue": epilogue, "launch": launch, "condition": condition,
            "runtime_us": runtime_us, "torch_us": torch_us, "seed": 3, "candidate": "lt/x"}


class Cases(unittest.TestCase):
    def test_a_seeds_shapes_give_every_mode_and_epilogue_with_the_seed(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "shapes.json")
            with open(path, "w") as f:
                json.dump({"seed": 7, "shapes": [{"m": 2, "n": 3, "k": 4, "tuned": True},
                                                 {"m": 5, "n": 6, "k": 7, "tuned": False}]}, f)
            cases = eager_same_process.cases_of_shapes(path, ["tf32", "fp32"], ["none", "bias+gelu"])
        self.assertEqual(len(cases), 8)
        self.assertEqual({c["seed"] for c in cases}, {7})
        self.assertIn({"shape": "5x6x7", "mode": "fp32", "epilogue": "bias+gelu", "seed": 7, "tuned": False}, cases)

    def test_a_run_gives_each_case_below_the_band_once_with_its_worst_and_stream_warm_records(self):
        records = [record("9x9x9", "none", "stream", "warm", 100, 95),
                   record("9x9x9", "none", "graph", "cold", 100, 90),
                   record("9x9x9", "bias+gelu", "stream", "warm", 100, 120),
                   record("8x8x8", "none", "graph", "warm", 100, 98.5)]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bench.json")
            with open(path, "w") as f:
                json.dump({"records": records}, f)
            cases = eager_same_process.cases_below_band(path)
        self.assertEqual([(c["shape"], c["epilogue"]) for c in cases], [("8x8x8", "none"), ("9x9x9", "none")])
        nine = cases[1]
        self.assertEqual(nine["two_process_worst"]["condition"], "graph/cold")
        self.assertAlmostEqual(nine["two_process_worst"]["ratio"], 0.90)
        self.assertAlmostEqual(nine["two_process_stream_warm"]["ratio"], 0.95)
        self.assertIsNone(cases[0]["two_process_stream_warm"])

    def test_bad_arguments_are_usage_errors(self):
        run = lambda *a: subprocess.run([sys.executable, os.path.join(SCRIPTS, "eager_same_process.py"), *a],  # noqa: E731
                                        capture_output=True, text=True)
        self.assertEqual(run("--db", "x").returncode, 2)
        self.assertIn("no file", run("--shapes", "/nonexistent/shapes.json", "--db", "x").stderr)
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            bad = run("--shapes", f.name, "--db", f.name, "--modes", "fp16")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--modes", bad.stderr)


# Stand-ins for what the script imports after its arguments are checked: every call it makes of torch and gemmtune.
FAKE_TORCH = """
__version__ = "0.0-fake"
class _Tensor:
    def __mul__(self, other): return self
    def __sub__(self, other): return self
class _Event:
    def __init__(self, enable_timing=False): pass
    def record(self): pass
    def synchronize(self): pass
    def elapsed_time(self, end): return 0.02
class _Cuda:
    Event = _Event
    @staticmethod
    def synchronize(): pass
    @staticmethod
    def _sleep(cycles): pass
    @staticmethod
    def get_device_name(): return "fake GPU"
class _Matmul:
    allow_tf32 = False
class _Backends:
    class cuda:
        matmul = _Matmul
cuda = _Cuda
backends = _Backends
def rand(*shape, device=None): return _Tensor()
def empty(*shape, device=None): return _Tensor()
def mm(a, b, out=None): return out
def addmm(bias, a, b): return _Tensor()
"""
FAKE_GEMMTUNE = """
class Runtime:
    def __init__(self, db): self.calls = 0
    def forward(self, *operands, out=None, **kwargs): self.calls += 1; return out
    def explain(self, *operands, **kwargs): return "forward ...: lt/fake [exact] (fake)"
"""


class Loop(unittest.TestCase):
    def test_every_case_is_timed_in_both_views_and_written_with_its_explain(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "torch", "nn"))
            with open(os.path.join(d, "torch", "__init__.py"), "w") as f:
                f.write(FAKE_TORCH)
            open(os.path.join(d, "torch", "nn", "__init__.py"), "w").close()
            with open(os.path.join(d, "torch", "nn", "functional.py"), "w") as f:
                f.write("def gelu(x, approximate='none'): return x\n")
            with open(os.path.join(d, "gemmtune.py"), "w") as f:
                f.write(FAKE_GEMMTUNE)
            shapes, db, out = (os.path.join(d, name) for name in ("shapes.json", "fake.db", "out.json"))
            with open(shapes, "w") as f:
                json.dump({"seed": 5, "shapes": [{"m": 2, "n": 3, "k": 4, "tuned": True}]}, f)
            open(db, "w").close()
            r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "eager_same_process.py"), "--shapes", shapes,
                                "--db", db, "--rounds", "2", "--json", out],
                               capture_output=True, text=True, env={**os.environ, "PYTHONPATH": d})
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                doc = json.load(f)
        self.assertEqual(len(doc["records"]), 4)
        for case in doc["records"]:
            self.assertIn("lt/fake", case["explain"])
            for view in ("one_process_stream_warm", "one_process_python_loop"):
                self.assertAlmostEqual(case[view]["ratio"], 1.0)
        self.assertIn("4 cases; 0 below", r.stdout)


if __name__ == "__main__":
    unittest.main()
