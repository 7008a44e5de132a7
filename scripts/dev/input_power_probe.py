#!/usr/bin/env python3
"""Does the data a GEMM multiplies change how fast it runs (issue 48)? The same cuBLAS call (torch.mm, and PyTorch's
addmm + gelu) on the same shapes, in tf32, on inputs drawn three ways, in interleaved rounds in one process, with the
SM clock and board power sampled (nvidia-smi) while each batch runs.

Why: on the H200 the same kernel timed 124 us in gemmtune's harness and 108.6 us in PyTorch's at 576x8192x3072 tf32.
Our harness fills operands uniform in [-1, 1); PyTorch's benchmark, randn. Near the 700 W cap the clock follows power,
and power follows how many bits toggle in the multipliers, so the input distribution may move the time.

Distributions: randn (PyTorch's), uniform [-1, 1) (gemmtune's sweep), and uniform with its low 13 mantissa bits
cleared (values tf32 holds exactly: what a tf32 kernel reads after rounding either way). Per (shape, op, dist): the
median of the rounds' mean us per call, SM clock (MHz) and power (W) medians over the samples taken during those
rounds. Writes JSON (--out) and prints a table.

usage: input_power_probe.py [--shapes 576x8192x3072,...] [--rounds 9] [--calls 50] [--out FILE]
"""
import argparse
import json
import statistics
import subprocess
import sys
import threading
import time

DEFAULT_SHAPES = "576x8192x3072,209x14336x3072,312x16074x1815,96x11008x8192,2048x2048x2048"
DISTS = ("randn", "uniform", "uniform_tf32_exact")


def shape_list(text):
    out = []
    for part in text.split(","):
        dims = part.split("x")
        if len(dims) != 3 or not all(d.isdigit() and int(d) > 0 for d in dims):
            raise argparse.ArgumentTypeError(f"'{part}' is not MxNxK")
        out.append(tuple(int(d) for d in dims))
    return out


class PowerSampler:
    """nvidia-smi in the background, one (time, MHz, W) sample every 20 ms; samples(t0, t1) gives those in between."""

    def __init__(self):
        self.rows = []
        self.proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits", "-lms", "20",
             "-i", "0"],
            stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        for line in self.proc.stdout:
            try:
                mhz, watts = (float(x) for x in line.split(","))
            except ValueError:
                continue
            self.rows.append((time.monotonic(), mhz, watts))

    def samples(self, t0, t1):
        return [(m, w) for t, m, w in self.rows if t0 <= t <= t1]

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def draw(torch, dist, shape, generator):
    x = torch.empty(shape, device="cuda")
    if dist == "randn":
        x.normal_(generator=generator)
    else:
        x.uniform_(-1.0, 1.0, generator=generator)
    if dist == "uniform_tf32_exact":
        x = (x.view(torch.int32) & ~((1 << 13) - 1)).view(torch.float32)
    return x


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", type=shape_list, default=shape_list(DEFAULT_SHAPES))
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--out", default="input_power_probe.json")
    args = parser.parse_args(argv)
    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        sys.exit("input_power_probe: PyTorch sees no CUDA GPU")
    torch.backends.cuda.matmul.allow_tf32 = True
    g = torch.Generator(device="cuda").manual_seed(48)
    sampler = PowerSampler()
    time.sleep(0.5)  # nvidia-smi's first sample
    records = []
    try:
        for m, n, k in args.shapes:
            inputs = {d: (draw(torch, d, (m, k), g), draw(torch, d, (k, n), g), draw(torch, d, (n,), g)) for d in DISTS}
            out = torch.empty(m, n, device="cuda")
            ops = {"mm": lambda a, b, bias: torch.mm(a, b, out=out),
                   "addmm_gelu": lambda a, b, bias: F.gelu(torch.addmm(bias, a, b), approximate="tanh")}
            for op, fn in ops.items():
                per = {d: {"us": [], "samples": []} for d in DISTS}
                for d in DISTS:  # warm every path first
                    fn(*inputs[d])
                torch.cuda.synchronize()
                for r in range(args.rounds):
                    order = DISTS if r % 2 == 0 else tuple(reversed(DISTS))
                    for d in order:
                        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        t0 = time.monotonic()
                        start.record()
                        for _ in range(args.calls):
                            fn(*inputs[d])
                        end.record()
                        end.synchronize()
                        t1 = time.monotonic()
                        per[d]["us"].append(start.elapsed_time(end) * 1000 / args.calls)
                        per[d]["samples"] += sampler.samples(t0, t1)
                for d in DISTS:
                    s = per[d]["samples"]
                    records.append({"shape": f"{m}x{n}x{k}", "op": op, "mode": "tf32", "dist": d,
                                    "us": statistics.median(per[d]["us"]), "us_min": min(per[d]["us"]),
                                    "us_max": max(per[d]["us"]),
                                    "sm_mhz": statistics.median([x for x, _ in s]) if s else None,
                                    "power_w": statistics.median([w for _, w in s]) if s else None,
                                    "samples": len(s)})
                    r = records[-1]
                    print(f"{r['shape']:16} {op:10} {d:18} {r['us']:9.2f} us  [{r['us_min']:.2f}, {r['us_max']:.2f}]  "
                          f"{r['sm_mhz']} MHz  {r['power_w']} W  ({r['samples']} samples)", flush=True)
    finally:
        sampler.stop()
    doc = {"schema": "gemmtune.input_power_probe", "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "rounds": args.rounds, "calls": args.calls, "method": __doc__.split("\n\n")[1], "records": records}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"input_power_probe: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
