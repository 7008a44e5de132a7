#!/usr/bin/env python3
"""Where the host time of bench_torch_step.py's eager step goes, nn.Linear against FusedLinear: the step is CPU-bound
at small sizes, so its speed is the Python and launch cost per step, not the GPU's.

Prints, per variant: the median host time to issue one step (perf_counter around the step's calls, the GPU then
synchronized, so no step waits on the one before) beside the GPU time of the step (CUDA events); then cProfile's
top entries over fused steps, and the per-call host cost of the pieces a FusedLinear call is made of.

usage: torch_step_overhead.py [--d 1024] [--tokens 1000] [--mode tf32] [--db-dir DIR] [--steps 30]
"""
import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import bench_torch_step as bench  # noqa: E402


def issue_times(torch, runner, steps):
    """Host ms to issue each step, and the GPU ms of each, steps apart (synchronized between)."""
    host, gpu = [], []
    for _ in range(steps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        runner.step()
        stop.record()
        host.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.synchronize()
        gpu.append(start.elapsed_time(stop))
    return statistics.median(host), statistics.median(gpu)


def per_call_us(torch, fn, calls=2000):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    host = (time.perf_counter() - t0) / calls * 1e6
    torch.cuda.synchronize()
    return host


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--mode", default="tf32", choices=("tf32", "fp32"))
    parser.add_argument("--db-dir", default=tempfile.mkdtemp(prefix="gemmtune-overhead-"))
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    import torch
    import gemmtune
    from gemmtune.torch import _FusedLinearFunction

    d, tokens, mode = args.d, args.tokens, args.mode
    db = os.path.join(args.db_dir, f"overhead_d{d}_t{tokens}_{mode}.db")
    init_state, x, target, runtime = bench.tuned_step_data(torch, gemmtune, d, tokens, mode, db)
    bench.torch_mode(torch, mode)
    print(f"{torch.cuda.get_device_name()}: d={d} tokens={tokens} {mode}, {runtime.cache_size} db entries")

    runners = {}
    for variant in ("nn_eager", "fused_eager"):
        model = bench.build_model(torch, variant, d, mode, runtime)
        model.load_state_dict(init_state)
        runner = bench.StepRunner(torch, variant, model, bench.make_optimizer(torch, model), x, target)
        runner.warm_up()
        runners[variant] = (model, runner)
    for variant, (_, runner) in runners.items():
        host, gpu = issue_times(torch, runner, args.steps)
        print(f"{variant:<12} host issue {host:7.3f} ms per step, GPU {gpu:7.3f} ms per step")

    _, fused = runners["fused_eager"]
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(args.steps):
        fused.step()
    torch.cuda.synchronize()
    profile.disable()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(30)
    print(f"cProfile of {args.steps} fused steps, by own time:")
    print("\n".join(line for line in text.getvalue().splitlines() if line.strip())[:6000])

    fused_model, _ = runners["fused_eager"]
    nn_model, _ = runners["nn_eager"]
    up, nn_up = fused_model.blocks[0].up, nn_model.blocks[0].up
    gelu = torch.nn.GELU(approximate="tanh")
    down, nn_down = fused_model.blocks[0].down, nn_model.blocks[0].down
    up_problem = up._call(x, up.weight, up.bias, True, 0.0).problem
    down_problem = down._call(torch.empty(tokens, 4 * d, device="cuda"), down.weight, down.bias, False, 0.0).problem
    h = torch.randn(tokens, 4 * d, device="cuda")
    y, z, y_down = torch.empty_like(h), torch.empty_like(h), torch.empty_like(x)
    counter = torch.zeros(1, dtype=torch.int64, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    from gemmtune._gemmtune import Runtime as BoundRuntime
    print("up:  ", runtime.explain(up_problem))
    print("down:", runtime.explain(down_problem))
    pieces = {
        "raw Runtime.forward, up (bound, ints)": lambda: runtime._rt.forward(
            up_problem, x.data_ptr(), up.weight.data_ptr(), up.bias.data_ptr(), y.data_ptr(), z.data_ptr(), 0, 0, 0,
            stream),
        "raw Runtime.forward, down": lambda: runtime._rt.forward(
            down_problem, h.data_ptr(), down.weight.data_ptr(), down.bias.data_ptr(), y_down.data_ptr(), 0, 0, 0, 0,
            stream),
        "advance_offset (pybind + one tiny launch)": lambda: BoundRuntime.advance_offset(counter.data_ptr(), 1, stream),
        "torch.addmm, down": lambda: torch.addmm(nn_down.bias, h, nn_down.weight.t()),
        "torch.empty [tokens, 4d]": lambda: torch.empty((tokens, 4 * d), device="cuda"),
        "FusedLinear forward, no_grad": lambda: up(x),
        "nn.Linear + GELU forward, no_grad": lambda: gelu(nn_up(x)),
        "Function.apply, no_grad": lambda: _FusedLinearFunction.apply(x, up.weight, up.bias, up, 0.0),
    }
    with torch.no_grad():
        for name, fn in pieces.items():
            print(f"{name:<36} {per_call_us(torch, fn):7.2f} us per call")
    xg = x.clone().requires_grad_(True)
    for name, fn in {"FusedLinear fwd+bwd": lambda: up(xg).sum().backward(),
                     "nn.Linear + GELU fwd+bwd": lambda: gelu(nn_up(xg)).sum().backward()}.items():
        print(f"{name:<36} {per_call_us(torch, fn, 500):7.2f} us per call")


if __name__ == "__main__":
    main()
