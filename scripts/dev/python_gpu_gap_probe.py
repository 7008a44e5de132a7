#!/usr/bin/env python3
"""Where the Python call's extra GPU time at 4096^3 comes from (issue 48): results/nvidia-h200/python_overhead.json (as
committed at 13ca96a) has rt.forward 31-44 us a call above `gemmtune run` of the same candidate there, and within 2 us
at 1024^3.

The two sides differed in three ways: the inputs (randn in Python, uniform [-1, 1) in `gemmtune run`), repeated calls
replayed as one CUDA graph (Python's Runtime) or not, and the process. So per shape, tf32, out= given, in rounds that
interleave the variants (each round's order rotated), CUDA events around back-to-back calls:
  rt_randn            rt.forward on randn inputs, replays on (what the benchmark timed)
  rt_uniform          the same Runtime on uniform [-1, 1) inputs
  rt_randn_no_replay  a second Runtime on the same db with replay_repeated_calls=False, randn inputs
  torch_mm_randn      torch.mm on the randn inputs
and `gemmtune run --candidate` (uniform inputs, its own process) before and after the rounds. Each variant's batches
also record the SM clock and board power nvidia-smi reads right after the batch.

usage: python_gpu_gap_probe.py [--gemmtune build/gemmtune] [--shapes 4096x4096x4096,1024x1024x1024] [--out FILE]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def smi():
    out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits", "-i",
                          os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]],
                         capture_output=True, text=True).stdout.strip().splitlines()
    clock, power = (float(x) for x in out[0].split(","))
    return clock, power


def cpp_us(gemmtune, m, n, k, candidate, db):
    out = subprocess.run([gemmtune, "run", "--m", str(m), "--n", str(n), "--k", str(k), "--mode", "tf32",
                          "--candidate", candidate, "--db", db, "--iters", "200", "--warmup", "20"],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"^time\s+([\d.]+) us/call", out, re.M).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gemmtune", default="build/gemmtune")
    ap.add_argument("--shapes", default="4096x4096x4096,1024x1024x1024")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--out")
    args = ap.parse_args()

    import torch
    import gemmtune

    def batch_us(fn):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.calls):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1000 / args.calls

    torch.backends.cuda.matmul.allow_tf32 = True
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "probe.db")
        rt = gemmtune.Runtime(db)
        for shape in args.shapes.split(","):
            m, n, k = (int(x) for x in shape.split("x"))
            gen = torch.Generator(device="cuda").manual_seed(48)
            a_n = torch.randn(m, k, device="cuda", generator=gen)
            b_n = torch.randn(k, n, device="cuda", generator=gen)
            a_u = torch.rand(m, k, device="cuda", generator=gen) * 2 - 1
            b_u = torch.rand(k, n, device="cuda", generator=gen) * 2 - 1
            y, y2, yt = (torch.empty(m, n, device="cuda") for _ in range(3))
            rt.forward(a_n, b_n, out=y, mode="tf32")  # the first use: the trial picks the candidate, kept in the db
            torch.cuda.synchronize()
            rt.flush()
            candidate = rt.explain(a_n, b_n, mode="tf32").split(": ", 1)[1].split(" ")[0]
            plain = gemmtune.Runtime(db, replay_repeated_calls=False)
            plain.forward(a_n, b_n, out=y2, mode="tf32")
            torch.cuda.synchronize()
            plain_candidate = plain.explain(a_n, b_n, mode="tf32").split(": ", 1)[1].split(" ")[0]
            variants = {
                "rt_randn": lambda: rt.forward(a_n, b_n, out=y, mode="tf32"),
                "rt_uniform": lambda: rt.forward(a_u, b_u, out=y, mode="tf32"),
                "rt_randn_no_replay": lambda: plain.forward(a_n, b_n, out=y2, mode="tf32"),
                "torch_mm_randn": lambda: torch.mm(a_n, b_n, out=yt),
            }
            for fn in variants.values():  # warm: each variant's first call, a replay's capture included
                fn()
                fn()
            torch.cuda.synchronize()
            cpp_before = cpp_us(args.gemmtune, m, n, k, candidate, os.path.join(tmp, "cpp.db"))
            times = {name: [] for name in variants}
            clocks = {name: [] for name in variants}
            names = list(variants)
            for r in range(args.rounds):
                for name in names[r % len(names):] + names[:r % len(names)]:
                    times[name].append(batch_us(variants[name]))
                    clocks[name].append(smi())
            cpp_after = cpp_us(args.gemmtune, m, n, k, candidate, os.path.join(tmp, "cpp.db"))
            graphs, replays = rt.call_graphs
            rec = {"shape": shape, "candidate": candidate, "no_replay_candidate": plain_candidate,
                   "cpp_before_us": cpp_before, "cpp_after_us": cpp_after, "replay_graphs": graphs,
                   "replays": replays}
            for name in names:
                rec[name + "_us"] = statistics.median(times[name])
                rec[name + "_rounds_us"] = times[name]
                rec[name + "_sm_mhz"] = statistics.median(c for c, _ in clocks[name])
                rec[name + "_power_w"] = statistics.median(p for _, p in clocks[name])
            records.append(rec)
            plain.flush()
            del plain  # its miss log lives in tmp, which goes before the interpreter collects it
            print(f"{shape} {candidate} (no-replay runtime: {plain_candidate}); C++ {cpp_before:.1f} / {cpp_after:.1f} us",
                  flush=True)
            for name in names:
                print(f"  {name:<20} {rec[name + '_us']:9.1f} us  (rounds {min(times[name]):.1f}-{max(times[name]):.1f})"
                      f"  {rec[name + '_sm_mhz']:.0f} MHz {rec[name + '_power_w']:.0f} W", flush=True)
        rt.flush()
        del rt
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "method": __doc__, "records": records}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
