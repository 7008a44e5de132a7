#!/usr/bin/env python3
"""A PyTorch training step through gemmtune.torch.FusedLinear against nn.Linear, eager and under CUDA graphs, and
against torch.compile(mode="max-autotune-no-cudagraphs"); writes results/<gpu>/torch_step.json.

The model: 4 FFN blocks [Linear(d, 4d) + GELU(tanh) + Linear(4d, d)] on `tokens` rows (d_model d), loss
mean((y - target)^2), AdamW (lr 1e-4, fused, capturable). Variants:
  nn_eager     nn.Linear + nn.GELU(approximate="tanh"), eager
  nn_graph     the same step (forward, backward, optimizer) captured whole by torch.cuda.graph, replayed
  compiled     torch.compile(model, mode="max-autotune-no-cudagraphs") of the nn model, optimizer eager
  fused_eager  FusedLinear(d, 4d, activation="gelu") + FusedLinear(4d, d, activation="none"), eager
  fused_graph  the fused step captured whole, replayed
Modes: tf32 and fp32 (PyTorch's matmul TF32 switch on and off; FusedLinear mode tf32 / fp32), and fp32_equivalent
(FusedLinear fp32 on a runtime with fp32_equivalent=True, tuned with --fp32-equivalent; its nn side is fp32's).

Every variant starts from the same initial weights (one nn model's state_dict, loaded into each) and the same data.
Each variant: warm-up steps (which resolve FusedLinear's problems, capture graphs, compile), the initial state loaded
back in place, then --steps steps whose losses are recorded, then --timed-steps more; step_ms is the median of CUDA
event pairs around each of those timed steps (p10, p90 beside it).

The runtime is tuned as a user would: a Runtime on a fresh db runs one recorded training step (every problem a miss),
flushes, `gemmtune sweep --from-misses` tunes the misses (gemmtune.sweep_misses), and a fresh Runtime on that db runs
the benchmark. tune_s (recorded step + sweep) sits beside compile_s, the wall time of the compiled model's first step
less a step (Dynamo + Inductor + max-autotune, with a fresh Inductor cache dir so nothing comes from an earlier run).

usage: bench_torch_step.py [--sizes 1024,2048,4096] [--tokens 1000,3000] [--modes tf32,fp32,fp32_equivalent]
                           [--variants nn_eager,fused_eager,nn_graph,fused_graph,compiled] [--steps 50]
                           [--timed-steps 30] [--db-dir DIR] [--out FILE]
       bench_torch_step.py --merge PART.json [PART.json ...] --out FILE
Each run writes the records it made, a part of the whole when run on a subset, and rewrites its file after every
record, marked "partial": true until the run ends, so a run cut by a time limit keeps what it measured; --merge joins
parts and recomputes the speedups and loss comparisons over all of them.
"""
import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time

VARIANTS = ("nn_eager", "fused_eager", "nn_graph", "fused_graph", "compiled")
MODES = ("tf32", "fp32", "fp32_equivalent")
BLOCKS = 4
LR = 1e-4
WARMUP_STEPS = 3
MODEL = ("4 x [Linear(d, 4d) + GELU(tanh) + Linear(4d, d)], no residual; loss mean((y - target)^2); "
         f"AdamW(lr={LR}, fused=True, capturable=True)")
LOSS_TOLERANCE = {"tf32": 1e-3, "fp32": 1e-5, "fp32_equivalent": 1e-5}


def int_list(text):
    return [int(x) for x in text.split(",") if x]


def choice_list(choices):
    def parse(text):
        items = [x for x in text.split(",") if x]
        for x in items:
            if x not in choices:
                raise argparse.ArgumentTypeError(f"'{x}' is not one of {', '.join(choices)}")
        return items
    return parse


def gpu_slug(name):
    """DeviceIdentity::slug(): lower-case alphanumerics, every other run of characters one '-'."""
    out = ""
    for c in name:
        if c.isalnum():
            out += c.lower()
        elif out and out[-1] != "-":
            out += "-"
    return out.strip("-") or "unknown-gpu"


def torch_mode(torch, mode):
    """PyTorch's float32 matmul precision for a mode: TF32 tensor cores for tf32, IEEE fp32 otherwise."""
    tf32 = mode == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")


def build_model(torch, variant, d, mode, runtime):
    """The MLP of nn.Linear + nn.GELU or of FusedLinear layers; both name their parameters blocks.i.up.weight, ...,
    so one state_dict initializes either."""
    import torch.nn as nn

    class FFN(nn.Module):
        def __init__(self, up, act, down):
            super().__init__()
            self.up, self.act, self.down = up, act, down

        def forward(self, x):
            return self.down(self.act(self.up(x)))

    class MLP(nn.Module):
        def __init__(self, blocks):
            super().__init__()
            self.blocks = nn.ModuleList(blocks)

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return x

    blocks = []
    for _ in range(BLOCKS):
        if variant.startswith("fused"):
            from gemmtune.torch import FusedLinear
            layer_mode = "tf32" if mode == "tf32" else "fp32"
            blocks.append(FFN(FusedLinear(d, 4 * d, activation="gelu", mode=layer_mode, runtime=runtime, device="cuda"),
                              nn.Identity(),
                              FusedLinear(4 * d, d, activation="none", mode=layer_mode, runtime=runtime,
                                          device="cuda")))
        else:
            blocks.append(FFN(nn.Linear(d, 4 * d, device="cuda"), nn.GELU(approximate="tanh"),
                              nn.Linear(4 * d, d, device="cuda")))
    return MLP(blocks)


def step_data(torch, d, tokens):
    """The initial weights (an nn model's state_dict, which loads into either model) and the rows and targets of
    (d_model, tokens): the same for every variant and mode."""
    torch.manual_seed(1234)
    init_state = {k: v.detach().clone() for k, v in build_model(torch, "nn_eager", d, "fp32", None)
                  .state_dict().items()}
    return init_state, torch.randn(tokens, d, device="cuda"), torch.randn(tokens, d, device="cuda")


def reset_in_place(torch, model, optimizer, init_state):
    """The initial weights and a fresh optimizer state, written into the existing tensors (a captured graph keeps
    pointing at them)."""
    with torch.no_grad():
        for name, value in model.state_dict().items():
            value.copy_(init_state[name])
        for state in optimizer.state.values():
            for value in state.values():
                if torch.is_tensor(value):
                    value.zero_()


class StepRunner:
    """One variant's training step, eager or replayed from a captured graph."""

    def __init__(self, torch, variant, model, optimizer, x, target):
        self.torch, self.model, self.optimizer, self.x, self.target = torch, model, optimizer, x, target
        self.graphed = variant.endswith("_graph")
        self.graph = None
        self.static_loss = None

    def eager_step(self):
        self.optimizer.zero_grad(set_to_none=True)
        loss = ((self.model(self.x) - self.target) ** 2).mean()
        loss.backward()
        self.optimizer.step()
        return loss

    def warm_up(self):
        """WARMUP_STEPS eager steps (on a side stream where a graph is captured next, as torch.cuda.graph asks), then
        the capture. Returns the first step's wall seconds."""
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            start = time.perf_counter()
            self.eager_step()
            torch.cuda.synchronize()
            first = time.perf_counter() - start
            for _ in range(WARMUP_STEPS - 1):
                self.eager_step()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        if self.graphed:
            self.graph = torch.cuda.CUDAGraph()
            self.optimizer.zero_grad(set_to_none=True)
            with torch.cuda.graph(self.graph):
                self.static_loss = ((self.model(self.x) - self.target) ** 2).mean()
                self.static_loss.backward()
                self.optimizer.step()
            torch.cuda.synchronize()
        return first

    def step(self):
        if self.graphed:
            self.graph.replay()
            return self.static_loss
        return self.eager_step()


def make_optimizer(torch, model):
    return torch.optim.AdamW(model.parameters(), lr=LR, fused=True, capturable=True)


def run_variant(torch, variant, d, tokens, mode, init_state, x, target, runtime, args):
    torch_mode(torch, "fp32" if mode == "fp32_equivalent" else mode)
    model = build_model(torch, variant, d, mode, runtime)
    model.load_state_dict(init_state)
    optimizer = make_optimizer(torch, model)
    stepped = model
    if variant == "compiled":
        torch._dynamo.reset()
        stepped = torch.compile(model, mode="max-autotune-no-cudagraphs", dynamic=False)
    runner = StepRunner(torch, variant, stepped, optimizer, x, target)
    first_step_s = runner.warm_up()
    reset_in_place(torch, model, optimizer, init_state)  # the module itself: a compiled one renames its state
    losses = torch.empty(args.steps, device="cuda")
    total = args.steps + args.timed_steps
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(total)]
    for i in range(total):
        start, stop = events[i]
        start.record()
        loss = runner.step()
        stop.record()
        if i < args.steps:
            losses[i].copy_(loss.detach())
    torch.cuda.synchronize()
    times = sorted(start.elapsed_time(stop) for start, stop in events[args.steps:])
    record = {"d_model": d, "tokens": tokens, "mode": mode, "variant": variant,
              "step_ms": statistics.median(times), "step_ms_p10": times[len(times) // 10],
              "step_ms_p90": times[(9 * len(times)) // 10], "steps_timed": len(times),
              "first_step_s": first_step_s, "losses": losses.tolist()}
    if variant == "compiled":
        record["compile_s"] = first_step_s - record["step_ms"] / 1000.0
    del runner, stepped, model, optimizer
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return record


def tune(torch, gemmtune, d, tokens, mode, init_state, x, target, db):
    """One recorded step through a Runtime on a fresh db, flush, `sweep --from-misses`: what a user runs."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    fp32_equivalent = mode == "fp32_equivalent"
    torch_mode(torch, "fp32" if fp32_equivalent else mode)
    recorder = gemmtune.Runtime(db, fp32_equivalent=fp32_equivalent)
    model = build_model(torch, "fused_eager", d, mode, recorder)
    model.load_state_dict(init_state)
    runner = StepRunner(torch, "fused_eager", model, make_optimizer(torch, model), x, target)
    torch.cuda.synchronize()
    start = time.perf_counter()
    runner.eager_step()
    torch.cuda.synchronize()
    recorder.flush()
    record_s = time.perf_counter() - start
    del runner, model, recorder
    torch.cuda.empty_cache()
    start = time.perf_counter()
    # Exit 1 (a candidate failed verification) still leaves every verified one cached: noted, not fatal.
    done = gemmtune.sweep_misses(db, fp32_equivalent=fp32_equivalent, capture_output=True, check=False)
    sweep_s = time.perf_counter() - start
    with open(os.path.splitext(db)[0] + ".sweep.log", "w") as log:
        log.write(done.stdout + done.stderr)
    if done.returncode not in (0, 1):
        sys.exit(f"bench_torch_step: the sweep of {db} failed (exit {done.returncode}); see its .sweep.log")
    return {"d_model": d, "tokens": tokens, "mode": mode, "record_step_s": record_s, "sweep_s": sweep_s,
            "tune_s": record_s + sweep_s, "sweep_exit": done.returncode, "db": os.path.basename(db)}


def tuned_step_data(torch, gemmtune, d, tokens, mode, db):
    """step_data, tuned into `db` as `tune` does, and a Runtime on it: where the dev probes start."""
    init_state, x, target = step_data(torch, d, tokens)
    tune(torch, gemmtune, d, tokens, mode, init_state, x, target, db)
    return init_state, x, target, gemmtune.Runtime(db)


def document(gpu, torch_version, gemmtune_version, device_key, records, tuning):
    return {"schema": "gemmtune.torch_step", "schema_version": 1, "gpu": gpu, "gpu_slug": gpu_slug(gpu),
            "torch": torch_version, "gemmtune": gemmtune_version, "device_key": device_key, "model": MODEL,
            "timing": (f"CUDA events around each step; median of --timed-steps steps after {WARMUP_STEPS} warm-up "
                       "steps and the --steps loss steps"),
            "loss_tolerance": LOSS_TOLERANCE, "commands": [" ".join(sys.argv)], "records": records,
            "tuning": tuning}


def write(doc, out):
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(out + ".tmp", out)


def default_out(slug):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "results", slug, "torch_step.json")


def run(args):
    """Every variant of every configuration; the output file is rewritten after each record (with "partial": true),
    so a run cut short by a time limit keeps what it measured."""
    # A fresh Inductor cache, set before torch is imported: compile_s must include the autotuning, not an earlier
    # run's cached choices.
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="gemmtune-bench-inductor-"))
    import torch
    import gemmtune

    if not torch.cuda.is_available():
        sys.exit("bench_torch_step: PyTorch sees no CUDA GPU")
    gpu = torch.cuda.get_device_name()
    out = args.out or default_out(gpu_slug(gpu))
    os.makedirs(args.db_dir, exist_ok=True)
    records, tuning = [], []
    device_key = None
    for d in args.sizes:
        for tokens in args.tokens:
            init_state, x, target = step_data(torch, d, tokens)
            for mode in args.modes:
                runtime = None
                if any(v.startswith("fused") for v in args.variants):
                    db = os.path.join(args.db_dir, f"torch_step_d{d}_t{tokens}_{mode}.db")
                    tuning.append(tune(torch, gemmtune, d, tokens, mode, init_state, x, target, db))
                    runtime = gemmtune.Runtime(db, fp32_equivalent=mode == "fp32_equivalent")
                    device_key = runtime.device_key
                    print(f"tuned d={d} tokens={tokens} {mode}: {tuning[-1]['tune_s']:.1f} s "
                          f"({runtime.cache_size} entries)", file=sys.stderr)
                for variant in args.variants:
                    if mode == "fp32_equivalent" and not variant.startswith("fused"):
                        continue  # PyTorch has no such mode: its side is fp32's
                    record = run_variant(torch, variant, d, tokens, mode, init_state, x, target, runtime, args)
                    records.append(record)
                    write(dict(document(gpu, torch.__version__, gemmtune.__version__, device_key, records, tuning),
                               partial=True), out)
                    print(f"d={d} tokens={tokens} {mode} {variant}: {record['step_ms']:.3f} ms", file=sys.stderr)
                del runtime
    return document(gpu, torch.__version__, gemmtune.__version__, device_key, records, tuning)


def merge(paths):
    """The parts' records and tuning in one document ("partial" where any part was cut short)."""
    merged = None
    partial = False
    for path in paths:
        try:
            with open(path) as f:
                part = json.load(f)
            if not isinstance(part, dict) or not all(k in part for k in ("gpu", "records", "tuning")):
                raise ValueError("not a bench_torch_step output (no gpu, records or tuning)")
        except (OSError, ValueError) as e:
            sys.exit(f"bench_torch_step: cannot merge {path}: {e}")
        partial = partial or part.get("partial", False)
        if merged is None:
            merged = copy.deepcopy(part)
            continue
        if part["gpu"] != merged["gpu"]:
            sys.exit(f"bench_torch_step: {path} is from {part['gpu']}, not {merged['gpu']}: compare within one GPU")
        merged["commands"] += part["commands"]
        merged["device_key"] = merged.get("device_key") or part.get("device_key")
        for key, fields in (("records", ("d_model", "tokens", "mode", "variant")),
                            ("tuning", ("d_model", "tokens", "mode"))):
            index = {tuple(r[f] for f in fields): r for r in merged[key]}
            index.update({tuple(r[f] for f in fields): r for r in part[key]})
            merged[key] = list(index.values())
    merged.pop("partial", None)
    if partial:
        merged["partial"] = True
    return merged


def summarize(doc):
    """Speedups of the fused variants over nn.Linear's and compiled, and each record's largest relative loss
    difference from nn_eager's (fp32_equivalent against fp32's nn side) over the recorded steps."""
    by_key = {(r["d_model"], r["tokens"], r["mode"], r["variant"]): r for r in doc["records"]}
    tuning = {(t["d_model"], t["tokens"], t["mode"]): t for t in doc["tuning"]}
    speedups = []
    for (d, tokens, mode, variant), r in sorted(by_key.items()):
        torch_side = "fp32" if mode == "fp32_equivalent" else mode
        reference = by_key.get((d, tokens, torch_side, "nn_eager"))
        if reference is not None and variant != "nn_eager":
            n = min(len(r["losses"]), len(reference["losses"]))
            r["loss_rel_diff_max_vs_nn_eager"] = max(
                abs(a - b) / abs(b) for a, b in zip(r["losses"][:n], reference["losses"][:n]))
        if variant.startswith("fused") and (d, tokens, mode) in tuning:
            r["tune_s"] = tuning[(d, tokens, mode)]["tune_s"]
    for d, tokens, mode in sorted({(d, t, m) for d, t, m, _ in by_key}):
        torch_side = "fp32" if mode == "fp32_equivalent" else mode
        entry = {"d_model": d, "tokens": tokens, "mode": mode}
        for ours, theirs in (("fused_eager", "nn_eager"), ("fused_eager", "compiled"), ("fused_graph", "nn_graph"),
                             ("fused_graph", "nn_eager"), ("fused_graph", "compiled")):
            a, b = by_key.get((d, tokens, mode, ours)), by_key.get((d, tokens, torch_side, theirs))
            if a and b:
                entry[f"{ours}_vs_{theirs}"] = b["step_ms"] / a["step_ms"]
        compiled, tuned = by_key.get((d, tokens, torch_side, "compiled")), tuning.get((d, tokens, mode))
        if compiled and tuned:
            entry["tune_s"], entry["compile_s"] = tuned["tune_s"], compiled["compile_s"]
        if len(entry) > 3:
            speedups.append(entry)
    doc["speedups"] = speedups
    return doc


def print_table(doc):
    print(f"{doc['gpu']}: step time (ms, median); fused's speedup over nn.Linear run the same way (eager or graph) "
          f"and over compiled; largest relative loss difference from nn_eager")
    print(f"{'d':>5} {'tokens':>6} {'mode':<16} {'variant':<12} {'step_ms':>9} {'x nn':>7} {'x compiled':>10} "
          f"{'loss diff':>10}")
    by_key = {(r["d_model"], r["tokens"], r["mode"], r["variant"]): r for r in doc["records"]}
    for (d, tokens, mode, variant), r in sorted(by_key.items()):
        torch_side = "fp32" if mode == "fp32_equivalent" else mode
        ratios = []
        for theirs in (variant.replace("fused", "nn"), "compiled"):
            b = by_key.get((d, tokens, torch_side, theirs))
            ratios.append(f"{b['step_ms'] / r['step_ms']:.3f}" if b and variant.startswith("fused") else "")
        diff = r.get("loss_rel_diff_max_vs_nn_eager")
        print(f"{d:>5} {tokens:>6} {mode:<16} {variant:<12} {r['step_ms']:>9.3f} {ratios[0]:>7} {ratios[1]:>10} "
              f"{'' if diff is None else f'{diff:.2e}':>10}")
    for t in doc["tuning"]:
        print(f"tuning d={t['d_model']} tokens={t['tokens']} {t['mode']}: recorded step {t['record_step_s']:.1f} s + "
              f"sweep {t['sweep_s']:.1f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int_list, default=[1024, 2048, 4096], help="d_model values")
    parser.add_argument("--tokens", type=int_list, default=[1000, 3000], help="rows per step")
    parser.add_argument("--modes", type=choice_list(MODES), default=list(MODES))
    parser.add_argument("--variants", type=choice_list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--steps", type=int, default=50, help="steps whose losses are recorded")
    parser.add_argument("--timed-steps", type=int, default=30, help="steps timed after those")
    parser.add_argument("--db-dir", default=os.path.join(tempfile.gettempdir(), "gemmtune-bench-torch-step"),
                        help="where the tuned dbs (one per size, tokens and mode) and sweep logs go")
    parser.add_argument("--merge", nargs="+", metavar="PART", help="join these part files")
    parser.add_argument("--out", help="the JSON to write (default: results/<gpu>/torch_step.json)")
    args = parser.parse_args()
    if args.steps < 1 or args.timed_steps < 1:
        parser.error("--steps and --timed-steps must be at least 1")
    doc = summarize(merge(args.merge) if args.merge else run(args))
    out = args.out or default_out(doc["gpu_slug"])
    write(doc, out)
    print_table(doc)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
