#!/usr/bin/env python3
"""Where the GPU time of bench_torch_step.py's step goes, per variant: GEMM kernels, the optimizer, and everything
else (activations, bias gradients, the loss), with the SM clock and power the GPU held while stepping.

Answers how far fusion can move the step at all: FusedLinear's GEMMs run the db's choices, nn.Linear's run PyTorch's
cuBLAS; fusion can only remove the "other" kernels. `ceiling` is nn's step over that step less its other kernels: the
speedup of a fused step that had no other kernel left, whose GEMMs were exactly as fast as PyTorch's, and whose host
cost hid behind the GPU.

Kernel times come from torch.profiler (CUPTI activity records) over --steps steps after warm-up; the step time from
CUDA events around each step, synchronized after each (median: where the host bounds the step, its issue time
shows); clock and power from nvidia-smi sampling every 100 ms over --hold-s seconds of back-to-back steps. Every
variant is timed before any is profiled.

usage: torch_step_kernels.py [--d 1024] [--tokens 1000] [--mode tf32] [--variants nn_eager,fused_eager]
                             [--steps 10] [--hold-s 3] [--db-dir DIR]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import bench_torch_step as bench  # noqa: E402
from torch_step_overhead import issue_times  # noqa: E402

# cuBLAS (nvjet, xmma, cutlass), its split-k reduction, Inductor's mm templates and our own families; an epilogue
# kernel of its own (ours, cuBLASLt's) is the elementwise work fusion is about, so it counts as "other".
GEMM_NAME = re.compile(r"gemm|nvjet|xmma|cutlass|splitKreduce|wgmma|mma_gemm|skinny|triton_tem", re.IGNORECASE)
OPTIMIZER_NAME = re.compile(r"adam|multi_tensor", re.IGNORECASE)


def category(name):
    if OPTIMIZER_NAME.search(name):
        return "optimizer"
    if "epilogue" in name:
        return "other"
    return "gemm" if GEMM_NAME.search(name.replace("gemmtune", "")) else "other"


def kernel_times(torch, runner, steps):
    """{kernel name: (calls, total us)} over `steps` steps, from the profiler's CUDA activity records."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            runner.step()
        torch.cuda.synchronize()
    totals = defaultdict(lambda: [0, 0.0])
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA and not event.name.startswith(("Memcpy", "Memset")):
            totals[event.name][0] += 1
            totals[event.name][1] += event.time_range.elapsed_us()
    return totals


def held_clock(torch, runner, seconds):
    """Median SM MHz and W nvidia-smi sampled while steps ran back to back for `seconds`."""
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]
    sampler = subprocess.Popen(["nvidia-smi", "-i", gpu, "--query-gpu=clocks.sm,power.draw",
                                "--format=csv,noheader,nounits", "-lms", "100"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        runner.step()
        torch.cuda.synchronize()
    sampler.terminate()
    out, _ = sampler.communicate()
    samples = [line.split(",") for line in out.splitlines() if line.count(",") == 1]
    samples = samples[len(samples) // 3:]  # the first third is the clock settling
    if not samples:
        return float("nan"), float("nan")
    return (statistics.median(float(s[0]) for s in samples), statistics.median(float(s[1]) for s in samples))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--mode", default="tf32", choices=("tf32", "fp32"))
    parser.add_argument("--variants", type=bench.choice_list(bench.VARIANTS), default=["nn_eager", "fused_eager"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--hold-s", type=float, default=3.0)
    parser.add_argument("--db-dir", default=tempfile.mkdtemp(prefix="gemmtune-kernels-"))
    args = parser.parse_args()

    import torch
    import gemmtune

    d, tokens, mode = args.d, args.tokens, args.mode
    db = os.path.join(args.db_dir, f"kernels_d{d}_t{tokens}_{mode}.db")
    init_state, x, target, runtime = bench.tuned_step_data(torch, gemmtune, d, tokens, mode, db)
    print(f"{torch.cuda.get_device_name()}: d={d} tokens={tokens} {mode}, {runtime.cache_size} db entries, "
          f"per step over {args.steps} profiled steps")

    # Every variant's step time and clock before any is profiled, so no profiler session is live or torn down
    # around a timed step.
    runners, timed = {}, {}
    for variant in args.variants:
        bench.torch_mode(torch, mode)
        model = bench.build_model(torch, variant, d, mode, runtime)
        model.load_state_dict(init_state)
        stepped = torch.compile(model, mode="max-autotune-no-cudagraphs", dynamic=False) \
            if variant == "compiled" else model
        runner = bench.StepRunner(torch, variant, stepped, bench.make_optimizer(torch, model), x, target)
        runner.warm_up()
        runners[variant] = runner
        _, step_ms = issue_times(torch, runner, 20)
        timed[variant] = (step_ms, *held_clock(torch, runner, args.hold_s))

    rows = {}
    for variant, runner in runners.items():
        bench.torch_mode(torch, mode)
        ms, mhz, watts = timed[variant]
        totals = kernel_times(torch, runner, args.steps)
        by_category = defaultdict(float)
        for name, (_, us) in totals.items():
            by_category[category(name)] += us / args.steps / 1e3
        rows[variant] = (ms, by_category, mhz, watts)
        print(f"\n{variant}: step {ms:.3f} ms; kernels gemm {by_category['gemm']:.3f}, optimizer "
              f"{by_category['optimizer']:.3f}, other {by_category['other']:.3f} ms; held {mhz:.0f} MHz {watts:.0f} W")
        for name, (calls, us) in sorted(totals.items(), key=lambda kv: -kv[1][1])[:14]:
            print(f"  {category(name):<9} {calls / args.steps:5.1f}/step {us / calls:9.1f} us  {name[:110]}")

    print()
    for nn_variant, fused_variant in (("nn_eager", "fused_eager"), ("nn_graph", "fused_graph")):
        if nn_variant not in rows:
            continue
        ms, cat, _, _ = rows[nn_variant]
        line = f"{nn_variant}: ceiling {ms / (ms - cat['other']):.3f}x (step {ms:.3f} ms less other {cat['other']:.3f})"
        if fused_variant in rows:
            f_ms, f_cat, _, _ = rows[fused_variant]
            line += (f"; {fused_variant} {ms / f_ms:.3f}x, its GEMMs {cat['gemm'] / f_cat['gemm']:.3f}x nn's, "
                     f"other {f_cat['other']:.3f} ms")
        print(line)
        if "compiled" in rows and nn_variant == "nn_eager":
            c_ms, c_cat, _, _ = rows["compiled"]
            print(f"compiled: {ms / c_ms:.3f}x nn_eager, its GEMMs {cat['gemm'] / c_cat['gemm']:.3f}x nn's, "
                  f"other {c_cat['other']:.3f} ms")


if __name__ == "__main__":
    main()
