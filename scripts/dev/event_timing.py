"""What the dev probes time a call with: CUDA events around back-to-back calls, warm, the median of the rounds' means
per call (METHOD.md). One copy for scripts/eager_same_process.py, scripts/bench_python_overhead.py and the probes
here."""
import statistics

import torch

QUEUE_SPIN_CYCLES = 2_000_000  # torch.cuda._sleep: about 1 ms at 1980 MHz


def batch_us(fn, calls=20, spin_cycles=0):
    """Microseconds per call of one batch of `calls` calls of fn back to back, between two CUDA events; spin_cycles > 0
    queues the batch behind that much GPU spin, so the host is ahead and the GPU's own time is timed."""
    if spin_cycles > 0:
        torch.cuda._sleep(spin_cycles)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000 / calls


def per_call_us(fn, rounds=7, calls=20, queued=False):
    """Microseconds per call of fn: one call to warm up, then `rounds` batches of `calls` back to back. queued: each
    batch is queued behind ~1 ms of GPU spin (the GPU's time per call, the host's launch cost left out; both sides of
    a one-process comparison alike, where scripts/compare_torch.py and bench/heldout_bench.cu, whose times are set
    side by side across processes, both hold 10 ms); else the batch runs as a Python loop issues it (a call
    whose host time is longer than its GPU time is timed by the host)."""
    fn()
    torch.cuda.synchronize()
    spin = QUEUE_SPIN_CYCLES if queued else 0
    return statistics.median(batch_us(fn, calls, spin) for _ in range(rounds))
