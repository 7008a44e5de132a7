#!/usr/bin/env python3
"""Whether a first-use trial at decode-sized m should also time the unsplit 64x128 wgmma tile: over every stored sweep
(results/<gpu>/*.json.gz with a "results" list), per tf32 NN forward problem with m in [MIN_M, MAX_M] that timed both,
the fastest skinny tile's CUPTI median over the fastest unsplit wgmma_tf32_64x128x32 (s4 or s6, staged or not):
> 1, the wgmma tile was faster. One line per shape (geomean over the sweeps that timed it), then the count of shapes
where it won.
usage: decode_wgmma_vs_skinny.py RESULTS_DIR [MIN_M=9] [MAX_M=16]"""
import collections
import glob
import gzip
import json
import math
import os
import re
import sys

UNSPLIT_WGMMA = re.compile(r"own/wgmma_tf32_64x128x32_s[46](_staged\w*)?$")


def main():
    try:
        folder = sys.argv[1]
        low = int(sys.argv[2]) if len(sys.argv) > 2 else 9
        high = int(sys.argv[3]) if len(sys.argv) > 3 else 16
        if len(sys.argv) > 4 or not 1 <= low <= high:
            raise ValueError
    except (IndexError, ValueError):
        sys.exit("usage: decode_wgmma_vs_skinny.py RESULTS_DIR [MIN_M=9] [MAX_M=16]: 1 <= MIN_M <= MAX_M")
    if not os.path.isdir(folder):
        sys.exit(f"decode_wgmma_vs_skinny.py: no folder at {folder}")
    ratios = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(folder, "*.json.gz"))):
        try:
            with gzip.open(path) as f:
                sweep = json.load(f)
        except (OSError, ValueError):
            continue
        if not isinstance(sweep, dict) or not isinstance(sweep.get("results"), list):
            continue
        by_problem = collections.defaultdict(dict)
        for r in sweep["results"]:
            p = r.get("problem", {}) if isinstance(r, dict) else {}
            if (not p or r.get("status") != "ok" or p.get("mode") != "tf32" or p.get("layout") != "nn"
                    or p.get("pass") != "fwd" or not low <= p.get("m", 0) <= high):
                continue
            by_problem[(p["m"], p["n"], p["k"], p["act"])][r["candidate"]["id"]] = r["median_us"]
        for shape, times in by_problem.items():
            skinny = [us for c, us in times.items() if "skinny" in c]
            wgmma = [us for c, us in times.items() if UNSPLIT_WGMMA.search(c)]
            if skinny and wgmma:
                ratios[shape].append(min(skinny) / min(wgmma))
    won, logs = 0, []
    print(f"{'m x n x k':22} {'act':6} {'sweeps':>6} {'skinny/wgmma':>12}")
    for shape in sorted(ratios, key=lambda s: (-s[1], s)):
        r = ratios[shape]
        g = math.exp(sum(math.log(v) for v in r) / len(r))
        won += g > 1
        logs.append(math.log(g))
        print(f"{f'{shape[0]}x{shape[1]}x{shape[2]}':22} {shape[3]:6} {len(r):6} {g:12.3f}")
    if logs:
        print(f"\nthe unsplit 64x128 wgmma tile beat every skinny tile at {won} of {len(ratios)} shapes "
              f"(m {low}-{high}); skinny/wgmma geomean {math.exp(sum(logs) / len(logs)):.3f}")


if __name__ == "__main__":
    main()
