#!/usr/bin/env python3
"""Each candidate's fixed cost and steady k-loop rate, from a sweep over k at a fixed grid (issue 49).

A sweep of scripts/dev/k_slope_profile.json times every candidate on shapes whose tiles fill the SMs once (1408x1536:
132 tiles of 128x128; 2816x1536: 132 of 256x128) at k from 64 to 8192, aligned and with n and k one less (both rows
unaligned). Per family (m, aligned or not) and candidate, the time between the two largest k is the k loop alone:

    slope     = (t(k2) - t(k1)) / ((k2 - k1) / 32)         us a k tile of 32, every tile at once
    clocks    = slope * the SM clock the sweep measured      per k tile, on each SM
    share     = 2 * m * n * 32 / 132 / clocks / 2048        of the tensor pipe's 2048 tf32 FLOP a clock and SM
    intercept = t(k1) - slope * k1 / 32                      what a call costs besides its k loop

2048 FLOP a clock is what wgmma_rate_probe measured one SM's tensor pipe doing (results/nvidia-h200/
wgmma_rate_probe.txt); 494.7 TFLOP/s is that rate at 1830 MHz. Prints the best candidates of each family by their
time at the largest k, and cuBLASLt's best at each k as one row.

    scripts/dev/k_slope.py SWEEP.json [--top N]
"""
import argparse
import collections
import json
import sys

FLOP_PER_CLOCK = 2048
SMS = 132
BK = 32


def families(records):
    """{(m, aligned): {candidate: {k: (median_us, sm_clock_mhz)}}} of the ok records."""
    out = collections.defaultdict(lambda: collections.defaultdict(dict))
    for r in records:
        if r.get("status") != "ok":
            continue
        p = r["problem"]
        aligned = p["n"] % 4 == 0 and p["k"] % 4 == 0
        out[(p["m"], p["n"] + (0 if aligned else 1), aligned)][r["candidate"]["id"]][p["k"]] = (
            r["median_us"], r.get("sm_clock_mhz") or 1980.0)
    return out


def fit(times, m, n):
    """(slope us, clocks, share, intercept us) over the two largest k, or None with fewer than two."""
    ks = sorted(times)
    if len(ks) < 2:
        return None
    k1, k2 = ks[-2], ks[-1]
    (t1, c1), (t2, c2) = times[k1], times[k2]
    slope = (t2 - t1) / ((k2 - k1) / BK)
    if slope <= 0:
        return None
    clocks = slope * (c1 + c2) / 2
    share = 2.0 * m * n * BK / SMS / clocks / FLOP_PER_CLOCK
    return slope, clocks, share, t1 - slope * k1 / BK


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep", help="gemmtune sweep --json of scripts/dev/k_slope_profile.json")
    ap.add_argument("--top", type=int, default=8, help="candidates per family (default 8)")
    args = ap.parse_args()
    try:
        with open(args.sweep) as f:
            records = json.load(f)["results"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"k_slope: {args.sweep}: {e}")
    fams = families(records)
    if not fams:
        sys.exit(f"k_slope: {args.sweep}: no ok record")
    for (m, n, aligned), cands in sorted(fams.items()):
        ks = sorted({k for times in cands.values() for k in times})
        print(f"{m}x{n - (0 if aligned else 1)}, {'aligned' if aligned else 'n and k one less (rows unaligned)'}, "
              f"k {ks[0]}-{ks[-1]}")
        # cuBLASLt's heuristic hands out other algos at other k: its best at each k is a row of its own.
        lt_best = {}
        for cand, times in cands.items():
            if cand.startswith("lt/"):
                for k, tc in times.items():
                    if k not in lt_best or tc[0] < lt_best[k][0]:
                        lt_best[k] = tc
        rows = []
        for cand, times in list(cands.items()) + [("lt (best algo at each k)", lt_best)]:
            f = fit(times, m, n)
            if f and len(times) == len(ks):
                rows.append((times[max(times)][0], cand, f, times))
        for t_last, cand, (slope, clocks, share, intercept), times in sorted(rows)[:args.top]:
            print(f"  {cand:<46} k={min(times)}: {times[min(times)][0]:7.2f} us  k={max(times)}: {t_last:7.2f} us  "
                  f"{clocks:5.0f} clocks a k tile = {100 * share:4.1f}% of the tensor pipe  intercept {intercept:5.2f} us")


if __name__ == "__main__":
    main()
