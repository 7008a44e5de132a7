"""scripts/compare_torch.py's timing of a condition, no GPU and no PyTorch: over stand-ins for torch whose events
read a clock that each side's calls advance by its own cost, every side gets its own median, in a stream and from a
graph, and the sides take turns within every round with the first one rotating, so a clock drift within a condition
reaches them alike; from a graph, each side's rounds replay several graphs of its calls in turn; the runtime's side
writes one output for every call, as eager's discarded results hand their block to the next call; --compiled-modes
is a usage error without --compiled or outside --modes."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts")

# A clock in milliseconds that each timed call advances; events read it when recorded. A graph replays the calls
# captured into it. The spin advances the clock by nothing: host launch cost is what it keeps out.
FAKE_TORCH = """
__version__ = "0.0-fake"
clock = [0.0]
log = []
capturing = [None]
class _Event:
    def __init__(self, enable_timing=False): self.t = None
    def record(self): self.t = clock[0]
    def elapsed_time(self, end): return end.t - self.t
class _Stream:
    def wait_stream(self, other): pass
class _StreamContext:
    def __init__(self, s): pass
    def __enter__(self): return self
    def __exit__(self, *exc): return False
replays = []
class CUDAGraph:
    def __init__(self): self.calls = []
    def replay(self):
        replays.append(self)
        for fn in self.calls: fn()
class _GraphContext:
    def __init__(self, g): self.g = g
    def __enter__(self): capturing[0] = self.g
    def __exit__(self, *exc): capturing[0] = None
class _Cuda:
    Event = _Event
    Stream = _Stream
    CUDAGraph = CUDAGraph
    @staticmethod
    def current_stream(): return _Stream()
    @staticmethod
    def stream(s): return _StreamContext(s)
    @staticmethod
    def graph(g): return _GraphContext(g)
    @staticmethod
    def synchronize(): pass
    @staticmethod
    def _sleep(cycles): pass
cuda = _Cuda
class _Tensor:
    def __init__(self, *shape): self.shape = shape
def empty(*shape, device=None): return _Tensor(*shape)
def sigmoid(x): return x
def tanh(x): return x
def call(name, cost_ms):
    def run():
        log.append(name)
        clock[0] += cost_ms
    run.side = name
    if capturing[0] is not None:
        capturing[0].calls.append(run)
    else:
        run()
"""


class FakeTorchCase(unittest.TestCase):
    """compare_torch imported over the stand-in torch above."""
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        os.makedirs(os.path.join(self.dir.name, "torch", "nn"))
        with open(os.path.join(self.dir.name, "torch", "__init__.py"), "w") as f:
            f.write(FAKE_TORCH)
        open(os.path.join(self.dir.name, "torch", "nn", "__init__.py"), "w").close()
        with open(os.path.join(self.dir.name, "torch", "nn", "functional.py"), "w") as f:
            f.write("def relu(x): return x\ndef gelu(x, approximate='none'): return x\n")
        sys.path[:0] = [self.dir.name, SCRIPTS]
        for name in ("torch", "torch.nn", "torch.nn.functional", "compare_torch"):
            sys.modules.pop(name, None)
        import compare_torch
        import torch
        self.ct, self.torch = compare_torch, torch

    def tearDown(self):
        for name in ("torch", "torch.nn", "torch.nn.functional", "compare_torch"):
            sys.modules.pop(name, None)
        sys.path[:] = [p for p in sys.path if p not in (self.dir.name, SCRIPTS)]
        self.dir.cleanup()


class ConditionTime(FakeTorchCase):
    def sides(self):
        t = self.torch
        return [("eager_us", lambda i: t.call("eager", 0.010)), ("compiled_us", lambda i: t.call("compiled", 0.025)),
                ("runtime_here_us", lambda i: t.call("runtime", 0.005))]

    def test_each_side_gets_its_own_per_call_median_in_a_stream_and_from_a_graph(self):
        for graph in (False, True):
            us = self.ct.condition_time_us(self.sides(), cold=False, graph=graph, flush=None, calls=4, rounds=3)
            self.assertEqual(set(us), {"eager_us", "compiled_us", "runtime_here_us"})
            self.assertAlmostEqual(us["eager_us"], 10.0)
            self.assertAlmostEqual(us["compiled_us"], 25.0)
            self.assertAlmostEqual(us["runtime_here_us"], 5.0)

    def test_the_sides_take_turns_every_round_the_first_rotating(self):
        calls = 2
        self.ct.condition_time_us(self.sides(), cold=False, graph=False, flush=None, calls=calls, rounds=3)
        timed = self.torch.log[3 * calls:]  # after each side's warm-up batch
        batches = [timed[i] for i in range(0, len(timed), calls)]
        self.assertTrue(all(timed[i] == timed[i + 1] for i in range(0, len(timed), calls)), "a batch is one side's")
        self.assertEqual(batches, ["eager", "compiled", "runtime", "compiled", "runtime", "eager",
                                   "runtime", "eager", "compiled", "eager", "compiled", "runtime"])

    def test_graph_rounds_replay_each_sides_graphs_in_turn(self):
        rounds, instances = 6, self.ct.GRAPH_INSTANCES
        self.ct.condition_time_us(self.sides(), cold=False, graph=True, flush=None, calls=2, rounds=rounds)
        replays = self.torch.replays
        graphs = {}
        for g in replays:
            graphs.setdefault(g.calls[0].side, []).append(g)
        self.assertEqual(set(graphs), {"eager", "compiled", "runtime"})
        for name, seen in graphs.items():
            distinct = list(dict.fromkeys(seen))
            self.assertEqual(len(distinct), instances, name)
            timed = seen[instances:]  # after each graph's upload replay
            self.assertEqual(len(timed), rounds + 1)
            self.assertEqual(timed, [distinct[r % instances] for r in range(rounds + 1)], name)


class RuntimeHereSide(FakeTorchCase):
    def test_every_call_writes_one_output_of_the_problems_shape_whatever_its_input_set(self):
        t = self.torch
        calls = []

        class Runtime:
            def forward(self, a, b, bias=None, act="none", out=None, mode=None):
                calls.append((a, b, bias, act, out, mode))

        a = [t.empty(3, 5) for _ in range(4)]
        b = [t.empty(5, 7) for _ in range(4)]
        c = [t.empty(7) for _ in range(4)]
        fn = self.ct.runtime_here_side(Runtime(), "bias+gelu", "tf32", a, b, c)
        for i in range(9):
            fn(i)
        self.assertEqual([x[0] for x in calls], [a[i % 4] for i in range(9)], "the inputs rotate over the sets")
        self.assertEqual([x[2] for x in calls], [c[i % 4] for i in range(9)])
        outs = {id(x[4]) for x in calls}
        self.assertEqual(len(outs), 1, "one output for every call, as eager's recycled block")
        self.assertEqual(calls[0][4].shape, (3, 7))
        self.assertEqual({(x[3], x[5]) for x in calls}, {("gelu", "tf32")})

    def test_the_explain_asked_is_of_the_problem_timed_with_its_epilogue_and_mode(self):
        t = self.torch
        asked = []

        class Runtime:
            def explain(self, a, b, bias=None, act="none", mode=None):
                asked.append((a, b, bias, act, mode))
                return f"explain {len(asked)}"

        a, b, c = t.empty(3, 5), t.empty(5, 7), t.empty(7)
        self.assertEqual(self.ct.runtime_explain(Runtime(), "bias+gelu", "fp32", a, b, c), "explain 1")
        self.assertEqual(self.ct.runtime_explain(Runtime(), "none", "tf32", a, b, c), "explain 2")
        self.assertEqual(asked, [(a, b, c, "gelu", "fp32"), (a, b, None, "none", "tf32")])


if __name__ == "__main__":
    unittest.main()


class CompiledModes(FakeTorchCase):
    def exit_code_and_error(self, *args):
        argv, sys.argv = sys.argv, ["compare_torch.py", "--shapes", "s.json", "--json", "o.json", *args]
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as done:
                self.ct.main()
        finally:
            sys.argv = argv
        return done.exception.code, err.getvalue()

    def test_compiled_modes_need_compiled_and_must_be_some_of_the_modes(self):
        code, err = self.exit_code_and_error("--compiled-modes", "tf32")
        self.assertEqual(code, 2)
        self.assertIn("--compiled-modes needs --compiled", err)
        code, err = self.exit_code_and_error("--compiled", "--modes", "tf32", "--compiled-modes", "fp32")
        self.assertEqual(code, 2)
        self.assertIn("--compiled-modes: some of --modes", err)
