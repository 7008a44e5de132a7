#!/usr/bin/env python3
"""A PyTorch training step for `gemmtune trace --gemms`: four Linear layers on an odd token count, AdamW.

    H1 = gelu(X·W1ᵀ + b1), H2 = gelu(H1·W2ᵀ + b2), H3 = gelu(H2·W3ᵀ + b3), Y = H3·W4ᵀ + b4
    loss = mse(Y, T), AdamW

PyTorch's default BLAS routing is left alone: the forward's addmm goes through cublasLtMatmul (its bias epilogue),
the backward's mm through cuBLAS (cublasSgemm_v2), so the trace sees both. Each step runs inside the NVTX ranges
forward / loss / backward / optimizer. After warm-up steps the timed steps run between two synchronizations and the
loop's time is printed (`loop_s=`); --min-seconds picks the step count that makes the loop last at least that long
(printed as `steps=`, to be passed as --steps to runs that must do the same work).

    gemmtune trace --gemms --db misses.db -- python3 scripts/trace_torch_step.py --mode tf32
"""
import argparse
import math
import sys
import time

import torch
import torch.nn.functional as F


def set_fp32_matmul(mode: str) -> None:
    # PyTorch 2.9+ names the precision directly; older versions have only allow_tf32.
    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):
        matmul.fp32_precision = "tf32" if mode == "tf32" else "ieee"
    else:
        matmul.allow_tf32 = mode == "tf32"


def loaded_cublas() -> str:
    """The libcublas this process runs (PyTorch's pip wheels bring their own)."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if "/libcublas.so" in path:
                    return path
    except OSError:
        pass
    return "not loaded"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["fp32", "tf32"], default="tf32")
    parser.add_argument("--tokens", type=int, default=777)
    parser.add_argument("--d-in", type=int, default=1024)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--d-out", type=int, default=1024)
    parser.add_argument("--warmup", type=int, default=3)
    steps = parser.add_mutually_exclusive_group()
    steps.add_argument("--steps", type=int, help="timed steps")
    steps.add_argument("--min-seconds", type=float, default=1.2,
                       help="time steps until the loop is sure to last this long (default 1.2)")
    args = parser.parse_args()
    if args.steps is not None and args.steps < 1:
        parser.error("--steps must be at least 1")
    if min(args.tokens, args.d_in, args.hidden, args.d_out) < 1 or args.warmup < 0:
        parser.error("sizes must be at least 1 and --warmup not negative")
    if not torch.cuda.is_available():
        print("trace_torch_step: no CUDA device", file=sys.stderr)
        return 3

    set_fp32_matmul(args.mode)
    torch.manual_seed(0)
    device = torch.device("cuda")
    widths = [args.d_in, args.hidden, args.hidden, args.hidden, args.d_out]
    layers = []
    for i in range(4):
        layers.append(torch.nn.Linear(widths[i], widths[i + 1]))
        if i < 3:
            layers.append(torch.nn.GELU(approximate="tanh"))
    model = torch.nn.Sequential(*layers).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(args.tokens, args.d_in, device=device)
    target = torch.randn(args.tokens, args.d_out, device=device)
    nvtx = torch.cuda.nvtx

    def step() -> torch.Tensor:
        nvtx.range_push("forward")
        y = model(x)
        nvtx.range_pop()
        nvtx.range_push("loss")
        loss = F.mse_loss(y, target)
        nvtx.range_pop()
        nvtx.range_push("backward")
        loss.backward()
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        nvtx.range_pop()
        return loss

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    count = args.steps
    if count is None:
        # Ten timed steps say how long one takes; 10% more steps than that needs, so the loop lasts long enough.
        start = time.perf_counter()
        for _ in range(10):
            step()
        torch.cuda.synchronize()
        per_step = (time.perf_counter() - start) / 10
        count = max(1, math.ceil(1.1 * args.min_seconds / per_step))
    start = time.perf_counter()
    for _ in range(count):
        loss = step()
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - start
    print(f"trace_torch_step: mode={args.mode} tokens={args.tokens} widths={'-'.join(map(str, widths))} "
          f"steps={count} loop_s={loop_s:.4f} ms_per_step={1e3 * loop_s / count:.3f} loss={loss.item():.6f} "
          f"blas={torch.backends.cuda.preferred_blas_library()} cublas={loaded_cublas()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
