#!/usr/bin/env python3
"""Each problem of a sweep --json: its best candidate, its time, TFLOP/s and % of the tf32 peak, and % of DRAM
bandwidth for the bytes it must move at least (A, B, bias and Y once); beside an earlier sweep's best where --before
names one (the same problem keys). H200 peaks from ../shared/DEVICE.md. --family PREFIX reports the fastest verified
candidate whose id starts with PREFIX instead (own/skinny: how a kernel family moved between two builds' sweeps).
--without V1,V2 leaves those own variants (and their _splitN forms) out of the sweep's side, --before-without out of the
before side: with --before naming the same sweep, what the registry without them would have picked.
usage: sweep_peak_share.py SWEEP.json [--before OLD.json] [--family PREFIX] [--without V,..] [--before-without V,..]
                           [--json OUT]"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from bench_decode import min_dram_bytes, shape_of  # noqa: E402
from heldout_report import LIMITS  # noqa: E402

PEAK_TF32, DRAM = LIMITS["nvidia-h200"]["tf32"], LIMITS["nvidia-h200"]["dram"]


def variant_of(candidate_id):
    return re.sub(r"_split\d+$", "", candidate_id.split("/", 1)[-1])


def best(path, family, without=frozenset()):
    with open(path) as f:
        sweep = json.load(f)
    if not family and not without:
        return {p["problem_key"]: p for p in sweep["problems"]}
    heuristic = {p["problem_key"]: p.get("heuristic_first_us") for p in sweep["problems"]}
    fastest = {}
    for r in sweep["results"]:
        cid = r["candidate"]["id"]
        if r["status"] != "ok" or not cid.startswith(family or "") or variant_of(cid) in without:
            continue
        kept = fastest.get(r["problem_key"])
        if kept is None or r["median_us"] < kept["best_us"]:
            fastest[r["problem_key"]] = {"best_us": r["median_us"], "best_candidate": cid,
                                         "heuristic_first_us": heuristic.get(r["problem_key"])}
    return fastest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sweep")
    ap.add_argument("--before")
    ap.add_argument("--family")
    ap.add_argument("--without", default="")
    ap.add_argument("--before-without", default="")
    ap.add_argument("--json")
    args = ap.parse_args()
    names = lambda text: frozenset(v for v in text.split(",") if v)
    now = best(args.sweep, args.family, names(args.without))
    before = best(args.before, args.family, names(args.before_without)) if args.before else {}
    rows = []
    for key, p in now.items():
        m, n, k, _ = shape_of(key)
        us = p["best_us"]
        min_bytes = min_dram_bytes(m, n, k)
        row = {"problem": key, "best_us": us, "candidate": p["best_candidate"],
               "heuristic_first_us": p.get("heuristic_first_us"),
               "tflops": 2.0 * m * n * k / (us * 1e-6) / 1e12,
               "pct_tf32_peak": 100 * 2.0 * m * n * k / (us * 1e-6) / PEAK_TF32,
               "pct_dram": 100 * min_bytes / (us * 1e-6) / DRAM}
        if key in before:
            row["before_us"], row["before_candidate"] = before[key]["best_us"], before[key]["best_candidate"]
        rows.append(row)
        print(f"{key:<40} {us:9.2f} us {row['tflops']:6.1f} TFLOP/s {row['pct_tf32_peak']:5.1f}% peak "
              f"{row['pct_dram']:5.1f}% DRAM  heur0 {row['heuristic_first_us'] or float('nan'):9.2f}  "
              f"{row['candidate']}" +
              (f"  | before {row['before_us']:9.2f} us x{row['before_us'] / us:.2f} {row['before_candidate']}"
               if "before_us" in row else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
