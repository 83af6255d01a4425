"""Private top-k selection (privrank.topk.dp_top_k) against OpenDP's `make_noisy_top_k`, in one run:
  - speed at d = 100,000 items, k = 10, epsilon = 1, on Zipf counts and on uniform integers 0..999
    (best of 5 calls each; OpenDP's exact Rust sampler on a list of floats, privrank's fast and
    exact paths), printed as ratios to OpenDP;
  - error at a few (d, k, epsilon): the recall of the true top k and the score gap
    max_i (c_(i) - c_{s_i}), means over independent releases, every method at the same epsilon.
The scores are counts of 10 d individuals' choices, Zipf-distributed (P(item i) ∝ i^-1.1), so one
individual moves each count by at most 1 (sensitivity 1, pure DP, delta = 0: OpenDP's
`make_noisy_top_k` is pure).
bench: OpenDP is the peer (`pip install opendp`, in the `bench` extra); without it the OpenDP
columns are skipped.
Usage: python benchmarks/bench_topk.py [REPS]   (default 20 releases per error cell; OpenDP's cells
at d = 100,000, k = 100 take seconds each)"""

import sys

import numpy as np
from _timing import best_of

from privrank import topk
from privrank.core import use_noise

METHODS = ("permute-and-flip", "gumbel", "laplace", "joint")


def zipf_counts(d, rng, s=1.1):
    "Counts of 10 d individuals' choices among d items, P(item i) ∝ i^-s, in shuffled order"
    p = np.arange(1, d + 1, dtype=float) ** -s
    return rng.permutation(rng.multinomial(10 * d, p / p.sum())).astype(float)


def opendp_top_k():
    "f(scores, k, epsilon) by OpenDP's make_noisy_top_k (pure, l_inf sensitivity 1), or None"
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")

    def f(u, k, epsilon):
        meas = dp.m.make_noisy_top_k(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)),
            dp.linf_distance(T=float),
            dp.max_divergence(),
            k=k,
            scale=2 * k / epsilon,
        )
        assert meas.map(1.0) <= epsilon * (1 + 1e-9)
        return np.array(meas(u.tolist()))

    return f


def privrank_top_k(method):
    return lambda u, k, epsilon, rng: (
        topk.dp_top_k(u, k, epsilon=epsilon, sensitivity=1, method=method, rng=rng).items
    )


def errors(u, items, k):
    "(recall of the true top k, score gap)"
    top = np.sort(u)[::-1][:k]
    return float((u[items] >= top[-1]).mean()), float(np.max(top - u[items]))


if __name__ == "__main__":
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    peer = opendp_top_k()
    data = {  # OpenDP's exact sampler takes longer on larger scores
        "Zipf counts (largest 1.3e5)": zipf_counts(100_000, np.random.default_rng(5)),
        "uniform integers 0..999": np.random.default_rng(6).integers(0, 1000, 100_000),
    }
    for name, u in data.items():
        print(f"speed: d = 100,000, k = 10, epsilon = 1, {name} (best of 5 calls)")
        t_peer = best_of(lambda: peer(u.astype(float), 10, 1.0), 5)[0] if peer else None
        rows = [(m, "fast") for m in METHODS] + [(m, "exact") for m in topk.EXACT_METHODS]
        for m, mode in rows:
            with use_noise(mode):
                t = best_of(lambda m=m: privrank_top_k(m)(u, 10, 1.0, 0), 5)[0]
            line = f"  privrank {m:17s} {mode:5s} {1e3 * t:8.1f} ms"
            if t_peer:
                line += f"   {t_peer / t:6.1f}x OpenDP's speed"
            print(line)
        print(
            f"  OpenDP make_noisy_top_k      {1e3 * t_peer:8.1f} ms"
            if t_peer
            else "  OpenDP not installed (pip install opendp): no ratio"
        )

    print(f"\nerror: recall / score gap, mean of {reps} releases (epsilon-DP, sensitivity 1)")
    names = list(METHODS) + (["OpenDP"] if peer else [])
    print(f"  {'d':>9s} {'k':>4s} {'eps':>5s}  " + "  ".join(f"{n:>17s}" for n in names))
    for d in (1_000, 100_000):
        u = zipf_counts(d, np.random.default_rng(d))
        for k in (1, 10, 100):
            for e in (0.1, 1.0, 10.0):
                cells = []
                for n in names:
                    if n == "joint" and d * k > 10**6:
                        cells.append(f"{'-':>17s}")
                        continue
                    f = peer if n == "OpenDP" else privrank_top_k(n)
                    res = [
                        errors(u, f(u, k, e) if n == "OpenDP" else f(u, k, e, r), k)
                        for r in range(reps)
                    ]
                    rec, gap = np.mean(res, 0)
                    cells.append(f"{rec:8.3f} /{gap:8.3g}")
                print(f"  {d:>9,} {k:>4d} {e:>5g}  " + "  ".join(cells))
