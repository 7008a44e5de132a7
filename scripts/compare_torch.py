#!/usr/bin/env python3
"""What a user would otherwise write: PyTorch eager torch.addmm + the activation, on the forward problems of a
runtime_bench JSON, timed the way runtime_bench times the runtime, and the ratio of the two.

Timing (the same as src/examples/runtime_bench.cu): inputs rotate over enough sets to exceed 2x L2; per round, a
spin kernel (torch.cuda._sleep) holds the stream while 20 back-to-back calls are queued, so host launch latency
stays out; CUDA events around the 20 calls; median over 15 rounds. triton.testing.do_bench (L2 flushed before each
call) is reported beside it when triton is installed.

usage: compare_torch.py --runtime-json runtime_bench.json [--json OUT]
"""
import argparse
import json
import math
import statistics
import sys

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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runtime-json", required=True)
    ap.add_argument("--json")
    args = ap.parse_args()
    with open(args.runtime_json) as f:
        bench = json.load(f)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    cases = []
    for case in bench["forward"]:
        m, n, k, bias, act, mode = parse_key(case["problem"])
        set_mode(mode)
        set_bytes = 4 * (m * k + k * n + n)
        sets = max(1, min(64, 2 * l2 // set_bytes + 1))
        a = [torch.empty(m, k, device="cuda").uniform_(-1, 1) for _ in range(sets)]
        b = [torch.empty(k, n, device="cuda").uniform_(-1, 1) for _ in range(sets)]
        c = [torch.empty(n, device="cuda").uniform_(-1, 1) for _ in range(sets)]
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
