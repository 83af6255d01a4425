"""`dp_aggregate` against the aggregator it picks, called directly (the floor): the cost of
choosing, for int64 and int32 ranks, in the central model where it picks Borda and where it picks
Kemeny, and in the local model.

python benchmarks/bench_auto.py

The same release is asserted (same seed, same order); the time ratio auto / direct is printed (best
of k; shared machines are noisy, read the ratios).
"""

import numpy as np
from _timing import best_of  # benchmarks/ is the script's folder

import privrank as pr

CASES = [  # (n, m, epsilon, delta, model): Borda, then Kemeny, picked centrally; local Borda
    (3_000, 100, 1.0, 1e-6, "central"),
    (100_000, 100, 1.0, 1e-6, "central"),
    (100_000, 100, 1.0, 0.0, "local"),
]


def main():
    for n, m, e, d, model in CASES:
        R64 = pr.sample_mallows(m, n, 0.9, rng=0)
        for R in (R64, R64.astype(np.int32)):
            c = pr.choose_aggregator(n, m, epsilon=e, delta=d, model=model)

            def direct():
                if c.method == "kemeny":
                    return pr.dp_kemeny_aggregate(
                        R, epsilon=e, delta=c.delta, regime="large_n", rng=0
                    )
                return pr.dp_borda_aggregate(R, epsilon=e, delta=c.delta, model=model, rng=0)

            ta, a = best_of(lambda: pr.dp_aggregate(R, epsilon=e, delta=d, model=model, rng=0))
            td, b = best_of(direct)
            assert (a.order == b.order).all() and a.method == b.method == c.method
            print(
                f"{model:7s} {R.dtype}  n = {n:,}, m = {m}, eps = {e:g}: picked {c.method} "
                f"({c.law}); "
                f"auto {ta * 1e3:8.1f} ms, direct {td * 1e3:8.1f} ms, ratio {ta / td:.2f}"
            )


if __name__ == "__main__":
    main()
