#!/usr/bin/env python3
"""A PyTorch two-layer MLP training step for `gemmtune trace` (the seed's workflow, in PyTorch).

    H = gelu(X·W1ᵀ + b1),  Y = H·W2ᵀ + b2,  loss = mse(Y, T),  AdamW (fused)

Each step runs inside the NVTX ranges forward / loss / backward / optimizer. The matmuls go through cuBLASLt
(torch.backends.cuda.preferred_blas_library("cublaslt")), so `gemmtune trace --gemms` sees every GEMM's problem.

    gemmtune trace --gemms --out mlp.json -- python3 scripts/trace_mlp_torch.py --mode tf32
"""
import argparse
import sys

import torch
import torch.nn.functional as F


def set_fp32_matmul(mode: str) -> None:
    # PyTorch 2.9+ names the precision directly; older versions have only allow_tf32.
    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):
        matmul.fp32_precision = "tf32" if mode == "tf32" else "ieee"
    else:
        matmul.allow_tf32 = mode == "tf32"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["fp32", "tf32"], default="tf32")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--d-in", type=int, default=1024)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--d-out", type=int, default=1024)
    args = parser.parse_args()
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    if not torch.cuda.is_available():
        print("trace_mlp_torch: no CUDA device", file=sys.stderr)
        return 3

    torch.backends.cuda.preferred_blas_library("cublaslt")
    set_fp32_matmul(args.mode)
    torch.manual_seed(0)
    device = torch.device("cuda")
    model = torch.nn.Sequential(
        torch.nn.Linear(args.d_in, args.hidden),
        torch.nn.GELU(approximate="tanh"),
        torch.nn.Linear(args.hidden, args.d_out),
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    x = torch.randn(args.batch, args.d_in, device=device)
    target = torch.randn(args.batch, args.d_out, device=device)

    nvtx = torch.cuda.nvtx
    for _ in range(args.steps):
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
    torch.cuda.synchronize()
    print(f"trace_mlp_torch: {args.mode}, {args.steps} steps of {args.batch}x{args.d_in}->{args.hidden}->{args.d_out}, "
          f"final loss {loss.item():.6f}, cuBLASLt preferred: {torch.backends.cuda.preferred_blas_library()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
