"""What the dev probes time a call with: CUDA events around back-to-back calls, warm, the median of the rounds' means
per call (METHOD.md). One copy for scripts/eager_same_process.py and scripts/dev/unaligned_padding_probe.py."""
import statistics

import torch


def per_call_us(fn, rounds=7, calls=20, queued=False):
    """Microseconds per call of fn: one call to warm up, then `rounds` batches of `calls` back to back. queued: each
    batch is queued behind ~1 ms of GPU spin, as scripts/compare_torch.py and bench/heldout_bench.cu time a call (the
    GPU's time per call, the host's launch cost left out); else the batch runs as a Python loop issues it (a call
    whose host time is longer than its GPU time is timed by the host)."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if queued:
            torch.cuda._sleep(2_000_000)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000 / calls)
    return statistics.median(times)
