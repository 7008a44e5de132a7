#!/usr/bin/env python3
"""What the runtime's call path does to a kernel, apart from any choice: over held-out runs (heldout_report.py's
joined files), the records where the runtime ran heuristic-first's very candidate (same_algo: the same id, the same
form), its paired speedup over heuristic-first launched raw, per launch x condition and split by the call's length.

Both sides run the same kernels in the same process, so what is left is how each is called. In stream/warm the runtime
replays a repeated call as a CUDA graph of it (runtime/call_graphs.hpp), and a graph instance keeps a speed offset of
its own (results/<gpu>/graph_instance_probe.txt); in stream/cold the calls rotate over input sets, each another graph
than the last, which the runtime launches where the GPU is ahead; in the graph conditions the benchmark captures the
runtime's calls into its own graph, so the runtime has nothing to replay. Per group: records, geomean, how many below
0.99x, the min and its case.

usage: same_algo_spread.py HELDOUT.json[.gz] [...] [--min-seed S] [--short-us 15] [--json OUT]
       (--min-seed keeps runs from that seed on, e.g. those made after a change; --short-us splits the calls at that
       many microseconds of heuristic-first's time)
"""
import argparse
import json
import math
import os
import sys

from heldout_report import every_joined_record

BAND = 0.99


def groups(records, min_seed, short_us):
    """{(launch, condition, "short" | "long"): [record, ...]} of the records with same_algo and a paired speedup."""
    out = {}
    for r in records:
        if not r.get("same_algo") or not r.get("speedup") or r["seed"] < min_seed:
            continue
        length = "short" if r["heuristic_us"] < short_us else "long"
        out.setdefault((r["launch"], r["condition"], length), []).append(r)
    return out


def group_row(key, rs):
    xs = [r["speedup"] for r in rs]
    worst = min(rs, key=lambda r: r["speedup"])
    return {"launch": key[0], "condition": key[1], "calls": key[2], "n": len(rs),
            "geomean": math.exp(sum(math.log(x) for x in xs) / len(xs)), "below_band": sum(x < BAND for x in xs),
            "min": worst["speedup"],
            "min_case": f"seed {worst['seed']} {worst['mode']} {worst['shape']} {worst['epilogue']} "
                        f"({worst['candidate']}: {worst['runtime_us']:.2f} us against {worst['heuristic_us']:.2f})"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--min-seed", type=int, default=0)
    ap.add_argument("--short-us", type=float, default=15.0)
    ap.add_argument("--json")
    args = ap.parse_args()
    records = every_joined_record(args.files, ap)
    by = groups(records, args.min_seed, args.short_us)
    if not by:
        ap.error("no record where the runtime ran heuristic-first's candidate")
    seeds = sorted({r["seed"] for rs in by.values() for r in rs})
    rows = [group_row(k, by[k]) for k in sorted(by)]
    print(f"the runtime running heuristic-first's very candidate, over heuristic-first launched raw (paired per round), "
          f"{len(seeds)} seeds {seeds[0]}-{seeds[-1]}, calls split at {args.short_us:g} us:")
    print(f"{'launch':<6} {'L2':<4} {'calls':<5} | {'n':>5} {'geomean':>8} {'<' + str(BAND):>6} {'min':>6} | worst case")
    for row in rows:
        print(f"{row['launch']:<6} {row['condition']:<4} {row['calls']:<5} | {row['n']:5d} {row['geomean']:8.3f} "
              f"{row['below_band']:6d} {row['min']:6.3f} | {row['min_case']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"band": BAND, "short_us": args.short_us, "min_seed": args.min_seed, "seeds": seeds,
                       "files_read": [os.path.basename(p) for p in args.files], "groups": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
