#!/usr/bin/env python3
"""Where torch.compile max-autotune beats the runtime, by class of problem, over committed held-out benchmark files.

Per (shape, epilogue) in tf32, the median of compiled / ours in the compiled op's process over its records (a
record's `compiled.compiled_us / compiled.runtime_here_us`: below 1, compile is faster; four conditions a file, and a
shape in several files, a seed run twice, counts each run), then per class (rows not 16-byte aligned, k <= 512,
m <= 16, epilogue) how many problems compile wins by more than 10% and the geomean, and the problems compile wins by
more than 5% anywhere.
  usage: scripts/dev/compiled_losses.py FILE.json.gz...
"""
import argparse
import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from heldout_report import every_joined_record, geomean  # noqa: E402


def ratios(records):
    by_problem = collections.defaultdict(list)
    for record in records:
        compiled = record.get("compiled")
        if record["mode"] == "tf32" and compiled:
            key = (record["shape"], record["epilogue"])
            by_problem[key].append(compiled["compiled_us"] / compiled["runtime_here_us"])
    return by_problem


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("files", nargs="+", help="held-out benchmark files (heldout_report.py's, gzipped or not)")
    args = ap.parse_args()
    by_problem = ratios(every_joined_record(args.files, ap))
    dims = {p: tuple(map(int, p[0].split("x"))) for p in by_problem}

    def unaligned(p):
        return dims[p][1] % 4 != 0 or dims[p][2] % 4 != 0

    classes = [
        ("all", lambda p: True),
        ("unaligned", unaligned),
        ("aligned", lambda p: not unaligned(p)),
        ("k <= 512", lambda p: dims[p][2] <= 512),
        ("m <= 16", lambda p: dims[p][0] <= 16),
        ("m<=16,k<=512", lambda p: dims[p][0] <= 16 and dims[p][2] <= 512),
        ("none", lambda p: p[1] == "none"),
        ("bias+gelu", lambda p: p[1] != "none"),
    ]
    print(f"{len(args.files)} files, {len(by_problem)} tf32 problems; compiled / ours, median over each problem's "
          "records")
    print("class        | problems  below 0.9  geomean")
    for name, chosen in classes:
        medians = [statistics.median(v) for p, v in by_problem.items() if chosen(p)]
        if medians:
            below = sum(m < 0.9 for m in medians)
            print(f"{name:12} | {len(medians):8}  {below:9}  {geomean(medians):7.3f}")
    print("problems compile wins by more than 5% in some condition (min, median):")
    for p, v in sorted(by_problem.items(), key=lambda item: min(item[1])):
        if min(v) < 0.95:
            aligned = "unaligned" if unaligned(p) else "aligned"
            print(f"  {p[0]:>16} {p[1]:9} {min(v):.2f} {statistics.median(v):.2f} {aligned}")


if __name__ == "__main__":
    main()
