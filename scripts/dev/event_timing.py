"""What the dev probes time a call with: CUDA events around back-to-back calls, warm, the median of the rounds' means
per call (METHOD.md). One copy for scripts/bench_python_overhead.py and scripts/dev/unaligned_padding_probe.py."""
import statistics

import torch


def per_call_us(fn, rounds=7, calls=20):
    """Microseconds per call of fn: one call to warm up, then `rounds` batches of `calls` back to back."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000 / calls)
    return statistics.median(times)
