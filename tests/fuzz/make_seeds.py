#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora into OUT/<target>/ from the repository's own fixtures: the profiles, the
committed sweep results (trimmed to a few records), a cache export built from those records, the ncu CSV fixtures,
and the problem keys, device keys, epilogue specs and candidate ids those files contain.
Usage: make_seeds.py ROOT OUT"""
import copy
import glob
import json
import os
import sys

root, out = sys.argv[1], sys.argv[2]


def write(target, name, text):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    with open(os.path.join(out, target, name), "w") as f:
        f.write(text)


for path in sorted(glob.glob(os.path.join(root, "profiles", "*.json"))):
    write("fuzz_profile", os.path.basename(path), open(path).read())

for path in sorted(glob.glob(os.path.join(root, "tests", "profiler", "fixtures", "*.csv"))):
    write("fuzz_ncu_csv", os.path.basename(path), open(path).read())

keys, specs, ids, devices = set(), set(), set(), set()
for n, path in enumerate(sorted(glob.glob(os.path.join(root, "results", "*", "*.json")))):
    try:
        doc = json.load(open(path))
    except ValueError:
        continue
    if doc.get("schema") != "gemmtune.sweep" or not doc.get("results"):
        continue
    records = doc["results"]
    # A few records of different problems and backends: enough to reach every branch, small enough to mutate fast.
    picked = [records[i] for i in sorted({0, len(records) // 3, len(records) // 2, len(records) - 1})]
    small = {k: v for k, v in doc.items() if k not in ("results", "problems")}
    small["results"] = picked
    write("fuzz_sweep_results", "sweep%d.json" % n, json.dumps(small, indent=1))
    entries = []
    for r in picked:
        if r.get("status") != "ok":
            continue
        candidate = copy.deepcopy(r["candidate"])
        candidate.setdefault("heuristic_rank", 0)
        entries.append({"device_key": r["device_key"], "problem_key": r["problem_key"], "problem": r["problem"],
                        "candidate": candidate, "status": "ok",
                        "stats": {f: r[f] for f in ("median_us", "p10_us", "p90_us", "mean_us", "stddev_us",
                                                     "min_us", "max_us", "samples", "timer", "sm_clock_mhz",
                                                     "events_per_call_us") if f in r},
                        "verify_error": r["verify_error"], "tolerance": r["tolerance"],
                        "run": {"id": 1, "origin": "seed.db", "gemmtune_version": doc.get("gemmtune_version", "0")},
                        "updated_at": doc.get("started_at", "2026-11-23T01:16:06Z")})
    seen = set()
    entries = [e for e in entries if (e["device_key"], e["problem_key"]) not in seen and not seen.add((e["device_key"], e["problem_key"]))]
    write("fuzz_cache_import", "export%d.json" % n,
          json.dumps({"schema": "gemmtune.cache", "schema_version": 1, "gemmtune_version": "0.1.0",
                      "exported_at": "2026-11-24T00:32:20Z", "entries": entries}, indent=1))
    devices.add(doc["device"]["key"])
    for r in records:
        keys.add(r["problem_key"])
        specs.add(r["problem_key"].split(":")[4])
        ids.add(r["candidate"]["id"])

keys |= {"bwd_a:1000x3000x257:nt:col:bias+leaky_relu=0.37+z+dropout=0.1:fp32", "bwd_b:7x1x5:tt:row:gelu_erf:3xtf32"}
specs |= {"none", "bias+leaky_relu=0.37+z+dropout=0.1", "sigmoid+z", "tanh+dropout=0.5"}
for i, key in enumerate(sorted(keys)[:64]):
    write("fuzz_problem_key", "key%d" % i, key)
for i, device in enumerate(sorted(devices)):
    write("fuzz_problem_key", "device%d" % i, device)
for i, spec in enumerate(sorted(specs)):
    write("fuzz_epilogue_spec", "spec%d" % i, spec)
for i, cid in enumerate(sorted(ids)[:32]):
    write("fuzz_epilogue_spec", "candidate%d" % i, cid)
