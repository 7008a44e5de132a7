#!/usr/bin/env python3
"""Where a queued call's time goes, PyTorch eager beside gemmtune's runtime (issue 48): per case, calls queued back to
back behind a GPU spin (as the held-out benchmark times them), first timed in alternating batches with CUDA events,
then traced with torch.profiler (every CUDA activity: kernels, memsets, copies) to split each call's span into its
kernels and the gaps between them. torch.profiler's kernel times alone hide the gaps: at 4944x768x4096 tf32 bias+gelu
both sides' kernels summed to 93.3 us while the runtime's queued call took 102-107 (seed 9603, H200).
usage: queued_timeline.py MODE:EPILOGUE:MxNxK ...     e.g. tf32:bias+gelu:4944x768x4096"""
import statistics
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

import gemmtune
from eager_kernels import eager_case
from event_timing import QUEUE_SPIN_CYCLES, batch_us

CALLS, ROUNDS = 10, 60


def timeline(op, spin_cycles, name):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.cuda._sleep(spin_cycles)
        for _ in range(CALLS):
            op()
        torch.cuda.synchronize()
    events = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                     and "sleep" not in e.name and "spin" not in e.name), key=lambda e: e.time_range.start)
    if not events:
        print(f"   {name}: no CUDA activity recorded")
        return
    span = (events[-1].time_range.end - events[0].time_range.start) / CALLS
    busy = sum(e.time_range.end - e.time_range.start for e in events) / CALLS
    print(f"   {name}: {span:7.2f} us per call from first start to last end, {busy:7.2f} us busy, "
          f"{len(events) / CALLS:.1f} activities per call; the middle call:")
    per_call = len(events) // CALLS
    middle = events[per_call * (CALLS // 2): per_call * (CALLS // 2 + 1)]
    previous_end = events[per_call * (CALLS // 2) - 1].time_range.end
    for e in middle:
        gap = e.time_range.start - previous_end
        print(f"      gap {gap:6.2f}  {e.time_range.end - e.time_range.start:7.2f} us  {e.name[:110]}")
        previous_end = e.time_range.end


def main(cases):
    spin_cycles = QUEUE_SPIN_CYCLES  # longer than the host takes to queue a batch
    with tempfile.TemporaryDirectory() as tmp:
        rt = gemmtune.Runtime(tmp + "/none.db")
        for case in cases:
            mode, epilogue, x, w, b, eager = eager_case(case)
            y = torch.empty(x.shape[0], w.shape[1], device="cuda")
            if epilogue == "none":
                ours = lambda: rt.forward(x, w, out=y, mode=mode)  # noqa: E731
            else:
                ours = lambda: rt.forward(x, w, b, out=y, act="gelu", mode=mode)  # noqa: E731
            for _ in range(20):
                eager()
                ours()
            torch.cuda.synchronize()
            times = {"eager": [], "ours": []}
            for r in range(ROUNDS):
                order = ("eager", "ours") if r % 2 == 0 else ("ours", "eager")
                for side in order:
                    times[side].append(batch_us(eager if side == "eager" else ours, CALLS, spin_cycles))
            med = {s: statistics.median(v) for s, v in times.items()}
            print(f"== {case}: queued, {ROUNDS} alternating batches of {CALLS}: eager {med['eager']:.2f} us, "
                  f"ours {med['ours']:.2f} us (x{med['eager'] / med['ours']:.3f}); "
                  f"fastest batch eager {min(times['eager']):.2f}, ours {min(times['ours']):.2f}")
            timeline(eager, spin_cycles, "eager")
            timeline(ours, spin_cycles, "ours")
            kw = {"act": "gelu"} if epilogue != "none" else {}
            print(f"   gemmtune: {rt.explain(x, w, b if epilogue != 'none' else None, mode=mode, **kw)[:300]}")
        rt.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
