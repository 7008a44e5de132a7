#!/usr/bin/env python3
"""Issue 49's "at aligned speed", measured: each shape of a torch.compile comparison (compile_compare.json) whose k
and n are both not multiples of 4, beside its aligned twin (k and n rounded up to 4: the same work within 0.3-1.5%),
both tuned in ONE `gemmtune sweep` (tf32, bias+gelu, NN, the default candidate set: our kernels, cuBLASLt's heuristic,
its padded form, cuBLAS's own choice). Per shape: the best verified candidate's CUPTI median on each side, the
unaligned/aligned time ratio, and % of the tf32 dense peak for the shape's own FLOPs. The geomean of the aligned twins'
% of peak is what "aligned speed" reaches on these shapes, the ceiling of the issue's >= 50% target for that half.

With --split the same sweep also times each shape's two half-aligned forms: only k unaligned (n rounded up: A's rows
unaligned, so the TMA kernels copy A into aligned scratch first) and only n unaligned (k rounded up: B's and Y's rows
unaligned, B read by class of rows, Y stored row by row), which splits the both-unaligned cost between the operands.

plan: unaligned_vs_aligned.py plan COMPILE.json OUT_DIR [--split]     writes OUT_DIR/profile.json
then: gemmtune sweep --profile OUT_DIR/profile.json --db OUT_DIR/twins.db --json OUT_DIR/sweep.json
join: unaligned_vs_aligned.py report OUT_DIR/sweep.json [--out results/<gpu>/unaligned_vs_aligned.json]
"""
import argparse
import json
import os
import sys

from heldout_report import LIMITS, geomean

PEAK_TF32 = LIMITS["nvidia-h200"]["tf32"]


def both_unaligned(shape):
    m, n, k = shape
    return n % 4 != 0 and k % 4 != 0


def twin(shape):
    m, n, k = shape
    return [m, (n + 3) // 4 * 4, (k + 3) // 4 * 4]


def k_unaligned(shape):
    """Only k left unaligned: n rounded up to 4."""
    m, n, k = shape
    return [m, (n + 3) // 4 * 4, k]


def n_unaligned(shape):
    """Only n left unaligned: k rounded up to 4."""
    m, n, k = shape
    return [m, n, (k + 3) // 4 * 4]


def plan(compile_json, out_dir, split=False):
    with open(compile_json) as f:
        doc = json.load(f)
    shapes = sorted({tuple(int(x) for x in r["shape"].split("x")) for r in doc["records"]})
    shapes = [list(s) for s in shapes if both_unaligned(s)]
    profile = {"name": "unaligned_vs_aligned",
               "description": "issue 49: both-unaligned shapes of a torch.compile comparison beside their aligned "
                              "twins (k and n rounded up to 4), in one sweep",
               "shapes": shapes + [twin(s) for s in shapes] +
                         ([k_unaligned(s) for s in shapes] + [n_unaligned(s) for s in shapes] if split else []),
               "layouts": ["nn"], "epilogues": ["bias+gelu"],
               "modes": ["tf32"], "backends": ["own", "lt"], "lt": {"top_k": 8, "workspace_mib": 64}}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "profile.json"), "w") as f:
        json.dump(profile, f, indent=1)
    return profile


def shape_of(problem_key):
    return [int(d) for d in problem_key.split(":")[1].split("x")]


def report(sweep_doc):
    best = {}
    for p in sweep_doc["problems"]:
        if p.get("best_us"):
            best[tuple(shape_of(p["problem_key"]))] = p
    rows = []
    for shape, p in sorted(best.items()):
        if not both_unaligned(shape):
            continue
        a = best.get(tuple(twin(shape)))
        if a is None:
            continue
        m, n, k = shape
        flops = 2.0 * m * n * k
        rows.append({"shape": "x".join(map(str, shape)), "twin": "x".join(map(str, twin(shape))),
                     "unaligned_us": p["best_us"], "unaligned_candidate": p["best_candidate"],
                     "aligned_us": a["best_us"], "aligned_candidate": a["best_candidate"],
                     "ratio": p["best_us"] / a["best_us"],
                     "unaligned_pct_peak": 100 * flops / (p["best_us"] * 1e-6) / PEAK_TF32,
                     "aligned_pct_peak": 100 * flops / (a["best_us"] * 1e-6) / PEAK_TF32})
        # The half-aligned forms, where the sweep timed them (plan --split), as ratios to the twin too.
        for name, form in (("k_unaligned", k_unaligned), ("n_unaligned", n_unaligned)):
            h = best.get(tuple(form(shape)))
            if h is not None:
                rows[-1].update({f"{name}_us": h["best_us"], f"{name}_candidate": h["best_candidate"],
                                 f"{name}_ratio": h["best_us"] / a["best_us"]})
    summary = {"shapes": len(rows), "geomean_ratio": geomean([r["ratio"] for r in rows]),
               "geomean_unaligned_pct_peak": geomean([r["unaligned_pct_peak"] for r in rows]),
               "geomean_aligned_pct_peak": geomean([r["aligned_pct_peak"] for r in rows])}
    for name in ("k_unaligned", "n_unaligned"):
        if rows and all(f"{name}_ratio" in r for r in rows):
            summary[f"geomean_{name}_ratio"] = geomean([r[f"{name}_ratio"] for r in rows])
    return rows, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("plan")
    p.add_argument("compile_json")
    p.add_argument("out_dir")
    p.add_argument("--split", action="store_true", help="also time each shape with only k, and only n, unaligned")
    r = sub.add_parser("report")
    r.add_argument("sweep_json")
    r.add_argument("--out")
    args = ap.parse_args()
    if args.cmd == "plan":
        try:
            prof = plan(args.compile_json, args.out_dir, args.split)
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"unaligned_vs_aligned: {args.compile_json}: {e}")
        forms = "their twins and half-aligned forms" if args.split else "their twins"
        print(f"{len(prof['shapes']) // (4 if args.split else 2)} both-unaligned shapes and {forms} -> "
              f"{args.out_dir}/profile.json")
        return 0
    try:
        with open(args.sweep_json) as f:
            doc = json.load(f)
        rows, summary = report(doc)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"unaligned_vs_aligned: {args.sweep_json}: {e}")
    if not rows:
        sys.exit(f"unaligned_vs_aligned: {args.sweep_json}: no both-unaligned shape with its aligned twin measured")
    print(f"{'shape':>16} {'twin':>16} | {'unaligned':>9} {'aligned':>9} {'ratio':>6} | {'%peak':>6} {'twin':>6} | "
          f"unaligned best / aligned best")
    for x in rows:
        print(f"{x['shape']:>16} {x['twin']:>16} | {x['unaligned_us']:9.2f} {x['aligned_us']:9.2f} {x['ratio']:6.2f} | "
              f"{x['unaligned_pct_peak']:6.1f} {x['aligned_pct_peak']:6.1f} | {x['unaligned_candidate']} / "
              f"{x['aligned_candidate']}")
    split = "geomean_k_unaligned_ratio" in summary
    if split:
        print(f"{'shape':>16} | only k unaligned: us, x twin, best | only n unaligned: us, x twin, best")
        for x in rows:
            print(f"{x['shape']:>16} | {x['k_unaligned_us']:9.2f} {x['k_unaligned_ratio']:5.2f} "
                  f"{x['k_unaligned_candidate']} | {x['n_unaligned_us']:9.2f} {x['n_unaligned_ratio']:5.2f} "
                  f"{x['n_unaligned_candidate']}")
    print(f"geomean over {summary['shapes']} shapes: unaligned/aligned time x{summary['geomean_ratio']:.3f}" +
          (f" (only k unaligned x{summary['geomean_k_unaligned_ratio']:.3f}, only n unaligned "
           f"x{summary['geomean_n_unaligned_ratio']:.3f})" if split else "") +
          f"; % of tf32 peak: unaligned {summary['geomean_unaligned_pct_peak']:.1f}%, aligned twins "
          f"{summary['geomean_aligned_pct_peak']:.1f}% (issue 49 asks >= 50%)")
    if args.out:
        with open(args.out, "w") as f:
            # The sweep's own cost says how it ran: candidates sampled and pruned (0 pruned under --no-prune).
            json.dump({"device": doc.get("device"), "method": __doc__, "sweep_cost": doc.get("cost"),
                       "summary": summary, "records": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
