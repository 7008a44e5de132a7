#!/usr/bin/env python3
"""Compare the algo caches of two sweep dbs of one profile: the problem keys each completed, and per problem whether
the chosen candidates are the same, within noise of each other, or apart.

usage: compare_sweep_dbs.py A.db B.db [--json OUT.json] [--label-a A] [--label-b B]

Within noise: two different chosen candidates are within noise when, in each of the two sweeps, the other's median is
within 3% of the chosen one's or their p10-p90 ranges overlap (the same rule both ways, so a candidate that only won by
luck in one sweep and lost clearly in the other is apart). A candidate one sweep did not time to convergence (its
record says "pruned: ...") has only its first batch's statistics there; the rule reads them as they are.
Prints one line per difference, then a summary line "RESULT keys_same|keys_differ SAME NOISE APART"; exit 0.
Reads the dbs read-only (sqlite3 of Python's standard library).
"""
import argparse
import json
import sqlite3
import sys


def open_ro(path):
    return sqlite3.connect("file:" + path + "?mode=ro", uri=True)


def done(con):
    return {r[0] for r in con.execute("SELECT problem_key FROM problems_done")}


def chosen(con):
    return dict(con.execute("SELECT problem_key, candidate_id FROM algo_cache"))


def stats(con):
    """Per problem and candidate, (median, p10, p90, pruned) of the measurement behind problems_done."""
    q = ("SELECT m.problem_key, m.candidate_id, m.median_us, m.p10_us, m.p90_us, m.message FROM measurements m "
         "JOIN problems_done d ON d.problem_key = m.problem_key AND d.run_id = m.run_id "
         "AND d.device_key = m.device_key WHERE m.status = 'ok'")
    out = {}
    for p, cand, med, p10, p90, msg in con.execute(q):
        out.setdefault(p, {})[cand] = (med, p10, p90, (msg or "").startswith("pruned:"))
    return out


def close(s, a, b):
    """In one sweep's stats s: is b within noise of a?"""
    if a not in s or b not in s:
        return False
    (ma, la, ha, _), (mb, lb, hb, _) = s[a], s[b]
    return mb <= ma * 1.03 or (lb <= ha and la <= hb)


def compare(path_a, path_b):
    a, b = open_ro(path_a), open_ro(path_b)
    da, db = done(a), done(b)
    ca, cb = chosen(a), chosen(b)
    sa, sb = stats(a), stats(b)
    rows = []
    for p in sorted(set(ca) | set(cb)):
        x, y = ca.get(p), cb.get(p)
        if x == y:
            verdict = "same"
        elif x and y and close(sa.get(p, {}), x, y) and close(sb.get(p, {}), y, x):
            verdict = "within_noise"
        else:
            verdict = "apart"
        rows.append({"problem_key": p, "verdict": verdict, "a": x, "b": y,
                     "a_stats_in_a": sa.get(p, {}).get(x), "b_stats_in_a": sa.get(p, {}).get(y),
                     "a_stats_in_b": sb.get(p, {}).get(x), "b_stats_in_b": sb.get(p, {}).get(y)})
    count = {v: sum(1 for r in rows if r["verdict"] == v) for v in ("same", "within_noise", "apart")}
    return {
        "keys_a": len(da), "keys_b": len(db), "keys_same": da == db,
        "keys_only_in_a": sorted(da - db), "keys_only_in_b": sorted(db - da),
        "measurements_a": a.execute("SELECT count(*) FROM measurements").fetchone()[0],
        "measurements_b": b.execute("SELECT count(*) FROM measurements").fetchone()[0],
        "choices": len(rows), **count,
        "same_or_within_noise_share": (count["same"] + count["within_noise"]) / len(rows) if rows else 0.0,
        "differences": [r for r in rows if r["verdict"] != "same"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--json")
    ap.add_argument("--label-a", default="a")
    ap.add_argument("--label-b", default="b")
    args = ap.parse_args()
    c = compare(args.a, args.b)
    print(f"keys: {args.label_a} {c['keys_a']}, {args.label_b} {c['keys_b']}, same: {c['keys_same']}")
    print(f"measurements: {args.label_a} {c['measurements_a']}, {args.label_b} {c['measurements_b']}")
    for r in c["differences"]:
        tag = "within noise " if r["verdict"] == "within_noise" else "DIFFERENT    "
        print(f"{tag}{r['problem_key']}: {r['a']} {r['a_stats_in_a']} vs {r['b']} {r['b_stats_in_b']}")
    print(f"chosen: {c['same']} same, {c['within_noise']} within noise, {c['apart']} apart")
    print("RESULT", "keys_same" if c["keys_same"] else "keys_differ", c["same"], c["within_noise"], c["apart"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(c, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
