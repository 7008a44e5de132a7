#!/usr/bin/env python3
"""Our kernels against cuBLASLt, from one `gemmtune sweep --profile kernels --json` run (all measured side by side).

Per shape and mode: our best variant, cuBLASLt's best and its heuristic-first choice, as speed ratios (>1: ours
faster). 3xtf32 has no cuBLASLt mode, so it is compared with cuBLASLt fp32 (the accuracy it matches). For
bias+gelu, also against cuBLASLt's best GEMM followed by our separate epilogue kernel ('+epi' candidates)."""
import json
import sys


def main(path, out_path):
    doc = json.load(open(path))
    best = {}  # (shape, epilogue, mode) -> {"own", "lt", "lt0", "lt_unfused"}
    for r in doc["results"]:
        if r["status"] != "ok":
            continue
        p = r["problem"]
        key = (f'{p["m"]}x{p["n"]}x{p["k"]}', r["problem_key"].split(":")[4], p["mode"])
        c = r["candidate"]
        slot = best.setdefault(key, {})
        kinds = ["own"] if c["backend"] == "own" else ["lt"]
        if c["backend"] == "lt" and c.get("heuristic_rank") == 0 and not c.get("epilogue_kernel"):
            kinds.append("lt0")
        if c["backend"] == "lt" and c.get("epilogue_kernel") and not c.get("padded"):
            kinds = ["lt_unfused"]
        for k in kinds:
            slot[k] = min(slot.get(k, float("inf")), r["median_us"])
    rows = []
    print(f'{"shape":16} {"epilogue":10} {"mode":7} {"own us":>9} {"lt best":>9} {"own/lt":>7} {"own/lt0":>8} {"own/unfused":>11}')
    for (shape, epi, mode), s in sorted(best.items(), key=lambda kv: (kv[0][2], kv[0][1], int(kv[0][0].split("x")[0]))):
        ref = best.get((shape, epi, "fp32"), {}) if mode == "3xtf32" else s
        row = {"shape": shape, "epilogue": epi, "mode": mode, "own_us": s.get("own"), "lt_best_us": ref.get("lt"),
               "lt_heuristic_first_us": ref.get("lt0"), "lt_unfused_us": ref.get("lt_unfused"),
               "compared_with": "cuBLASLt fp32" if mode == "3xtf32" else f"cuBLASLt {mode}"}
        ratio = lambda other: other / row["own_us"] if other and row["own_us"] else None
        row["own_speed_vs_lt_best"] = ratio(row["lt_best_us"])
        row["own_speed_vs_lt_heuristic_first"] = ratio(row["lt_heuristic_first_us"])
        row["own_speed_vs_lt_unfused"] = ratio(row["lt_unfused_us"])
        rows.append(row)
        fmt = lambda v, w, d=2: f"{v:{w}.{d}f}" if v else f'{"-":>{w}}'
        print(f'{shape:16} {epi:10} {mode:7} {fmt(row["own_us"], 9)} {fmt(row["lt_best_us"], 9)} '
              f'{fmt(row["own_speed_vs_lt_best"], 7, 3)} {fmt(row["own_speed_vs_lt_heuristic_first"], 8, 3)} '
              f'{fmt(row["own_speed_vs_lt_unfused"], 11, 3)}')
    print("ratios are speed (time of the other / our time): >1 means ours is faster; 3xtf32 rows compare with cuBLASLt fp32")
    json.dump({"device": doc["device"]["key"], "source": path, "rows": rows}, open(out_path, "w"), indent=2)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
