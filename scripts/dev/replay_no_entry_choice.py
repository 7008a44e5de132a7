#!/usr/bin/env python3
"""Replay the sweep's keep rule (problem/candidate_choice.cpp: choose_over_no_entry) over the finalist stages of
`gemmtune sweep --json` files, with and without the rule that a challenger a no-entry member beats beyond noise in any
condition is no entry, and print the problems where the two differ. A check that the replay matches the C++: the
count of problems where the rule the sweeps ran with (before it, or with it: --with-rule) picks what they kept.

usage: replay_no_entry_choice.py [--with-rule] SWEEP.json[.gz] [MORE...]"""
import argparse
import gzip
import json
import re
import sys

MIN_NOISE, PLACEMENT_NOISE, TIE_BAND = 0.02, 0.06, 0.01


def placement_noise(candidate):
    # problem/candidate_choice.cpp: placement_noise (split-k partials or clusters in cuBLASLt's workspace).
    m = re.match(r"lt/a\d+-t\d+-s\d+-k(-?\d+)-r\d+-w\d+-c\d+-cl(\d+)", candidate)
    return PLACEMENT_NOISE if m and (int(m.group(1)) > 1 or int(m.group(2)) > 2) else MIN_NOISE


def margins(candidate, heuristic, min_noise):
    """keep_over_heuristic: (keep, [(margin, noise)] per condition of candidate)."""
    by_name = {t["condition"]: t for t in heuristic}
    keep, out = bool(candidate), []
    for c in candidate:
        h = by_name.get(c["condition"])
        if not h or not c["median_us"] > 0 or not h["median_us"] > 0:
            keep = False
            continue
        margin, noise = h["median_us"] / c["median_us"], max(min_noise, c["rel_spread"], h["rel_spread"])
        keep = keep and margin >= 1 + noise
        out.append((margin, noise))
    return keep, out


def choose(no_entry, challengers, noise, trails_rule):
    """('member', i) or ('challenger', i)."""
    heuristic = no_entry[0]
    kept = [(i, sum(t["median_us"] for t in c)) for i, c in enumerate(challengers)
            if all(margins(c, m, noise[i])[0] for m in no_entry)]
    if kept:
        least = min(total for _, total in kept)
        return "challenger", next(i for i, total in kept if total <= least * (1 + TIE_BAND))
    pool = []
    for m, times in enumerate(no_entry):
        over = margins(times, heuristic, MIN_NOISE)[1]
        if m == 0 or (len(over) == len(heuristic) and min(g for g, _ in over) >= 1.0):
            pool.append((times, "member", m))
    members = list(pool)
    for i, c in enumerate(challengers):
        trails = any(g >= 1 + n for times, _, _ in members for g, n in margins(times, c, noise[i])[1])
        if margins(c, heuristic, noise[i])[0] and not (trails_rule and trails):
            pool.append((c, "challenger", i))
    best, best_worst, best_member, member_worst = pool[0], 0.0, 0, 0.0
    for a, (times, kind, index) in enumerate(pool):
        worst = 1.0 if len(pool) == 1 else min(
            min(g for g, _ in margins(times, other, MIN_NOISE)[1]) if len(times) == len(other) else 0.0
            for b, (other, _, _) in enumerate(pool) if b != a)
        if kind == "member" and (a == 0 or worst > member_worst):
            best_member, member_worst = index, worst
        if a == 0 or worst > best_worst:
            best, best_worst = pool[a], worst
    if best[1] == "challenger" and best_worst <= member_worst * (1 + noise[best[2]]):
        return "member", best_member
    return best[1], best[2]


def main(paths, swept_with_rule):
    total = matches = changed = 0
    for path in paths:
        try:
            with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
                sweep = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"replay_no_entry_choice: cannot read {path}: {e}")
        for problem in sweep.get("problems", []):
            stage = problem.get("finalist_stage")
            if not isinstance(stage, dict) or not stage.get("finalists"):
                continue
            no_entry = [r for r in stage["finalists"] if r["role"] in ("heuristic_first", "no_entry")]
            challengers = [r for r in stage["finalists"] if r["role"] == "challenger"]
            member_noise = max(placement_noise(r["candidate"]) for r in no_entry)
            noise = [max(member_noise, placement_noise(r["candidate"])) for r in challengers]
            rows = {"member": no_entry, "challenger": challengers}
            picks = [choose([r["conditions"] for r in no_entry], [r["conditions"] for r in challengers], noise, rule)
                     for rule in (False, True)]
            before, after = (rows[kind][i]["candidate"] for kind, i in picks)
            total += 1
            matches += (after if swept_with_rule else before) == problem["best_candidate"].split(" ")[0]
            if before != after:
                changed += 1
                print(f"{path}: {problem['problem_key']}: {before} -> {after}")
    print(f"{total} problems with a finalist stage; the replay picks what the sweep kept in {matches}; "
          f"the rule changes {changed}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweeps", nargs="+", metavar="SWEEP.json[.gz]")
    ap.add_argument("--with-rule", action="store_true", help="the sweeps ran with the rule (a0701f8 or later)")
    args = ap.parse_args()
    main(args.sweeps, args.with_rule)
