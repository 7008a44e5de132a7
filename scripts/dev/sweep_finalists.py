#!/usr/bin/env python3
"""A sweep's finalist stage as a table: per problem, the CUPTI medians of its fastest own kernels, then every finalist's
program-paid time per call in the four conditions (stream/graph, warm/cold L2) with its role (heuristic_first,
no_entry: what the runtime runs without an entry, eager's call among them; challenger), and the candidate kept.
Where a kernel trades warm against cold with eager's call, this is where it shows.
usage: sweep_finalists.py SWEEP.json [TOP=6]"""
import json
import sys

CONDITIONS = ("stream/warm", "stream/cold", "graph/warm", "graph/cold")


class Refused(Exception):
    """What main prints as its one-line error."""


def load(path):
    """A sweep JSON's results and problems."""
    try:
        with open(path) as f:
            sweep = json.load(f)
        return sweep["results"], sweep["problems"]
    except (OSError, ValueError) as e:
        raise Refused(f"cannot read {path}: {e}")
    except (KeyError, TypeError):
        raise Refused(f"{path} is not a sweep JSON (`gemmtune sweep --json`): no 'results' and 'problems'")


def fastest_own(results, top):
    """Per problem key, its `top` fastest verified own kernels: (median_us, candidate id), fastest first."""
    by_problem = {}
    for r in results:
        if r.get("status") == "ok" and r["candidate"]["id"].startswith("own/"):
            by_problem.setdefault(r["problem_key"], []).append((r["median_us"], r["candidate"]["id"]))
    return {k: sorted(v)[:top] for k, v in by_problem.items()}


def table(results, problems, top):
    own = fastest_own(results, top)
    lines = []
    for p in problems:
        key = p["problem_key"]
        lines.append(f"{key}: heuristic-first {p['heuristic_first_us']:.2f}, best lt {p['best_lt_us']:.2f}, "
                     f"best own {p['best_own_us']:.2f} us (kernel time)")
        lines += [f"    {c:48s} {us:8.2f}" for us, c in own.get(key, [])]
        stage = p.get("finalist_stage")
        if not stage:
            lines.append("  no finalist stage")
            continue
        lines.append(f"  kept {stage['kept']}; program-paid us per call: " + " ".join(f"{c:>11s}" for c in CONDITIONS))
        for f in stage["finalists"]:
            t = {c["condition"]: c["median_us"] for c in f["conditions"]}
            lines.append(f"  {f['candidate']:46s} {f['role']:15s} " +
                         " ".join(f"{t[c]:11.2f}" if c in t else f"{'-':>11s}" for c in CONDITIONS))
    return lines


def main(argv):
    try:
        if len(argv) not in (2, 3) or (len(argv) == 3 and not argv[2].isdigit()):
            raise Refused("usage: sweep_finalists.py SWEEP.json [TOP=6]")
        results, problems = load(argv[1])
    except Refused as e:
        print(f"sweep_finalists: {e}", file=sys.stderr)
        return 2
    print("\n".join(table(results, problems, int(argv[2]) if len(argv) == 3 else 6)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
