#!/usr/bin/env python3
"""Issue 48's across-process targets held to PyTorch eager against itself, over held-out runs that timed eager twice.

Issue 48 asks of the runtime, timed in heldout_bench's process, against PyTorch eager, timed in compare_torch.py's: in
every condition (launch x L2) at most 2% of records below 0.99x eager and none below 0.97x. bench_heldout.sh runs
compare_torch.py a second time in a process of its own (torch_repeat_us), so every such run also says how PyTorch
eager fares against itself across two processes under the same bar, read in the benchmark's direction (the later
run's time over the earlier's, as torch_us / runtime_us). A bar that eager misses against itself is below what two
processes can resolve.

Per run and seed: records; below 0.99x and below 0.97x, and the largest share below 0.99x of any condition, for the
runtime against eager and for eager against itself; whether each meets the share and floor targets in every
condition (the geomean targets are left out: against itself eager is 1.0x). Then how many of the runs each meets.

usage: eager_noise_floor.py HELDOUT.json[.gz] [...] [--json OUT]
       (heldout_report.py's joined files, results/<gpu>/heldout_bench*.json.gz; records without both PyTorch runs are
       left out, and a file with none is named and skipped)
"""
import argparse
import json
import os
import sys

from heldout_report import EAGER_BAND, EAGER_FLOOR, EAGER_MAX_SHARE, eager_targets, joined_records


def side(ratios_by_condition):
    """The targets' view of one side: {condition: [ratio, ...]} -> shares, floor count, worst condition, and whether
    every condition meets heldout_report's share and floor targets (no geomean goal: eager_targets(xs, None))."""
    per = {c: eager_targets(v, None) for c, v in ratios_by_condition.items()}
    worst = max(per, key=lambda c: per[c]["share_below_band"])
    n = sum(p["n"] for p in per.values())
    return {"share_below_band": sum(p["share_below_band"] * p["n"] for p in per.values()) / n,
            "below_floor": sum(p["below_floor"] for p in per.values()), "worst_condition": worst,
            "worst_condition_share": per[worst]["share_below_band"], "met": all(p["met"] for p in per.values())}


def run_rows(path, records):
    """One row per seed of a joined file: the runtime against eager and eager against itself."""
    by_seed = {}
    for r in records:
        if r.get("torch_us") and r.get("torch_repeat_us") and r.get("runtime_us"):
            by_seed.setdefault(r["seed"], []).append(r)
    rows = []
    for seed, rs in sorted(by_seed.items()):
        ours, itself = {}, {}
        for r in rs:
            condition = f"{r['launch']}/{r['condition']}"
            ours.setdefault(condition, []).append(r["torch_us"] / r["runtime_us"])
            itself.setdefault(condition, []).append(r["torch_repeat_us"] / r["torch_us"])
        rows.append({"file": os.path.basename(path), "seed": seed, "records": len(rs), "runtime_vs_eager": side(ours),
                     "eager_vs_itself": side(itself)})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for path in args.files:
        try:
            records = joined_records(path)
        except ValueError as e:
            ap.error(str(e))
        got = run_rows(path, records)
        if not got:
            print(f"eager_noise_floor: {path}: no record with both PyTorch runs, skipped", file=sys.stderr)
        rows += got
    if not rows:
        ap.error("no record with both PyTorch runs in any file")
    print(f"issue 48's share and floor targets across processes (<= {EAGER_MAX_SHARE:.0%} below {EAGER_BAND}x in "
          f"every condition, none below {EAGER_FLOOR}x), the runtime against eager and eager against itself:")
    print(f"{'file':<42} {'seed':>5} {'n':>4} | {'ours <0.99':>10} {'<0.97':>5} {'worst cond':>10} {'met':>4} | "
          f"{'eager <0.99':>11} {'<0.97':>5} {'worst cond':>10} {'met':>4}")
    for row in rows:
        o, e = row["runtime_vs_eager"], row["eager_vs_itself"]
        print(f"{row['file']:<42} {row['seed']:>5} {row['records']:>4} | {o['share_below_band']:10.1%} "
              f"{o['below_floor']:5d} {o['worst_condition_share']:10.1%} {'yes' if o['met'] else 'no':>4} | "
              f"{e['share_below_band']:11.1%} {e['below_floor']:5d} {e['worst_condition_share']:10.1%} "
              f"{'yes' if e['met'] else 'no':>4}")
    ours_met = sum(r["runtime_vs_eager"]["met"] for r in rows)
    eager_met = sum(r["eager_vs_itself"]["met"] for r in rows)
    print(f"runs meeting the targets: the runtime against eager {ours_met} of {len(rows)}; eager against itself "
          f"{eager_met} of {len(rows)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"band": EAGER_BAND, "floor": EAGER_FLOOR, "max_share": EAGER_MAX_SHARE, "runs": rows,
                       "runtime_met": ours_met, "eager_itself_met": eager_met}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
