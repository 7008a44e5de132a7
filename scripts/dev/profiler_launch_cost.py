#!/usr/bin/env python3
"""Whether a torch.profiler block leaves launches slower in the process after it: torch.mm's host time per call at
256^3 (200 calls behind a GPU spin, median of 9 rounds) before and after one profiler block of 20 calls. It is why
scripts/bench_python_overhead.py takes its kernel times last (H200 machine, 2026-11-29: 9.32 -> 18.43 us and
10.00 -> 12.49 us in two runs).

usage: python3 scripts/dev/profiler_launch_cost.py
"""
import statistics
import time

import torch
from torch.profiler import ProfilerActivity, profile


def main():
    A, B, Y = (torch.randn(256, 256, device="cuda") for _ in range(3))
    torch.backends.cuda.matmul.allow_tf32 = True

    def host_us():
        torch.cuda._sleep(int(2e7))  # ~10 ms of GPU time: every call below is issued behind it
        began = time.perf_counter()
        for _ in range(200):
            torch.mm(A, B, out=Y)
        elapsed = (time.perf_counter() - began) / 200 * 1e6
        torch.cuda.synchronize()
        return elapsed

    for _ in range(3):
        host_us()
    before = statistics.median(host_us() for _ in range(9))
    with profile(activities=[ProfilerActivity.CUDA]):
        for _ in range(20):
            torch.mm(A, B, out=Y)
        torch.cuda.synchronize()
    after = statistics.median(host_us() for _ in range(9))
    print(f"torch.mm 256^3 host per call: before a torch.profiler block {before:.2f} us, after it {after:.2f} us")


if __name__ == "__main__":
    main()
