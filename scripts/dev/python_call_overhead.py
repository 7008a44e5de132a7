#!/usr/bin/env python3
"""What one Python call of gemmtune.Runtime.forward costs beside torch.mm (issue 48), on a db-less Runtime, tf32, no
epilogue, out= given: with PyTorch tensors (rt), with objects that expose only __cuda_array_interface__ (rt_cai), and
the binding alone, given the resolved problem and the pointers (binding):

  host us   wall time per call of issuing 200 calls while the GPU is held busy by a spin kernel queued first, so the
            host never waits: what the call costs the host;
  gpu us    per call of 20 back-to-back calls between CUDA events (median of 7 rounds), warm: what the call costs in a
            stream, the launch gaps included.

Writes a JSON file and prints a table. The baseline for making the Python call as cheap as torch.mm.
  usage: scripts/dev/python_call_overhead.py --out FILE"""
import argparse
import json
import os
import tempfile
import time

import torch

import gemmtune
from event_timing import per_call_us as gpu_us

SHAPES = [(64, 64, 64), (256, 256, 256), (1500, 1079, 799), (1024, 1024, 1024), (3282, 1131, 4835),
          (4096, 4096, 4096)]


class CaiOnly:
    """A tensor's memory behind __cuda_array_interface__ alone, as a CuPy or Numba array shows it."""

    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__


def host_us(fn, calls=200):
    torch.cuda._sleep(int(2e8))  # about 0.1 s of GPU time: every call below is issued behind it
    began = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - began
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        rt = gemmtune.Runtime(os.path.join(tmp, "overhead.db"))
        for m, n, k in SHAPES:
            A, B = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
            Y, Yt = torch.empty(m, n, device="cuda"), torch.empty(m, n, device="cuda")
            ours = lambda: rt.forward(A, B, out=Y, mode="tf32")
            cai = (CaiOnly(A), CaiOnly(B), CaiOnly(Y))
            ours_cai = lambda: rt.forward(cai[0], cai[1], out=cai[2], mode="tf32")
            problem = gemmtune.plan_forward(A, B, out=Y, mode="tf32").problem
            stream = torch.cuda.current_stream().cuda_stream
            binding = lambda: rt._rt.forward(problem, A.data_ptr(), B.data_ptr(), 0, Y.data_ptr(), 0, 0, 0, 0, stream)
            theirs = lambda: torch.mm(A, B, out=Yt)
            ours(), ours_cai(), binding(), theirs()
            records.append({"shape": f"{m}x{n}x{k}", "mode": "tf32",
                            "rt_host_us": host_us(ours), "rt_cai_host_us": host_us(ours_cai),
                            "binding_host_us": host_us(binding), "torch_mm_host_us": host_us(theirs),
                            "rt_gpu_us": gpu_us(ours), "torch_mm_gpu_us": gpu_us(theirs),
                            "candidate": rt.explain(A, B, mode="tf32").split(": ", 1)[1].split(" ")[0]})
        rt.flush()
    with open(args.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "records": records}, f, indent=1)
    print(f"{'shape':>16} | {'rt host':>8} {'rt cai':>8} {'binding':>8} {'mm host':>8} | {'rt gpu':>8} {'mm gpu':>8} "
          f"us "
          f"| candidate")
    for r in records:
        print(f"{r['shape']:>16} | {r['rt_host_us']:8.1f} {r['rt_cai_host_us']:8.1f} {r['binding_host_us']:8.1f} "
              f"{r['torch_mm_host_us']:8.1f} | {r['rt_gpu_us']:8.1f} {r['torch_mm_gpu_us']:8.1f}    | {r['candidate']}")


if __name__ == "__main__":
    main()
