#!/usr/bin/env python3
"""Issue 49's decode benchmark: decode GEMMs (m of 1, 4 and 16) on weights past L2, at what share of DRAM bandwidth.

Sweeps profiles/decode_heads.json (four vocabulary heads whose rows are not 16-byte aligned, tf32, fp32 and 3xtf32, L2
flushed before every call) twice on GPU 0: as it is, and its fp32 problems again under the fp32-equivalent policy
(`sweep --fp32-equivalent`: a 3xtf32 candidate admitted per problem where its error is within fp32's bound and twice
cuBLASLt fp32's). Per problem and mode it takes the fastest verified candidate and cuBLASLt heuristic-first, and the
share of DRAM bandwidth each reaches for the bytes the GEMM must move at least (A, B, bias and Y once). The target:
at least `--target` percent at every m on at least three weights over 60 MB. Prints a table and writes
results/<gpu>/decode_bench.json (--out).

  scripts/bench_decode.py [--gemmtune build/gemmtune] [--profile profiles/decode_heads.json] [--out FILE]
                          [--target 80] [--dram-gbps G]
  scripts/bench_decode.py --from-sweep SWEEP.json [--from-policy-sweep SWEEP.json] --dram-gbps G [--out FILE]

--dram-gbps: the bandwidth the shares are of; by default the device's nominal (`gemmtune devices --json`: memory clock
x bus width, 4810 on an H200; the earlier result files used its stated 4800). --from-sweep: report sweeps made before
(`gemmtune sweep --json`) instead of sweeping."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
MIN_WEIGHT_MB, WEIGHTS_NEEDED = 60.0, 3


class BenchError(Exception):
    pass


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise BenchError(f"cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise BenchError(f"{path} is not JSON: {e}")


def shape_of(problem_key):
    """'fwd:4x50257x1600:nn:row:bias+gelu:tf32' -> (4, 50257, 1600, 'tf32')."""
    parts = str(problem_key).split(":")
    try:
        m, n, k = (int(d) for d in parts[1].split("x"))
    except (IndexError, ValueError):
        raise BenchError(f"problem key {problem_key!r} is not pass:MxNxK:layout:out:epilogue:mode") from None
    return m, n, k, parts[-1]


def min_dram_bytes(m, n, k):
    """What a GEMM with bias must move at least: A, B and bias read once, Y written once (fp32)."""
    return 4.0 * (m * k + k * n + n + m * n)


def records_from_sweep(sweep, policy, dram_gbps):
    """One record per problem of a sweep's JSON: its fastest verified candidate and heuristic-first, as shares of
    dram_gbps. policy: 'exact', or 'fp32_equivalent' for a sweep run with the policy (only its fp32 problems)."""
    if "problems" not in sweep:
        raise BenchError("a sweep JSON has a 'problems' list; this one has none")
    out = []
    for p in sweep["problems"]:
        if not isinstance(p, dict) or "problem_key" not in p or "best_candidate" not in p:
            raise BenchError("a sweep's problems each have a problem_key and a best_candidate; one here has not")
        m, n, k, mode = shape_of(p["problem_key"])
        if policy == "fp32_equivalent" and mode != "fp32":
            continue
        best_us = p.get("best_us")
        if not isinstance(best_us, (int, float)) or best_us <= 0:
            raise BenchError(f"{p['problem_key']}: no verified candidate in the sweep")
        min_bytes = min_dram_bytes(m, n, k)
        share = lambda us: 100.0 * min_bytes / (us * 1e-6) / (dram_gbps * 1e9) if us else None
        heuristic_us = p.get("heuristic_first_us")
        out.append({"shape": f"{m}x{n}x{k}", "m": m, "n": n, "k": k, "weight_mb": 4.0 * n * k / 1e6, "mode": mode,
                    "policy": policy, "best_us": best_us, "candidate": p["best_candidate"],
                    "pct_dram": share(best_us), "heuristic_us": heuristic_us, "heuristic_pct_dram": share(heuristic_us)})
    return out


def summary(records, target):
    """Per mode and policy: the weights (n x k) over MIN_WEIGHT_MB, and which of them reach target at every m."""
    groups = {}
    for r in records:
        weights = groups.setdefault((r["mode"], r["policy"]), {})
        if r["weight_mb"] > MIN_WEIGHT_MB:
            weights.setdefault(f"{r['n']}x{r['k']}", []).append(r)
    out = []
    for (mode, policy), weights in sorted(groups.items()):
        meeting = sorted(w for w, rs in weights.items() if all(r["pct_dram"] >= target for r in rs))
        worst = min((r for rs in weights.values() for r in rs), key=lambda r: r["pct_dram"], default=None)
        out.append({"mode": mode, "policy": policy, "weights": len(weights), "weights_meeting": meeting,
                    "met": len(meeting) >= WEIGHTS_NEEDED,
                    "worst": {"shape": worst["shape"], "pct_dram": worst["pct_dram"]} if worst else None})
    return out


def render(records, groups, target, dram_gbps):
    lines = [f"decode GEMMs, best verified candidate, % of {dram_gbps:.0f} GB/s for the bytes each must move "
             f"(heuristic-first in brackets):",
             f"{'shape':<16} {'MB':>6} {'mode':<8} {'policy':<16} {'us':>9} {'% DRAM':>7} {'[heur0]':>8}  candidate"]
    for r in sorted(records, key=lambda r: (r["n"] * r["k"], r["m"], r["mode"], r["policy"])):
        heuristic = f"[{r['heuristic_pct_dram']:5.1f}]" if r["heuristic_pct_dram"] else "[    -]"
        lines.append(f"{r['shape']:<16} {r['weight_mb']:6.0f} {r['mode']:<8} {r['policy']:<16} {r['best_us']:9.2f} "
                     f"{r['pct_dram']:6.1f}% {heuristic:>8}  {r['candidate']}")
    lines.append(f"target: >= {target:g}% at every m on >= {WEIGHTS_NEEDED} weights over {MIN_WEIGHT_MB:g} MB")
    for g in groups:
        worst = g["worst"]
        lines.append(f"  {g['mode']:<8} {g['policy']:<16} {'met' if g['met'] else 'MISSED':<7} "
                     f"{len(g['weights_meeting'])} of {g['weights']} weights ({', '.join(g['weights_meeting']) or '-'})"
                     + (f"; worst {worst['shape']} {worst['pct_dram']:.1f}%" if worst else ""))
    return "\n".join(lines)


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise BenchError(f"{' '.join(cmd[:2])} failed (exit {done.returncode}): {tail[0]}")
    return done.stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gemmtune", default=os.path.join(ROOT, "build", "gemmtune"))
    ap.add_argument("--profile", default=os.path.join(ROOT, "profiles", "decode_heads.json"))
    ap.add_argument("--out")
    ap.add_argument("--target", type=float, default=80.0)
    ap.add_argument("--dram-gbps", type=float)
    ap.add_argument("--from-sweep")
    ap.add_argument("--from-policy-sweep")
    args = ap.parse_args(argv)
    try:
        if args.dram_gbps is not None and args.dram_gbps <= 0:
            raise BenchError("--dram-gbps must be positive")
        if args.from_policy_sweep and not args.from_sweep:
            raise BenchError("--from-policy-sweep goes with --from-sweep")
        device = None
        if args.from_sweep:
            if args.dram_gbps is None:
                raise BenchError("--from-sweep needs --dram-gbps (the sweep JSON does not record the bandwidth)")
            exact, policy = read_json(args.from_sweep), read_json(args.from_policy_sweep) if args.from_policy_sweep else None
            dram_gbps = args.dram_gbps
            device = exact.get("device", {}).get("name")
        else:
            devices = json.loads(run([args.gemmtune, "devices", "--json"]))
            if not devices:
                raise BenchError("gemmtune devices lists no GPU")
            device = devices[0]["name"]
            dram_gbps = args.dram_gbps or devices[0]["nominal_dram_gbps"]
            args.out = args.out or os.path.join(ROOT, "results", devices[0]["slug"], "decode_bench.json")
            with tempfile.TemporaryDirectory() as work:
                exact_path, policy_path = os.path.join(work, "exact.json"), os.path.join(work, "policy.json")
                sweep = [args.gemmtune, "sweep", "--profile", args.profile, "--no-db"]
                run(sweep + ["--json", exact_path])
                run(sweep + ["--modes", "fp32", "--fp32-equivalent", "--json", policy_path])
                exact, policy = read_json(exact_path), read_json(policy_path)
        records = records_from_sweep(exact, "exact", dram_gbps)
        if policy is not None:
            records += records_from_sweep(policy, "fp32_equivalent", dram_gbps)
        groups = summary(records, args.target)
        print(render(records, groups, args.target, dram_gbps))
        if args.out:
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            with open(args.out, "w") as f:
                json.dump({"device": device, "dram_gbps": dram_gbps, "target_pct": args.target,
                           "profile": os.path.basename(args.profile), "records": records, "summary": groups}, f,
                          indent=1)
            print(f"-> {args.out}")
    except BenchError as e:
        print(f"bench_decode: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
