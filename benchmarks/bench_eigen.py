"""The top eigenpairs of a released Gram matrix: privrank's `core.top_eigh` (the solver it picks
for the size and the number of pairs) against a full `numpy.linalg.eigh`, the floor it replaces,
in one run; the ratio is printed (> 1: privrank faster).

    python benchmarks/bench_eigen.py

Matrices: the unit Gram matrix of MovieLens-100K's centred ratings (943 users x all 1,682
movies, read from the shared data; skipped when absent) with the default completion's Gaussian
noise at epsilon = 1, delta = 1e-6, and low-rank-plus-noise Gram matrices at 400 and 4,000
items. Pairs: 10 (what `complete` reads: its candidate ranks, at most 8, and ten eigenvalues for
its diagnostics) and 1 (private Frank-Wolfe's exact step). Best of 3; the eigenvalues must agree
with the full solver's within 1e-9 of the largest. Absolute times on shared machines are noisy:
read the ratios.
"""

import numpy as np
from _timing import best_of  # benchmarks/ is the script's folder

from privrank.core import top_eigh


def movielens_gram():
    "The noisy unit Gram matrix of MovieLens-100K's centred ratings, or None without the data"
    from privrank import completion as C
    from privrank import datasets, mc

    shared = datasets.shared_data_dir()
    path = None if shared is None else shared / "movielens-100k" / "u.data.gz"
    if path is None or not path.is_file():
        return None
    R = datasets.read_ratings(path, n_items=1682).ratings.tocsr()
    R = R.astype(float)
    rows = np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))
    mean = np.bincount(rows, R.data, minlength=R.shape[0]) / np.maximum(np.diff(R.indptr), 1)
    t = R.data - mean[rows]
    G = C._unit_gram(R, t)
    z = float(np.atleast_1d(mc.noise_multiplier(epsilon=1.0, delta=1e-6, n_iter=6))[3])
    noise = np.random.default_rng(0).normal(0, z * np.sqrt(2), G.shape)
    return G + (noise + noise.T) / 2


def low_rank(n, rank=5, users=20 * 400, seed=0):
    "A Gram matrix of `users` unit rows near a rank-`rank` subspace, plus symmetric noise"
    rng = np.random.default_rng(seed)
    U = rng.normal(size=(users, rank)) @ rng.normal(size=(rank, n)) + rng.normal(size=(users, n))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    noise = rng.normal(0, 5.0, (n, n))
    return U.T @ U + (noise + noise.T) / 2


def main():
    cases = [("MovieLens-100K Gram", movielens_gram()), ("400 items", low_rank(400))]
    cases.append(("4,000 items", low_rank(4000)))
    head = f"{'matrix':22} {'n':>6} {'pairs':>5} {'full eigh (s)':>14} {'top_eigh (s)':>13}"
    print(head + f" {'ratio':>7}")
    for name, S in cases:
        if S is None:
            print(f"{name:22} skipped: no MovieLens-100K in the shared data folder")
            continue
        n = len(S)
        t_full, (lam, V) = best_of(lambda: np.linalg.eigh(S), 3)
        for k in (10, 1):
            t_top, (mu, W) = best_of(lambda: top_eigh(S, k), 3)
            assert np.allclose(mu, lam[::-1][:k], rtol=0, atol=1e-9 * abs(lam).max()), (mu, lam)
            print(f"{name:22} {n:>6} {k:>5} {t_full:14.3f} {t_top:13.3f} {t_full / t_top:7.1f}")


if __name__ == "__main__":
    main()
