#!/usr/bin/env python3
"""Which kernels PyTorch eager runs for the held-out records it wins (issue 48), beside what gemmtune's runtime runs
for the same problem with no db (its first-use trial): per shape, torch.profiler's CUDA kernels of
gelu(addmm(b, x, w), approximate="tanh") (or torch.mm for "none") and of the runtime's call, with their mean times,
and Runtime.explain. With --cold, every profiled call follows a 256 MB write, so each kernel starts from an L2 that
holds none of its inputs (the benchmarks' cold condition), and the write's own kernel is listed apart.
usage: eager_kernels.py [--cold] MODE:EPILOGUE:MxNxK ...     e.g. fp32:bias+gelu:28x7170x768"""
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

import gemmtune


def eager_case(case):
    """MODE:EPILOGUE:MxNxK -> (mode, epilogue, x, w, b, op): fresh random operands on the GPU, PyTorch's tf32 switch set
    for the mode, and the eager call the held-out benchmark times (torch.mm, or gelu(addmm) with bias+gelu)."""
    mode, epilogue, shape = case.split(":")
    m, n, k = (int(d) for d in shape.split("x"))
    torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
    x, w, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda"), torch.randn(n, device="cuda")
    if epilogue == "none":
        op = lambda: torch.mm(x, w)  # noqa: E731
    else:
        op = lambda: torch.nn.functional.gelu(torch.addmm(b, x, w), approximate="tanh")  # noqa: E731
    return mode, epilogue, x, w, b, op


def profiled_kernels(title, op, flush=None):
    """op run 20 times warm, then 50 times under torch.profiler (each after flush(), where given): each CUDA kernel's
    mean time per call."""
    for _ in range(20):
        op()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(50):
            if flush:
                flush()
            op()
        torch.cuda.synchronize()
    print(f"== {title}")
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if t:
            print(f"   {t / 50:8.2f} us/call  {e.key[:150]}")


def main(args):
    cold = "--cold" in args
    cases = [a for a in args if a != "--cold"]
    flush = None
    if cold:
        scrub = torch.empty(64 << 20, device="cuda")  # 256 MB, four times the H200's L2
        flush = lambda: scrub.fill_(1.0)  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        rt = gemmtune.Runtime(tmp + "/none.db")
        for case in cases:
            mode, epilogue, x, w, b, op = eager_case(case)
            profiled_kernels(f"{case}: PyTorch eager{' (cold)' if cold else ''}", op, flush)
            y = torch.empty(x.shape[0], w.shape[1], device="cuda")
            kw = {"act": "gelu"} if epilogue != "none" else {}
            bias = b if epilogue != "none" else None
            profiled_kernels(f"{case}: gemmtune, no db{' (cold)' if cold else ''}",
                             lambda: rt.forward(x, w, bias, out=y, mode=mode, **kw), flush)
            print(f"   gemmtune: {rt.explain(x, w, bias, mode=mode, **kw)}")
        rt.flush()  # its misses, while the db's directory still exists


if __name__ == "__main__":
    main(sys.argv[1:])
