#!/usr/bin/env python3
"""Unmodified PyTorch training steps plain, under `gemmtune apply` and under `apply --fp32-equivalent`; writes
results/<gpu>/apply_step.json (issue 50).

The model: `blocks` FFN blocks [nn.Linear(d, h) + nn.GELU(tanh) + nn.Linear(h, d)] on `tokens` rows, loss
mean((y - target)^2), AdamW (lr 1e-4). PyTorch's BLAS routing is left alone: the forward's addmm goes through
cublasLtMatmul (bias epilogue), the backward's mm through cuBLAS. Models (--models picks):
  d1024  d 1024, h 4096, 777 tokens        d2048  d 2048, h 8192, 1531 tokens
  d4096  d 4096, h 16384, 1001 tokens      odd    d 1030, h 4111, 999 tokens (rows not 16-byte aligned)
Per model and mode (fp32, tf32: PyTorch's matmul TF32 switch), each in a process of its own:
  1. `gemmtune trace --gemms --db` of a few steps (the problems, as misses), 2. `gemmtune sweep --from-misses` on
  that db (fp32: a second db tuned with --fp32-equivalent), 3. the step `plain`, under `gemmtune apply --db`
  (`apply`) and, in fp32, under `gemmtune apply --fp32-equivalent` on the second db (`apply_fp32eq`) and in fp64
  (`plain_fp64`, the model, data and AdamW in float64: the losses the fp32 runs approximate).
  Each variant runs twice (--captures): capture "eager", the step as written, and "graph", the whole step captured
  once in a CUDA graph (torch.cuda.graph, after warm-up steps on a side stream) and replayed; under apply the captured
  GEMMs are the routed ones, so a replay runs gemmtune's kernels without calling cuBLAS at all.
  An eager step of a small model is bound by the host, whose speed differs from process to process by up to 15%: its
  variants run --repeats times (default 3), interleaved, their timed steps pooled.
Every run starts from the same weights and data (seeded on the CPU) and records --steps losses; step_ms is the median
of CUDA event pairs around each of the --timed-steps steps after them, host_ms the median time the host took to
enqueue one (a step whose host_ms is near its step_ms is bound by the host). Per record: step_ms (p10, p90),
routed_share (calls gemmtune ran, from `apply --report`; 0 for plain), routed_flop_share (their share of the GEMMs'
flops), tuned_flop_share (with the calls whose tuned entry is cuBLAS's own call, so stay with it), yielded_flop_share
(calls of a padded entry that went to cuBLAS because the GPU had caught up with the host), loss_max_rel
(the largest |loss - plain's| / |plain's| over the steps, plain of the same capture), loss_max_rel_fp64 (the same
against plain_fp64's losses: which fp32 run is nearer the exact ones), the losses, the apply report's rows, and
(eager) gemm_host: where the host's time goes, from 10 more steps under torch.profiler after the timed ones: the
GEMM ops' calls and self host us per step (the cuBLAS call, and apply's routing and launches inside it) beside all
ops' (median over the runs).

usage: bench_apply_step.py [--models d1024,d2048,d4096,odd] [--modes fp32,tf32] [--captures eager,graph]
                           [--repeats 3] [--cpus LIST] [--steps 50] [--timed-steps 30] [--gemmtune PATH]
                           [--db-dir DIR] [--out FILE]
       bench_apply_step.py --merge PART.json [PART.json ...] --out FILE
The output file is rewritten after every record, marked "partial": true until the run ends; a run split by model (a
time limit per command) is joined by --merge, a later part's record replacing an earlier one's.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_torch_step import choice_list, gpu_slug, write

MODELS = {
    "d1024": {"d": 1024, "hidden": 4096, "tokens": 777},
    "d2048": {"d": 2048, "hidden": 8192, "tokens": 1531},
    "d4096": {"d": 4096, "hidden": 16384, "tokens": 1001},
    "odd": {"d": 1030, "hidden": 4111, "tokens": 999},
}
MODES = ("fp32", "tf32")
CAPTURES = ("eager", "graph")
# How an apply report says a call stayed with cuBLAS because the db's entry for it is cuBLAS's own call.
CUBLAS_ENTRY_REASON = "cuBLAS's own choice (cublas/sgemm)"
# A padded entry's call that went to cuBLAS because its stream had drained (apply/route.hpp: yields_when_drained).
DRAINED_REASON = "the stream had drained"
BLOCKS = 2
LR = 1e-4
WARMUP_STEPS = 3
HOST_PROFILE_STEPS = 10
# The ATen ops an nn.Linear step calls cuBLAS or cuBLASLt from (forward addmm, backward mm).
GEMM_OPS = ("aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm", "aten::_addmm_activation")
TRACE_STEPS = 3
HERE = os.path.dirname(os.path.abspath(__file__))


def variants_for(mode, no_yield=False, rounding_band=0):
    """apply_fp32eq only where there is an fp32 problem to admit 3xtf32 for, and there plain_fp64 too: the same step
    in fp64, the exact losses every fp32 variant's are measured against. no_yield adds apply_no_yield: apply with
    --no-host-yield, every call of a padded entry routed even where the GPU has caught up with the host.
    rounding_band (fp32) adds plain_rows<i> and apply_fp32eq_rows<i>, i = 1..rounding_band: the same step on the same
    batch with its rows in the i-th seeded order. The loss averages the rows and the weight gradients sum over them,
    so the step is the same in exact arithmetic and only the rounding moves: how far plain fp32 lands from itself
    that way is the band within which no fp32 computation can be told from another."""
    out = ["plain", "apply", "apply_fp32eq", "plain_fp64"] if mode == "fp32" else ["plain", "apply"]
    out += ["apply_no_yield"] if no_yield else []
    if mode == "fp32":
        for i in range(1, rounding_band + 1):
            out += [f"plain_rows{i}", f"apply_fp32eq_rows{i}"]
    return out


def split_variant(variant):
    """"apply_fp32eq_rows2" -> ("apply_fp32eq", 2); a variant without a row order -> (variant, 0)."""
    match = re.fullmatch(r"(.+)_rows(\d+)", variant)
    return (match[1], int(match[2])) if match else (variant, 0)


def child_command(model, mode, steps, timed_steps, out, capture="eager", fp64=False, rows_seed=0):
    spec = MODELS[model]
    return ([sys.executable, os.path.abspath(__file__), "--child", "--mode", mode, "--d", str(spec["d"]),
             "--hidden", str(spec["hidden"]), "--tokens", str(spec["tokens"]), "--steps", str(steps),
             "--timed-steps", str(timed_steps), "--child-out", out] + (["--graph"] if capture == "graph" else []) +
            (["--fp64"] if fp64 else []) + (["--rows-seed", str(rows_seed)] if rows_seed else []))


def apply_command(gemmtune, db, fp32_equivalent, report, command, host_yield=True):
    return ([gemmtune, "apply", "--db", db] + (["--fp32-equivalent"] if fp32_equivalent else []) +
            ([] if host_yield else ["--no-host-yield"]) + ["--report", report, "--"] + command)


def loss_max_rel(plain, other):
    """The largest relative difference of two runs' losses, step by step; None when they differ in length."""
    if len(plain) != len(other) or not plain:
        return None
    return max(abs(o - p) / abs(p) if p != 0 else abs(o - p) for p, o in zip(plain, other))


def cpu_list(text):
    """"2-5,8" -> {2, 3, 4, 5, 8}, as taskset reads it."""
    cpus = set()
    try:
        for part in text.split(","):
            low, _, high = part.partition("-")
            cpus.update(range(int(low), int(high or low) + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a CPU list such as 2-5,8")
    if not cpus or min(cpus) < 0:
        raise argparse.ArgumentTypeError(f"'{text}' names no CPU")
    return cpus


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def problem_flops(problem):
    """2·m·n·k of a report row's problem ("fwd:1531x2048x8192:nt:..." or a shape "1531x2048x8192"); None if not
    there."""
    match = re.search(r"(\d+)x(\d+)x(\d+)", problem)
    return 2 * int(match[1]) * int(match[2]) * int(match[3]) if match else None


def flop_share(rows, counted):
    """The share of the GEMMs' flops in the calls counted(row) of each report row counts; None where a row's problem
    cannot be read."""
    total = part = 0
    for row in rows:
        flops = problem_flops(row["problem"])
        if flops is None:
            return None
        total += flops * row["calls"]
        part += flops * counted(row)
    return part / total if total else None


def routed_flop_share(rows, count_cublas_entries=False):
    """The share of the GEMMs' flops that gemmtune ran: a stand-in for their kernel time, which the report does not
    time; with count_cublas_entries, also the calls left with cuBLAS because their tuned entry is cuBLAS's own call
    (the share that ran the db's choice)."""
    def counted(row):
        left_with_cublas = count_cublas_entries and CUBLAS_ENTRY_REASON in row["reason"]
        return row["calls"] if left_with_cublas else row["routed_calls"]
    return flop_share(rows, counted)


def yielded_flop_share(rows):
    """The share of the GEMMs' flops in calls of a routed problem that went to cuBLAS because the stream had drained
    (the GPU waited for the host), so the entry's extra host time would have been the step's."""
    return flop_share(rows, lambda row: row["calls"] if DRAINED_REASON in row.get("reason", "") else 0)


def combine(children):
    """One variant's runs (processes) as one: their timed steps pooled, the first run's losses, every run's kept."""
    return {"gpu": children[0]["gpu"], "torch": children[0]["torch"], "losses": children[0]["losses"],
            "losses_runs": [c["losses"] for c in children],
            "step_ms": [t for c in children for t in c["step_ms"]],
            "host_ms": [t for c in children for t in c.get("host_ms", [])],
            "run_step_ms": [statistics.median(c["step_ms"]) for c in children],
            "gemm_host_runs": [c["gemm_host"] for c in children if c.get("gemm_host")]}


def median_gemm_host(runs):
    """The runs' GEMM host attributions as one: each field's median over the runs; None where none was profiled."""
    if not runs:
        return None
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def max_over_runs(plain_losses, child):
    """loss_max_rel of every run of a variant against plain's first run: the largest, None where one is None."""
    values = [loss_max_rel(plain_losses, losses) for losses in child.get("losses_runs", [child["losses"]])]
    return None if any(v is None for v in values) else max(values)


def record(model, mode, variant, child, plain_losses, report, capture="eager", fp64_losses=None):
    spec = MODELS[model]
    times = child["step_ms"]
    r = {"model": model, "d_model": spec["d"], "hidden": spec["hidden"], "tokens": spec["tokens"], "mode": mode,
         "variant": variant, "capture": capture, "step_ms": statistics.median(times),
         "step_ms_p10": percentile(times, 0.1), "step_ms_p90": percentile(times, 0.9),
         "host_ms": statistics.median(child["host_ms"]) if child.get("host_ms") else None,
         "routed_share": report["routed_share"] if report else 0.0,
         "routed_flop_share": routed_flop_share(report["rows"]) if report else 0.0,
         "tuned_flop_share": routed_flop_share(report["rows"], count_cublas_entries=True) if report else 0.0,
         "yielded_flop_share": yielded_flop_share(report["rows"]) if report else 0.0,
         "loss_max_rel": max_over_runs(plain_losses, child) if plain_losses is not None else 0.0,
         "loss_max_rel_fp64": max_over_runs(fp64_losses, child) if fp64_losses is not None else None,
         "losses": child["losses"], "final_loss": child["losses"][-1], "runs": len(child.get("run_step_ms", [0])),
         "run_step_ms": child.get("run_step_ms", [statistics.median(times)]),
         "gemm_host": median_gemm_host(child.get("gemm_host_runs", []))}
    if report:
        r["calls"] = report["calls"]
        r["routed_calls"] = report["routed_calls"]
        r["report_rows"] = report["rows"]
    return r


def capture_of(r):
    return r.get("capture", "eager")  # records written before graph steps were measured ran eagerly


def speedups(records):
    """Per model, mode and capture: each variant's step_ms against plain's (plain / variant: > 1 is faster).

    Beside it, what bounds the comparison:
      pair_speedups        plain's and the variant's runs paired in the order they ran (interleaved, so a pair shares
                           the machine's state): their per-process ratios, whose spread is the host's noise where a
                           step is bound by the host;
      plain_loss_max_rel_fp64  plain fp32's own distance from the fp64 losses: the floor under loss_max_rel, since
                           any fp32 run that sums in another order lands that far from plain by chance;
      steps_within_1e-5    how many steps the variant's losses stay within 1e-5 (relative) of plain's, and beside it
                           fp64_steps_within_1e-5, the same for the fp64 run: where exact arithmetic leaves plain's
                           band as early, the band is not a bound an fp32 kernel can be held to."""
    plain = {(r["model"], r["mode"], capture_of(r)): r for r in records if r["variant"] == "plain"}
    fp64 = {(r["model"], r["mode"], capture_of(r)): r for r in records if r["variant"] == "plain_fp64"}
    out = []
    for r in records:
        base = plain.get((r["model"], r["mode"], capture_of(r)))
        if r["variant"] in ("plain", "plain_fp64") or not base or not base["step_ms"]:
            continue
        pairs = [p / v for p, v in zip(base.get("run_step_ms", []), r.get("run_step_ms", []))]
        out.append({"model": r["model"], "mode": r["mode"], "variant": r["variant"], "capture": capture_of(r),
                    "speedup": base["step_ms"] / r["step_ms"], "pair_speedups": pairs,
                    "routed_share": r["routed_share"], "routed_flop_share": r.get("routed_flop_share"),
                    "yielded_flop_share": r.get("yielded_flop_share"),
                    "loss_max_rel": r["loss_max_rel"], "loss_max_rel_fp64": r.get("loss_max_rel_fp64"),
                    "plain_loss_max_rel_fp64": base.get("loss_max_rel_fp64"),
                    "steps_within_1e-5": steps_within(base.get("losses"), r.get("losses"), 1e-5),
                    "gemm_host": r.get("gemm_host"), "plain_gemm_host": base.get("gemm_host")})
        exact = fp64.get((r["model"], r["mode"], capture_of(r)))
        if exact:
            out[-1]["fp64_steps_within_1e-5"] = steps_within(base.get("losses"), exact.get("losses"), 1e-5)
    return out


def rounding_band(records):
    """Per model and capture where --rounding-band ran: how far plain fp32 lands from itself when only the rows' order
    changes (plain_vs_plain: plain_rows<i> against plain), against how far apply --fp32-equivalent lands from plain
    (fp32eq_vs_plain: apply_fp32eq and apply_fp32eq_rows<i>), and both families' distances from the fp64 losses. A
    loss target tighter than plain_vs_plain is one plain fp32 itself misses on a reordered batch."""
    groups = {}
    for r in records:
        base, rows_seed = split_variant(r["variant"])
        if r["mode"] != "fp32" or base not in ("plain", "apply_fp32eq"):
            continue
        g = groups.setdefault((r["model"], capture_of(r)), {"plain": [], "apply_fp32eq": [], "orders": set()})
        g[base].append(r)
        if rows_seed:
            g["orders"].add(rows_seed)
    out = []
    for (model, capture), g in groups.items():
        if not g["orders"]:
            continue
        reordered = [r for r in g["plain"] if r["variant"] != "plain"]
        out.append({"model": model, "capture": capture, "row_orders": len(g["orders"]),
                    "plain_vs_plain": [r["loss_max_rel"] for r in reordered],
                    "fp32eq_vs_plain": [r["loss_max_rel"] for r in g["apply_fp32eq"]],
                    "plain_vs_fp64": [r["loss_max_rel_fp64"] for r in g["plain"]],
                    "fp32eq_vs_fp64": [r["loss_max_rel_fp64"] for r in g["apply_fp32eq"]]})
    return out


def band_line(b):
    def span(values):
        values = [v for v in values if v is not None]
        return f"{min(values):.1e}-{max(values):.1e}" if values else "-"
    return (f"{b['model']:6} fp32  rounding band {b['capture']:5} ({b['row_orders']} row orders): plain vs plain "
            f"{span(b['plain_vs_plain'])}, fp32-equivalent vs plain {span(b['fp32eq_vs_plain'])}; vs fp64: plain "
            f"{span(b['plain_vs_fp64'])}, fp32-equivalent {span(b['fp32eq_vs_fp64'])}")


def steps_within(plain_losses, losses, tolerance):
    """How many leading steps' losses are within tolerance (relative) of plain's; None where either is missing."""
    if not plain_losses or not losses:
        return None
    for step, (p, x) in enumerate(zip(plain_losses, losses)):
        if abs(x - p) > tolerance * abs(p):
            return step
    return min(len(plain_losses), len(losses))


# --- the child: one process, one variant ------------------------------------------------------------------------

def run_child(args):
    import torch
    import torch.nn.functional as F

    from trace_torch_step import set_fp32_matmul

    if not torch.cuda.is_available():
        sys.exit("bench_apply_step: PyTorch sees no CUDA GPU")
    set_fp32_matmul(args.mode)
    torch.manual_seed(0)
    layers = []
    for _ in range(BLOCKS):
        layers += [torch.nn.Linear(args.d, args.hidden), torch.nn.GELU(approximate="tanh"),
                   torch.nn.Linear(args.hidden, args.d)]
    device = torch.device("cuda")
    # Initialized on the CPU in fp32: the same weights in every process, the fp64 run's the same values widened.
    dtype = torch.float64 if args.fp64 else torch.float32
    model = torch.nn.Sequential(*layers).to(device, dtype)
    # capturable: its step count lives on the GPU, so a replayed graph advances it (what torch.cuda.graph asks).
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, capturable=args.graph)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(args.tokens, args.d, generator=g)
    target = torch.randn(args.tokens, args.d, generator=g)
    if args.rows_seed:
        order = torch.randperm(args.tokens, generator=torch.Generator().manual_seed(args.rows_seed))
        x, target = x[order].contiguous(), target[order].contiguous()
    x, target = x.to(device, dtype), target.to(device, dtype)

    def step():
        loss = F.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    if args.graph:
        step = captured_step(torch, F, model, optimizer, x, target)
    losses = [step().item() for _ in range(args.steps)]  # the first steps resolve every problem, outside timing
    for _ in range(WARMUP_STEPS):
        step()
    times, host = [], []
    for _ in range(args.timed_steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        began = time.perf_counter()
        step()
        host.append((time.perf_counter() - began) * 1e3)  # the host's enqueue: where a step is host-bound
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    doc = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "losses": losses, "step_ms": times,
           "host_ms": host}
    if not args.graph:
        doc["gemm_host"] = profile_gemm_host(torch, step)
    with open(args.child_out, "w") as f:
        json.dump(doc, f)
    return 0


def profile_gemm_host(torch, step):
    """The host time of the step's GEMM ops, where an eager step's host time goes: HOST_PROFILE_STEPS more steps
    under torch.profiler (CPU activity only), after the timed ones so it does not touch them."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(HOST_PROFILE_STEPS):
            step()
        torch.cuda.synchronize()
    return gemm_host([(e.key, e.count, e.self_cpu_time_total) for e in prof.key_averages()], HOST_PROFILE_STEPS)


def gemm_host(op_totals, steps):
    """From (op, calls, self CPU us) over `steps` steps: per step, the calls and self host time of the ops that call
    cuBLAS (GEMM_OPS: their self time holds the cuBLAS call, and apply's routing and launches inside it) and of all
    ops, so a variant's extra host time reads as in its GEMMs or elsewhere."""
    gemm = [(calls, us) for op, calls, us in op_totals if op in GEMM_OPS]
    return {"gemm_calls_per_step": sum(c for c, _ in gemm) / steps,
            "gemm_self_us_per_step": sum(us for _, us in gemm) / steps,
            "all_ops_self_us_per_step": sum(us for _, _, us in op_totals) / steps}


def captured_step(torch, F, model, optimizer, x, target):
    """The whole step (forward, backward, AdamW) captured once in a CUDA graph, as PyTorch's whole-network capture
    recipe does it: WARMUP_STEPS steps on a side stream first (they update the weights, in every variant alike),
    gradients left allocated so the graph reads and writes the same ones. Returns a replay that returns the loss."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(WARMUP_STEPS):
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(x), target).backward()
            optimizer.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        loss = F.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()

    def replay():
        graph.replay()
        return loss

    return replay


# --- the driver ---------------------------------------------------------------------------------------------------

def run(cmd, log, cpus=None):
    """Runs cmd, its output to log; on the CPUs in cpus where given (it and the processes it starts)."""
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    with open(log, "a") as f:
        f.write("+ " + " ".join(cmd) + "\n")
        f.flush()
        pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
        result = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, preexec_fn=pin)
    if result.returncode != 0:
        sys.exit(f"bench_apply_step: {cmd[0]} {cmd[1]} exited with {result.returncode} (see {log})")


def tune(gemmtune, model, mode, work, log):
    """The dbs of one model and mode: traced misses, swept (fp32: also a copy swept with --fp32-equivalent)."""
    db = os.path.join(work, f"{model}_{mode}.db")
    for path in (db, db + ".eq"):
        if os.path.exists(path):
            os.remove(path)
    trace = [gemmtune, "trace", "--gemms", "--db", db, "--no-tables", "--"]
    run(trace + child_command(model, mode, TRACE_STEPS, 1, os.path.join(work, "trace_child.json")), log)
    if not os.path.exists(db):
        sys.exit(f"bench_apply_step: the trace of {model} {mode} recorded no tunable GEMM (see {log})")
    dbs = {"apply": db}
    if mode == "fp32":
        shutil.copyfile(db, db + ".eq")
        dbs["apply_fp32eq"] = db + ".eq"
        run([gemmtune, "sweep", "--from-misses", "--db", db + ".eq", "--fp32-equivalent"], log)
    run([gemmtune, "sweep", "--from-misses", "--db", db], log)
    return dbs


def measure(args, model, mode, variant, dbs, work, log, capture="eager", repeat=0):
    name = f"{model}_{mode}_{variant}_{capture}_{repeat}"
    out = os.path.join(work, name + ".json")
    base, rows_seed = split_variant(variant)
    command = child_command(model, mode, args.steps, args.timed_steps, out, capture, base == "plain_fp64", rows_seed)
    report_path = None
    if base.startswith("apply"):
        report_path = os.path.join(work, name + ".report.json")
        command = apply_command(args.gemmtune, dbs.get(base, dbs["apply"]), base == "apply_fp32eq",
                                report_path, command, host_yield=base != "apply_no_yield")
    run(command, log, args.cpus)
    with open(out) as f:
        child = json.load(f)
    report = None
    if report_path:
        with open(report_path) as f:
            report = json.load(f)
    return child, report


def driver(args):
    work = args.db_dir or tempfile.mkdtemp(prefix="gemmtune-apply-bench-")
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, "bench_apply_step.log")
    records, gpu, torch_version = [], None, None
    doc = {}
    for model in args.models:
        for mode in args.modes:
            dbs = tune(args.gemmtune, model, mode, work, log)
            for capture in args.captures:
                # An eager step can be bound by the host, whose speed drifts from process to process: its variants
                # run --repeats times, interleaved, so a drift falls on every variant alike, and in an order rotated
                # at each repeat, so no variant always runs in the same place: with plain, apply and apply_no_yield
                # always in that order, the odd-width tf32 step ran x0.80 under apply and x1.06 under apply_no_yield
                # in one run (H200) while both routed every call alike.
                variants = variants_for(mode, args.no_yield_variant, args.rounding_band)
                children, reports = {v: [] for v in variants}, {}
                for repeat in range(args.repeats if capture == "eager" else 1):
                    shift = repeat % len(variants)
                    for variant in variants[shift:] + variants[:shift]:
                        child, reports[variant] = measure(args, model, mode, variant, dbs, work, log, capture, repeat)
                        children[variant].append(child)
                        gpu, torch_version = child["gpu"], child["torch"]
                plain_losses = children["plain"][0]["losses"]
                fp64_losses = children["plain_fp64"][0]["losses"] if "plain_fp64" in children else None
                for variant in variants:
                    records.append(record(model, mode, variant, combine(children[variant]), plain_losses,
                                          reports[variant], capture, fp64_losses))
                doc = document(gpu, torch_version, records, args, partial=True)
                write(doc, args.out or default_out(gpu_slug(gpu)))
    doc = document(gpu, torch_version, records, args, partial=False)
    out = args.out or default_out(gpu_slug(gpu))
    write(doc, out)
    for s in doc["speedups"]:
        print(summary_line(s))
    for b in doc.get("rounding_band", []):
        print(band_line(b))
    print(f"bench_apply_step: wrote {out}")
    return 0


def summary_line(s):
    """One speedup as the table prints it: the pooled ratio, the per-process range, routing, and the losses' details."""
    pairs = s.get("pair_speedups") or []
    spread = f" (processes {min(pairs):.3f}-{max(pairs):.3f})" if len(pairs) > 1 else ""
    fp64 = s.get("loss_max_rel_fp64")
    floor = s.get("plain_loss_max_rel_fp64")
    details = f"loss_max_rel {s['loss_max_rel']:.1e}"
    if fp64 is not None and floor is not None:
        details += f", vs fp64 {fp64:.1e} (plain's {floor:.1e})"
    if s.get("steps_within_1e-5") is not None and s.get("fp64_steps_within_1e-5") is not None:
        details += f"; within 1e-5 of plain for {s['steps_within_1e-5']} steps (fp64: {s['fp64_steps_within_1e-5']})"
    host = s.get("gemm_host")
    plain_host = s.get("plain_gemm_host")
    if host and plain_host:
        details += (f"; GEMM ops' host {host['gemm_self_us_per_step']:.0f} us/step (plain's "
                  f"{plain_host['gemm_self_us_per_step']:.0f}), all ops' {host['all_ops_self_us_per_step']:.0f} "
                  f"({plain_host['all_ops_self_us_per_step']:.0f})")
    if s.get("yielded_flop_share"):
        details = f"yielded on a drained stream {s['yielded_flop_share']:.2f} of flops; " + details
    return (f"{s['model']:6} {s['mode']:5} {s['variant']:13} {s['capture']:5} x{s['speedup']:.3f}{spread} "
            f"routed {s['routed_share']:.2f} (flops {s['routed_flop_share'] or 0:.2f}) {details}")


def document(gpu, torch_version, records, args, partial):
    doc = {"schema": "gemmtune.apply_step", "schema_version": 1, "gpu": gpu, "gpu_slug": gpu_slug(gpu or ""),
           "torch": torch_version, "models": {m: MODELS[m] for m in args.models}, "blocks": BLOCKS,
           "model": (f"{BLOCKS} x [Linear(d, h) + GELU(tanh) + Linear(h, d)]; loss mean((y - target)^2); "
                     f"AdamW(lr={LR})"),
           "timing": (f"CUDA events around each of --timed-steps steps after the --steps loss steps and "
                      f"{WARMUP_STEPS} warm-up steps; median, p10, p90"),
           "commands": [" ".join(sys.argv)], "records": records, "speedups": speedups(records)}
    band = rounding_band(records)
    if band:
        doc["rounding_band"] = band
    if partial:
        doc["partial"] = True
    return doc


def merge(paths):
    """The parts' records in one document, the speedups recomputed ("partial" where any part was cut short)."""
    merged, partial, index = None, False, {}
    for path in paths:
        try:
            with open(path) as f:
                part = json.load(f)
            if not isinstance(part, dict) or part.get("schema") != "gemmtune.apply_step":
                raise ValueError("not a bench_apply_step output")
        except (OSError, ValueError) as e:
            sys.exit(f"bench_apply_step: cannot merge {path}: {e}")
        if merged is None:
            merged = dict(part, commands=[])
        elif part["gpu"] != merged["gpu"]:
            sys.exit(f"bench_apply_step: {path} is from {part['gpu']}, not {merged['gpu']}: compare within one GPU")
        partial = partial or part.get("partial", False)
        merged["commands"] += part["commands"]
        merged["models"] = {**merged["models"], **part["models"]}
        index.update({(r["model"], r["mode"], r["variant"], capture_of(r)): r for r in part["records"]})
    merged["records"] = list(index.values())
    merged["speedups"] = speedups(merged["records"])
    merged.pop("rounding_band", None)
    band = rounding_band(merged["records"])
    if band:
        merged["rounding_band"] = band
    merged.pop("partial", None)
    if partial:
        merged["partial"] = True
    return merged


def default_out(slug):
    return os.path.join(HERE, os.pardir, "results", slug, "apply_step.json")


def default_gemmtune():
    built = os.path.join(HERE, os.pardir, "build", "gemmtune")
    return os.path.abspath(built) if os.path.exists(built) else (shutil.which("gemmtune") or "gemmtune")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=choice_list(tuple(MODELS)), default=list(MODELS))
    parser.add_argument("--modes", type=choice_list(MODES), default=list(MODES))
    parser.add_argument("--steps", type=int, default=50, help="steps whose losses are compared (default 50)")
    parser.add_argument("--timed-steps", type=int, default=30)
    parser.add_argument("--cpus", type=cpu_list, default=None,
                        help="run the measured steps on these CPUs only, e.g. 2-5 (a host-bound step's speed depends "
                             "on the core it lands on)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="processes per variant of an eager step, interleaved (default 3)")
    parser.add_argument("--captures", type=choice_list(CAPTURES), default=list(CAPTURES),
                        help="eager steps, the step captured in one CUDA graph and replayed, or both (default)")
    parser.add_argument("--no-yield-variant", action="store_true",
                        help="also run apply_no_yield (apply --no-host-yield) beside apply, interleaved")
    parser.add_argument("--rounding-band", type=int, default=0, metavar="N",
                        help="fp32: also run plain and apply --fp32-equivalent on the batch's rows in N other seeded "
                             "orders (the same step in exact arithmetic; see rounding_band in the output)")
    parser.add_argument("--gemmtune", default=None, help="the gemmtune binary (default: build/gemmtune, else PATH)")
    parser.add_argument("--db-dir", help="where the dbs, reports and logs go (default: a new temporary directory)")
    parser.add_argument("--out", help="default: results/<gpu>/apply_step.json")
    parser.add_argument("--merge", nargs="+", metavar="PART", help="join these runs' files into --out")
    # The child process's own arguments (one variant's run).
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=MODES, default="tf32", help=argparse.SUPPRESS)
    parser.add_argument("--d", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--hidden", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--tokens", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    parser.add_argument("--graph", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--fp64", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rows-seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.steps < 1 or args.timed_steps < 1 or args.repeats < 1:
        parser.error("--steps, --timed-steps and --repeats must be at least 1")
    if args.rounding_band < 0:
        parser.error("--rounding-band must be 0 or more")
    if args.child:
        return run_child(args)
    if args.merge:
        if not args.out:
            parser.error("--merge needs --out")
        write(merge(args.merge), args.out)
        return 0
    args.gemmtune = args.gemmtune or default_gemmtune()
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())
