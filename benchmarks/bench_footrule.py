"""Time the private footrule consensus (Algorithm 2) end to end, for every ranks dtype a user may
pass, against its floor: one histogram pass over the ranking matrix.

python benchmarks/bench_footrule.py

The floor. Any method must read the n x m ranking matrix once and count, per candidate, the voters
at each position: that histogram is exactly the sufficient statistic of the footrule costs. Two
floors are printed, both over the same array in the user's dtype:
- "bincount": one np.bincount of the (candidate, position) keys q m + ranks[i, q], the one-liner
  a numpy user writes (it builds an 8 n m-byte int64 key array);
- "blocked": privrank's own histogram pass alone (`tree.rank_histograms`, the same bincount per
  block of rows with the keys in cache; no validation), the fastest pass known here.
Algorithm 2 = validation + that pass + the m parallel noisy trees (O(m^2)) + the matching (O(m^3)).
Targets: private footrule (central, default parameters) within 2x of the floor for int32 and int64.
Validation cannot be skipped (a bad row must be refused) and costs about one more pass: one scatter
per block of rows. Floats are refused (TypeError), so there is no float64 row.

Also printed: the local model, the peak memory of each call beyond the input (tracemalloc: numpy
reports its buffers), and the non-private `footrule_aggregate`, `borda_aggregate` and
`dp_borda_aggregate` with int32 ranks against int64. Generation of the rankings is excluded from the
timings. Absolute times on shared machines are noisy: read the ratios (best of k each).
"""

import time
import tracemalloc

import numpy as np

from privrank.core import borda_aggregate, check_ranks, dp_borda_aggregate
from privrank.footrule import dp_footrule_aggregate, footrule_aggregate
from privrank.tree import rank_histograms

K = 5


def best_of(f, k=K):
    return best_each([f], k)[0]


def best_each(fs, k=K):
    "Best of k runs of each function, the runs interleaved (a busy spell slows them all alike)"
    t = [np.inf] * len(fs)
    for _ in range(k):
        for i, f in enumerate(fs):
            t0 = time.perf_counter()
            f()
            t[i] = min(t[i], time.perf_counter() - t0)
    return t


def peak_mib(f):
    "Peak bytes (MiB) numpy and Python allocate during f(), beyond what was allocated before"
    tracemalloc.start()
    f()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def one_bincount(R):
    n, m = R.shape
    return np.bincount((R + np.arange(m) * m).ravel(), minlength=m * m)


def main():
    rng = np.random.default_rng(0)
    n, m = 1_000_000, 100
    base = np.argsort(rng.random((n, m), dtype=np.float32), axis=1)  # uniform rankings (not timed)
    print(f"Private footrule, n = {n:.0e}, m = {m}, best of {K}; ratios against each floor")
    print(
        f"{'dtype':<7} {'bincount':>9} {'blocked':>8} {'check':>7} {'central':>8} {'/bincnt':>8}"
        f" {'/blocked':>9} {'local':>7} {'/bincnt':>8} {'peak MiB':>9} {'input MiB':>10}"
    )
    res = {}
    for dt in (np.int8, np.int16, np.int32, np.int64):
        R = base.astype(dt)
        t_one, t_blk, t_chk, t_c, t_l = best_each(
            [
                lambda: one_bincount(R),
                lambda: rank_histograms(R),
                lambda: check_ranks(R),
                lambda: dp_footrule_aggregate(R, epsilon=1.0, rng=1),
                lambda: dp_footrule_aggregate(R, epsilon=1.0, model="local", rng=1),
            ]
        )
        mem = max(
            peak_mib(lambda: dp_footrule_aggregate(R, epsilon=1.0, rng=1)),
            peak_mib(lambda: dp_footrule_aggregate(R, epsilon=1.0, model="local", rng=1)),
        )
        res[dt] = t_c / t_one
        print(
            f"{np.dtype(dt).name:<7} {t_one:>9.3f} {t_blk:>8.3f} {t_chk:>7.3f} {t_c:>8.3f}"
            f" {t_c / t_one:>8.2f} {t_c / t_blk:>9.2f} {t_l:>7.3f} {t_l / t_one:>8.2f}"
            f" {mem:>9.1f} {R.nbytes / 2**20:>10.0f}"
        )
    try:
        dp_footrule_aggregate(base.astype(np.float64)[:10], epsilon=1.0, rng=1)
    except TypeError as e:
        print(f"float64  refused: {e}")
    for dt in (np.int32, np.int64):
        print(
            f"target: {np.dtype(dt).name} central within 2x of one bincount:"
            f" {'met' if res[dt] <= 2 else 'MISSED'} ({res[dt]:.2f}x)"
        )

    print(f"\nint32 against int64 ranks, n = {n:.0e}, m = {m}, best of {K}")
    print(f"{'call':<42} {'int32 s':>8} {'int64 s':>8} {'int32/int64':>12}")
    R32, R64 = base.astype(np.int32), base.astype(np.int64)
    for name, f in [
        ("footrule_aggregate", footrule_aggregate),
        ("borda_aggregate", borda_aggregate),
        ("dp_borda_aggregate (central)", lambda r: dp_borda_aggregate(r, epsilon=1.0, rng=0)),
        ("dp_footrule_aggregate (central)", lambda r: dp_footrule_aggregate(r, epsilon=1, rng=1)),
    ]:
        a, b = best_each([lambda: f(R32), lambda: f(R64)])
        print(f"{name:<42} {a:>8.3f} {b:>8.3f} {a / b:>12.2f}")

    print("\nWhere the matching dominates: n = 1e4, m = 1000 (int32), best of 3")
    R = np.argsort(rng.random((10_000, 1000), dtype=np.float32), axis=1).astype(np.int32)
    t_one, t_c = best_each(
        [lambda: one_bincount(R), lambda: dp_footrule_aggregate(R, epsilon=1.0, rng=1)], 3
    )
    print(f"one bincount {t_one:.3f} s, dp_footrule_aggregate {t_c:.3f} s ({t_c / t_one:.1f}x)")


if __name__ == "__main__":
    main()
