"""User labels of every type a user passes, on the chunked path: private BTL over chunks of
(winner, loser, user) rows whose user column is int64, int32, uint64, whole-number float64,
64-bit hashed ids (uint64 past 2^63: keyed by their text) or text, against the in-memory
pipeline on int64 ids (the floor). Each label is compared by value (issue 29), so every type gives
the same users; the ratio says what that costs.

python benchmarks/bench_labels.py [--n 4e6] [--users 1e6] [--items 100]
"""

import argparse

import numpy as np
from _timing import best_of

import privrank as pr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=4e6, help="comparisons")
    ap.add_argument("--users", type=float, default=1e6, help="users")
    ap.add_argument("--items", type=int, default=100, help="items")
    ap.add_argument("--runs", type=int, default=3, help="best of this many runs")
    a = ap.parse_args()
    n, users, m = int(a.n), int(a.users), a.items
    g = np.random.default_rng(0)
    w = g.integers(0, m, n)
    l = (w + g.integers(1, m, n)) % m
    u = g.integers(0, users, n)
    hashed = g.integers(2**63, 2**64 - 1, users, dtype=np.uint64)  # 64-bit ids past 2^63
    columns = {
        "int64": u,
        "int32": u.astype(np.int32),
        "uint64": u.astype(np.uint64),
        "float64": u.astype(np.float64),
        "hashed uint64": hashed[u],
        "text": np.char.add("u", u.astype(str)).astype(object),
    }
    chunk = 1 << 20
    kw = dict(n_items=m, epsilon=2.0, rng=0)
    floor, ref = best_of(lambda: pr.dp_btl_aggregate(np.column_stack([w, l, u]), **kw), a.runs)
    print(f"{n:,} comparisons, {users:,} users, {m} items; chunks of {chunk:,} rows")
    print(f"  in memory, int64 ids (floor)  {floor:7.3f} s   {ref.n_voters:,} users")
    for name, col in columns.items():
        frames = [
            {"winner": w[s : s + chunk], "loser": l[s : s + chunk], "user": col[s : s + chunk]}
            for s in range(0, n, chunk)
        ]
        src = [pa_table(f) for f in frames]
        t, res = best_of(lambda: pr.dp_btl_aggregate(src, **kw), a.runs)
        assert res.n_voters == ref.n_voters, (name, res.n_voters)
        print(f"  chunks, {name:<22} {t:7.3f} s   {t / floor:5.2f}x the floor")


def pa_table(cols):
    "A pyarrow table of the columns (each keeps its own type, as a Parquet batch would)"
    import pyarrow as pa

    return pa.table({k: pa.array(v) for k, v in cols.items()})


if __name__ == "__main__":
    main()
