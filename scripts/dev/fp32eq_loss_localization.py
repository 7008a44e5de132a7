#!/usr/bin/env python3
"""Which GEMMs of bench_apply_step.py's d4096 fp32 step move its losses under `gemmtune apply --fp32-equivalent`: the
step with one group of its problems routed at a time (the forward GEMMs nt, the input gradients nn, the weight
gradients tn; every other problem's algo_cache row deleted from a copy of the db, so those calls stay with cuBLAS),
each step in a process of its own, printed against plain fp32's and the fp64 run's losses (issue 50;
results/nvidia-h200/fp32eq_loss_localization.txt). Run from the repository root on a GPU machine with PyTorch.

usage: scripts/dev/fp32eq_loss_localization.py WORK_DIR
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

if len(sys.argv) != 2:
    sys.exit("usage: " + __doc__.split("usage: ")[1].strip())
W, gemmtune, bench = sys.argv[1], "build/gemmtune", "scripts/bench_apply_step.py"
spec = ["--mode", "fp32", "--d", "4096", "--hidden", "16384", "--tokens", "1001"]
def child(out, extra=(), steps=50, timed=3):
    return [sys.executable, bench, "--child", *spec, "--steps", str(steps), "--timed-steps", str(timed),
            "--child-out", out, *extra]
def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode: print(r.stdout[-2000:]); sys.exit(f"failed: {cmd}")
os.makedirs(W, exist_ok=True)
db = f"{W}/t.db"
run([gemmtune, "trace", "--gemms", "--db", db, "--no-tables", "--", *child(f"{W}/trace.json", steps=3, timed=1)])
run([gemmtune, "sweep", "--from-misses", "--db", db, "--fp32-equivalent"])
runs = {"plain": child(f"{W}/plain.json"), "fp64": child(f"{W}/fp64.json", ["--fp64"])}
for group in ("all", "nt", "nn", "tn"):
    g_db = f"{W}/{group}.db"
    shutil.copyfile(db, g_db)
    if group != "all":
        c = sqlite3.connect(g_db)
        c.execute("DELETE FROM algo_cache WHERE problem_key NOT LIKE ?", (f"%:{group}:%",))
        c.commit(); c.close()
    runs[f"eq_{group}"] = [gemmtune, "apply", "--db", g_db, "--fp32-equivalent", "--report", f"{W}/{group}.report.json",
                           "--", *child(f"{W}/eq_{group}.json")]
losses = {}
for name, cmd in runs.items():
    run(cmd)
    losses[name] = json.load(open(cmd[cmd.index("--child-out") + 1]))["losses"]
def dist(a, b, upto):
    return max(abs(x - y) / abs(y) for x, y in zip(a[:upto], b[:upto]))
print(f"{'run':10} {'vs fp64 <=30':>13} {'<=40':>9} {'<=50':>9} {'vs plain <=40':>14} {'<=50':>9}  routed")
for name, l in losses.items():
    routed = ""
    if name.startswith("eq_"):
        rep = json.load(open(f"{W}/{name[3:]}.report.json"))
        routed = f"{rep['routed_calls']}/{rep['calls']}"
    print(f"{name:10} {dist(l, losses['fp64'], 30):13.1e} {dist(l, losses['fp64'], 40):9.1e} "
          f"{dist(l, losses['fp64'], 50):9.1e} {dist(l, losses['plain'], 40):14.1e} {dist(l, losses['plain'], 50):9.1e}  {routed}")
json.dump(losses, open(f"{W}/losses.json", "w"))
