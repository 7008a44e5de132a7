#!/usr/bin/env python3
"""Two builds' sweeps of one profile, candidate by candidate: a kernel change's before and after, timed in turns in
one device call (before, after, before, after). Per round, every verified candidate whose id starts with --family
that both sweeps timed: its CUPTI median before and after; then geomeans of before/after (> 1: the change is faster)
per tile shape (the id's BMxBN) and for each problem's fastest of the family.
A candidate the sweep pruned has its first batch's median only, so single ratios scatter more than the geomeans.
usage: sweep_variant_ab.py --round BEFORE.json AFTER.json [--round ...] [--family own/skinny] [--out OUT.json]"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from heldout_report import geomean  # noqa: E402


def fail(message):
    print(f"sweep_variant_ab: {message}", file=sys.stderr)
    sys.exit(2)


def medians(path, family):
    try:
        with open(path) as f:
            sweep = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read {path}: {e}")
    return {(r["problem_key"], r["candidate"]["id"]): r["median_us"] for r in sweep["results"]
            if r["status"] == "ok" and r["candidate"]["id"].startswith(family)}


def tile_of(candidate_id):
    found = re.search(r"_(\d+x\d+)x\d+_", candidate_id)
    return found.group(1) if found else "other"


def compare(before, after):
    pairs = [{"problem": k, "candidate": c, "before_us": before[(k, c)], "after_us": us}
             for (k, c), us in sorted(after.items()) if (k, c) in before]
    if not pairs:
        return None
    by_tile = {}
    for p in pairs:
        by_tile.setdefault(tile_of(p["candidate"]), []).append(p["before_us"] / p["after_us"])
    fastest = {}
    for side, times in (("before", before), ("after", after)):
        for (k, _), us in times.items():
            f = fastest.setdefault(k, {})
            f[side] = min(f.get(side, us), us)
    best = [f["before"] / f["after"] for f in fastest.values() if "before" in f and "after" in f]
    return {"pairs": pairs,
            "by_tile": {t: {"n": len(xs), "geomean": geomean(xs), "min": min(xs), "max": max(xs)}
                        for t, xs in sorted(by_tile.items())},
            "fastest": {"n": len(best), "geomean": geomean(best), "min": min(best), "max": max(best)}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--round", nargs=2, action="append", required=True, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--family", default="own/skinny")
    ap.add_argument("--out")
    args = ap.parse_args()
    rounds = []
    for i, (before, after) in enumerate(args.round, 1):
        r = compare(medians(before, args.family), medians(after, args.family))
        if r is None:
            fail(f"round {i}: the two sweeps share no {args.family} candidate")
        f = r["fastest"]
        print(f"round {i}: each problem's fastest {args.family}: before/after geomean x{f['geomean']:.3f} "
              f"(min {f['min']:.3f}, max {f['max']:.3f}, {f['n']} problems)")
        for tile, t in r["by_tile"].items():
            print(f"  {tile:>8}: x{t['geomean']:.3f} (min {t['min']:.3f}, max {t['max']:.3f}, "
                  f"{t['n']} variant x problem)")
        rounds.append(r)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"family": args.family, "rounds": rounds}, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
