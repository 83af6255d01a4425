"""Private BTL on comparisons that do not fit in memory: `pr.dp_btl_aggregate` out of core
(Parquet read in chunks) and on a local Dask cluster, against the in-memory pipeline where it
fits (the floor), with the peak memory of each run.

python benchmarks/bench_scale.py [--n 1e9] [--n-memory 1e8] [--workers 2] [--items 100]

Writes a Parquet file of n comparisons (winner, loser, user: int16, int16, int32; 1e7 users,
BTL outcomes on `--items` items) to a temporary folder, then runs each path in a fresh process
(its peak resident memory is that process's high-water mark) and prints seconds per 1e8
comparisons and the ratios to the in-memory path. Shared machines are noisy: read the ratios.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RUN = r"""
import sys, time, json
import numpy as np
import pyarrow.parquet as pq
import privrank as pr
how, path, n_items, workers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
t0 = time.perf_counter()
if how == "memory":
    t = pq.read_table(path)
    w, l, u = (t.column(c).to_numpy() for c in ("winner", "loser", "user"))
    del t
    res = pr.dp_btl_aggregate(np.column_stack([w, l, u]), n_items=n_items, epsilon=2.0, rng=0)
elif how == "chunks":
    res = pr.dp_btl_aggregate(path, n_items=n_items, epsilon=2.0, rng=0)
else:
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        t0 = time.perf_counter()  # the cluster's start is not the pipeline's time
        res = pr.dp_btl_aggregate(path, n_items=n_items, epsilon=2.0, rng=0, client=client)
        def hwm():
            line = [x for x in open("/proc/self/status") if x.startswith("VmHWM")][0]
            return int(line.split()[1]) * 1024
        worker_peak = max(client.run(hwm).values())
sec = time.perf_counter() - t0
hwm = [x for x in open("/proc/self/status") if x.startswith("VmHWM")][0]
print(json.dumps(dict(seconds=sec, peak=int(hwm.split()[1]) * 1024,
                      worker_peak=locals().get("worker_peak", 0),
                      kendall=int(pr.kendall_tau_distance(res.ranks, np.arange(n_items))),
                      n=int(res.diagnostics.get("n_comparisons", 0)))))
"""


def write(path, n, m, users=10_000_000, block=50_000_000, seed=0):
    "A Parquet file of n BTL comparisons on m items, in row groups of 1e6 rows"
    import pyarrow as pa
    import pyarrow.parquet as pq

    g = np.random.default_rng(seed)
    theta = np.linspace(2, -2, m)
    schema = pa.schema([("winner", pa.int16()), ("loser", pa.int16()), ("user", pa.int32())])
    with pq.ParquetWriter(path, schema) as w:
        for s in range(0, n, block):
            k = min(block, n - s)
            i = g.integers(0, m, k, dtype=np.int16)
            j = ((i + g.integers(1, m, k, dtype=np.int16)) % m).astype(np.int16)
            won = g.random(k) < 1 / (1 + np.exp(theta[j] - theta[i]))
            t = pa.table(
                {
                    "winner": np.where(won, i, j),
                    "loser": np.where(won, j, i),
                    "user": g.integers(0, users, k, dtype=np.int32),
                },
                schema=schema,
            )
            w.write_table(t, row_group_size=1_000_000)


def run(how, path, m, workers):
    import json

    out = subprocess.run(
        [sys.executable, "-c", RUN, how, str(path), str(m), str(workers)],
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise SystemExit(f"{how} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=1e9, help="comparisons out of core and on Dask")
    ap.add_argument("--n-memory", type=float, default=1e8, help="comparisons in memory")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--items", type=int, default=100)
    a = ap.parse_args()
    n, nm, m = int(a.n), int(a.n_memory), a.items
    folder = Path(tempfile.mkdtemp(prefix="privrank_bench_scale_"))
    try:
        t0 = time.perf_counter()
        big, small = folder / "big.parquet", folder / "small.parquet"
        write(big, n, m)
        write(small, nm, m)
        gib = [p.stat().st_size / 2**30 for p in (big, small)]
        print(
            f"wrote {n:,} and {nm:,} comparisons ({gib[0]:.1f} GiB and {gib[1]:.2f} GiB of "
            f"Parquet) in {time.perf_counter() - t0:.0f} s"
        )
        rows = [
            ("in memory", nm, run("memory", small, m, a.workers)),
            ("out of core", nm, run("chunks", small, m, a.workers)),
            ("out of core", n, run("chunks", big, m, a.workers)),
            (f"Dask, {a.workers} workers", n, run("dask", big, m, a.workers)),
        ]
        floor = rows[0][2]["seconds"] / (nm / 1e8)
        print(f"private BTL, epsilon 2 per user, {m} items, 1e7 users")
        print("path                  comparisons    s per 1e8   vs in memory   peak memory")
        for name, k, r in rows:
            per = r["seconds"] / (k / 1e8)
            assert r["n"] in (0, k)
            workers = (
                f", each worker {r['worker_peak'] / 2**30:.2f} GiB" if r["worker_peak"] else ""
            )
            print(
                f"{name:20s} {k:13,.0f} {per:11.2f} {per / floor:13.2f}x "
                f"{r['peak'] / 2**30:10.2f} GiB{workers}  (Kendall to the true order "
                f"{r['kendall']})"
            )
        big_peak = rows[2][2]["peak"]
        verdict = "under" if big_peak < 2 * 2**30 else "OVER"
        print(f"out of core at {n:,}: peak {big_peak / 2**30:.2f} GiB, {verdict} the 2 GiB target")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
