#!/usr/bin/env python3
"""What a user would otherwise write: PyTorch eager torch.addmm + the activation, on the forward problems of a
runtime_bench JSON, timed the way runtime_bench times the runtime, and the ratio of the two.

Timing (the same as bench/runtime_bench.cu): inputs rotate over enough sets to exceed 2x L2; per round, a
spin kernel (torch.cuda._sleep) holds the stream while 20 back-to-back calls are queued, so host launch latency
stays out; CUDA events around the 20 calls; median over 15 rounds. triton.testing.do_bench (L2 flushed before each
call) is reported beside it when triton is installed.

usage: compare_torch.py --runtime-json runtime_bench.json [--json OUT]
       compare_torch.py --shapes shapes.json [--shapes ...] --json OUT [--rounds N] [--calls N]
                        [--modes tf32,fp32] [--epilogues none,bias+gelu] [--compiled [--compiled-modes M]]
                        [--runtime-db DB]

With --shapes (the held-out benchmark, scripts/bench_heldout.sh): every shape of the files (heldout_shapes.py's
format) x tf32/fp32 x epilogues none and bias+gelu, in the four conditions of bench/heldout_bench.cu:
launched into a stream or replayed from captured CUDA graphs (torch.cuda.CUDAGraph of the batch, three in turn),
warm (the same tensors every call) or cold (L2 overwritten before the batch, the calls rotating over inputs past 2x
L2).

--compiled (scripts/bench_compile.sh, issue 49) also times the same op through torch.compile(mode=
"max-autotune-no-cudagraphs"), compiled afresh per shape and mode (torch._dynamo.reset), in the same four conditions:
compiled_us beside torch_us, compile_s (the first call's wall time: Inductor's autotuning and codegen) and
compiled_rel_err (its output against eager's, relative to eager's largest magnitude). --compiled-modes tf32 (or fp32)
compiles in that mode alone: Inductor's fp32 autotuning takes 44-67 s a shape on the H200 (tf32 11-17 s), and a
held-out run on one device call may not have it; the other mode's records carry no compiled_us.

--runtime-db DB (with --shapes) also times our tuned runtime in this process: gemmtune.Runtime(DB).forward on the same
tensors, every call into one preallocated output, as runtime_here_us, with its choice (Runtime.explain) as
runtime_here_explain. heldout_bench times the runtime in a process of its own, so its ratio to the compiled op carries
two processes' drift (where allocations lie, which speed a clustered cuBLASLt kernel settles in; the power state, which
both now set alike by idling the GPU 10 ms before each batch); here the sides share one process and take turns every
round.

The sides of one condition take turns round by round, the first of them rotating, so a drift of the GPU's clock
within the condition reaches each side alike.
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

BATCH_CALLS = 20
ROUNDS = 15
ACTIVATIONS = {
    "none": lambda x: x,
    "relu": F.relu,
    "gelu": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_erf": F.gelu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
}


def parse_key(key):
    """fwd:MxNxK:nn:row:EPILOGUE:MODE -> (m, n, k, bias, activation, mode); only what torch.addmm can express."""
    pass_, shape, layout, out, epilogue, mode = key.split(":")
    if pass_ != "fwd" or layout != "nn" or out != "row":
        raise ValueError(f"{key}: only forward row-major nn problems are compared")
    m, n, k = (int(d) for d in shape.split("x"))
    tokens = epilogue.split("+")
    act = next((t for t in tokens if t in ACTIVATIONS), "none")
    return m, n, k, "bias" in tokens, act, mode


def set_mode(mode):
    tf32 = mode == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")


def input_sets(m, n, k, l2):
    """Fresh uniform(-1, 1) inputs of an m x n x k op, (A sets, B sets, bias sets): as many sets as exceed 2x L2 (at
    most 64), so calls rotating over them find their operands in DRAM."""
    sets = max(1, min(64, 2 * l2 // (4 * (m * k + k * n + n)) + 1))
    a = [torch.empty(m, k, device="cuda").uniform_(-1, 1) for _ in range(sets)]
    b = [torch.empty(k, n, device="cuda").uniform_(-1, 1) for _ in range(sets)]
    c = [torch.empty(n, device="cuda").uniform_(-1, 1) for _ in range(sets)]
    return a, b, c


def rotating_time_us(fn, sets):
    for i in range(5):
        fn(i % sets)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(ROUNDS):
        torch.cuda._sleep(2_000_000)  # ~1 ms of GPU spin while the batch is queued
        start.record()
        for i in range(BATCH_CALLS):
            fn(i % sets)
        stop.record()
        torch.cuda.synchronize()
        times.append(1000.0 * start.elapsed_time(stop) / BATCH_CALLS)
    return statistics.median(times)


def do_bench_us(fn):
    try:
        from triton.testing import do_bench
    except ImportError:
        return None
    return 1000.0 * do_bench(lambda: fn(0), return_mode="median")


# GPU clock cycles of spin a condition's batch is queued behind (~10 ms at the H200's 1.98 GHz). The 2M cycles used
# until 2026-11-30 left ~1 ms, and where Inductor picked a Triton GEMM, launched from Python, its 20 calls took longer
# than that to queue: seed 9708's 703x880x828 tf32 bias+gelu ran 61.7 us a call in a stream against 24.1 from a graph.
# bench/heldout_bench.cu holds the GPU idle as long before its batches (--idle-ms 10), so big GEMMs run at the same
# duty cycle in both processes: back to back they ran at the 700 W cap, 5082x308x5900 fp32 at 532 us a call against
# 454 here (results/nvidia-h200/duty_cycle_clocks.txt).
CONDITION_SPIN_CYCLES = 20_000_000

# CUDA graphs captured per side in the graph conditions, replayed in turn round by round. Graphs of the very same
# launches on the same tensors run at speeds of their own, each steadily for its life: PyTorch's own graphs of 20
# calls differed by up to 0.9% on 4-12 us calls and 3.0% on a split-k one
# (results/nvidia-h200/graph_instance_probe.txt), so one graph per side drew one such offset per side; the median over
# rounds of several draws lies nearer their centre.
GRAPH_INSTANCES = 3


def condition_time_us(sides, cold, graph, flush, calls, rounds):
    """{name: median per-call microseconds of `calls` back-to-back fn(i) behind a GPU spin} for each (name, fn) of
    sides, as heldout_bench times them; the sides take turns within every round, the first of them rotating. From a
    graph, round r replays the side's graph r % GRAPH_INSTANCES."""
    def enqueue(fn):
        for i in range(calls):
            fn(i if cold else 0)

    graphs = {}
    for name, fn in sides:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the capture stream, as torch.cuda.graphs asks
            enqueue(fn)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        if graph:
            graphs[name] = [torch.cuda.CUDAGraph() for _ in range(GRAPH_INSTANCES)]
            for g in graphs[name]:
                with torch.cuda.graph(g):
                    enqueue(fn)
            for g in graphs[name]:  # a graph's first replay uploads it
                g.replay()
            torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = {name: [] for name, _ in sides}
    for r in range(rounds + 1):
        for j in range(len(sides)):
            name, fn = sides[(r + j) % len(sides)]
            torch.cuda._sleep(CONDITION_SPIN_CYCLES)
            if cold:
                flush.fill_(r & 0xff)
            start.record()
            if graph:
                graphs[name][r % GRAPH_INSTANCES].replay()
            else:
                enqueue(fn)
            stop.record()
            torch.cuda.synchronize()
            if r:  # the first round warms up
                times[name].append(1000.0 * start.elapsed_time(stop) / calls)
    graphs.clear()
    return {name: statistics.median(t) for name, t in times.items()}


def runtime_op(rt, epilogue, mode):
    """Our tuned runtime's call of the op: Y = gelu(A·B + bias) (or A·B) into y."""
    if epilogue == "none":
        return lambda c, a, b, y: rt.forward(a, b, out=y, mode=mode)
    return lambda c, a, b, y: rt.forward(a, b, c, act="gelu", out=y, mode=mode)


def runtime_explain(rt, epilogue, mode, a, b, c):
    """What the runtime in this process chose for the op and why (its first-use trial's times among them): two
    processes' trials can decide apart, and the one-process view's records are read with it."""
    if epilogue == "none":
        return rt.explain(a, b, mode=mode)
    return rt.explain(a, b, c, act="gelu", mode=mode)


def runtime_here_side(rt, epilogue, mode, a, b, c):
    """fn(i): the runtime's call on input set i % len(a), every call into one output. Eager's and the compiled op's
    results are dropped as soon as they are made, so the caching allocator hands the same block to the next call, and
    heldout_bench's runtime writes one output for all its sets. An output per set, as this side had until 2026-12-01,
    made it alone write a new output on nearly every cold call: with it the very cublasSgemm call eager makes, at
    1225x4096x400 tf32 (20 MB an output), ran 0.978-0.982x eager cold and 1.00x warm (held-out seed 9666, H200)."""
    run = runtime_op(rt, epilogue, mode)
    y = torch.empty(a[0].shape[0], b[0].shape[1], device="cuda")
    sets = len(a)
    return lambda i: run(c[i % sets], a[i % sets], b[i % sets], y)


def addmm_op(epilogue):
    if epilogue == "none":
        return lambda c, a, b: torch.mm(a, b)
    return lambda c, a, b: ACTIVATIONS["gelu"](torch.addmm(c, a, b))


def compile_op(epilogue, a, b, c):
    """torch.compile max-autotune of the op, compiled on (a, b, c): (compiled fn, compile seconds, relative error)."""
    torch._dynamo.reset()  # a fresh compile per shape and mode, never a recompile limit or another shape's choice
    op = addmm_op(epilogue)
    compiled = torch.compile(op, mode="max-autotune-no-cudagraphs", dynamic=False)
    torch.cuda.synchronize()
    start = time.perf_counter()
    y = compiled(c, a, b)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    ref = op(c, a, b)
    rel_err = ((y - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    return compiled, seconds, rel_err


def heldout(args):
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    rt = None
    if args.runtime_db:
        import gemmtune  # build/python on PYTHONPATH (scripts/bench_compile.sh sets it)
        rt = gemmtune.Runtime(args.runtime_db)
    records = []
    for path in args.shapes:
        with open(path) as f:
            doc = json.load(f)
        for mode in args.modes.split(","):
            set_mode(mode)
            for epilogue in args.epilogues.split(","):
                for s in doc["shapes"]:
                    m, n, k = s["m"], s["n"], s["k"]
                    a, b, c = input_sets(m, n, k, l2)
                    sets = len(a)
                    op = addmm_op(epilogue)
                    sides = [("torch_us", lambda i: op(c[i % sets], a[i % sets], b[i % sets]))]
                    extra = {}
                    if args.compiled and mode in args.compiled_modes.split(","):
                        compiled, compile_s, rel_err = compile_op(epilogue, a[0], b[0], c[0])
                        sides.append(("compiled_us", lambda i: compiled(c[i % sets], a[i % sets], b[i % sets])))
                        extra = {"compile_s": compile_s, "compiled_rel_err": rel_err}
                    if rt is not None:
                        sides.append(("runtime_here_us", runtime_here_side(rt, epilogue, mode, a, b, c)))
                    explain = None  # the runtime's choice, asked once its first condition has resolved the problem
                    for graph in (False, True):
                        for cold in (False, True):
                            rec = {"shape": f"{m}x{n}x{k}", "mode": mode, "epilogue": epilogue,
                                   "launch": "graph" if graph else "stream", "condition": "cold" if cold else "warm",
                                   "seed": doc["seed"], **extra}
                            rec.update(condition_time_us(sides, cold, graph, flush, args.calls, args.rounds))
                            if rt is not None:
                                explain = explain or runtime_explain(rt, epilogue, mode, a[0], b[0], c[0])
                                rec["runtime_here_explain"] = explain
                            records.append(rec)
                            print(f"torch {mode:<5} {epilogue:<9} {m}x{n}x{k:<8} {rec['launch']:<6} "
                                  f"{rec['condition']:<4} eager {rec['torch_us']:9.2f} us" +
                                  (f"  compiled {rec['compiled_us']:9.2f} us (compile {rec['compile_s']:.1f} s)"
                                   if "compiled_us" in rec else "") +
                                  (f"  runtime here {rec['runtime_here_us']:9.2f} us" if rt is not None else ""),
                                  flush=True)
                    del a, b, c, sides
                    write_heldout_json(args, records)  # after every shape: a run cut short keeps what it measured
    write_heldout_json(args, records)
    return 0


def write_heldout_json(args, records):
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
           "method": f"median of {args.rounds} rounds of {args.calls} back-to-back calls behind a GPU spin; "
                     f"stream or {GRAPH_INSTANCES} captured CUDA graphs of the batch replayed in turn; warm: the same "
                     "tensors; cold: L2 overwritten before the batch, inputs rotating past 2x L2 (as heldout_bench)" +
                     ("; compiled: torch.compile(mode='max-autotune-no-cudagraphs', dynamic=False), compiled afresh "
                      f"per shape and mode ({args.compiled_modes}), timed the same way" if args.compiled else "") +
                     ("; runtime_here: gemmtune.Runtime(db).forward in this process, the same tensors, every call "
                      "into one output, timed the same way" if args.runtime_db else "") +
                     "; the sides of a condition take turns every round, the first rotating",
           "records": records}
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runtime-json")
    ap.add_argument("--shapes", action="append", help="held-out shapes file (repeatable)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=BATCH_CALLS)
    ap.add_argument("--json")
    ap.add_argument("--modes", default="tf32,fp32", help="with --shapes: comma-separated math modes")
    ap.add_argument("--epilogues", default="none,bias+gelu", help="with --shapes: comma-separated epilogues")
    ap.add_argument("--compiled", action="store_true", help="with --shapes: also time torch.compile max-autotune")
    ap.add_argument("--compiled-modes", help="with --compiled: compile in these of --modes only (default: all)")
    ap.add_argument("--runtime-db", help="with --shapes: also time gemmtune.Runtime with this db in this process")
    args = ap.parse_args()
    if args.compiled_modes is None:
        args.compiled_modes = args.modes
    elif not args.compiled:
        ap.error("--compiled-modes needs --compiled")
    elif not set(args.compiled_modes.split(",")) <= set(args.modes.split(",")):
        ap.error("--compiled-modes: some of --modes")
    if not set(args.modes.split(",")) <= {"tf32", "fp32"}:
        ap.error("--modes: tf32 and/or fp32")
    if not set(args.epilogues.split(",")) <= {"none", "bias+gelu"}:
        ap.error("--epilogues: none and/or bias+gelu")
    if bool(args.runtime_json) == bool(args.shapes):
        ap.error("give either --runtime-json or --shapes")
    if args.runtime_db and not args.shapes:
        ap.error("--runtime-db needs --shapes")
    if args.shapes:
        if not args.json:
            ap.error("--shapes needs --json")
        return heldout(args)
    with open(args.runtime_json) as f:
        bench = json.load(f)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    cases = []
    for case in bench["forward"]:
        m, n, k, bias, act, mode = parse_key(case["problem"])
        set_mode(mode)
        a, b, c = input_sets(m, n, k, l2)
        sets = len(a)
        activation = ACTIVATIONS[act]

        def fn(i):
            y = torch.addmm(c[i], a[i], b[i]) if bias else torch.mm(a[i], b[i])
            return activation(y)

        torch_us = rotating_time_us(fn, sets)
        cases.append({
            "problem": case["problem"],
            "torch_us": torch_us,
            "torch_do_bench_us": do_bench_us(fn),
            "runtime_us": case["runtime_us"],
            "speedup": torch_us / case["runtime_us"],
        })
        r = cases[-1]
        print(f"torch    {r['problem']:<44} torch {torch_us:9.2f} us  runtime {r['runtime_us']:9.2f} us  "
              f"x{r['speedup']:.3f}" + (f"  (do_bench {r['torch_do_bench_us']:.2f} us)" if r["torch_do_bench_us"] else ""))
        del a, b, c

    summary = {}
    for mode in ("tf32", "fp32"):
        s = [c["speedup"] for c in cases if c["problem"].endswith(":" + mode)]
        if s:
            g = math.exp(sum(math.log(x) for x in s) / len(s))
            summary[mode] = {"geomean_speedup": g, "min_speedup": min(s), "target_geomean": 1.1, "met": g >= 1.1}
            print(f"runtime vs PyTorch eager addmm+activation, {mode}: geomean x{g:.3f} (target 1.1), "
                  f"min x{min(s):.3f}: {'met' if g >= 1.1 else 'MISSED'}")
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
           "method": f"median of {ROUNDS} rounds of {BATCH_CALLS} back-to-back calls behind a GPU spin, "
                     "inputs rotating over > 2x L2, CUDA events (as runtime_bench)",
           "forward": cases, "summary": summary}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
