"""Matrix completion past one machine: `pr.complete` on a Parquet file of (user, item, rating) rows,
with the users' rows in partitions here, in files of a spill folder (out of core: one partition in
memory at a time) and persisted on a local Dask cluster, against the in-memory floor on the same
ratings, with the peak memory of each run.

python benchmarks/bench_completion_scale.py [--users 5e6] [--items 400] [--per-user 20]
    [--n-iter 4] [--workers 2] [--estimator frank-wolfe|subspace|pgd|cleansing]

The floor: for private Frank-Wolfe (the default; its bounds given, every rating kept), 06's
`mc.private_frank_wolfe` on the centred CSR matrix in one process, with the same noise; for the
other estimators, `pr.complete` on the CSR matrix. Each completion holds out 1% (keyed by user and
item, so every path holds out the same ratings) and reports its test RMSE.

Writes the ratings (rank 3 plus noise, `--per-user` items per user; user int32, item int16,
rating float32) to a temporary folder, then runs each path in a fresh process (its peak
resident memory is that process's high-water mark; on Dask the largest worker's too) and prints
the seconds of each path, their ratio to the floor, and for Frank-Wolfe the largest difference of
the released item factors (|V V^T| to the floor's: equal up to the order of float sums).
Shared machines are noisy: read the ratios.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

RUN = r"""
import os, sys, time, json
import numpy as np
import pyarrow.parquet as pq
from scipy import sparse
import privrank as pr
how, path, n_users, n_items, n_iter, workers = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7])
estimator = sys.argv[7]
subspace = estimator != "frank-wolfe"  # the whole completion, `complete`, with this estimator
kw = dict(epsilon=1.0, delta=1e-6, nuclear_norm=float(n_users), n_iter=n_iter, row_norm=20.0)
fk = dict(kw, estimator="frank-wolfe", max_per_user=n_items, rng=0)  # every rating kept
ck = dict(epsilon=1.0, delta=1e-6, evaluate=True, rng=0, estimator=estimator)


def hwm():
    "This process's peak resident memory, in bytes"
    line = [x for x in open("/proc/self/status") if x.startswith("VmHWM")][0]
    return int(line.split()[1]) * 1024


def run(**where):
    "The partitioned path, its rows held as `where` says (a client, a spill folder or here)"
    return pr.complete(path, **(ck if subspace else fk), n_items=n_items, **where)


t0 = time.perf_counter()
worker_peak = 0
if how == "memory":
    t = pq.read_table(path)
    u, i, r = (t.column(c).to_numpy() for c in ("user", "item", "rating"))
    del t
    R = sparse.csr_array((r.astype(float), (u, i)), shape=(n_users, n_items))
    del u, i, r
    if subspace:  # `complete` on the CSR matrix
        res = pr.complete(R, **ck)
    else:  # the floor: 06's private Frank-Wolfe on the centred CSR matrix, the same noise
        g = np.random.default_rng(0)
        pr.completion.coin_key(g)  # `complete` draws its coins' key first
        sp = pr.mc.split_ratings(R, test_fraction=0.0, max_per_user=n_items, rng=1)
        res = pr.mc.private_frank_wolfe(sp.train, **kw, user_mean=sp.user_mean, rng=g)
elif how == "dask":
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0", memory_limit=0)
    with cluster, Client(cluster) as client:
        t0 = time.perf_counter()  # the cluster's start is not the pipeline's time
        res = run(client=client)
        worker_peak = max(client.run(hwm).values())
else:
    res = run(spill=os.path.dirname(path)) if how == "spill" else run()
sec = time.perf_counter() - t0
np.save(sys.argv[2] + f".{how}.npy", res.factors)
rmse = res.evaluation["test_rmse"] if subspace else res.diagnostics["train_rmse"]
base = res.evaluation["baseline_rmse_user_mean"] if subspace else None
print(json.dumps(dict(seconds=sec, peak=hwm(), worker_peak=worker_peak,
                      partitions=res.diagnostics.get("partitions", 1), rmse=rmse, base=base)))
"""


def write(path, n_users, n_items, per, seed=0):
    "The ratings, written 1e6 users at a time (one row group each)"
    import pyarrow as pa
    import pyarrow.parquet as pq

    g = np.random.default_rng(seed)
    V = g.normal(size=(3, n_items))
    with pq.ParquetWriter(
        path, pa.schema([("user", pa.int32()), ("item", pa.int16()), ("rating", pa.float32())])
    ) as w:
        for s in range(0, n_users, 1_000_000):
            k = min(1_000_000, n_users - s)
            # `per` distinct items per user: a random offset and stride modulo n_items (prime)
            start = g.integers(0, n_items, k)[:, None]
            items = (start + np.arange(per) * 7) % n_items
            U = g.normal(size=(k, 3))
            vals = np.einsum("kr,krj->kj", U, V[:, items].transpose(1, 0, 2))
            vals += 0.5 * g.normal(size=vals.shape)
            users = np.repeat(np.arange(s, s + k, dtype=np.int32), per)
            w.write_table(
                pa.table(
                    {
                        "user": users,
                        "item": items.ravel().astype(np.int16),
                        "rating": vals.ravel().astype(np.float32),
                    }
                )
            )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=float, default=5e6)
    ap.add_argument("--items", type=int, default=400)
    ap.add_argument("--per-user", type=int, default=20)
    ap.add_argument("--n-iter", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument(
        "--estimator",
        choices=("frank-wolfe", "subspace", "pgd", "cleansing"),
        default="frank-wolfe",
    )
    a = ap.parse_args()
    n_users = int(a.users)
    d = Path(tempfile.mkdtemp())
    try:
        path = d / "ratings.parquet"
        write(path, n_users, a.items, a.per_user)
        nnz = n_users * a.per_user
        print(
            f"{n_users:,} users x {a.items} items, {nnz:,} ratings "
            f"({path.stat().st_size / 2**30:.2f} GiB Parquet), "
            + (
                f"complete with estimator {a.estimator!r}, epsilon 1"
                if a.estimator != "frank-wolfe"
                else f"T = {a.n_iter} (solver 'oja')"
            )
        )
        out = {}
        for how in ("memory", "partitions", "spill", "dask"):
            if how == "memory" and a.skip_memory:
                continue
            args = [str(x) for x in (path, n_users, a.items, a.n_iter, a.workers, a.estimator)]
            env = dict(os.environ, PRIVRANK_MEMORY_LIMIT="20G")  # the in-memory floor's arrays
            p = subprocess.run(
                [sys.executable, "-c", RUN, how, *args], capture_output=True, text=True, env=env
            )
            if p.returncode:
                print(f"{how}: failed\n{p.stderr[-2000:]}")
                continue
            out[how] = json.loads(p.stdout.strip().splitlines()[-1])
        base = out.get("memory")
        ref = np.load(str(path) + ".memory.npy") if base and a.estimator == "frank-wolfe" else None
        for how, r in out.items():
            ratio = f"{r['seconds'] / base['seconds']:.2f}x in memory" if base else ""
            diff = ""
            if ref is not None:
                F = np.load(str(path) + f".{how}.npy")
                diff = f", factors within {np.abs(F.T @ F - ref.T @ ref).max():.1e}"
            wp = f", largest worker {r['worker_peak'] / 2**30:.2f} GiB" if r["worker_peak"] else ""
            fit = (
                f"test RMSE {r['rmse']:.4f} (users' means {r['base']:.4f})"
                if r["base"] is not None
                else f"train RMSE {r['rmse']:.4f}"
            )
            print(
                f"{how:>10}: {r['seconds']:7.1f} s ({ratio}), peak {r['peak'] / 2**30:.2f} GiB"
                f"{wp}, {r['partitions']} partitions, {fit}{diff}"
            )
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
