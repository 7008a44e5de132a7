#!/usr/bin/env python3
"""Issue 49: the same product posed the other way round. Where k and n are both not multiples of 4, the TMA kernels
copy A (m x k) into aligned scratch first: 2*m*k*4 bytes, most of what such a shape pays over its aligned twin. The
transposed problem Y^T = B^T A^T (layout tt, output col: the same stored arrays, the same stored Y) copies B instead
(B^T is the operand wgmma reads from shared memory; A^T is read by class of rows), which moves fewer bytes wherever
n < m. Activation only (gelu): a bias is per column of Y, which the transposed problem cannot express.

plan:   swap_operands.py plan COMPILE.json OUT_DIR   writes OUT_DIR/swap_nn.json and OUT_DIR/swap_tt.json (the
        both-unaligned shapes of a torch.compile comparison, as asked and transposed)
then:   gemmtune sweep --profile OUT_DIR/swap_nn.json --no-db --json OUT_DIR/nn.json   (and swap_tt.json -> tt.json)
report: swap_operands.py report OUT_DIR/nn.json OUT_DIR/tt.json
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from heldout_report import geomean  # noqa: E402
from unaligned_vs_aligned import PEAK_TF32, both_unaligned, shape_of  # noqa: E402


def read_json(path, what):
    """The JSON document at `path`, or exit with one line naming the file (`what`: the part of it this script needs)."""
    try:
        with open(path) as f:
            doc = json.load(f)
        if not isinstance(doc, dict) or what not in doc:
            raise KeyError(what)
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"swap_operands: {path}: {e.__class__.__name__}: {e} (expected a JSON document with {what!r})")
    return doc


def plan(compile_json, out_dir):
    records = read_json(compile_json, "records")["records"]
    shapes = sorted({tuple(int(x) for x in r["shape"].split("x")) for r in records})
    shapes = [list(s) for s in shapes if both_unaligned(s)]
    common = {"epilogues": ["gelu"], "modes": ["tf32"], "backends": ["own", "lt"],
              "lt": {"top_k": 8, "workspace_mib": 64}}
    os.makedirs(out_dir, exist_ok=True)
    for name, layout, output, dims in (("swap_nn", "nn", "row", shapes),
                                       ("swap_tt", "tt", "col", [[n, m, k] for m, n, k in shapes])):
        profile = {"name": name, "description": f"issue 49: both-unaligned shapes posed {layout}/{output}",
                   "shapes": dims, "layouts": [layout], "outputs": [output], **common}
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump(profile, f, indent=1)


def best(path):
    doc = read_json(path, "problems")
    return {tuple(shape_of(p["problem_key"])): p for p in doc["problems"]}


def report(nn_json, tt_json):
    nn, tt = best(nn_json), best(tt_json)
    ratios = []
    for (m, n, k), a in sorted(nn.items()):
        b = tt.get((n, m, k))
        if b is None or not a.get("best_us") or not b.get("best_us"):
            continue
        ideal_us = 2.0 * m * n * k / PEAK_TF32 * 1e6
        ratios.append(a["best_us"] / b["best_us"])
        print(f"{m}x{n}x{k}: A {m * k * 4 / 1e6:.1f} MB, B {k * n * 4 / 1e6:.1f} MB; as asked {a['best_us']:.1f} us "
              f"({100 * ideal_us / a['best_us']:.1f}% of peak, {a['best_candidate']}); transposed {b['best_us']:.1f} us "
              f"(own best {b['best_own_us']:.1f}, {b['best_candidate']}); asked / transposed {ratios[-1]:.3f}")
    if ratios:
        print(f"geomean asked / transposed {geomean(ratios):.3f} over "
              f"{len(ratios)} shapes; the transposed form faster on {sum(r > 1 for r in ratios)}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "plan":
        plan(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
