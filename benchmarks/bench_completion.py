"""Time the steps of privrank.completion against private Frank-Wolfe's streaming Oja step, and a
whole default `complete` run, in one run; print the ratios.

    python benchmarks/bench_completion.py [--quick]

Data: `synthetic_rank_one(500_000, 400)` (80 ratings per user: 40M ratings; 50K users with
--quick), split and centred by `split_ratings`, at the noise of epsilon = 1, delta = 1e-6.

- the floor: one streaming Oja pass of private FW (`top_eig_oja_stream`), as in
  benchmarks/bench_mc_step.py;
- the private subspace's releases: the item effects (two sums), the Gram matrix of unit rows and
  its eigendecomposition, the private validation (34 candidates, by the validating fifth of the
  users, at most 100,000);
- one private ALS round (the users' local fits and the per-item releases and solves);
- the users' final local fits;
- a whole `complete(R, epsilon=1, delta=1e-6, rating_range=(-1, 1))` with its defaults, from the
  raw matrix (the split included), and the split alone.

Target (issue 14, item 6): each method's step within 2x the streaming Oja step; a whole default
run under 30 s at 500K x 400. Best of 3 (the whole run: best of 2). Absolute times on shared
machines are noisy: read the ratios.
"""

import sys

import numpy as np
from _timing import best_of  # benchmarks/ is the script's folder
from scipy import sparse

from privrank import completion as C
from privrank import mc


def main(quick=False):
    m, n = (50_000 if quick else 500_000), 400
    R = mc.synthetic_rank_one(m, n, rng=0)[0]
    t_split, sp = best_of(lambda: mc.split_ratings(R, rng=1), k=2)
    Rt = sp.train
    rows, k = C._rows(Rt), np.diff(Rt.indptr)
    z = mc.noise_multiplier(epsilon=1.0, delta=1e-6, n_iter=6)
    gen = np.random.default_rng(2)
    times = {}
    A = mc.scaled_rows(Rt, 4.0)
    sigma = mc.SENSITIVITY_EXACT * mc.noise_multiplier(epsilon=1.0, delta=1e-6, n_iter=10)[0]
    times["floor: private FW, one streaming Oja pass"] = best_of(
        lambda: mc.top_eig_oja_stream(A, sigma, rng=gen)
    )[0]
    y = np.clip(Rt.data / 2.0, -1, 1)  # ratings in units of the rating bound (width 2)
    w = 1 / np.maximum(np.sqrt(k), np.sqrt(np.bincount(rows, y * y, minlength=m)))[rows]
    t, (c, *_) = best_of(lambda: C._item_effects(Rt.indices, y, w, n, z[1:3], gen, "fast", m))
    times["subspace: item effects (two noisy sums)"] = t
    t, (V, lam, _) = best_of(
        lambda: C._subspace(Rt, rows, y - c[Rt.indices], m, n, z[3], gen, "fast", 8)
    )
    times["subspace: Gram release of unit rows + eigh"] = t
    cand = C._candidates(n, "auto", "auto")
    val = C._validators(m, gen)  # the validating users, as in `complete`
    Yv = sparse.csr_array((y, Rt.indices, Rt.indptr), shape=Rt.shape)[val]
    u = C.keyed_uniforms(7, C.HOLDOUT_COINS, C._rows(Yv).astype(np.uint64), Yv.indices)
    ho = C._holdout(Yv, C._rows(Yv), u)
    F = np.column_stack([C._popularity(np.bincount(Rt.indices, minlength=n), 1.0), V])
    times[f"subspace: private validation ({len(cand)} candidates, {val.sum():,} users)"] = best_of(
        lambda: C._validation(Yv, C._rows(Yv), Yv.data, c, F, cand, ho)
    )[0]
    times["subspace: the users' final local fits (rank 1)"] = best_of(
        lambda: C._local_fit(Rt, y - c[Rt.indices], V[:, :1], 0.03)
    )[0]
    times["private ALS: one round (rank 1)"] = best_of(
        lambda: C._als_release(
            *C._als_stats(Rt, rows, y, V[:, :1], c, 0.03), 1, m, z[5], gen, "fast"
        )
    )[0]
    floor = times["floor: private FW, one streaming Oja pass"]
    print(f"m={m:,} users x n={n} items, nnz={Rt.nnz:,}, epsilon=1, delta=1e-6")
    print("| step | time (s) | ratio to the streaming Oja pass | target <= 2x |")
    print("|---|---|---|---|")
    for name, t in times.items():
        r = t / floor
        mark = "" if name.startswith("floor") else ("met" if r <= 2 else "not met")
        print(f"| {name} | {t:.3f} | {r:.1f}x | {mark} |")
    t_all, f = best_of(
        lambda: C.complete(R, epsilon=1.0, delta=1e-6, rating_range=(-1, 1), rng=3), k=2
    )
    print(
        f"whole default run (complete, {f.estimator}, rank {f.params['rank']}): {t_all:.1f} s "
        f"(of which split_ratings {t_split:.1f} s); target < 30 s: "
        + ("met" if t_all < 30 else "NOT met")
    )


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
