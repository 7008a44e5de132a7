#!/usr/bin/env python3
"""The kernel torch.compile max-autotune runs for one tf32 GEMM, alone under a profiler: compiles torch.mm(x, w) for
M x N x K, warms it up, then runs CALLS calls between cudaProfilerStart and Stop, so that
`ncu --profile-from-start off` (or nsys --capture-range=cudaProfilerApi) sees only those, not the autotuning. Without
CUDA graphs, as compare_torch.py times it: with them each call first copies its inputs into the graph's own
(multi_tensor_apply_kernel, 26-42 MB at 14-16 x 4096-5120 x 2048), leaving L2 dirty for the GEMM a profile reads.
usage: inductor_kernel_probe.py M N K [CALLS=3]"""
import sys

import torch


def main():
    m, n, k = (int(v) for v in sys.argv[1:4])
    calls = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    torch.backends.cuda.matmul.allow_tf32 = True
    x, w = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
    op = torch.compile(lambda a, b: torch.mm(a, b), mode="max-autotune-no-cudagraphs", dynamic=False)
    for _ in range(5):
        op(x, w)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for _ in range(calls):
        op(x, w)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    main()
