#!/usr/bin/env python3
"""An upper bound on what a tiled GEMM kernel can reach on a torch.compile comparison's shapes (issue 49).

The roofline bound (2mnk at the tf32 peak or one DRAM pass, plus 1.4 us a call) lets every SM work on every shape.
A kernel that gives each output tile (or split-k slice of one) to one SM cannot: its grid comes in whole tiles, and
each SM pulls its tiles' operands from L2 at a finite rate. Per shape this takes the best over tile shapes and k
splits of

    waves x max(tile at the SM's tensor peak, tile's operand bytes at the SM's L2 feed rate),
    all tiles' operand bytes at the L2's aggregate rate, one DRAM pass,

plus 1.4 us a call, and reports it as a share of the peak, the geomean per half (both-unaligned or aligned) as
compile_report.py does. Split slices' partial sums, the epilogue and the prologue cost nothing here, so the bound is
optimistic. The rates are the H200's as measured (results/nvidia-h200/l2_read_probe.txt): 65 bytes a clock an SM
(four issuing warps), 10.6 TB/s from L2 with every SM pulling; 4.8 TB/s DRAM; each SM's tensor pipe at 2048 tf32 FLOP
a clock (wgmma_rate_probe.txt), 535 TFLOP/s over 132 SMs at 1980 MHz. Shares are of the 494.7 TFLOP/s peak the issue
names (that rate at 1830 MHz), so a bound may exceed 100%.

A second bound holds our design to what it was measured to pay: each SM lands at most 54 bytes a clock of tile
copies, however the tiles share them through multicast (wgmma_rate_probe.txt's seventh run: 2x2 clusters sharing
both operands, L2-resident, the most any form of the copies landed), the L2 serving each operand tile once per two
tiles (such a pair shares it); and where k % 4 != 0, A's rows are not 16-byte aligned, so A is first copied into
aligned rows, 2mk floats read and written at 4.6 TB/s (padded_copy_funnel_ab.txt: the product copy's fastest, A
L2-resident), before the GEMM: the copy engine cannot read those rows in place (tma_box_start.txt).

The tensor pipes' rate scales with the SM clock they run at (--clock, MHz). It is 1980 by default, the clock the
earlier runs of this file assumed; under tf32 wgmma with random operands the H200's SMs run slower
(results/nvidia-h200/tensor_clock_under_load.txt, clock64 against the global timer): 1568 MHz in the first 2.7 ms of
a 256x128 k loop, 1290-1350 MHz once the board sits at its 700 W cap. The byte rates are rates in time, measured at
1980 MHz, and do not scale with it.

    scripts/dev/tile_bound.py results/nvidia-h200/compile_compare.json [--clock 1568]
"""
import argparse
import json
import math
import sys

PEAK = 494.7e12       # the shares' denominator: the H200's quoted dense tf32 peak (2048 FLOP a clock at 1830 MHz)
SMS = 132
CLOCK = 1.98e9         # the H200's highest SM clock: where the byte rates below were measured (bytes a clock x it)


def tensor_rate(clock):
    """tf32 FLOP/s of all the tensor pipes at an SM clock (Hz): 2048 a clock on each SM (wgmma_rate_probe.txt)."""
    return 2048 * SMS * clock


TENSOR = tensor_rate(CLOCK)  # 535 TFLOP/s at the highest clock
SM_FEED = 65 * CLOCK   # bytes/s into one SM
L2_FEED = 10.6e12      # bytes/s out of L2, every SM pulling
DRAM = 4.8e12
CALL_US = 1.4
SM_INTAKE = 54 * CLOCK  # bytes/s of tile copies landing in one SM, at best (the design bound)
COPY = 4.6e12          # bytes/s read + written by A's copy into aligned rows, at best (the design bound)
PAIR_L2_SHARE = 0.5    # the part of the tiles' operand bytes the L2 serves where pairs share each tile (design bound)
TILES = [(64, 128), (128, 64), (128, 128), (192, 128), (128, 192), (256, 128), (128, 256)]
SPLITS = [1, 2, 3, 4, 6, 8]
BK = 32


def roofline_us(m, n, k, clock=CLOCK):
    """The roofline bound in us: 2mnk at the tensor pipes' rate at `clock` (Hz) or one DRAM pass over A, B, Y and the
    bias, plus a call."""
    return max(2.0 * m * n * k / tensor_rate(clock), 4.0 * (m * k + k * n + m * n + n) / DRAM) * 1e6 + CALL_US


def bound_us(m, n, k, sm_feed=SM_FEED, l2_share=1.0, clock=CLOCK):
    """The best (time in us, tile, split) over the tile shapes and splits; l2_share: the part of the tiles' operand
    bytes the L2 serves (the rest lands by multicast); clock: the SM clock the tensor pipes run at (Hz)."""
    per_sm_peak = tensor_rate(clock) / SMS
    dram_s = 4.0 * (m * k + k * n + m * n + n) / DRAM
    best = None
    for bm, bn in TILES:
        tiles = math.ceil(m / bm) * math.ceil(n / bn)
        k_tiles = math.ceil(k / BK)
        for split in SPLITS:
            if k_tiles < 2 * split:
                continue
            units = tiles * split
            k_unit = math.ceil(k_tiles / split) * BK
            unit_bytes = 4.0 * (bm + bn) * k_unit
            unit_s = max(2.0 * bm * bn * k_unit / per_sm_peak, unit_bytes / sm_feed)
            t = max(math.ceil(units / SMS) * unit_s, units * unit_bytes * l2_share / L2_FEED, dram_s) * 1e6 + CALL_US
            if best is None or t < best[0]:
                best = (t, f"{bm}x{bn}", split)
    return best


def design_bound_us(m, n, k, clock=CLOCK):
    """The design bound's time in us: the tiles at the SMs' measured intake, the L2 serving each operand tile once per
    pair, then A's copy into aligned rows where k % 4 != 0 (2mk floats read and written)."""
    copy_us = 2 * 4.0 * m * k / COPY * 1e6 if k % 4 else 0.0
    return bound_us(m, n, k, SM_INTAKE, PAIR_L2_SHARE, clock)[0] + copy_us


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("compare", help="a compile_compare.json (scripts/compile_report.py)")
    ap.add_argument("--clock", type=float, default=CLOCK / 1e6,
                    help="the SM clock the tensor pipes run at, MHz (default 1980: the H200's highest)")
    args = ap.parse_args()
    if not 100 <= args.clock <= 3000:
        sys.exit(f"tile_bound: --clock {args.clock:g}: an SM clock in MHz, 100-3000")
    clock = args.clock * 1e6
    try:
        with open(args.compare) as f:
            records = json.load(f)["records"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"tile_bound: {args.compare}: {e}")
    shapes = {}
    for r in records:
        if r.get("mode") == "tf32":
            shapes.setdefault(r["shape"], {"unaligned": r["both_unaligned"], "runtime": []})
            shapes[r["shape"]]["runtime"].append(r["runtime_pct_of_tf32_peak"])
    if not shapes:
        sys.exit(f"tile_bound: {args.compare}: no tf32 record")
    print(f"# the tensor pipes at {args.clock:g} MHz")
    print("shape               half       roofline  tiled bound (tile, split)   design bound   "
          "runtime (best condition)")
    halves = {True: ([], [], [], []), False: ([], [], [], [])}
    for shape, s in shapes.items():
        m, n, k = (int(x) for x in shape.split("x"))
        flops = 2.0 * m * n * k
        roof_us = roofline_us(m, n, k, clock)
        t, tile, split = bound_us(m, n, k, clock=clock)
        roof, tiled = 100 * flops / (roof_us * 1e-6) / PEAK, 100 * flops / (t * 1e-6) / PEAK
        design = 100 * flops / (design_bound_us(m, n, k, clock) * 1e-6) / PEAK
        ours = max(s["runtime"])
        for lst, v in zip(halves[s["unaligned"]], (roof, tiled, design, ours)):
            lst.append(v)
        print(f"{shape:<19} {'unaligned' if s['unaligned'] else 'aligned':<10} {roof:7.1f}%  {tiled:7.1f}% "
              f"({tile}, {split})      {design:6.1f}%        {ours:6.1f}%")
    for unaligned in (True, False):
        roof, tiled, design, ours = halves[unaligned]
        if roof:
            print(f"{'both-unaligned' if unaligned else 'aligned'} half, geomean of {len(roof)}: roofline "
                  f"{geomean(roof):.1f}%, tiled bound {geomean(tiled):.1f}%, design bound {geomean(design):.1f}%, "
                  f"the runtime {geomean(ours):.1f}% of the tf32 peak")


if __name__ == "__main__":
    main()
