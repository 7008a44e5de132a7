#!/usr/bin/env python3
"""Replays the first-use trial's ranking of own variants (src/runtime/variant_ranking.cpp) over sweeps that timed every
own variant at their shapes, leaving each shape out in turn: the variants are ranked for it from the other shapes of
its kind, as the runtime ranks them for a shape nobody tuned, and the best of the top N that the sweep timed there is
set against the best own variant there (both floored at heuristic-first, 1.0, which the trial always has).

Besides the runtime's rule (a geometric mean of speedups over heuristic-first, weighted exp(-d^2/sigma^2) at
log-shape distance d), it scores two variations asked about for shapes far from every measured one:
  wave:      each measured speedup scaled by (the variant's wave efficiency at the asked shape / at the measured one)
             ** alpha, where the nearest measured shape is farther than --gate; wave efficiency = blocks /
             (whole waves x slots), slots = SMs x blocks an SM holds (wgmma 1, mma 2, skinny 4: a rough guess);
  diversity: the unsplit twin of every ranked split variant put right after it in the list.
Staged and unstaged twins count as one variant (the runtime runs the twin the asked shape needs).

  usage: scripts/dev/ranking_replay.py [--mode tf32] [--top 12] [--sms 132] SWEEP.json[.gz] ...
"""
import argparse
import collections
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from heldout_report import geomean, read_json  # noqa: E402

FAR = 1.2  # log-distance beyond which a left-out shape counts as far from every measured one


def variant_base(name):
    return re.sub(r"_staged(_b)?$", "", name)


def wave_efficiency(variant, shape, sms):
    if "streamk" in variant:
        return 1.0
    bm, bn = (int(x) for x in re.search(r"_(\d+)x(\d+)x\d+_", variant).groups())
    split = re.search(r"_split(\d+)", variant)
    slots = sms * (4 if variant.startswith("skinny") else 1 if variant.startswith("wgmma") else 2)
    blocks = math.ceil(shape[0] / bm) * math.ceil(shape[1] / bn) * (int(split.group(1)) if split else 1)
    return blocks / (math.ceil(blocks / slots) * slots)


def log_distance(a, b):
    return math.sqrt(sum(math.log(x / y) ** 2 for x, y in zip(a, b)))


def measured_speeds(paths, mode):
    """kind (epilogue) -> shape (m, n, k) -> variant base -> speedup over heuristic-first, as the db's
    own_variant_speeds gives it."""
    kinds = collections.defaultdict(dict)
    for path in paths:
        sweep = read_json(path)
        heuristic_us = {p["problem_key"]: p["heuristic_first_us"] for p in sweep["problems"]}
        for r in sweep["results"]:
            p = r["problem"]
            if r["candidate"]["backend"] != "own" or r["status"] != "ok" or r["median_us"] <= 0 or p["mode"] != mode:
                continue
            at = kinds[("bias+" if p["bias"] else "") + p["act"]].setdefault((p["m"], p["n"], p["k"]), {})
            name = variant_base(r["candidate"]["variant"])
            at[name] = max(at.get(name, 0), heuristic_us[r["problem_key"]] / r["median_us"])
    return kinds


def ranked(shapes, asked, sigma, alpha, gate, sms):
    others = sorted((log_distance(s, asked), s) for s in shapes if s != asked)
    nearest = others[0][0]
    sums = collections.defaultdict(lambda: [0.0, 0.0])
    for d, s in others:
        w = math.exp(-(d * d - nearest * nearest) / sigma**2)
        for v, speedup in shapes[s].items():
            log = math.log(speedup)
            if alpha and nearest > gate:
                log += alpha * math.log(wave_efficiency(v, asked, sms) / wave_efficiency(v, s, sms))
            sums[v][0] += w * log
            sums[v][1] += w
    return sorted(sums, key=lambda v: (-sums[v][0] / sums[v][1], v)), nearest


def with_unsplit_twins(order, top):
    out = []
    for v in order:
        for u in (v, re.sub(r"_split\d+", "", v)):
            if u not in out and len(out) < top:
                out.append(u)
    return out


def replay(kinds, top, sigma, alpha=0.0, gate=0.0, diversity=False, sms=132, far=FAR):
    """Geomean of (best of the list / best own variant) over every left-out problem, and over those whose nearest
    measured shape is beyond `far`; the worst problem."""
    every, far_ones, worst = [], [], (2.0, "")
    for kind, shapes in kinds.items():
        for asked, at in shapes.items():
            order, nearest = ranked(shapes, asked, sigma, alpha, gate, sms)
            listed = with_unsplit_twins(order, top) if diversity else order[:top]
            got = max([1.0] + [at[v] for v in listed if v in at]) / max(1.0, max(at.values()))
            every.append(got)
            if nearest > far:
                far_ones.append(got)
            worst = min(worst, (got, f"{'x'.join(map(str, asked))} {kind}"))
    return geomean(every), len(every), geomean(far_ones), len(far_ones), worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweeps", nargs="+")
    ap.add_argument("--mode", default="tf32")
    ap.add_argument("--top", type=int, default=12, help="the trial's list (RuntimeOptions::max_trial_candidates)")
    ap.add_argument("--sms", type=int, default=132)
    args = ap.parse_args()
    try:
        kinds = measured_speeds(args.sweeps, args.mode)
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"ranking_replay: cannot read the sweeps: {e!r}")
    if not kinds or any(len(s) < 2 for s in kinds.values()):
        sys.exit(f"ranking_replay: each kind needs two {args.mode} shapes with own variants timed, to leave one out")
    print(f"{args.mode}: {sum(len(s) for s in kinds.values())} problems, kinds {sorted(kinds)}, top {args.top}")
    print(f"rule                          | geomean of oracle   n | nearest > {FAR}   n | worst")
    rules = [("runtime (sigma 1)", dict(sigma=1.0))]
    rules += [(f"sigma {s}", dict(sigma=s)) for s in (0.5, 2.0)]
    rules += [(f"wave alpha {a} gate {g}", dict(sigma=1.0, alpha=a, gate=g))
              for a in (1.0, 0.5, 0.25) for g in (0.0, 1.0)]
    rules += [("unsplit twins", dict(sigma=1.0, diversity=True)),
              ("unsplit twins, sigma 0.5", dict(sigma=0.5, diversity=True))]
    for name, kw in rules:
        geo, n, geo_far, n_far, worst = replay(kinds, args.top, sms=args.sms, **kw)
        print(f"{name:29s} | {geo:17.4f} {n:3d} | {geo_far:13.4f} {n_far:3d} | {worst[0]:.3f} {worst[1]}")


if __name__ == "__main__":
    main()
