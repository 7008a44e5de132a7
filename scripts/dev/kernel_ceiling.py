#!/usr/bin/env python3
"""The fastest kernel this GPU has for a held-out seed's shapes: a profile that asks for every candidate of every kind
(our variants, cuBLASLt's heuristic and its search by algo id, its padded form, cuBLAS's own sgemm), and a report of
the sweep that ran it with --no-prune: per problem the fastest candidate's CUPTI median against cuBLAS's own sgemm
(the call torch.mm makes; with an epilogue, followed by our epilogue kernel) and against cuBLASLt's heuristic-first,
and the geomeans per mode x epilogue. What no choice of the runtime's can beat on those shapes (issue 48's geomeans
over eager; issue 49's aligned twins).

profile: kernel_ceiling.py profile SHAPES.json OUT.json [--modes fp32] [--epilogues none,bias+gelu]
         SHAPES.json: heldout_shapes.py's {"shapes": [{"m", "n", "k"}, ...]} or a list of [m, n, k]
then:    gemmtune sweep --profile OUT.json --no-prune --db D --json SWEEP.json
report:  kernel_ceiling.py report SWEEP.json [--out results/<gpu>/kernel_ceiling_seedN.json]
"""
import argparse
import json
import math
import sys


def fail(message):
    print(f"kernel_ceiling: {message}", file=sys.stderr)
    sys.exit(2)


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read {path}: {e}")


def shapes_of(doc):
    """[m, n, k] lists from heldout_shapes.py's document or a plain list of triples."""
    items = doc["shapes"] if isinstance(doc, dict) else doc
    out = []
    for s in items:
        m, n, k = (s["m"], s["n"], s["k"]) if isinstance(s, dict) else s
        out.append([int(m), int(n), int(k)])
    return out


def profile(shapes, modes, epilogues):
    """Every candidate of every kind: the heuristic's 64 answers and 16 a algo id besides."""
    return {"name": "kernel_ceiling", "description": "the fastest candidate of every kind at each shape "
            "(scripts/dev/kernel_ceiling.py): run with --no-prune",
            "layouts": ["nn"], "epilogues": epilogues, "modes": modes, "backends": ["own", "lt"],
            "lt": {"top_k": 64, "workspace_mib": 64, "search": "by_algo_id", "per_algo_id": 16}, "shapes": shapes}


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def report(sweep):
    """Per problem: the fastest verified candidate, cuBLAS's sgemm and heuristic-first (CUPTI medians, us), and the
    fastest's speed over each; then per mode x epilogue the geomeans. Problems without a cuBLAS record (3xtf32) keep
    only the heuristic-first ratio."""
    times = {}
    for r in sweep["results"]:
        if r["status"] == "ok":
            times.setdefault(r["problem_key"], {})[r["candidate"]["id"]] = r["median_us"]
    heuristic = {p["problem_key"]: p.get("heuristic_first_us") for p in sweep["problems"]}
    rows = []
    for key, t in times.items():
        best = min(t, key=t.get)
        _, shape, _, _, epilogue, mode = key.split(":")
        row = {"problem_key": key, "shape": shape, "mode": mode, "epilogue": epilogue, "best": best,
               "best_us": t[best], "cublas_us": t.get("cublas/sgemm"), "heuristic_us": heuristic.get(key)}
        row["over_cublas"] = row["cublas_us"] / row["best_us"] if row["cublas_us"] else None
        row["over_heuristic"] = row["heuristic_us"] / row["best_us"] if row["heuristic_us"] else None
        rows.append(row)
    groups = {}
    for r in rows:
        groups.setdefault((r["mode"], r["epilogue"]), []).append(r)
    summary = []
    for (mode, epilogue), rs in sorted(groups.items()):
        cublas = [r["over_cublas"] for r in rs if r["over_cublas"]]
        heur = [r["over_heuristic"] for r in rs if r["over_heuristic"]]
        summary.append({"mode": mode, "epilogue": epilogue, "n": len(rs),
                        "geomean_over_cublas": geomean(cublas) if cublas else None,
                        "geomean_over_heuristic": geomean(heur) if heur else None})
    return sorted(rows, key=lambda r: r["problem_key"]), summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("profile")
    p.add_argument("shapes")
    p.add_argument("out")
    p.add_argument("--modes", default="fp32")
    p.add_argument("--epilogues", default="none,bias+gelu")
    r = sub.add_parser("report")
    r.add_argument("sweep")
    r.add_argument("--out")
    args = ap.parse_args()
    if args.cmd == "profile":
        try:
            shapes = shapes_of(read_json(args.shapes))
        except (KeyError, TypeError, ValueError) as e:
            fail(f"{args.shapes} holds no shapes: {e}")
        with open(args.out, "w") as f:
            json.dump(profile(shapes, args.modes.split(","), args.epilogues.split(",")), f, indent=1)
        print(f"{len(shapes)} shapes -> {args.out}; run it with gemmtune sweep --profile {args.out} --no-prune")
        return 0
    sweep = read_json(args.sweep)
    try:
        rows, summary = report(sweep)
    except (KeyError, TypeError, ValueError) as e:
        fail(f"{args.sweep} is not a sweep's JSON: {e}")
    for x in rows:
        cublas = "-" if x["over_cublas"] is None else f"x{x['over_cublas']:.3f}"
        heur = "-" if x["over_heuristic"] is None else f"x{x['over_heuristic']:.3f}"
        print(f"{x['mode']:<6} {x['epilogue']:<10} {x['shape']:>16} {x['best_us']:9.2f} us {x['best']:<48} "
              f"over cuBLAS {cublas:>7}, over heuristic-first {heur:>7}")
    for s in summary:
        cublas = "-" if s["geomean_over_cublas"] is None else f"x{s['geomean_over_cublas']:.3f}"
        heur = "-" if s["geomean_over_heuristic"] is None else f"x{s['geomean_over_heuristic']:.3f}"
        print(f"{s['mode']} {s['epilogue']}: {s['n']} problems, the fastest over cuBLAS's sgemm {cublas}, over "
              f"heuristic-first {heur} (geomeans)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": sweep.get("device"), "method": __doc__, "sweep_cost": sweep.get("cost"),
                       "summary": summary, "records": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
