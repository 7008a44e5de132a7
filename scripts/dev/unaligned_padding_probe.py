#!/usr/bin/env python3
"""Where the time of a GEMM with unaligned rows goes (issue 49), tf32, bias + gelu(tanh), on shapes whose k and n are
both not multiples of 4, timed side by side in one process:

  eager      torch.addmm + gelu on the unaligned tensors (what a PyTorch user runs);
  copies     the two operand copies into buffers whose rows are 16-byte aligned (what Inductor's padding adds);
  strided mm addmm + gelu on views of those buffers, into an m x n output (its rows unaligned);
  padded mm  addmm + gelu on the whole zero-padded buffers (m x k4 by k4 x n4) into an m x n4 output, whose m x n view
             is the result: every matrix aligned, as Inductor's mm(692x7564, 7564x5580) runs;
  padded     copies + padded mm: the padding route as one candidate would run it;
  runtime    gemmtune.Runtime.forward with the fused bias + gelu, on a fresh db (heuristic-first or a first-use
             trial's winner): what gemmtune runs there today.

Each: median of 7 rounds of 20 back-to-back calls between CUDA events, warm (the same tensors every call). TFLOP/s
count 2mnk; the copies' GB/s count bytes read plus written. Writes a JSON file and prints a table.
  compiled   torch.compile(mode="max-autotune-no-cudagraphs") of the same function, for --compile shapes (its compile
             time is recorded beside it).
  usage: scripts/dev/unaligned_padding_probe.py --out FILE [--shapes MxNxK,...] [--compile MxNxK,...]"""
import argparse
import json
import os
import tempfile
import time

import torch

import gemmtune
from event_timing import per_call_us

PEAK_TF32 = 494.7e12  # H200 dense tf32 (DEVICE.md)
DEFAULT_SHAPES = "692x5577x7561,2759x7137x677,1398x3251x6173,2326x1855x4252,4095x4095x4095"


def aligned(rows, cols):
    """A rows x cols view of a buffer whose rows are a multiple of 4 floats (16 bytes) apart."""
    return torch.empty(rows, (cols + 3) // 4 * 4, device="cuda")[:, :cols]


def probe(m, n, k, rt, compile_it):
    torch.manual_seed(m * 7 + n * 3 + k)
    A, B, bias = (torch.rand(m, k, device="cuda") * 2 - 1, torch.rand(k, n, device="cuda") * 2 - 1,
                  torch.rand(n, device="cuda") * 2 - 1)
    k4, n4 = (k + 3) // 4 * 4, (n + 3) // 4 * 4
    A_full, B_full = torch.zeros(m, k4, device="cuda"), torch.zeros(k4, n4, device="cuda")
    bias_full, Y_full = torch.zeros(n4, device="cuda"), torch.empty(m, n4, device="cuda")
    bias_full[:n] = bias
    Ap, Bp, Y = A_full[:, :k], B_full[:k, :n], torch.empty(m, n, device="cuda")
    gelu = torch.nn.functional.gelu

    def copies():
        Ap.copy_(A)
        Bp.copy_(B)

    def strided_mm():
        torch.addmm(bias, Ap, Bp, out=Y)
        gelu(Y, approximate="tanh")

    def padded_mm():
        torch.addmm(bias_full, A_full, B_full, out=Y_full)
        gelu(Y_full, approximate="tanh")

    def padded():
        copies()
        padded_mm()

    times = {
        "eager": per_call_us(lambda: gelu(torch.addmm(bias, A, B), approximate="tanh")),
        "copies": per_call_us(copies),
        "strided_mm": per_call_us(strided_mm),
        "padded_mm": per_call_us(padded_mm),
        "padded": per_call_us(padded),
        "runtime": per_call_us(lambda: rt.forward(A, B, bias, act="gelu", out=Y, mode="tf32")),
    }
    ref = gelu(A.double() @ B.double() + bias.double(), approximate="tanh")
    copies()
    torch.addmm(bias_full, A_full, B_full, out=Y_full)
    padded_error = float((gelu(Y_full[:, :n], approximate="tanh").double() - ref).norm() / ref.norm())
    compiled = {}
    if compile_it:
        fn = torch.compile(lambda a, b, c: gelu(torch.addmm(c, a, b), approximate="tanh"),
                           mode="max-autotune-no-cudagraphs")
        began = time.time()
        fn(A, B, bias)
        torch.cuda.synchronize()
        compiled = {"compile_s": time.time() - began}
        times["compiled"] = per_call_us(lambda: fn(A, B, bias))
    rt.forward(A, B, bias, act="gelu", out=Y, mode="tf32")
    torch.cuda.synchronize()
    flops = 2.0 * m * n * k
    copy_bytes = 2 * 4 * (m * k + k * n)
    return {
        "shape": f"{m}x{n}x{k}", "us": times,
        "tflops": {name: flops / (us * 1e-6) / 1e12 for name, us in times.items() if name != "copies"},
        "pct_of_tf32_peak": {name: 100 * flops / (us * 1e-6) / PEAK_TF32 for name, us in times.items()
                             if name != "copies"},
        "copies_gb_per_s": copy_bytes / (times["copies"] * 1e-6) / 1e9,
        "runtime_candidate": rt.explain(A, B, bias, act="gelu", mode="tf32").split(": ", 1)[1].split(" ")[0],
        "runtime_rel_error": float((Y.double() - ref).norm() / ref.norm()),
        "padded_rel_error": padded_error,
        **compiled,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--compile", default="", help="shapes to time torch.compile max-autotune on too")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    with tempfile.TemporaryDirectory() as tmp:
        rt = gemmtune.Runtime(os.path.join(tmp, "probe.db"))
        compile_shapes = set(filter(None, args.compile.split(",")))
        records = [probe(*map(int, s.split("x")), rt, s in compile_shapes) for s in args.shapes.split(",")]
        rt.flush()
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "peak_tf32_tflops": PEAK_TF32 / 1e12,
           "method": "median of 7 rounds of 20 back-to-back calls between CUDA events, warm", "records": records}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"{'shape':>16} | {'eager':>7} {'copies':>7} {'str mm':>7} {'pad mm':>7} {'padded':>7} {'runtime':>7} "
          f"{'compile':>7} us | % tf32 peak: eager padmm padded runtime | copy GB/s | runtime candidate")
    for r in records:
        t, p = r["us"], r["pct_of_tf32_peak"]
        print(f"{r['shape']:>16} | {t['eager']:7.1f} {t['copies']:7.1f} {t['strided_mm']:7.1f} {t['padded_mm']:7.1f} "
              f"{t['padded']:7.1f} {t['runtime']:7.1f} {t.get('compiled', float('nan')):7.1f}    | {p['eager']:5.1f} "
              f"{p['padded_mm']:5.1f} {p['padded']:5.1f} {p['runtime']:5.1f} | {r['copies_gb_per_s']:7.0f}   | "
              f"{r['runtime_candidate']} (err {r['runtime_rel_error']:.1e}; padded {r['padded_rel_error']:.1e})")


if __name__ == "__main__":
    main()
