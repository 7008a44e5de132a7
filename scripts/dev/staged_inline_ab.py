#!/usr/bin/env python3
"""A copied in the kernel against a copy kernel before it, in one sweep (kernels/copy_in_kernel.hpp).

Reads a `gemmtune sweep --no-prune --json` file whose problems have A's rows unaligned (k % 4 != 0, A stored m x k),
so that every tile's `_staged` variant and its `_staged_inline` twin were both timed in the same process. Prints, per
problem, the best of each kind, the tile-by-tile ratios (inline time / staged time, CUPTI medians), and the problem's
best candidate without and with the inline variants; the geomeans go to --json.

    scripts/dev/staged_inline_ab.py SWEEP.json [--json OUT]
"""
import argparse
import json
import math
import sys

INLINE = "_staged_inline"
STAGED = "_staged"


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def compare(doc):
    by_problem = {}
    for r in doc.get("results", []):
        if r.get("message") or not r.get("median_us"):
            continue
        key = r["key"].split("/", 1)[0]
        by_problem.setdefault(key, {})[r["candidate"]["id"]] = r["median_us"]
    rows = []
    for key, times in sorted(by_problem.items()):
        pairs = []
        for cid, us in times.items():
            if cid.endswith(INLINE):
                staged = times.get(cid[: -len(INLINE)] + STAGED)
                if staged:
                    pairs.append((cid[: -len(INLINE)].split("/", 1)[1], us, staged))
        if not pairs:
            continue
        without = {c: t for c, t in times.items() if not c.endswith(INLINE)}
        best_without = min(without.items(), key=lambda kv: kv[1])
        best_with = min(times.items(), key=lambda kv: kv[1])
        best_staged = min(t for _, _, t in pairs)
        best_inline = min(t for _, t, _ in pairs)
        rows.append({
            "problem": key,
            "best_staged_us": best_staged,
            "best_inline_us": best_inline,
            "inline_over_staged_best": best_inline / best_staged,
            "tiles": [{"tile": tile, "inline_us": i, "staged_us": s, "ratio": i / s} for tile, i, s in pairs],
            "best_without_inline": {"candidate": best_without[0], "us": best_without[1]},
            "best_with_inline": {"candidate": best_with[0], "us": best_with[1]},
            "problem_speedup": best_without[1] / best_with[1],
        })
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep")
    ap.add_argument("--json")
    args = ap.parse_args()
    try:
        with open(args.sweep) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"staged_inline_ab.py: cannot read {args.sweep}: {e}")
    rows = compare(doc)
    if not rows:
        sys.exit(f"staged_inline_ab.py: {args.sweep} has no problem with both a _staged and a _staged_inline time")
    print(f"{'problem':>44} | {'staged':>8} {'inline':>8} {'ratio':>6} | best before -> after (speedup)")
    for r in rows:
        print(f"{r['problem']:>44} | {r['best_staged_us']:8.2f} {r['best_inline_us']:8.2f} "
              f"{r['inline_over_staged_best']:6.3f} | {r['best_without_inline']['candidate']} "
              f"{r['best_without_inline']['us']:.2f} -> {r['best_with_inline']['candidate']} "
              f"{r['best_with_inline']['us']:.2f} (x{r['problem_speedup']:.3f})")
    tile_ratios = [t["ratio"] for r in rows for t in r["tiles"]]
    summary = {
        "problems": len(rows),
        "geomean_best_inline_over_best_staged": geomean([r["inline_over_staged_best"] for r in rows]),
        "geomean_tile_inline_over_staged": geomean(tile_ratios),
        "tile_pairs": len(tile_ratios),
        "geomean_problem_speedup": geomean([r["problem_speedup"] for r in rows]),
        "problems_won_by_inline": sum(r["best_with_inline"]["candidate"].endswith(INLINE) for r in rows),
    }
    print(f"{summary['problems']} problems: best inline / best staged x{summary['geomean_best_inline_over_best_staged']:.3f}"
          f", tile by tile x{summary['geomean_tile_inline_over_staged']:.3f} over {summary['tile_pairs']} pairs; "
          f"the problem's best x{summary['geomean_problem_speedup']:.3f} faster with inline variants, which win "
          f"{summary['problems_won_by_inline']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": doc.get("device"), "method": __doc__, "summary": summary, "records": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
