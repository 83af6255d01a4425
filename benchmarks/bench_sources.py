"""One entry point for every source: what reading ranks through the source layer costs. The rank
aggregators on an in-memory profile against their floor (numpy's own sum of the statistic:
`borda_scores`, `preference_counts`, the position histograms), and the same call on a Parquet
file read in chunks and on a list of uneven chunks. The local model's fast path draws the noise of
the n reports' sum at once, so it is timed against the central one; its exact path draws one
integer per voter and candidate, keyed by the voter's row (`core.Rows`), against the exact path's
own samplers on one generator (the floor of that many draws).

python benchmarks/bench_sources.py [--n 1e6] [--items 10]
"""

import argparse
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from _timing import best_of

import privrank as pr
from privrank import core, tree


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e6, help="voters")
    ap.add_argument("--items", type=int, default=10, help="candidates")
    ap.add_argument("--runs", type=int, default=3, help="best of this many runs")
    a = ap.parse_args()
    n, m, k = int(a.n), a.items, a.runs
    R = pr.sample_mallows(m, n, 0.8, rng=0)
    path = Path(tempfile.mkdtemp()) / "r.parquet"
    pq.write_table(pa.table({f"c{q}": R[:, q] for q in range(m)}), path, row_group_size=1 << 17)
    uneven = [R[:1], R[1:8], R[8 : n // 3], R[n // 3 :]]
    rows = []

    def row(what, f, floor_what, floor):
        t, _ = best_of(f, k)
        t0, _ = best_of(floor, k)
        rows.append((what, t, floor_what, t0))

    kw = dict(epsilon=1.0, rng=0)
    row("dp_borda_aggregate, array", lambda: pr.dp_borda_aggregate(R, **kw),
        "borda_scores", lambda: core.borda_scores(R))  # fmt: skip
    row("dp_borda_aggregate, Parquet", lambda: pr.dp_borda_aggregate(path, **kw),
        "borda_scores", lambda: core.borda_scores(R))  # fmt: skip
    row("dp_borda_aggregate, 4 uneven chunks", lambda: pr.dp_borda_aggregate(uneven, **kw),
        "borda_scores", lambda: core.borda_scores(R))  # fmt: skip
    row("dp_borda_aggregate local (fast)",
        lambda: pr.dp_borda_aggregate(R, model="local", **kw),
        "dp_borda_aggregate central", lambda: pr.dp_borda_aggregate(R, **kw))  # fmt: skip
    law, scale = core.calibrate_noise(epsilon=1.0, delta=0, l1=m * m // 2, l2=m, noise="exact")
    one = np.random.default_rng(0)
    with pr.use_noise("exact"):
        row("dp_borda_aggregate local (exact, keyed rows)",
            lambda: pr.dp_borda_aggregate(R[: n // 10], model="local", **kw),
            "exact_noise, one generator",
            lambda: core.exact_noise(law, scale, (n // 10, m), rng=one))  # fmt: skip
    row("dp_kemeny_aggregate large n, array",
        lambda: pr.dp_kemeny_aggregate(R, regime="large_n", **kw),
        "preference_counts", lambda: core.preference_counts(R))  # fmt: skip
    row("dp_kemeny_aggregate large n, Parquet",
        lambda: pr.dp_kemeny_aggregate(path, regime="large_n", **kw),
        "preference_counts", lambda: core.preference_counts(R))  # fmt: skip
    row("dp_footrule_aggregate, array", lambda: pr.dp_footrule_aggregate(R, **kw),
        "position_histograms", lambda: tree.position_histograms(R))  # fmt: skip
    row("dp_footrule_aggregate local (fast)",
        lambda: pr.dp_footrule_aggregate(R, model="local", **kw),
        "position_histograms", lambda: tree.position_histograms(R))  # fmt: skip
    print(f"n = {n:,} voters, m = {m} candidates, best of {k} runs")
    print(f"{'privrank':<46} {'s':>7}   {'floor':<28} {'s':>7} {'ratio':>7}")
    for what, t, fw, t0 in rows:
        print(f"{what:<46} {t:7.3f}   {fw:<28} {t0:7.3f} {t / t0:7.2f}")


if __name__ == "__main__":
    main()
