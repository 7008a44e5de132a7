#!/usr/bin/env python3
"""Where a call's time goes in compare_torch.py's stream conditions, per side: PyTorch eager, torch.compile
max-autotune (compare_torch.compile_op) and the runtime on a fresh db (its no-entry choice and first-use trial) or on
DB (its entries: a sweep's pick, or a candidate merged in to see its kernel in these conditions), each
20 calls back to back behind a GPU spin, warm (one input set) and cold (L2 overwritten first, the calls rotating over
input sets past 2x L2), under torch.profiler. Prints per side and condition the span a call (first kernel's start to
the last one's end, over 20), the gaps between consecutive kernels, and each kernel's mean duration: whether a side's
lead is its kernel or the launches between.
usage: PYTHONPATH=build/python python3 scripts/dev/back_to_back_kernels.py MxNxK [MODE=tf32] [DB]"""
import json
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import compare_torch as ct  # noqa: E402
import gemmtune  # noqa: E402

CALLS = 20
# The spin and the flush fill are the harness's, not a side's.
HARNESS_KERNELS = ("spin", "sleep", "fill")


def kernels_of(prof):
    """The side's kernel records (name, start us, duration us) in start order."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    ks = [e for e in events if e.get("cat") == "kernel"
          and not any(h in e["name"].lower() for h in HARNESS_KERNELS)]
    return sorted(ks, key=lambda e: e["ts"])


def main():
    try:
        m, n, k = (int(v) for v in sys.argv[1].split("x"))
        mode = sys.argv[2] if len(sys.argv) > 2 else "tf32"
        db = sys.argv[3] if len(sys.argv) > 3 else None
        if min(m, n, k) < 1 or mode not in ("tf32", "fp32") or len(sys.argv) > 4:
            raise ValueError
    except (IndexError, ValueError):
        sys.exit("usage: back_to_back_kernels.py MxNxK [tf32|fp32] [DB]: positive sizes, e.g. 16x4096x2048")
    if db and not os.path.isfile(db):
        sys.exit(f"back_to_back_kernels.py: no db at {db}")
    if not torch.cuda.is_available():
        sys.exit("back_to_back_kernels.py: no CUDA GPU visible to PyTorch")
    ct.set_mode(mode)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    a, b, c = ct.input_sets(m, n, k, l2)
    sets = len(a)
    with tempfile.TemporaryDirectory() as tmp:
        rt = gemmtune.Runtime(db or os.path.join(tmp, "fresh.db"))
        print(f"{torch.cuda.get_device_name()}, {m}x{n}x{k} {mode}, {CALLS} calls back to back, "
              f"torch {torch.__version__}")
        for epilogue in ("none", "bias+gelu"):
            op = ct.addmm_op(epilogue)
            compiled, _, _ = ct.compile_op(epilogue, a[0], b[0], c[0])
            sides = [("eager", lambda i: op(c[i % sets], a[i % sets], b[i % sets])),
                     ("compiled", lambda i: compiled(c[i % sets], a[i % sets], b[i % sets])),
                     ("runtime", ct.runtime_here_side(rt, epilogue, mode, a, b, c))]
            for name, fn in sides:
                for cold in (False, True):
                    for _ in range(3):  # warm-up, and the runtime's first-use trial, outside the profile
                        for i in range(CALLS):
                            fn(i if cold else 0)
                    torch.cuda.synchronize()
                    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                        torch.cuda._sleep(ct.CONDITION_SPIN_CYCLES)
                        if cold:
                            flush.fill_(1)
                        for i in range(CALLS):
                            fn(i if cold else 0)
                        torch.cuda.synchronize()
                    ks = kernels_of(prof)
                    span = (ks[-1]["ts"] + ks[-1]["dur"] - ks[0]["ts"]) / CALLS
                    gaps = sorted(ks[j + 1]["ts"] - ks[j]["ts"] - ks[j]["dur"] for j in range(len(ks) - 1))
                    durations = {}
                    for e in ks:
                        durations.setdefault(e["name"][:60], []).append(e["dur"])
                    print(f"{epilogue:9} {name:8} {'cold' if cold else 'warm'} span/call {span:7.2f} us  gaps min "
                          f"{gaps[0]:6.2f} median {gaps[len(gaps) // 2]:6.2f} | " +
                          "; ".join(f"{nm} x{len(d)} mean {sum(d) / len(d):.2f}" for nm, d in durations.items()))


if __name__ == "__main__":
    main()
