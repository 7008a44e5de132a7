#!/usr/bin/env python3
"""Model-like GEMM shapes that no profile names, for the held-out runtime benchmark (scripts/bench_heldout.sh).

Seeded: the same seed gives the same shapes. m (tokens) is log-uniform in 64..8192 (three in four) or 1..63 (a
decode's few rows), often not a multiple of 8; n and k
are mostly the hidden and MLP sizes of LLMs (768 .. 16384: 4096, 11008, 14336, 5120, 13824, 1024, 3072, ...), else
log-uniform in 64..16384. Every shape any profiles/*.json names (its "shapes" and its "grid") is excluded, and
m*n*k is capped so one fp32 GEMM stays near a millisecond. The shapes are shuffled and the first half is marked
tuned: bench_heldout.sh sweeps exactly those (the profile written here) and serves the rest through the fallback.

With --decode: every m is a decode step's 1..16 rows (log-uniform), n and k as above.

With --compile (scripts/bench_compile.sh, issue 49): m, n and k log-uniform in 256..8192, every other shape with k
and n both not multiples of 4 (neither A's nor B's rows 16-byte aligned) and the rest with both multiples of 4; all
of them tuned, with bias+gelu only, for the comparison against torch.compile.

usage: heldout_shapes.py --seed S --count N --out DIR [--profiles-dir profiles] [--max-mnk 1.6e10]
                         [--compile | --decode]
writes DIR/shapes.json ({"seed", "shapes": [{"m", "n", "k", "tuned"}]}) and DIR/profile.json (the tuned half)
       heldout_shapes.py --seed S --count N --slice I/N [...]
prints the I-th of N contiguous slices of the same draw as MxNxK,... (bench_compile.sh's ONLY=) and writes nothing
"""
import argparse
import glob
import json
import math
import os
import random
import sys

MODEL_DIMS = [768, 1024, 2048, 3072, 4096, 5120, 8192, 11008, 13824, 14336, 16384]


def profile_shapes(profiles_dir):
    """Every (m, n, k) the profiles in profiles_dir name."""
    named = set()
    for path in glob.glob(os.path.join(profiles_dir, "*.json")):
        with open(path) as f:
            doc = json.load(f)
        for s in doc.get("shapes", []):
            named.add((s["m"], s["n"], s["k"]) if isinstance(s, dict) else tuple(s[:3]))
        grid = doc.get("grid")
        if grid:
            named.update((m, n, k) for m in grid["m"] for n in grid["n"] for k in grid["k"])
    return named


def log_uniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def draw_m(rng, decode=False):
    # Three in four are a training step's or a prefill's token count (64..8192), one in four a decode's few rows;
    # with --decode all are a decode step's 1..16 rows.
    if decode:
        return log_uniform(rng, 1, 16)
    m = log_uniform(rng, 64, 8192) if rng.random() < 0.75 else log_uniform(rng, 1, 63)
    if rng.random() < 0.35:  # batch x sequence products a framework often pads: a multiple of 8 (or 1)
        m = max(1, m // 8 * 8)
    return min(max(m, 1), 8192)


def draw_nk(rng):
    if rng.random() < 0.7:
        return rng.choice(MODEL_DIMS)
    v = log_uniform(rng, 64, 16384)
    return v if rng.random() < 0.5 else max(64, v // 8 * 8)


def generate(seed, count, excluded, max_mnk, decode=False):
    rng = random.Random(seed)
    shapes, seen = [], set(excluded)
    while len(shapes) < count:
        s = (draw_m(rng, decode), draw_nk(rng), draw_nk(rng))
        if s in seen or s[0] * s[1] * s[2] > max_mnk:
            continue
        seen.add(s)
        shapes.append(s)
    rng.shuffle(shapes)
    return shapes


def unaligned(x):
    return x % 4 != 0


def generate_compile(seed, count, excluded, max_mnk):
    """count shapes in 256..8192, alternately both-unaligned (k % 4 and n % 4 nonzero) and both-aligned."""
    rng = random.Random(seed)
    shapes, seen = [], set(excluded)
    while len(shapes) < count:
        m, n, k = (log_uniform(rng, 256, 8192) for _ in range(3))
        if len(shapes) % 2 == 0:
            n, k = (v if unaligned(v) else min(8191, v + rng.choice((1, 2, 3))) for v in (n, k))
        else:
            n, k = (max(256, v // 4 * 4) for v in (n, k))
        if (m, n, k) in seen or m * n * k > max_mnk:
            continue
        seen.add((m, n, k))
        shapes.append((m, n, k))
    return shapes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, required=True, help="shapes per seed; half of them are tuned")
    ap.add_argument("--out")
    ap.add_argument("--slice", metavar="I/N", help="print the I-th of N contiguous slices of the draw, write nothing")
    ap.add_argument("--profiles-dir", default=os.path.join(os.path.dirname(__file__), "..", "profiles"))
    ap.add_argument("--max-mnk", type=float, default=1.6e10)
    ap.add_argument("--fp32-equivalent", action="store_true",
                    help="the profile sets fp32_equivalent: fp32 problems also try (and may cache) 3xtf32 variants")
    ap.add_argument("--compile", action="store_true",
                    help="the torch.compile comparison's shapes: 256..8192, half both-unaligned, all tuned, bias+gelu")
    ap.add_argument("--decode", action="store_true",
                    help="decode steps only: m log-uniform in 1..16, n and k drawn as always")
    args = ap.parse_args()
    if args.decode and args.compile:
        ap.error("--decode and --compile draw different shapes: give one")
    if args.count < 2:
        ap.error("--count must be at least 2 (half are tuned, half held out)")
    if (args.out is None) == (args.slice is None):
        ap.error("give --out DIR or --slice I/N")
    if args.slice is not None:
        try:
            part, parts = (int(x) for x in args.slice.split("/"))
        except ValueError:
            part = parts = 0
        if not 1 <= part <= parts:
            ap.error(f"--slice {args.slice}: want I/N with 1 <= I <= N")
    excluded = profile_shapes(args.profiles_dir)
    if args.compile:
        shapes = generate_compile(args.seed, args.count, excluded, args.max_mnk)
        tuned = shapes
    else:
        shapes = generate(args.seed, args.count, excluded, args.max_mnk, args.decode)
        tuned = shapes[: args.count // 2]
    if args.slice is not None:
        size = -(-len(shapes) // parts)
        print(",".join(f"{m}x{n}x{k}" for m, n, k in shapes[(part - 1) * size:part * size]))
        return 0
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "shapes.json"), "w") as f:
        json.dump({"seed": args.seed,
                   "shapes": [{"m": m, "n": n, "k": k, "tuned": (m, n, k) in tuned} for m, n, k in shapes]}, f,
                  indent=1)
    profile = {
        "name": f"heldout_seed{args.seed}",
        "description": "Generated by scripts/heldout_shapes.py: the tuned half of a held-out seed. A modest "
                       "search (heuristic top 4, quick timing) so the whole benchmark fits a few minutes; the "
                       "finalist stage re-times the fastest few against heuristic-first as a program pays.",
        "shapes": [list(s) for s in tuned],
        "layouts": ["nn"],
        "epilogues": ["bias+gelu"] if args.compile else ["none", "bias+gelu"],
        "modes": ["tf32", "fp32"],
        "backends": ["own", "lt"],
        "lt": {"top_k": 8 if args.compile else 4, "workspace_mib": 64},
        "timing": {"warmup_calls": 3, "batch_calls": 10, "min_samples": 20, "max_noise_pct": 1.0,
                   "min_time_ms": 2, "max_time_ms": 40, "launch": "both", "l2": "both", "finalists": 3},
    }
    if args.fp32_equivalent:
        profile["fp32_equivalent"] = True
    with open(os.path.join(args.out, "profile.json"), "w") as f:
        json.dump(profile, f, indent=1)
    print(f"seed {args.seed}: {len(shapes)} shapes, {len(tuned)} tuned -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
