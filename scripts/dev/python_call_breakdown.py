#!/usr/bin/env python3
"""Where one Python Runtime.forward call of PyTorch tensors spends its host time (issue 48), beside torch.mm, and what
a call of the same tensors behind __cuda_array_interface__ alone or __dlpack__ alone costs; "replays off" is a Runtime
that launches every call (replay_repeated_calls=False) where the others replay the repeated call's CUDA graph.

Each row times one piece of the fast path (gemmtune/runtime.py, Runtime._torch_forward) alone, issued 200 times behind
a GPU spin so no call waits on the GPU; the rows are interleaved in 9 rounds and the median per call is printed, so a
drift of the host's speed over the run moves every row alike.

--old FILE: another version of gemmtune/runtime.py (e.g. `git show REV:src/runtime/python/gemmtune/runtime.py`),
loaded beside the package's as gemmtune.runtime_old; its Runtime.forward is timed in the same rounds, so a change to
the fast path is held against the code before it in one process.

usage: PYTHONPATH=build/python python3 scripts/dev/python_call_breakdown.py [--old FILE] [MxNxK ...]
"""
import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time

import torch

import gemmtune
from protocol_only import DlpackOnly, InterfaceOnly


def load_old_runtime(path):
    """The Runtime class of another runtime.py, imported inside the gemmtune package so its relative imports resolve."""
    spec = importlib.util.spec_from_file_location("gemmtune.runtime_old", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.Runtime


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old")
    ap.add_argument("shapes", nargs="*", default=["256x256x256"])
    args = ap.parse_args()
    if args.old and not os.path.isfile(args.old):
        ap.error(f"--old: no file {args.old}")
    shapes = [shape.split("x") for shape in args.shapes]
    if any(len(s) != 3 or not all(v.isdigit() and int(v) > 0 for v in s) for s in shapes):
        ap.error(f"shapes are MxNxK with positive integers, not {' '.join(args.shapes)}")
    old_runtime = load_old_runtime(args.old) if args.old else None
    torch.backends.cuda.matmul.allow_tf32 = True
    for m, n, k in shapes:
        breakdown(int(m), int(n), int(k), old_runtime)


def breakdown(m, n, k, old_runtime):
    A, B = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
    Y, Yt = torch.empty(m, n, device="cuda"), torch.empty(m, n, device="cuda")
    with tempfile.TemporaryDirectory() as tmp:
        rt = gemmtune.Runtime(f"{tmp}/breakdown.db")
        for _ in range(2):  # the first call is launched, the second, on a drained stream, captured (call_graphs.hpp)
            rt.forward(A, B, out=Y, mode="tf32")
            torch.cuda.synchronize()
        old = None
        if old_runtime is not None:
            old = old_runtime(f"{tmp}/old.db")
            old.forward(A, B, out=Y, mode="tf32")
        torch.cuda.synchronize()
        problem = next(iter(rt._torch_forwards.values()))
        raw = rt._raw_stream
        stream = raw(0)
        pa, pb, py = A.data_ptr(), B.data_ptr(), Y.data_ptr()
        binding = rt._rt
        pieces = {
            "torch.mm(A, B, out=Y)": lambda: torch.mm(A, B, out=Yt),
            "rt.forward(A, B, out=Y)": lambda: rt.forward(A, B, out=Y, mode="tf32"),
            "binding forward, ints given": lambda: binding.forward(problem, pa, pb, 0, py, 0, 0, 0, 0, stream),
            "binding prepared(problem)": lambda: binding.prepared(problem),
            "key tuple, .device": lambda: (A.shape, A.stride(), A.dtype, A.device, B.shape, B.stride(),
                                                  B.dtype, B.device, Y.shape, Y.stride(), Y.dtype, Y.device, None,
                                                  "none", float, 0.01, float, 0.0, "tf32"),
            "key tuple (as runtime.py)": lambda: (A.shape, A.stride(), A.dtype, A.get_device(), B.shape, B.stride(),
                                                B.dtype, B.get_device(), Y.shape, Y.stride(), Y.dtype,
                                                Y.get_device(), None, "none", float, 0.01, float, 0.0, "tf32"),
            "three data_ptr()": lambda: (A.data_ptr(), B.data_ptr(), Y.data_ptr()),
            "raw stream": lambda: raw(0),
            "A.device.index": lambda: A.device.index,
            "type checks + requires_grad": lambda: (type(A) is torch.Tensor and type(B) is torch.Tensor
                                                    and type(Y) is torch.Tensor and not A.requires_grad
                                                    and not B.requires_grad),
            "empty lambda": lambda: None,
        }
        launched = gemmtune.Runtime(f"{tmp}/launched.db", replay_repeated_calls=False)
        launched.forward(A, B, out=Y, mode="tf32")
        pieces["rt.forward, replays off"] = lambda: launched.forward(A, B, out=Y, mode="tf32")
        cai, dlpack = [InterfaceOnly(x) for x in (A, B, Y)], [DlpackOnly(x) for x in (A, B, Y)]
        pieces["rt.forward, interfaces only"] = lambda: rt.forward(cai[0], cai[1], out=cai[2], mode="tf32")
        pieces["rt.forward, DLPack only"] = lambda: rt.forward(dlpack[0], dlpack[1], out=dlpack[2], mode="tf32")
        pieces["three __dlpack__(stream=1)"] = lambda: [x.__dlpack__(stream=1) for x in dlpack]
        read_cai = gemmtune._gemmtune.read_call_arrays(tuple(cai), 1)
        pieces["read_call_arrays, interfaces"] = lambda: gemmtune._gemmtune.read_call_arrays(tuple(cai), 1)
        pieces["read_call_arrays, DLPack"] = lambda: gemmtune._gemmtune.read_call_arrays(tuple(dlpack), 1)
        pieces["binding forward_read, interfaces"] = lambda: binding.forward_read(problem, read_cai, 0, 0, stream)
        pieces["binding device_of(A)"] = lambda: binding.device_of(pa)
        if old is not None:
            pieces["old rt.forward(A, B, out=Y)"] = lambda: old.forward(A, B, out=Y, mode="tf32")
            pieces["old rt.forward, interfaces only"] = lambda: old.forward(cai[0], cai[1], out=cai[2], mode="tf32")
            pieces["old rt.forward, DLPack only"] = lambda: old.forward(dlpack[0], dlpack[1], out=dlpack[2],
                                                                        mode="tf32")
        samples = {name: [] for name in pieces}
        for _ in range(9):
            for name, fn in pieces.items():
                torch.cuda._sleep(int(2e7))
                began = time.perf_counter()
                for _ in range(200):
                    fn()
                samples[name].append((time.perf_counter() - began) / 200 * 1e6)
                torch.cuda.synchronize()
        rt.flush()
        launched.flush()
        if old is not None:
            old.flush()
        print(f"{m}x{n}x{k} tf32, {torch.cuda.get_device_name()}, torch {torch.__version__}, "
              f"{rt.explain(A, B, mode='tf32').split(': ', 1)[1].split(' ')[0]}")
        for name, values in samples.items():
            print(f"  {name:<30} {statistics.median(values):7.2f} us  (min {min(values):6.2f})")


if __name__ == "__main__":
    main()
