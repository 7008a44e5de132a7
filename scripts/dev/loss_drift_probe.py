#!/usr/bin/env python3
"""How far bench_torch_step.py's 50-step losses move when nothing but the summation order changes, with nn.Linear
alone: the same batch with its rows in another order (the weight gradients sum over the rows, the loss averages them),
and the same model through cuBLASLt (torch.backends.cuda.preferred_blas_library), which may pick other kernels for
the same products. None is more correct than another; their difference is what the loss comparison of FusedLinear
against nn.Linear measures at a size, whatever FusedLinear's kernels do.

Prints the largest relative loss difference up to steps 10, 20, ... against nn.Linear through cuBLAS; a second cuBLAS
run shows the run-to-run difference (0 where cuBLAS is deterministic).

usage: loss_drift_probe.py [--d 4096] [--tokens 3000] [--mode tf32] [--steps 50]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import bench_torch_step as bench  # noqa: E402


def losses(torch, d, mode, init_state, x, target, steps):
    bench.torch_mode(torch, mode)
    model = bench.build_model(torch, "nn_eager", d, mode, None)
    model.load_state_dict(init_state)
    runner = bench.StepRunner(torch, "nn_eager", model, bench.make_optimizer(torch, model), x, target)
    out = torch.stack([runner.step().detach() for _ in range(steps)])
    return out.double().cpu()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--d", type=int, default=4096)
    parser.add_argument("--tokens", type=int, default=3000)
    parser.add_argument("--mode", default="tf32", choices=("tf32", "fp32"))
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()

    import torch

    init_state, x, target = bench.step_data(torch, args.d, args.tokens)
    order = torch.randperm(args.tokens, generator=torch.Generator().manual_seed(7)).cuda()
    runs = {}
    for label, library, rows in (("cublas", "cublas", None), ("cublas again", "cublas", None),
                                 ("rows permuted", "cublas", order), ("cublaslt", "cublaslt", None)):
        torch.backends.cuda.preferred_blas_library(library)
        xs, ts = (x, target) if rows is None else (x[rows].contiguous(), target[rows].contiguous())
        runs[label] = losses(torch, args.d, args.mode, init_state, xs, ts, args.steps)
    torch.backends.cuda.preferred_blas_library("cublas")

    base = runs["cublas"]
    marks = list(range(10, args.steps + 1, 10))
    print(f"{torch.cuda.get_device_name()}: d={args.d} tokens={args.tokens} {args.mode}, {args.steps} steps; "
          f"largest relative loss difference from nn.Linear through cuBLAS, up to step")
    print(f"{'run':<14}" + "".join(f"{m:>11}" for m in marks))
    for label, run in runs.items():
        rel = ((run - base).abs() / base.abs()).tolist()
        print(f"{label:<14}" + "".join(f"{max(rel[:m]):11.2e}" for m in marks))


if __name__ == "__main__":
    main()
