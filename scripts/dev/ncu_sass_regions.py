#!/usr/bin/env python3
"""Where a kernel's warps stall, by stretch of code: an Nsight Compute source page (SASS, CSV) summed per address
region and stall reason, with what kinds of instruction each region executes.

The CSV comes from a report with the SourceCounters section:
    ncu --section SourceCounters -k regex:KERNEL -o rep PROGRAM ...
    ncu -i rep.ncu-rep --page source --csv --print-source sass > sass.csv
Regions are fixed-size windows of code (--window bytes) that executed at least one instruction, or the ranges given
with --region LO:HI (hex byte offsets from the kernel's first instruction), e.g. a k loop and an epilogue.

usage: ncu_sass_regions.py sass.csv [--window 0x1000] [--region 0x5c000:0x6d000 ...] [--top 5]
"""
import argparse
import collections
import csv
import sys

STALL_PREFIX = "stall_"


def read_source_page(path):
    """The rows of an ncu source page: (header, rows with as many fields as the header)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    for i, row in enumerate(rows):
        if row and row[0] == "Address":
            header = row
            return header, [r for r in rows[i + 1:] if len(r) >= len(header)]
    raise ValueError(f"{path}: no 'Address' header row: not an ncu --page source --csv file")


def opcode(source):
    words = source.split()
    if not words:
        return "?"
    return words[1] if words[0].startswith("@") and len(words) > 1 else words[0]


def summarize(header, rows, regions, window):
    """Per region: samples by stall reason, executed instructions (static and dynamic) and their opcodes."""
    samples_col = header.index("Warp Stall Sampling (All Samples)")
    executed_col = header.index("Instructions Executed")
    stall_cols = [j for j, h in enumerate(header) if h.startswith(STALL_PREFIX) and "Not Issued" not in h]
    base = int(rows[0][0], 16)
    out = collections.OrderedDict()

    def region_of(offset):
        if regions:
            for lo, hi in regions:
                if lo <= offset < hi:
                    return (lo, hi)
            return None
        lo = offset // window * window
        return (lo, lo + window)

    for r in rows:
        offset = int(r[0], 16) - base
        key = region_of(offset)
        if key is None:
            continue
        s = out.setdefault(key, {"samples": 0, "stalls": collections.Counter(), "static": 0, "dynamic": 0,
                                 "opcodes": collections.Counter()})
        s["samples"] += int(r[samples_col] or 0)
        for j in stall_cols:
            s["stalls"][header[j][len(STALL_PREFIX):]] += int(r[j] or 0)
        executed = int(r[executed_col] or 0)
        if executed:
            s["static"] += 1
            s["dynamic"] += executed
            s["opcodes"][opcode(r[1])] += 1
    return {k: v for k, v in sorted(out.items()) if v["static"] or v["samples"]}


def parse_region(text):
    lo, sep, hi = text.partition(":")
    if not sep:
        raise argparse.ArgumentTypeError(f"region {text!r}: want LO:HI in hex, e.g. 0x5c000:0x6d000")
    try:
        lo_v, hi_v = int(lo, 16), int(hi, 16)
    except ValueError:
        raise argparse.ArgumentTypeError(f"region {text!r}: LO and HI must be hex byte offsets") from None
    if lo_v >= hi_v:
        raise argparse.ArgumentTypeError(f"region {text!r}: LO must lie below HI")
    return lo_v, hi_v


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--window", type=lambda s: int(s, 0), default=0x1000, help="window size in bytes (default 0x1000)")
    ap.add_argument("--region", type=parse_region, action="append", default=[], help="LO:HI in hex; repeatable")
    ap.add_argument("--top", type=int, default=5, help="stall reasons and opcodes listed per region")
    args = ap.parse_args(argv)
    if args.window <= 0:
        ap.error("--window must be positive")
    try:
        header, rows = read_source_page(args.csv)
    except (OSError, ValueError) as e:
        print(f"ncu_sass_regions: {e}", file=sys.stderr)
        return 2
    if not rows:
        print(f"ncu_sass_regions: {args.csv}: no instructions", file=sys.stderr)
        return 2
    summary = summarize(header, rows, args.region, args.window)
    total = sum(s["samples"] for s in summary.values()) or 1
    print(f"{'region':>19} {'samples':>8} {'share':>6} {'static':>6} {'executed':>10}  top stalls | top opcodes")
    for (lo, hi), s in summary.items():
        stalls = ", ".join(f"{k} {v}" for k, v in s["stalls"].most_common(args.top) if v)
        ops = ", ".join(f"{k} {v}" for k, v in s["opcodes"].most_common(args.top))
        print(f"{lo:#8x}-{hi:#8x} {s['samples']:8d} {100 * s['samples'] / total:5.1f}% {s['static']:6d} "
              f"{s['dynamic']:10d}  {stalls} | {ops}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
