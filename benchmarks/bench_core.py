"""Time privrank.core against its peers in one run and print the ratios.

    python benchmarks/bench_core.py

- Kendall tau distance of n pairs of rankings over m candidates: privrank's vectorised merge-sort
  count
  against scipy.stats.kendalltau called per pair (the peer a user would reach for; O(m log m) too,
  but one
  call per pair).
- The pairwise preference matrix w^Pi: privrank against the one-line broadcast (the floor in numpy
  calls,
  but O(n m^2) memory).
Absolute times on shared machines are noisy: read the ratios (best of 5 each).
"""

import time

import numpy as np
from scipy.stats import kendalltau

from privrank.core import kendall_tau_distance, preference_matrix


def best_of(f, k=5):
    t = np.inf
    for _ in range(k):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    rng = np.random.default_rng(0)
    print(f"{'task':<50} {'privrank s':>11} {'peer s':>10} {'peer/privrank':>14}")
    for n, m in [(2000, 10), (2000, 100), (200, 2000)]:
        A = np.argsort(rng.random((n, m)), axis=1)
        B = np.argsort(rng.random((n, m)), axis=1)
        ours = best_of(lambda: kendall_tau_distance(A, B))
        peer = best_of(lambda: [kendalltau(a, b) for a, b in zip(A, B)], k=2)
        d = kendall_tau_distance(A[:5], B[:5])
        tau = np.array([kendalltau(a, b).statistic for a, b in zip(A[:5], B[:5])])
        assert np.allclose(1 - 4 * d / (m * (m - 1)), tau)
        print(
            f"{f'Kendall distance, {n} pairs, m={m} (scipy loop)':<50} {ours:>11.4f} "
            f"{peer:>10.4f} {peer / ours:>14.1f}"
        )
    for n, m in [(5000, 10), (5000, 100)]:
        R = np.argsort(rng.random((n, m)), axis=1)
        ours = best_of(lambda: preference_matrix(R))
        peer = best_of(lambda: (R[:, :, None] < R[:, None, :]).mean(0))
        print(
            f"{f'preference matrix, n={n}, m={m} (broadcast)':<50} {ours:>11.4f} "
            f"{peer:>10.4f} {peer / ours:>14.1f}"
        )


if __name__ == "__main__":
    main()
