#!/usr/bin/env python3
"""How long `sweep --devices` workers wait for each other on one WAL db (issue 14's choice of one db over
per-worker dbs). Each worker process does what a sweep worker does per problem: one BEGIN IMMEDIATE transaction
with 30 measurement rows, the done-mark and a cache upsert, then `gpu_s` of "GPU time" (a sleep), into one WAL db
with synchronous=NORMAL and a 10 s busy timeout, as src/db/tuning_db.cpp opens it. The schema is gemmtune's own,
read from src/db/schema.cpp. No GPU needed.

    scripts/dev/wal_contention.py [WORKERS=8] [PROBLEMS=150] [GPU_S=0.1]
"""
import multiprocessing, os, re, sqlite3, sys, tempfile, time

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../src/db/schema.cpp")


def worker(path, index, problems, gpu_s, out):
    con = sqlite3.connect(path, timeout=10, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    run = con.execute(
        "INSERT INTO runs (device_key, gpu_name, cc_major, cc_minor, sm_count, driver, cuda_runtime, cublaslt_version,"
        " gemmtune_version, profile, started_at, sm_clock_max_mhz)"
        " VALUES ('k', 'g', 9, 0, 132, 'd', 13000, 130100, 'v', 'p', 't', 1980)").lastrowid
    waits, commits = [], []
    for i in range(problems):
        key = f"fwd:{index}x{i}x1:nn:row:none:tf32"
        t0 = time.perf_counter()
        con.execute("BEGIN IMMEDIATE")
        t1 = time.perf_counter()
        for c in range(30):
            con.execute(
                "INSERT INTO measurements (run_id, device_key, problem_key, candidate_id, backend, own_variant,"
                " heuristic_rank, status, message, verify_error, tolerance, median_us, p10_us, p90_us, mean_us,"
                " stddev_us, min_us, max_us, samples, timer, sm_clock_mhz) VALUES (?, 'k', ?, ?, 'own', 'v', 0, 'ok',"
                " '', 1e-4, 1e-3, 10, 9, 11, 10, 1, 9, 12, 60, 'cupti', 1980)", (run, key, f"own/v{c}"))
        con.execute("INSERT OR REPLACE INTO problems_done VALUES ('k', ?, ?, 't')", (key, run))
        con.execute(
            "INSERT OR REPLACE INTO algo_cache (device_key, problem_key, candidate_id, backend, own_variant,"
            " heuristic_rank, verify_error, tolerance, median_us, p10_us, p90_us, mean_us, stddev_us, min_us, max_us,"
            " samples, timer, sm_clock_mhz, run_id, origin, gemmtune_version, updated_at) VALUES ('k', ?, 'own/v0',"
            " 'own', 'v', 0, 1e-4, 1e-3, 10, 9, 11, 10, 1, 9, 12, 60, 'cupti', 1980, ?, '', 'v', 't')", (key, run))
        con.execute("COMMIT")
        t2 = time.perf_counter()
        waits.append(t1 - t0)
        commits.append(t2 - t1)
        time.sleep(gpu_s)
    out.put((waits, commits))


def main():
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    problems = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    gpu_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.1
    schema = re.search(r'kSchemaV1 = R"sql\((.*?)\)sql"', open(SCHEMA).read(), re.S).group(1)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "wal.db")
        con = sqlite3.connect(path)
        con.executescript(schema)
        con.execute("PRAGMA journal_mode=WAL")
        con.close()
        out = multiprocessing.Queue()
        procs = [multiprocessing.Process(target=worker, args=(path, w, problems, gpu_s, out)) for w in range(workers)]
        for p in procs:
            p.start()
        results = [out.get() for _ in procs]
        for p in procs:
            p.join()
    waits = sorted(w for r in results for w in r[0])
    commits = sorted(c for r in results for c in r[1])
    q = lambda v, f: v[min(len(v) - 1, int(f * len(v)))] * 1e3
    print(f"{workers} workers x {problems} problems, {gpu_s} s of GPU time each:")
    print(f"  wait for the write lock: median {q(waits, .5):.2f} ms, p99 {q(waits, .99):.1f} ms, max {waits[-1]*1e3:.1f} ms")
    print(f"  transaction:             median {q(commits, .5):.2f} ms, p99 {q(commits, .99):.1f} ms")
    print(f"  share of a problem's time spent waiting: {sum(waits) / (len(waits) * max(gpu_s, 1e-9)) * 100:.2f}%")


if __name__ == "__main__":
    main()
