#!/usr/bin/env python3
"""The algo cache one seed of a held-out benchmark ran on, as a `gemmtune cache export` document, so that
`gemmtune cache import` and `gemmtune report` can redraw that tuning sweep's roofline from a committed result file
(scripts/bench_heldout.sh keeps no db). Each tuned problem's cached candidate and tuned median are read from the explain
line of its exact cache hits ("... [exact] exact cache hit (tuned median 25.63 us, ...").

Only the problem, the candidate, its tuned median and the device key come from the records. A cache entry has more
fields (timing spread, verification error, run, margin); they are written as placeholders that say nothing: one sample
at the median, verify_error 0, run 0 of this file, margin unknown. The roofline reads only the median.

usage: heldout_cache_export.py BENCH_JSON[.gz] --seed S --out EXPORT_JSON
"""
import argparse
import gzip
import json
import re
import sys
import time

EXACT_HIT = re.compile(r"^(\S+): (\S+) \[exact\] exact cache hit \(tuned median ([0-9.]+) us")
LT_ID = re.compile(r"^lt/a(-?\d+)-t(-?\d+)-s(-?\d+)-k(-?\d+)-r(-?\d+)-w(-?\d+)-c(-?\d+)-cl(-?\d+)-i(-?\d+)(\+epi|\+pad|\+bias)?$")
LT_FIELDS = ("algo_id", "tile", "stages", "splitk", "reduction", "swizzle", "custom", "cluster_shape", "inner_shape")


def candidate_fields(candidate_id):
    if candidate_id.startswith("own/"):
        return {"id": candidate_id, "backend": "own", "variant": candidate_id[4:], "heuristic_rank": -1}
    m = LT_ID.match(candidate_id)
    if not m:
        raise SystemExit("heldout_cache_export.py: unreadable candidate id '%s'" % candidate_id)
    fields = {"id": candidate_id, "backend": "lt", "heuristic_rank": -1, "epilogue_kernel": m.group(10) is not None,
              "algo": {name: int(value) for name, value in zip(LT_FIELDS, m.groups()[:9])}}
    if m.group(10) == "+pad":
        fields["padded"] = True
    if m.group(10) == "+bias":
        fields["bias_in_gemm"] = True
    return fields


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    opener = gzip.open if args.bench.endswith(".gz") else open
    with opener(args.bench, "rt") as f:
        bench = json.load(f)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    tuned = {}
    for record in bench["records"]:
        m = EXACT_HIT.match(record["explain"]) if record["seed"] == args.seed else None
        if m:
            tuned[m.group(1)] = (m.group(2), float(m.group(3)))
    if not tuned:
        raise SystemExit("heldout_cache_export.py: no exact cache hit of seed %d in %s" % (args.seed, args.bench))
    entries = []
    for problem_key, (candidate_id, median_us) in sorted(tuned.items()):
        entries.append({
            "device_key": bench["device"]["key"], "problem_key": problem_key, "problem": {"key": problem_key},
            "candidate": candidate_fields(candidate_id), "status": "ok",
            "stats": {"median_us": median_us, "p10_us": median_us, "p90_us": median_us, "mean_us": median_us,
                      "stddev_us": 0.0, "min_us": median_us, "max_us": median_us, "samples": 1, "timer": "cupti",
                      "sm_clock_mhz": 0},
            "verify_error": 0.0, "tolerance": 1.0, "fp32_equivalent": False,
            "run": {"id": 0, "origin": "%s seed %d" % (args.bench, args.seed), "gemmtune_version": "?"},
            "updated_at": now, "margin": None})
    with open(args.out, "w") as f:
        json.dump({"schema": "gemmtune.cache", "schema_version": 1, "gemmtune_version": "?", "exported_at": now,
                   "entries": entries}, f, indent=1)
    print("wrote %s: %d tuned problems of seed %d" % (args.out, len(entries), args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
