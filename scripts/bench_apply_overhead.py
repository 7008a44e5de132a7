#!/usr/bin/env python3
"""The host time `gemmtune apply` adds to a program's cuBLAS call (issue 50); writes results/<gpu>/apply_overhead.json.

The program is bench/apply_call_overhead.cu, plain cuBLAS: per spec (mode:MxNxK, column-major NN) it times three
calls on the host, cublasSgemm_v2 `gemm` (alpha 1, beta 0) and `gemm_beta1` (beta 1, which apply's rule leaves to
cuBLAS), and `lt_bias`, cublasLtMatmul with the BIAS epilogue as PyTorch's addmm makes it, queued behind a spin kernel
so no call waits on the GPU, each timed in the same rounds through the name the program links (the shim, under
apply) and through the library's own symbol, so extra_us, the median of their paired difference, is what apply adds
to a call (see its header). It runs as three processes:
  plain          no apply: a control, where both ways are libcublas's own and extra_us is the pairing's noise
  apply_no_entry under `gemmtune apply` with a db the trace filled with misses only: every call passes through
  apply_tuned    under `gemmtune apply` with that db swept (`sweep --from-misses`): `gemm` and `lt_bias` are
                 routed (unless the sweep chose cuBLAS's own call), `gemm_beta1` passes through by the rule
The dbs come from the documented loop: `gemmtune trace --gemms --db` of the program, then `sweep --from-misses`.
Per record: host_us (median over rounds, p10, p90), real_host_us (libcublas's own), extra_us (p10, p90), gpu_us,
plain_noise_us (the control's |extra_us|) and the apply report's outcome. Targets: a call passed through adds <= 1 us;
a routed call's host time is at most the real call's + 2 us.

usage: bench_apply_overhead.py [--gemmtune PATH] [--caller PATH] [--specs SPEC,...] [--rounds 100] [--work DIR]
                               [--out FILE]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from bench_torch_step import gpu_slug, write

HERE = os.path.dirname(os.path.abspath(__file__))
# The last is row-major 1500x1079x799, where the H200's first-use trial picked a `+pad` candidate (three launches):
# in a process with PyTorch such a call cost 16-25 us more host time than a one-launch call
# (results/nvidia-h200/python_call_overhead.json), and here it is timed without PyTorch.
DEFAULT_SPECS = ["fp32:64x64x64", "tf32:64x64x64", "fp32:4096x777x1024", "tf32:4096x777x1024",
                 "fp32:4111x999x1030", "tf32:4111x999x1030", "tf32:1079x1500x799"]
PASS_THROUGH_MAX_US = 1.0
ROUTED_MAX_US = 2.0


def run(cmd, log):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    with open(log, "a") as f:
        f.write("+ " + " ".join(cmd) + "\n")
        f.flush()
        result = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        sys.exit(f"bench_apply_overhead: {os.path.basename(cmd[0])} {cmd[1]} exited with {result.returncode} "
                 f"(see {log})")


def caller_command(caller, out, specs, rounds):
    return [caller, "--json", out, "--rounds", str(rounds)] + specs


def apply_command(gemmtune, db, report, command):
    return [gemmtune, "apply", "--db", db, "--report", report, "--"] + command


def rows_of(report, record):
    """The report rows of the record's call. The routable calls' problem keys ("fwd:NxMxK:nn:row:none|bias:MODE",
    cuBLAS's column-major m x n being our row-major n x m); the beta-1 call's label ("fp32 m M n N k K ...", which has no mode:
    both modes' beta-1 calls share it)."""
    if record["call"] == "gemm_beta1":
        label = f"m {record['m']} n {record['n']} k {record['k']} "
        return [r for r in report["rows"] if label in r["problem"] and not r["problem"].startswith("fwd:")]
    lt = record["call"] == "lt_bias"
    api, epilogue = ("cublasLtMatmul", ":bias:") if lt else ("cublasSgemm_v2", ":none:")
    head = f"fwd:{record['n']}x{record['m']}x{record['k']}:"
    return [r for r in report["rows"] if r["api"] == api and r["problem"].startswith(head) and epilogue in r["problem"]
            and r["problem"].endswith(":" + record["mode"])]


def outcome(report, record):
    """What apply did with the record's call, from its report: "routed: <candidate>" or "passed through: <why>"."""
    if report is None:
        return "plain"
    rows = rows_of(report, record)
    if not rows:
        return "passed through: (no report row)"
    routed = [r for r in rows if r["routed_calls"] > 0]
    if routed:
        return "routed: " + routed[0]["candidate"]
    return "passed through: " + rows[0]["reason"]


def records_of(runs, reports):
    """One record per (spec, call, variant): the caller's own, its outcome added, and the plain run's extra_us (a
    control: there the linked name is libcublas's own) as the noise of the pairing."""
    noise = {(r["spec"], r["call"]): abs(r["extra_us"]) for r in runs["plain"]["records"]}
    out = []
    for variant in ("plain", "apply_no_entry", "apply_tuned"):
        for r in runs[variant]["records"]:
            out.append(dict(r, variant=variant, plain_noise_us=noise[(r["spec"], r["call"])],
                            outcome=outcome(reports.get(variant), r)))
    return out


def verdicts(records):
    """Per applied record, the target it is held to: routed <= plain + 2 us, passed through <= plain + 1 us."""
    out = []
    for r in records:
        if r["variant"] == "plain":
            continue
        routed = r["outcome"].startswith("routed")
        limit = ROUTED_MAX_US if routed else PASS_THROUGH_MAX_US
        out.append({"spec": r["spec"], "call": r["call"], "variant": r["variant"],
                    "kind": "routed" if routed else "pass_through", "extra_us": r["extra_us"], "limit_us": limit,
                    "met": r["extra_us"] <= limit})
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gemmtune", default=os.path.join(HERE, os.pardir, "build", "gemmtune"))
    parser.add_argument("--caller", default=os.path.join(HERE, os.pardir, "build", "bench", "apply_call_overhead"))
    parser.add_argument("--specs", default=",".join(DEFAULT_SPECS))
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--work", help="where the dbs, reports and log go (default: a new temporary directory)")
    parser.add_argument("--out", help="default: results/<gpu>/apply_overhead.json")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    specs = [s for s in args.specs.split(",") if s]
    for tool in (args.gemmtune, args.caller):
        if not os.access(tool, os.X_OK):
            sys.exit(f"bench_apply_overhead: {tool} is not an executable (build it first)")
    work = args.work or tempfile.mkdtemp(prefix="gemmtune-apply-overhead-")
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, "bench_apply_overhead.log")

    untuned, tuned = os.path.join(work, "untuned.db"), os.path.join(work, "tuned.db")
    for path in (untuned, tuned):
        if os.path.exists(path):
            os.remove(path)
    run([args.gemmtune, "trace", "--gemms", "--db", untuned, "--no-tables", "--"] +
        caller_command(args.caller, os.path.join(work, "trace.json"), specs, 1), log)
    shutil.copyfile(untuned, tuned)
    run([args.gemmtune, "sweep", "--from-misses", "--db", tuned], log)

    runs, reports = {}, {}
    for name, db in (("plain", None), ("apply_no_entry", untuned), ("apply_tuned", tuned)):
        out = os.path.join(work, name + ".json")
        command = caller_command(args.caller, out, specs, args.rounds)
        if db:
            report = os.path.join(work, name + ".report.json")
            command = apply_command(args.gemmtune, db, report, command)
        run(command, log)
        with open(out) as f:
            runs[name] = json.load(f)
        if db:
            with open(report) as f:
                reports[name] = json.load(f)

    records = records_of(runs, reports)
    checks = verdicts(records)
    gpu = runs["plain"]["gpu"]
    doc = {"schema": "gemmtune.apply_overhead", "schema_version": 1, "gpu": gpu, "gpu_slug": gpu_slug(gpu),
           "method": __doc__.split("\n\n")[1], "commands": [" ".join(sys.argv)], "records": records,
           "targets": {"pass_through_max_extra_us": PASS_THROUGH_MAX_US, "routed_max_extra_us": ROUTED_MAX_US,
                       "checks": checks, "met": all(c["met"] for c in checks)},
           "reports": reports}
    out = args.out or os.path.join(HERE, os.pardir, "results", gpu_slug(gpu), "apply_overhead.json")
    write(doc, out)
    print(f"{'spec':22} {'call':10} {'variant':15} {'host_us':>8} {'own_us':>8} {'extra_us':>8}  outcome")
    for r in records:
        print(f"{r['spec']:22} {r['call']:10} {r['variant']:15} {r['host_us']:8.2f} {r['real_host_us']:8.2f} "
              f"{r['extra_us']:8.2f}  {r['outcome'][:110]}")
    met = sum(c["met"] for c in checks)
    print(f"targets met: {met} of {len(checks)} (pass-through <= +{PASS_THROUGH_MAX_US} us, routed <= "
          f"+{ROUTED_MAX_US} us); plain-run noise up to {max(r['plain_noise_us'] for r in records):.2f} us")
    print(f"bench_apply_overhead: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
