#!/usr/bin/env python3
"""Issue 48's benchmark: what one Python call of gemmtune.Runtime.forward costs beside torch.mm on the same tensors,
and how far its GPU time per call sits from the C++ runtime's on the same problem and candidate.

Per shape (64^3 .. 4096^3 and two odd ones), tf32, no epilogue, out= given, a Runtime with a db of its own (its
first-use trial picks the candidate), and per kind of array handed to it:
  torch        PyTorch tensors (the resolved-once fast path);
  dlpack       objects that expose only __dlpack__ / __dlpack_device__;
  cai          objects that expose only __cuda_array_interface__;
the record holds:
  rt_host_us        host time per call, issuing 200 calls behind a ~0.1 s GPU spin (the host never waits), median
                    of 9 rounds;
  torch_mm_host_us  the same for torch.mm(A, B, out=Y) on the same tensors, in rounds interleaved with rt_host_us's
                    (the side going first alternating): the host's speed drifts within one run by as much as the gap
                    between the two (H200 machine, 2026-11-29), so two times taken apart cannot be compared;
  rt_gpu_us         GPU time per call: 20 back-to-back calls between CUDA events, queued behind ~2 ms of GPU spin
                    (the host ahead, as compare_torch.py and heldout_bench time a call), median of 7 rounds, warm; in
                    each round cpp_gpu_us's and torch_mm_gpu_us's batches too, the order rotating;
  torch_mm_gpu_us   the same for torch.mm(A, B, out=Y) on the same tensors;
  cpp_gpu_us        the C++ runtime's own: the same Runtime's 20 forward calls on the same arrays issued back to back
                    from C++ (its binding's time_forward), CUDA events around them, in rt_gpu_us's rounds. Until
                    2026-11-30 this was `gemmtune run` in a process of its own, whose other allocations and clock moved
                    4096^3 by more than the target (348 to 368 us against the Python call's 348;
                    results/nvidia-h200/python_gpu_gap_probe.json);
  *_loop_us         rt_gpu_us, cpp_gpu_us and torch_mm_gpu_us again with nothing queued: the batch as a loop issues
                    it, where a call whose host time exceeds its GPU time is timed by the host;
  run_gpu_us        `gemmtune run` on the same problem pinned to the candidate the Python call runs (--candidate), in
                    its own process: what cpp_gpu_us was, kept beside it;
  kernel_us         the kernels' own time per Python call (torch.profiler's CUDA activity: CUPTI), every launch
                    of one call summed, taken after every other time of the run (a profiler block slows the
                    process's later launches);
  protocol_host_us  what reading the three operands through their protocol costs the host by itself, before gemmtune
                    sees a pointer (dlpack: three __dlpack__(stream=...) capsules; cai: three __cuda_array_interface__
                    dicts; torch: three data_ptr() calls): the floor of rt_host_us for that kind of array;
  torch_mm_same_objects_host_us
                    torch.mm handed the very objects gemmtune is handed, as PyTorch takes them (dlpack: three
                    torch.from_dlpack, cai: three torch.as_tensor, torch: the tensors, torch_mm_host_us itself), in
                    rt_host_us's rounds: what a PyTorch user pays for the same call on another framework's arrays.
Targets: rt_host_us <= torch_mm_host_us on every record; rt_gpu_us within 2 us of cpp_gpu_us on every record. Where
protocol_host_us alone exceeds torch_mm_host_us the first cannot hold; the summary names those records and holds
them to torch_mm_same_objects_host_us instead.

usage: bench_python_overhead.py [--gemmtune build/gemmtune] [--out results/<gpu>/python_overhead.json]
"""
import argparse
import functools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

SHAPES = [(64, 64, 64), (256, 256, 256), (1500, 1079, 799), (1024, 1024, 1024), (3282, 1131, 4835),
          (4096, 4096, 4096)]
GPU_GAP_US = 2.0
SPIN_CYCLES = 4_000_000  # torch.cuda._sleep: about 2 ms at 1980 MHz, longer than 20 of the slowest Python calls


def summarize(records):
    """The targets over the records: which records miss them, and whether each target holds on all of them."""
    slower_host = [r for r in records if r["rt_host_us"] > r["torch_mm_host_us"]]
    # A protocol that costs more than torch.mm before anyone sees a pointer: the same-objects bound is the one left.
    floor_above = [r for r in records if r["protocol_host_us"] > r["torch_mm_host_us"]]
    slower_same = [r for r in records if r["rt_host_us"] > r["torch_mm_same_objects_host_us"]]
    gpu_gap = [r for r in records if r["rt_gpu_us"] - r["cpp_gpu_us"] > GPU_GAP_US]
    loop_gap = [r for r in records if r["rt_loop_us"] - r["cpp_loop_us"] > GPU_GAP_US]
    # A call issued every rt_host_us cannot run back to back in less: where that is more than the C++ loop's time per
    # call (plus 2 us), the loop's gap is the host's, whichever path issues the call (torch.mm's too).
    host_bound = [r for r in loop_gap if r["rt_host_us"] > r["cpp_loop_us"] + GPU_GAP_US]
    return {
        "records": len(records),
        "host_not_above_torch_mm": not slower_host,
        "host_above_torch_mm": [f"{r['shape']} {r['arrays']}" for r in slower_host],
        "protocol_alone_above_torch_mm": [f"{r['shape']} {r['arrays']}" for r in floor_above],
        "host_not_above_torch_mm_on_same_objects": not slower_same,
        "host_above_torch_mm_on_same_objects": [f"{r['shape']} {r['arrays']}" for r in slower_same],
        "gpu_within_2us_of_cpp": not gpu_gap,
        "gpu_more_than_2us_above_cpp": [f"{r['shape']} {r['arrays']}" for r in gpu_gap],
        "loop_more_than_2us_above_cpp": [f"{r['shape']} {r['arrays']}" for r in loop_gap],
        "of_those_host_bound": [f"{r['shape']} {r['arrays']}" for r in host_bound],
        "max_host_ratio_to_torch_mm": max(r["rt_host_us"] / r["torch_mm_host_us"] for r in records),
        "max_gpu_gap_us": max(r["rt_gpu_us"] - r["cpp_gpu_us"] for r in records),
    }


def run_gpu_us(gemmtune_bin, m, n, k, candidate, db):
    """Microseconds per call of the C++ runtime on the problem, pinned to `candidate` (gemmtune run's 'time' line)."""
    out = subprocess.run([gemmtune_bin, "run", "--m", str(m), "--n", str(n), "--k", str(k), "--mode", "tf32",
                          "--candidate", candidate, "--db", db, "--iters", "200", "--warmup", "20"],
                         check=True, capture_output=True, text=True).stdout
    found = re.search(r"^time\s+([\d.]+) us/call", out, re.M)
    if not found:
        raise RuntimeError(f"gemmtune run printed no time line:\n{out}")
    return float(found.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gemmtune", default="build/gemmtune")
    ap.add_argument("--out")
    args = ap.parse_args()
    if not os.access(args.gemmtune, os.X_OK):
        ap.error(f"{args.gemmtune} is not an executable gemmtune (build it first)")

    import torch
    from torch.profiler import ProfilerActivity, profile

    import gemmtune
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "dev"))
    from event_timing import batch_us
    from protocol_only import DlpackOnly, InterfaceOnly

    def host_us(fn, calls=200):
        torch.cuda._sleep(int(2e8))  # about 0.1 s of GPU time: every call below is issued behind it
        began = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - began
        torch.cuda.synchronize()
        return elapsed / calls * 1e6

    def host_rounds_us(sides, rounds=9):
        """host_us of each side, interleaved round by round, the side going first rotating: medians."""
        times = [[] for _ in sides]
        for r in range(rounds):
            for j in range(len(sides)):
                i = (j + r) % len(sides)
                times[i].append(host_us(sides[i]))
        return [statistics.median(t) for t in times]

    def events_us(fn, calls, queued):
        """GPU us per call of `calls` calls of fn back to back; queued: behind ~2 ms of GPU spin (the host ahead)."""
        return batch_us(fn, calls, SPIN_CYCLES if queued else 0)

    def gpu_rounds_us(sides, queued, rounds=7, calls=20):
        """Per side (a function of the call count and `queued` returning GPU us per call), the median over `rounds`
        rounds in which every side runs once, the order rotating: a clock that drifts over a run (the 700 W cap at
        4096^3) moves every side alike."""
        times = [[] for _ in sides]
        for r in range(rounds):
            for j in range(len(sides)):
                i = (j + r) % len(sides)
                times[i].append(sides[i](calls, queued))
        return [statistics.median(t) for t in times]

    def kernel_us(fn, calls=20):
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
        total = sum(getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)
                    for e in prof.key_averages())
        return total / calls

    torch.backends.cuda.matmul.allow_tf32 = True
    records, profiled = [], []  # profiled: (index of a shape's first record, its call) for kernel_us
    with tempfile.TemporaryDirectory() as tmp:
        rt = gemmtune.Runtime(os.path.join(tmp, "python.db"))
        for m, n, k in SHAPES:
            A, B = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
            Y, Yt = torch.empty(m, n, device="cuda"), torch.empty(m, n, device="cuda")
            theirs = lambda: torch.mm(A, B, out=Yt)  # noqa: E731
            ours = lambda: rt.forward(A, B, out=Y, mode="tf32")  # noqa: E731
            ours()  # the first use: the trial runs, the choice is kept
            torch.cuda.synchronize()
            candidate = rt.explain(A, B, mode="tf32").split(": ", 1)[1].split(" ")[0]
            shape = {"shape": f"{m}x{n}x{k}", "mode": "tf32", "candidate": candidate,
                     "run_gpu_us": run_gpu_us(args.gemmtune, m, n, k, candidate, os.path.join(tmp, "cpp.db"))}
            problem = gemmtune.Problem(m, n, k, mode="tf32")
            stream = torch.cuda.current_stream().cuda_stream

            def cpp_us(calls, queued):
                if queued:
                    torch.cuda._sleep(SPIN_CYCLES)  # on the stream time_forward records its events on
                return rt._rt.time_forward(problem, A.data_ptr(), B.data_ptr(), 0, Y.data_ptr(), stream, calls)

            profiled.append((len(records), functools.partial(rt.forward, A, B, out=Y, mode="tf32")))
            kinds = {"torch": (A, B, Y), "dlpack": (DlpackOnly(A), DlpackOnly(B), DlpackOnly(Y)),
                     "cai": (InterfaceOnly(A), InterfaceOnly(B), InterfaceOnly(Y))}
            protocols = {"torch": lambda x: x.data_ptr(), "dlpack": lambda x: x.__dlpack__(stream=1),
                         "cai": lambda x: x.__cuda_array_interface__}
            as_torch = {"dlpack": torch.from_dlpack, "cai": lambda x: torch.as_tensor(x, device="cuda")}
            for kind, (a, b, y) in kinds.items():
                call = lambda: rt.forward(a, b, out=y, mode="tf32")  # noqa: E731
                call()
                read = protocols[kind]
                if kind in as_torch:
                    wrap = as_torch[kind]
                    same = lambda: torch.mm(wrap(a), wrap(b), out=wrap(y))  # noqa: E731
                    rt_host, torch_host, same_host = host_rounds_us([call, theirs, same])
                else:
                    rt_host, torch_host = host_rounds_us([call, theirs])
                    same_host = torch_host
                theirs()
                torch.cuda.synchronize()
                sides = [functools.partial(events_us, call), cpp_us, functools.partial(events_us, theirs)]
                rt_gpu, cpp_gpu, torch_gpu = gpu_rounds_us(sides, queued=True)
                rt_loop, cpp_loop, torch_loop = gpu_rounds_us(sides, queued=False)
                records.append({**shape, "arrays": kind, "rt_host_us": rt_host, "torch_mm_host_us": torch_host,
                                "torch_mm_same_objects_host_us": same_host,
                                "rt_gpu_us": rt_gpu, "cpp_gpu_us": cpp_gpu, "torch_mm_gpu_us": torch_gpu,
                                "rt_loop_us": rt_loop, "cpp_loop_us": cpp_loop, "torch_mm_loop_us": torch_loop,
                                "protocol_host_us": host_us(lambda: (read(a), read(b), read(y)))})
        # The profiler last: a launch after a torch.profiler block costs the host more for the rest of the process
        # (scripts/dev/profiler_launch_cost.py, H200 machine: torch.mm at 256^3 9.3 -> 18.4 us a call). Taken first,
        # as until 2026-11-29, it doubled the three-launch `+pad` calls' host times here (44 us against 21).
        for first, ours in profiled:
            us = kernel_us(ours)
            for r in records[first:first + 3]:
                r["kernel_us"] = us
        rt.flush()
    for r in records:
        print(f"{r['shape']:>16} {r['arrays']:<6} host {r['rt_host_us']:7.1f} us "
              f"(protocol {r['protocol_host_us']:5.1f}) "
              f"(torch.mm {r['torch_mm_host_us']:6.1f}, on these objects "
              f"{r['torch_mm_same_objects_host_us']:6.1f})  gpu {r['rt_gpu_us']:8.1f} us "
              f"(C++ {r['cpp_gpu_us']:8.1f}, gemmtune run {r['run_gpu_us']:8.1f}, kernels {r['kernel_us']:8.1f}, "
              f"torch.mm {r['torch_mm_gpu_us']:8.1f})  loop {r['rt_loop_us']:8.1f} (C++ {r['cpp_loop_us']:8.1f}, "
              f"torch.mm {r['torch_mm_loop_us']:8.1f})  {r['candidate']}", flush=True)
    summary = summarize(records)
    print(f"rt host <= torch.mm host on every record: {'met' if summary['host_not_above_torch_mm'] else 'MISSED'} "
          f"(above: {', '.join(summary['host_above_torch_mm']) or 'none'}; "
          f"worst x{summary['max_host_ratio_to_torch_mm']:.2f})")
    print(f"  the protocol alone above torch.mm: {', '.join(summary['protocol_alone_above_torch_mm']) or 'none'}"
          f"; rt host <= torch.mm's on the same objects on every record: "
          f"{'met' if summary['host_not_above_torch_mm_on_same_objects'] else 'MISSED'} (above: "
          f"{', '.join(summary['host_above_torch_mm_on_same_objects']) or 'none'})")
    print(f"rt gpu within {GPU_GAP_US:g} us of C++: {'met' if summary['gpu_within_2us_of_cpp'] else 'MISSED'} "
          f"(worst gap {summary['max_gpu_gap_us']:.1f} us; above it: "
          f"{', '.join(summary['gpu_more_than_2us_above_cpp']) or 'none'})")
    print(f"as a loop issues them, more than {GPU_GAP_US:g} us above C++: "
          f"{', '.join(summary['loop_more_than_2us_above_cpp']) or 'none'}; of those host-bound, the Python call's "
          f"host time above the C++ loop's time per call: {', '.join(summary['of_those_host_bound']) or 'none'}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "method": __doc__,
                       "summary": summary, "records": records}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
