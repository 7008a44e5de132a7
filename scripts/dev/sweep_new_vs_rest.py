#!/usr/bin/env python3
"""Per problem of a `gemmtune sweep --json` file: the fastest of the candidates whose id matches NEW (tiles under
trial) beside our fastest other kernel and cuBLASLt's (or cuBLAS's) fastest, and the fastest of those two over the new
one's time (above 1: the new tile wins); then that ratio's geomean. Usage: sweep_new_vs_rest.py SWEEP.json NEW_REGEX"""
import json
import math
import re
import sys

from sweep_best import best  # this folder is the script's, so first on sys.path


def main(path, pattern):
    try:
        new = re.compile(pattern)
        with open(path) as f:
            results = json.load(f)["results"]
    except (OSError, ValueError, KeyError, re.error) as e:
        sys.exit(f"sweep_new_vs_rest.py: cannot read {path} as a sweep's JSON with NEW={pattern!r}: {e!r}")
    by_problem = {}
    for r in results:
        by_problem.setdefault(r["problem_key"], []).append(r)
    fmt = lambda r: f"{r['median_us']:8.2f}" if r else f"{'-':>8}"
    print(f"{'problem':42} {'own':>8} {'new':>8} {'lt':>8} {'x new':>6}  own best / new best (sweep medians, us; new: "
          f"ids matching {pattern})")
    ratios = []
    for key, results in by_problem.items():
        own = best(results, lambda c: c.startswith("own/") and not new.search(c))
        fresh = best(results, lambda c: c.startswith("own/") and new.search(c))
        lt = best(results, lambda c: c.startswith("lt/") or c.startswith("cublas/"))
        rest = min((r["median_us"] for r in (own, lt) if r), default=None)
        x = rest / fresh["median_us"] if fresh and rest else None
        if x:
            ratios.append(x)
        print(f"{key:42} {fmt(own)} {fmt(fresh)} {fmt(lt)} {x if x else float('nan'):6.3f}  "
              f"{own['candidate']['id'] if own else '-'}" + (f" / {fresh['candidate']['id']}" if fresh else ""))
    # An empty "new" column otherwise reads as "the new tiles lost", when the pattern named none of them.
    if not ratios:
        print(f"no candidate id matches NEW={pattern!r} where another candidate ran: the new column says nothing")
        return
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"the rest's fastest over the new tiles' fastest: geomean x{geomean:.3f}, the new tiles fastest at "
          f"{sum(x > 1 for x in ratios)} of {len(ratios)} problems")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: sweep_new_vs_rest.py SWEEP.json NEW_REGEX")
    main(sys.argv[1], sys.argv[2])
