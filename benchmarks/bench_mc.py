"""Time privrank's private Frank-Wolfe global step and a whole run in one go, and print the ratios.

    python benchmarks/bench_mc.py [--quick]

- One global step on an m x 400 matrix with 80 ratings per user (m = 500K, or 50K with --quick): the implicit-noise
  Oja step (`top_eig_oja`, 30 steps) against the exact eigendecomposition of A^T A + N (`top_eig_exact`, A^T A by
  blocked dense products), their time ratio and the angle between the two vectors (same noise seed would not give
  the same N, so the angle is also printed between each and the noiseless top eigenvector); the floor: the same
  number of sparse products A^T (A v).
- The wall time of a whole T = 20 private FW run (Oja), and its ratio to the floor of T * 31 sparse products.
Absolute times on shared machines are noisy: read the ratios (best of k).
"""
import math
import sys
import time

import numpy as np
from scipy import sparse

from privrank import mc


def best_of(f, k=3):
    t, out = np.inf, None
    for _ in range(k):
        t0 = time.perf_counter(); out = f(); t = min(t, time.perf_counter() - t0)
    return t, out


def angle(a, b): return math.degrees(math.acos(min(1.0, abs(float(a @ b)))))


def main(quick=False):
    m = 50_000 if quick else 500_000
    R, u, v = mc.synthetic_rank_one(m, 400, rng=0)
    sp = mc.split_ratings(R, rng=1)
    A, _ = mc.clip_rows(sp.train, 2.0)
    A = sparse.csr_array((-A.data, A.indices, A.indptr), shape=A.shape)     # the first residual P(0 - Y*)
    z = mc.noise_multiplier(1.0, 1e-6, 20)[0]
    sigma = mc.SENSITIVITY_EXACT * 4.0 * z
    t_oja, (v_oja, *_) = best_of(lambda: mc.top_eig_oja(A, sigma, 30, rng=np.random.default_rng(2)))
    t_ex, (v_ex, *_) = best_of(lambda: mc.top_eig_exact(A, sigma, rng=np.random.default_rng(2)), k=1 if not quick else 3)
    x = np.random.default_rng(3).standard_normal(400)
    t_floor, _ = best_of(lambda: [A.T @ (A @ x) for _ in range(31)])
    v0 = np.linalg.eigh(mc.gram(A))[1][:, -1]
    print(f"global step, m={m}, n=400, nnz={A.nnz}, eps=1 (T=20), z={z:.1f}")
    print(f"  oja (30 steps, implicit noise) {t_oja:8.3f}s | exact eigh {t_ex:8.3f}s | exact/oja {t_ex / t_oja:6.2f}")
    print(f"  floor: 31 products A^T(Av)     {t_floor:8.3f}s | oja/floor {t_oja / t_floor:6.2f}")
    print(f"  angle(oja, exact) {angle(v_oja, v_ex):.2f} deg; to the noiseless top vector: oja {angle(v_oja, v0):.2f}, exact {angle(v_ex, v0):.2f}")
    k = np.linalg.norm(u) * np.linalg.norm(v)
    t0 = time.perf_counter()
    res = mc.private_frank_wolfe(sp.train, epsilon=1.0, delta=1e-6, rank_bound=k, n_iter=20, row_norm=2.0,
                                 user_mean=sp.user_mean, rng=4)
    t_run = time.perf_counter() - t0
    print(f"whole run T=20 (oja): {t_run:.2f}s, {t_run / (20 * t_floor):.2f} x the floor of its sparse products; test RMSE {res.rmse(sp):.3f}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
