#!/usr/bin/env python3
"""Trades in the first-use trial: over held-out runs (heldout_report.py's joined files), the problems whose kept
challenger won its trial on the whole while losing some condition, read from the trial medians that each record's
explain string holds (stream warm, stream cold, graph warm, graph cold: the challenger's median per call against
heuristic-first's in its pairs).

Per problem (seed, mode, shape, epilogue): the four ratios, their geomean and the worst. Printed: the problems where
the worst is above each --limit, i.e. what a rule "lose where any one condition is more than LIMIT slower" would have
refused. It only reads what the trial recorded; what the refused problem would then have run is not in the file.

With --carry, instead: how far a trial's verdict in one condition carries to the benchmark's, which times the same
pair (the runtime running the kept challenger, and heuristic-first raw) in another process, later, on the program's
own inputs: per launch x condition, split at --short-us of heuristic-first's time, the distribution over records of
the benchmark's ratio (runtime over heuristic-first) divided by the trial's. Its spread is the least deficit a rule on
one condition's trial median (first_use_trial.hpp: kEagerCallLimit) can tell from noise; --near D keeps the records
whose trial ratio in that condition lies within D of 1, the near-ties such a rule decides between.

With --eager-ties, instead: what a rule "where eager's own call ties the trial's pick, run eager's call" would change.
Per problem with no epilogue (where eager's call is cuBLAS's own choice, cublas/sgemm, as torch.mm makes it:
lt/no_entry_candidates.hpp, eager_call) whose kept challenger is another and whose trial timed cublas/sgemm in all four
conditions within --band of the kept one's time summed over them (what the trial picks by): the benchmark's eager over
ours per condition in one process (compare_torch.py --runtime-db) and across processes. Running eager's call there
reads about 1.0x eager (its own call: 0.989-1.016x in one process on the H100,
results/nvidia-h100-80gb-hbm3/heldout_pooled_seeds9784_9792.txt), so the rule would lift the records below 0.99x and
give up those above 1.01x; both are counted.

usage: trial_trades.py HELDOUT.json[.gz] [...] [--min-seed S] [--limit 1.01 --limit 1.02 ...] [--json OUT]
       trial_trades.py --carry HELDOUT.json[.gz] [...] [--min-seed S] [--short-us 20] [--near D] [--json OUT]
       trial_trades.py --eager-ties HELDOUT.json[.gz] [...] [--min-seed S] [--band 0.025] [--json OUT]
"""
import argparse
import json
import os
import re
import sys

from heldout_report import every_joined_record, geomean, record_key

# The kept challenger's clause (the explain string's first, before "; "), as runtime/trial_decision.cpp writes it.
MEDIANS = re.compile(
    r"stream warm ([\d.]+) us per call \(slowest batch [\d.]+\) vs heuristic-first ([\d.]+) us \(fastest batch "
    r"[\d.]+\), stream cold ([\d.]+) \(slowest [\d.]+\) vs ([\d.]+) \(fastest [\d.]+\), graph warm ([\d.]+) "
    r"\(slowest [\d.]+\) vs ([\d.]+) \(fastest [\d.]+\), graph cold ([\d.]+) \(slowest [\d.]+\) vs ([\d.]+)")


def medians(clause):
    """A clause's eight trial medians (challenger, heuristic-first per condition, in MEDIANS's order), or None where
    the clause holds no trial timed in all four conditions."""
    m = MEDIANS.search(clause)
    return [float(x) for x in m.groups()] if m else None


def kept_trial(explain):
    """The kept challenger's four median ratios (challenger over heuristic-first), or None where no challenger's
    trial is what the explain string's first clause reports."""
    v = medians(explain.split("; ")[0])
    if v is None:
        return None
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


CONDITIONS = [("stream", "warm"), ("stream", "cold"), ("graph", "warm"), ("graph", "cold")]  # kept_trial's order


def quantile(sorted_xs, q):
    """The nearest-rank q-quantile of a sorted list."""
    return sorted_xs[min(len(sorted_xs) - 1, int(q * len(sorted_xs)))]


def carry(records, min_seed, short_us, near=None):
    """([{launch, condition, calls, n, median, p10, p90, flipped}], seeds): per launch x condition x "short" | "long"
    (under or over short_us of heuristic-first's time), the benchmark's ratio over the trial's for each record whose
    kept challenger has trial medians (where `near` is given, a trial ratio within it of 1), each record once;
    `flipped` counts those the trial timed faster than heuristic-first and the benchmark more than 1% slower; `seeds`
    are those of the records with trial medians (before `near`)."""
    seen, by, seeds = set(), {}, set()
    for r in records:
        if r["seed"] < min_seed or record_key(r) in seen or not r.get("heuristic_us") or not r.get("runtime_us"):
            continue
        ratios = kept_trial(r.get("explain", ""))
        if ratios is None:
            continue
        seen.add(record_key(r))
        seeds.add(r["seed"])
        trial = ratios[CONDITIONS.index((r["launch"], r["condition"]))]
        if near is not None and abs(trial - 1) > near:
            continue
        bench = r["runtime_us"] / r["heuristic_us"]
        calls = "short" if r["heuristic_us"] < short_us else "long"
        by.setdefault((r["launch"], r["condition"], calls), []).append((bench / trial, trial < 1 and bench > 1.01))
    rows = []
    for (launch, condition, calls), xs in sorted(by.items()):
        over = sorted(x for x, _ in xs)
        rows.append({"launch": launch, "condition": condition, "calls": calls, "n": len(xs),
                     "median": quantile(over, 0.5), "p10": quantile(over, 0.1), "p90": quantile(over, 0.9),
                     "flipped": sum(f for _, f in xs)})
    return rows, sorted(seeds)


EAGER_MM = "cublas/sgemm"  # eager's own call for mm (lt/no_entry_candidates.hpp: eager_call)


def eager_ties(records, min_seed, band):
    """[{seed, mode, shape, candidate, call_us, eager_over_kept, one_process, across}], one per problem with no
    epilogue whose kept challenger is not EAGER_MM and whose trial timed EAGER_MM in all four conditions within `band`
    of the kept one's time summed over them; call_us: the kept one's mean trial median per call; one_process and
    across: eager over ours per "launch/condition" where the record has the time."""
    by = {}
    for r in records:
        if r["seed"] < min_seed or r["epilogue"] != "none" or r["candidate"] == EAGER_MM:
            continue
        clauses = r.get("explain", "").split("; ")
        kept = medians(clauses[0])
        eager = next((medians(c) for c in clauses[1:] if c.startswith(EAGER_MM + " ")), None)
        if kept is None or eager is None:
            continue
        kept_us, eager_us = sum(kept[0::2]), sum(eager[0::2])
        if eager_us > kept_us * (1 + band):
            continue
        t = by.setdefault((r["seed"], r["mode"], r["shape"]), {
            "seed": r["seed"], "mode": r["mode"], "shape": r["shape"], "candidate": r["candidate"],
            "call_us": kept_us / 4, "eager_over_kept": eager_us / kept_us, "one_process": {}, "across": {}})
        where = f"{r['launch']}/{r['condition']}"
        one = r.get("one_process") or {}
        if one.get("runtime_us") and one.get("torch_us"):
            t["one_process"][where] = one["torch_us"] / one["runtime_us"]
        if r.get("runtime_us") and r.get("torch_us"):
            t["across"][where] = r["torch_us"] / r["runtime_us"]
    return sorted(by.values(), key=lambda t: t["eager_over_kept"])


def main_eager_ties(args, records):
    ties = eager_ties(records, args.min_seed, args.band)
    print(f"problems with no epilogue whose trial timed {EAGER_MM} (eager's call for mm) in full within "
          f"{args.band * 100:g}% of the kept challenger's time over the four conditions: {len(ties)}")
    ones = [x for t in ties for x in t["one_process"].values()]
    acrosses = [x for t in ties for x in t["across"].values()]
    for t in ties:
        one = " ".join(f"{w} {x:.3f}" for w, x in sorted(t["one_process"].items()))
        print(f"  seed {t['seed']} {t['mode']} {t['shape']}: {t['candidate']} at {t['call_us']:.1f} us per call, "
              f"{EAGER_MM} x{t['eager_over_kept']:.3f} its time; eager over ours in one process: {one or '-'}")
    for name, xs in (("in one process", ones), ("across processes", acrosses)):
        print(f"their records {name}: {len(xs)}, below 0.99x eager {sum(x < 0.99 for x in xs)} (what running "
              f"eager's call there would lift), above 1.01x {sum(x > 1.01 for x in xs)} (what it would give up)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"min_seed": args.min_seed, "band": args.band,
                       "files_read": [os.path.basename(p) for p in args.files], "problems": ties}, f, indent=1)
    return 0


def main_carry(args, ap, records):
    rows, seeds = carry(records, args.min_seed, args.short_us, args.near)
    if not rows:
        ap.error("no record's explain string holds a kept challenger's trial medians")
    near = "" if args.near is None else f", trial ratios within {args.near:g} of 1"
    print(f"the benchmark's ratio over the trial's (runtime over heuristic-first), {len(seeds)} seeds "
          f"{seeds[0]}-{seeds[-1]}, calls split at {args.short_us:g} us of heuristic-first's time{near}:")
    print(f"{'launch':<6} {'L2':<4} {'calls':<5} | {'n':>5} {'median':>7} {'p10':>6} {'p90':>6} | trial faster, "
          f"benchmark >1% slower")
    for row in rows:
        print(f"{row['launch']:<6} {row['condition']:<4} {row['calls']:<5} | {row['n']:5d} {row['median']:7.3f} "
              f"{row['p10']:6.3f} {row['p90']:6.3f} | {row['flipped']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"min_seed": args.min_seed, "short_us": args.short_us, "near": args.near, "seeds": seeds,
                       "files_read": [os.path.basename(p) for p in args.files], "groups": rows}, f, indent=1)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--min-seed", type=int, default=0)
    ap.add_argument("--limit", type=float, action="append")
    ap.add_argument("--carry", action="store_true")
    ap.add_argument("--short-us", type=float, default=20.0)
    ap.add_argument("--near", type=float)
    ap.add_argument("--eager-ties", action="store_true")
    ap.add_argument("--band", type=float, default=0.025)
    ap.add_argument("--json")
    args = ap.parse_args()
    limits = sorted(args.limit or [1.01, 1.02, 1.03])
    records = every_joined_record(args.files, ap)
    if args.carry and args.eager_ties:
        ap.error("--carry and --eager-ties are two reports: give one")
    if args.carry:
        return main_carry(args, ap, records)
    if args.eager_ties:
        return main_eager_ties(args, records)
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
