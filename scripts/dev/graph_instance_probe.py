#!/usr/bin/env python3
"""Do CUDA graphs of the very same launches run at speeds of their own? (issues 37, 48)

Two runtimes with no db, replaying the same candidate on the same buffers, ran up to 4.3% apart on 4-8 us calls
wherever a CUDA graph ran the call (results/nvidia-h200/same_candidate_pairs.json); launched into a stream they agreed
within 0.6%. This probe asks it of PyTorch alone, so that neither gemmtune's runtime nor its benchmark is involved.

Per case, in one process, on one set of tensors, three kinds of unit, GRAPHS of each:
  graph   a CUDA graph captured from the same 20 back-to-back calls of the op (torch.mm or torch.addmm, + gelu into a
          second fixed tensor where asked) and replayed once a batch, as the benchmarks' graph conditions run it;
  graph1  a CUDA graph of one call, replayed 20 times a batch, as gemmtune's runtime replays a repeated call
          (src/runtime/call_graphs.hpp);
  slot    the same 20 calls launched into the stream (the null: slots differ in nothing but their turn).
Per round, every unit in a rotating order, behind ~10 ms of GPU spin (as scripts/compare_torch.py times its
conditions), CUDA events around the batch. After ROUNDS rounds every graph is destroyed and captured again
(GENERATIONS times), to see whether an instance's offset belongs to the instance or to its place in the order.

Printed per case, generation and kind: each unit's median us per call over the median of all, the spread
(slowest/fastest median) of the units, and whether an instance's offset holds across the two halves of the
rounds (the rank correlation of the instances' medians in the first and second half).

usage: graph_instance_probe.py CASE[,CASE...] [--graphs 6] [--rounds 41] [--generations 2] [--json OUT]
       CASE: MxNxK[:tf32|fp32][:none|bias|bias+gelu]  (tf32, bias+gelu by default)
"""
import argparse
import json
import statistics
import sys

CALLS = 20
KINDS = ("graph", "graph1", "slot")
SPIN_CYCLES = 20_000_000


def parse_cases(text):
    cases = []
    for item in text.split(","):
        parts = item.split(":")
        m, n, k = (int(v) for v in parts[0].split("x"))
        mode = parts[1] if len(parts) > 1 else "tf32"
        epilogue = parts[2] if len(parts) > 2 else "bias+gelu"
        if mode not in ("tf32", "fp32") or epilogue not in ("none", "bias", "bias+gelu") or min(m, n, k) < 1:
            raise ValueError(item)
        cases.append((m, n, k, mode, epilogue))
    return cases


def spearman(xs, ys):
    """Rank correlation of two equally long lists (no ties expected among float medians)."""
    def ranks(v):
        order = sorted(range(len(v)), key=v.__getitem__)
        r = [0] * len(v)
        for i, j in enumerate(order):
            r[j] = i
        return r
    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    return 1.0 - 6.0 * sum((a - b) ** 2 for a, b in zip(rx, ry)) / (n * (n * n - 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases")
    ap.add_argument("--graphs", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--generations", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args()
    try:
        cases = parse_cases(args.cases)
    except ValueError as e:
        ap.error(f"case {e}: MxNxK[:tf32|fp32][:none|bias|bias+gelu]")
    if args.graphs < 2 or args.rounds < 4 or args.generations < 1:
        ap.error("--graphs must be at least 2, --rounds at least 4 and --generations at least 1")

    import torch
    if not torch.cuda.is_available():
        sys.exit("graph_instance_probe: no CUDA device")
    torch.manual_seed(0)
    out = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "calls_per_batch": CALLS,
           "rounds": args.rounds, "graphs": args.graphs, "cases": []}
    print(f"# {out['gpu']}, torch {torch.__version__}; {CALLS} calls a batch, {args.rounds} rounds, "
          f"{args.graphs} units of each kind per generation")
    for m, n, k, mode, epilogue in cases:
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        a = torch.rand(m, k, device="cuda") * 2 - 1
        b = torch.rand(k, n, device="cuda") * 2 - 1
        bias = torch.rand(n, device="cuda") * 2 - 1
        y = torch.empty(m, n, device="cuda")
        z = torch.empty(m, n, device="cuda")

        def op():
            if epilogue == "none":
                torch.mm(a, b, out=y)
            else:
                torch.addmm(bias, a, b, out=y)
                if epilogue == "bias+gelu":  # into z, so that every unit writes the same addresses
                    torch.ops.aten.gelu.out(y, approximate="tanh", out=z)

        def enqueue():
            for _ in range(CALLS):
                op()

        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            enqueue()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        case = {"shape": [m, n, k], "mode": mode, "epilogue": epilogue, "generations": []}
        for gen in range(args.generations):
            graphs = {"graph": [], "graph1": []}
            for kind, capture in (("graph", enqueue), ("graph1", op)):
                for _ in range(args.graphs):
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g):
                        capture()
                    graphs[kind].append(g)
            units = [(kind, i) for kind in KINDS for i in range(args.graphs)]
            times = {u: [] for u in units}
            for r in range(args.rounds + 1):
                for j in range(len(units)):
                    kind, i = units[(r + j) % len(units)]
                    torch.cuda._sleep(SPIN_CYCLES)
                    start.record()
                    if kind == "graph":
                        graphs[kind][i].replay()
                    elif kind == "graph1":
                        for _ in range(CALLS):
                            graphs[kind][i].replay()
                    else:
                        enqueue()
                    stop.record()
                    torch.cuda.synchronize()
                    if r:
                        times[(kind, i)].append(1000.0 * start.elapsed_time(stop) / CALLS)
            del graphs
            half = args.rounds // 2
            rec = {}
            for kind in KINDS:
                med = [statistics.median(times[(kind, i)]) for i in range(args.graphs)]
                first = [statistics.median(times[(kind, i)][:half]) for i in range(args.graphs)]
                second = [statistics.median(times[(kind, i)][half:]) for i in range(args.graphs)]
                centre = statistics.median(med)
                rec[kind] = {"median_us": med, "relative": [x / centre for x in med],
                             "spread": max(med) / min(med), "halves_rank_correlation": spearman(first, second)}
            case["generations"].append(rec)
            print(f"{m}x{n}x{k} {mode} {epilogue} gen {gen}: us/call "
                  + ", ".join(f"{kind} {statistics.median(rec[kind]['median_us']):.2f}" for kind in KINDS))
            for kind in KINDS:
                r_ = rec[kind]
                print(f"  {kind:6s} spread {r_['spread']:.4f}, halves rank corr {r_['halves_rank_correlation']:+.2f}: "
                      + " ".join(f"{x:.4f}" for x in r_["relative"]))
        out["cases"].append(case)
        del a, b, bias, y, z
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
