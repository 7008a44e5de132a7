#!/usr/bin/env python3
"""Trades in the first-use trial: over held-out runs (heldout_report.py's joined files), the problems whose kept
challenger won its trial on the whole while losing some condition, read from the trial medians that each record's
explain string holds (stream warm, stream cold, graph warm, graph cold: the challenger's median per call against
heuristic-first's in its pairs).

Per problem (seed, mode, shape, epilogue): the four ratios, their geomean and the worst. Printed: the problems where
the worst is above each --limit, i.e. what a rule "lose where any one condition is more than LIMIT slower" would have
refused. It only reads what the trial recorded; what the refused problem would then have run is not in the file.

usage: trial_trades.py HELDOUT.json[.gz] [...] [--min-seed S] [--limit 1.01 --limit 1.02 ...] [--json OUT]
"""
import argparse
import json
import os
import re
import sys

from heldout_report import every_joined_record, geomean

# The kept challenger's clause (the explain string's first, before "; "), as runtime.cpp writes it.
MEDIANS = re.compile(
    r"stream warm ([\d.]+) us per call \(slowest batch [\d.]+\) vs heuristic-first ([\d.]+) us \(fastest batch "
    r"[\d.]+\), stream cold ([\d.]+) \(slowest [\d.]+\) vs ([\d.]+) \(fastest [\d.]+\), graph warm ([\d.]+) "
    r"\(slowest [\d.]+\) vs ([\d.]+) \(fastest [\d.]+\), graph cold ([\d.]+) \(slowest [\d.]+\) vs ([\d.]+)")


def kept_trial(explain):
    """The kept challenger's four median ratios (challenger over heuristic-first), or None where no challenger's
    trial is what the explain string's first clause reports."""
    m = MEDIANS.search(explain.split("; ")[0])
    if not m:
        return None
    v = [float(x) for x in m.groups()]
    return [v[0] / v[1], v[2] / v[3], v[4] / v[5], v[6] / v[7]]


def trades(records, min_seed):
    """[{seed, mode, shape, epilogue, candidate, ratios, geomean, worst}], one per problem whose kept challenger has
    trial medians."""
    seen, out = set(), []
    for r in records:
        key = (r["seed"], r["mode"], r["shape"], r["epilogue"])
        if r["seed"] < min_seed or key in seen:
            continue
        ratios = kept_trial(r.get("explain", ""))
        if ratios is None:
            continue
        seen.add(key)
        out.append({"seed": key[0], "mode": key[1], "shape": key[2], "epilogue": key[3], "candidate": r["candidate"],
                    "ratios": ratios, "geomean": geomean(ratios), "worst": max(ratios)})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--min-seed", type=int, default=0)
    ap.add_argument("--limit", type=float, action="append")
    ap.add_argument("--json")
    args = ap.parse_args()
    limits = sorted(args.limit or [1.01, 1.02, 1.03])
    records = every_joined_record(args.files, ap)
    found = trades(records, args.min_seed)
    if not found:
        ap.error("no record's explain string holds a kept challenger's trial medians")
    seeds = sorted({t["seed"] for t in found})
    print(f"kept challengers with trial medians: {len(found)} problems, {len(seeds)} seeds {seeds[0]}-{seeds[-1]}")
    print("ratios are the challenger's median over heuristic-first's: stream warm, stream cold, graph warm, graph cold")
    for limit in limits:
        over = [t for t in found if t["worst"] > limit]
        print(f"worst condition above {limit:g}: {len(over)}")
        for t in over:
            print(f"  seed {t['seed']} {t['mode']} {t['shape']} {t['epilogue']} {t['candidate']}: "
                  + " ".join(f"{x:.3f}" for x in t["ratios"]) + f" (geomean {t['geomean']:.3f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"min_seed": args.min_seed, "limits": limits, "seeds": seeds,
                       "files_read": [os.path.basename(p) for p in args.files], "problems": found}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
