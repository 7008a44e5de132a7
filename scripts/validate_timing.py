#!/usr/bin/env python3
"""Cross-checks the sweep's CUPTI kernel times against Nsight Compute and CUDA events, on the same algos.

(a) sweep median vs ncu --clock-control none --cache-control none gpu__time_duration.sum of the same kernels
    (ncu runs each kernel serialized and alone: small kernels come out a little slower there by design);
(b) CUDA events around 20 back-to-back calls / 20 (the record's events_per_call_us) must not be below the sweep's
    median by more than noise;
(c) with --repeat: two sweeps of a profile, case by case.
Prints a table and writes results JSON. Needs ncu on PATH (or NCU=...) for (a)."""
import argparse
import csv
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def case_range(problem_key, candidate_id):
    # src/nvtx/case_range.hpp: "<problem key>|<candidate id with '/' written as '|'>" in domain "gemmtune".
    return problem_key + "|" + candidate_id.replace("/", "|")


# ncu's units for a time, as a factor to microseconds (its CSV spells them either way, by version).
US_PER_TIME_UNIT = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}


def ncu_raw_durations_us(text):
    """(kernel name, gpu__time_duration.sum in us) per profiled kernel, in launch order, from the output of
    `ncu --csv --page raw --metrics gpu__time_duration.sum,...`; also returns (header, units, data) for other columns."""
    start = text.find('"ID"')
    if start < 0:
        raise RuntimeError("ncu printed no result rows; its output ends:\n" + text[-2000:])
    rows = list(csv.reader(io.StringIO(text[start:])))
    header, units, data = rows[0], rows[1], [r for r in rows[2:] if len(r) == len(rows[0])]
    col = header.index("gpu__time_duration.sum")
    name_col = header.index("Kernel Name")
    scale = US_PER_TIME_UNIT[units[col]]
    return [(r[name_col], float(r[col].replace(",", "")) * scale) for r in data], (header, units, data)


def ncu_durations_us(ncu, binary, profile_path, problem_key, candidate_id, cache_control, workdir):
    log = os.path.join(workdir, "ncu.csv")
    cmd = [ncu, "--clock-control", "none", "--cache-control", cache_control, "--metrics", "gpu__time_duration.sum,gpc__cycles_elapsed.avg.per_second",
           "--nvtx", "--nvtx-include", "gemmtune@" + case_range(problem_key, candidate_id) + "/",
           "--launch-count", "60", "--csv", "--page", "raw", "--log-file", log,
           binary, "sweep", "--profile", profile_path, "--no-db", "--events"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(log) as f:
        kernels, (header, units, data) = ncu_raw_durations_us(f.read())
    clock_col = header.index("gpc__cycles_elapsed.avg.per_second")
    hz = {"cycle/nsecond": 1e9, "cycle/usecond": 1e6, "cycle/second": 1.0, "Ghz": 1e9, "GHz": 1e9, "Mhz": 1e6,
          "MHz": 1e6, "hz": 1.0, "Hz": 1.0}[units[clock_col]]
    clock_mhz = statistics.median(float(r[clock_col].replace(",", "")) * hz / 1e6 for r in data)
    # A call may launch several kernels (split-k): ncu lists them in launch order; a call is one of each name.
    per_call = max(1, len({name for name, _ in kernels}))
    calls = [sum(t for _, t in kernels[i:i + per_call]) for i in range(0, len(kernels) - per_call + 1, per_call)]
    return calls, per_call, clock_mhz


def one_problem_profile(template, problem, workdir):
    prof = dict(template)
    prof["shapes"] = [[problem["m"], problem["n"], problem["k"]]]
    path = os.path.join(workdir, "one.json")
    with open(path, "w") as f:
        json.dump(prof, f)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--profile", help="profile file whose cases to check (one candidate each)")
    ap.add_argument("--sweep", required=True, help="the sweep's --json output for that profile")
    ap.add_argument("--repeat", help="a second sweep's --json output, for the back-to-back agreement check")
    ap.add_argument("--out", required=True, help="where to write the JSON summary")
    ap.add_argument("--ncu-offset-us", type=float,
                    help="what ncu adds per kernel, measured on clock-independent spin kernels (scripts/dev/ncu_offset.sh)")
    args = ap.parse_args()

    sweep = json.load(open(args.sweep))
    summary = {"device": sweep["device"]["key"], "cases": []}
    if args.ncu_offset_us is not None:
        summary["ncu_offset_us"] = args.ncu_offset_us
    if args.repeat:
        other = {r["key"]: r for r in json.load(open(args.repeat))["results"] if r["status"] == "ok"}
        diffs = []
        for r in sweep["results"]:
            if r["status"] == "ok" and r["key"] in other:
                diffs.append(abs(other[r["key"]]["median_us"] / r["median_us"] - 1.0))
        diffs.sort()
        summary["repeat"] = {"cases": len(diffs), "median_abs_diff_pct": 100 * statistics.median(diffs),
                             "p90_abs_diff_pct": 100 * diffs[int(0.9 * (len(diffs) - 1))],
                             "within_2pct": sum(d <= 0.02 for d in diffs)}
        rep = summary["repeat"]
        print(f"two sweeps, {rep['cases']} cases: median |diff| {rep['median_abs_diff_pct']:.2f}%, "
              f"p90 {rep['p90_abs_diff_pct']:.2f}%, {rep['within_2pct']} of {rep['cases']} within 2%")
        with open(args.out, "w") as f:
            json.dump(summary, f, indent=2)
        return 0
    template = json.load(open(args.profile))
    ncu = os.environ.get("NCU") or shutil.which("ncu")
    print(f"{'case':44} {'sweep us':>9} {'ncu none':>9} {'ratio':>6} {'ncu all':>9} {'ratio':>6} {'events':>9} {'ratio':>6}"
          f" {'MHz sweep':>9} {'MHz ncu':>8} {'ncu-off':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as work:
        for r in sweep["results"]:
            if r["status"] != "ok":
                continue
            case = {"problem_key": r["problem_key"], "candidate": r["candidate"]["id"], "sweep_median_us": r["median_us"],
                    "events_per_call_us": r["events_per_call_us"]}
            case["events_ratio"] = r["events_per_call_us"] / r["median_us"]
            if ncu:
                profile = one_problem_profile(template, r["problem"], work)
                for cc in ("none", "all"):
                    calls, per_call, clock = ncu_durations_us(ncu, args.bin, profile, r["problem_key"],
                                                              r["candidate"]["id"], cc, work)
                    case[f"ncu_{cc}_median_us"] = statistics.median(calls)
                    case[f"ncu_{cc}_ratio"] = case[f"ncu_{cc}_median_us"] / r["median_us"]
                    case[f"ncu_{cc}_clock_mhz"] = clock
                    if args.ncu_offset_us is not None:
                        # ncu's duration less what ncu adds to any kernel (the spin calibration): the part of the
                        # difference that is the kernel's own.
                        case[f"ncu_{cc}_less_offset_us"] = case[f"ncu_{cc}_median_us"] - args.ncu_offset_us
                        case[f"ncu_{cc}_less_offset_ratio"] = case[f"ncu_{cc}_less_offset_us"] / r["median_us"]
                    case[f"ncu_{cc}_calls"] = len(calls)
                    case["kernels_per_call"] = per_call
            summary["cases"].append(case)
            print(f"{r['problem_key']:44} {r['median_us']:9.2f} {case.get('ncu_none_median_us', 0):9.2f} "
                  f"{case.get('ncu_none_ratio', 0):6.3f} {case.get('ncu_all_median_us', 0):9.2f} "
                  f"{case.get('ncu_all_ratio', 0):6.3f} {r['events_per_call_us']:9.2f} {case['events_ratio']:6.3f}"
                  f" {r['sm_clock_mhz']:9.0f} {case.get('ncu_none_clock_mhz', 0):8.0f}"
                  f" {case.get('ncu_none_less_offset_us', 0):9.2f} {case.get('ncu_none_less_offset_ratio', 0):6.3f}")
    if not ncu:
        print("ncu not found: (a) not checked")
    print("ratio = other / sweep median; ncu 'none' = --cache-control none, 'all' = caches flushed per kernel (ncu default);"
          " ncu-off = the 'none' duration less what ncu adds to a clock-independent spin kernel"
          + (f" ({args.ncu_offset_us:.3f} us here)" if args.ncu_offset_us is not None else " (not measured)"))

    with open(args.out, "w") as f:
        json.dump(summary, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
