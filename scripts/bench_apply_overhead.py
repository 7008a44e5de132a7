#!/usr/bin/env python3
"""The host time `gemmtune apply` adds to a program's cuBLAS call (issue 50); writes results/<gpu>/apply_overhead.json.

The program is bench/apply_call_overhead.cu, plain cuBLAS: per spec (mode:MxNxK, column-major NN) it times two
cublasSgemm_v2 calls on the host, `gemm` (alpha 1, beta 0) and `gemm_beta1` (beta 1, which apply's rule leaves to
cuBLAS), queued behind a spin kernel so no call waits on the GPU (see its header). It runs as four processes:
  plain          no apply (run first and again last: the two give the noise of comparing processes)
  apply_no_entry under `gemmtune apply` with a db the trace filled with misses only: every call passes through
  apply_tuned    under `gemmtune apply` with that db swept (`sweep --from-misses`): `gemm` is routed, `gemm_beta1`
                 passes through by the rule
The dbs come from the documented loop: `gemmtune trace --gemms --db` of the program, then `sweep --from-misses`.
Per record: host_us (median over rounds, p10, p90), gpu_us, extra_us (host_us minus plain's, the mean of the two
plain runs) and the apply report's outcome. Targets: a call passed through adds <= 1 us; a routed call's host time
is at most the real call's + 2 us.

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
DEFAULT_SPECS = ["fp32:64x64x64", "tf32:64x64x64", "fp32:4096x777x1024", "tf32:4096x777x1024",
                 "fp32:4111x999x1030", "tf32:4111x999x1030"]
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


def dims(record):
    return sorted((record["m"], record["n"], record["k"]))


def outcome(report, record, variant):
    """What apply did with the record's call, from its report: "routed: <candidate>" or "passed through: <why>"."""
    if report is None:
        return "plain"
    rows = [r for r in report["rows"] if sorted(int(x) for x in shape_of(r["problem"])) == dims(record)]
    routed = [r for r in rows if r["routed_calls"] > 0]
    if record["call"] == "gemm" and variant == "apply_tuned" and routed:
        return "routed: " + routed[0]["candidate"]
    passed = [r for r in rows if r["routed_calls"] == 0 and r["reason"]]
    if record["call"] == "gemm_beta1":
        passed = [r for r in passed if "beta" in r["reason"]] or passed
    return "passed through: " + (passed[0]["reason"] if passed else "(no report row)")


def shape_of(problem):
    for part in problem.split(":"):
        pieces = part.split("x")
        if len(pieces) == 3 and all(p.isdigit() for p in pieces):
            return pieces
    return ["0", "0", "0"]


def records_of(runs, reports):
    """One record per (spec, call, variant), extra_us against the mean of the plain runs' host_us."""
    plain = {}
    for name in ("plain_first", "plain_last"):
        for r in runs[name]["records"]:
            plain.setdefault((r["spec"], r["call"]), []).append(r["host_us"])
    out = []
    for variant in ("plain", "apply_no_entry", "apply_tuned"):
        source = runs["plain_first"] if variant == "plain" else runs[variant]
        for r in source["records"]:
            base = plain[(r["spec"], r["call"])]
            rec = dict(r, variant=variant, plain_host_us=sum(base) / len(base),
                       plain_noise_us=max(base) - min(base), outcome=outcome(reports.get(variant), r, variant))
            if variant == "plain":
                rec["host_us"] = rec["plain_host_us"]
            rec["extra_us"] = rec["host_us"] - rec["plain_host_us"]
            out.append(rec)
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
    for name, db in (("plain_first", None), ("apply_no_entry", untuned), ("apply_tuned", tuned), ("plain_last", None)):
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
    gpu = runs["plain_first"]["gpu"]
    doc = {"schema": "gemmtune.apply_overhead", "schema_version": 1, "gpu": gpu, "gpu_slug": gpu_slug(gpu),
           "method": __doc__.split("\n\n")[1], "commands": [" ".join(sys.argv)], "records": records,
           "targets": {"pass_through_max_extra_us": PASS_THROUGH_MAX_US, "routed_max_extra_us": ROUTED_MAX_US,
                       "checks": checks, "met": all(c["met"] for c in checks)},
           "reports": reports}
    out = args.out or os.path.join(HERE, os.pardir, "results", gpu_slug(gpu), "apply_overhead.json")
    write(doc, out)
    print(f"{'spec':22} {'call':10} {'variant':15} {'host_us':>8} {'extra_us':>8}  outcome")
    for r in records:
        print(f"{r['spec']:22} {r['call']:10} {r['variant']:15} {r['host_us']:8.2f} {r['extra_us']:8.2f}  "
              f"{r['outcome']}")
    met = sum(c["met"] for c in checks)
    print(f"targets met: {met} of {len(checks)} (pass-through <= +{PASS_THROUGH_MAX_US} us, routed <= "
          f"+{ROUTED_MAX_US} us); plain-run noise up to {max(r['plain_noise_us'] for r in records):.2f} us")
    print(f"bench_apply_overhead: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
