#!/usr/bin/env python3
"""Per problem of a `gemmtune sweep --json` file: our best kernel and cuBLASLt's best (fused, and GEMM + our epilogue
kernel), side by side, to read an epilogue change off one sweep. Usage: sweep_best.py SWEEP.json [MORE.json...]"""
import json
import sys


def best(results, predicate):
    ok = [r for r in results if r["status"] == "ok" and predicate(r["candidate"]["id"])]
    return min(ok, key=lambda r: r["median_us"]) if ok else None


def main(paths):
    for path in paths:
        doc = json.load(open(path))
        by_problem = {}
        for r in doc["results"]:
            by_problem.setdefault(r["problem_key"], []).append(r)
        print(f"{path}\n{'problem':44} {'own us':>8} {'lt us':>8} {'lt+epi':>8} {'own/lt':>7}  own best")
        for key, results in by_problem.items():
            own = best(results, lambda c: c.startswith("own/"))
            lt = best(results, lambda c: c.startswith("lt/") and not c.endswith("+epi"))
            unfused = best(results, lambda c: c.startswith("lt/") and c.endswith("+epi"))
            fmt = lambda r: f"{r['median_us']:8.2f}" if r else f"{'-':>8}"
            lt_best = min([r["median_us"] for r in (lt, unfused) if r], default=None)
            ratio = f"{lt_best / own['median_us']:7.2f}" if own and lt_best else f"{'-':>7}"
            failed = sum(r["status"] != "ok" for r in results)
            print(f"{key:44} {fmt(own)} {fmt(lt)} {fmt(unfused)} {ratio}  {own['candidate']['variant'] if own else '-'}"
                  + (f"  ({failed} not ok)" if failed else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
