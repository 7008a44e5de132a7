#!/usr/bin/env python3
"""Two held-out runs of the same seed side by side: issue 39's "held-out runtime benchmark unchanged within 1%".

Each run is a bench_heldout.sh seed folder (OUT/heldout/seed<N>: bench.json from heldout_bench --confirm, cache.txt
from `gemmtune cache show`, sweep.txt with the sweep's cost line). Per mode x launch x L2 condition, the geomean of the
runtime's speedup over raw cuBLASLt heuristic-first in each run and B's over A's; then how many cache entries chose
the same candidate, and each sweep's cost line.

    scripts/dev/heldout_side_by_side.py A_DIR B_DIR --label-a pruned --label-b no-prune --out side_by_side.json
"""
import argparse
import json
import math
import os
import sys
from collections import defaultdict


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def speedups(seed_dir):
    with open(os.path.join(seed_dir, "bench.json")) as f:
        records = json.load(f)["records"]
    by = defaultdict(list)
    for r in records:
        by[(r["mode"], r["launch"], r["condition"])].append(r["speedup"])
    return by


def choices(seed_dir):
    """problem key -> chosen candidate, from `gemmtune cache show`'s table."""
    out = {}
    with open(os.path.join(seed_dir, "cache.txt")) as f:
        for line in f:
            words = line.split()
            if len(words) >= 2 and words[0].startswith(("fwd:", "bwd")):
                out[words[0]] = words[1]
    return out


def cost_line(seed_dir):
    with open(os.path.join(seed_dir, "sweep.txt")) as f:
        return next((line.strip() for line in f if line.startswith("cost:")), None)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--label-a", default="a")
    parser.add_argument("--label-b", default="b")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    try:
        sa, sb = speedups(args.a), speedups(args.b)
        ca, cb = choices(args.a), choices(args.b)
        cost_a, cost_b = cost_line(args.a), cost_line(args.b)
    except (OSError, KeyError, ValueError) as e:
        print(f"heldout_side_by_side: {e}", file=sys.stderr)
        return 2
    if set(sa) != set(sb) or not sa:
        print("heldout_side_by_side: the two runs do not hold the same conditions", file=sys.stderr)
        return 2
    rows = []
    print(f"{'mode':5s} {'launch':6s} {'L2':4s} | {args.label_a:>10s} {args.label_b:>10s}  {args.label_b}/{args.label_a}")
    for key in sorted(sa):
        ga, gb = geomean(sa[key]), geomean(sb[key])
        rows.append({"mode": key[0], "launch": key[1], "condition": key[2], "records": len(sa[key]),
                     args.label_a: ga, args.label_b: gb, "b_over_a": gb / ga})
        print(f"{key[0]:5s} {key[1]:6s} {key[2]:4s} | {ga:10.3f} {gb:10.3f}  {gb / ga:.4f}")
    same = sorted(k for k in ca if cb.get(k) == ca[k])
    apart = sorted(k for k in ca if k in cb and cb[k] != ca[k])
    worst = max(rows, key=lambda r: abs(r["b_over_a"] - 1))
    doc = {"a": {"label": args.label_a, "dir": args.a, "cost": cost_a},
           "b": {"label": args.label_b, "dir": args.b, "cost": cost_b},
           "conditions": rows, "largest_change": worst["b_over_a"], "within_1pct": abs(worst["b_over_a"] - 1) <= 0.01,
           "choices": {"keys_a": len(ca), "keys_b": len(cb), "same": len(same),
                       "apart": [{"key": k, args.label_a: ca[k], args.label_b: cb[k]} for k in apart]}}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"largest change {worst['b_over_a']:.4f} ({'within' if doc['within_1pct'] else 'NOT within'} 1%); "
          f"chosen candidates: {len(same)} of {len(ca)} the same")
    print(f"{args.label_a}: {cost_a}\n{args.label_b}: {cost_b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
