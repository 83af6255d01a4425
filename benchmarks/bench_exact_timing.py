"""Does an exact sampler's running time tell the size of the noise it drew? (issue 35, item 2)

    python benchmarks/bench_exact_timing.py [--draws N]

Times single draws of `core.discrete_laplace` (scale 20) and `core.discrete_gaussian` (sigma 20),
one at a time, in shuffled batches: the draws of a batch are timed in a random order of two
interleaved generators, so that a drift of the machine's speed falls on both size groups alike.
Each draw's time is grouped by its size: |z| below 2 scales (most draws) against |z| beyond 6
scales for the Laplace (e^-6 of them: about 0.25%) and beyond 3 sigma for the Gaussian. Printed:
the ratio of the groups' median times and Spearman's rho between |z| and the time.

The bar the issue sets for a sampler whose time does not depend on its output: the ratio within
10% of 1 (medians are robust to the machine's spikes; rho near 0). The CKS samplers of today
(`core._dlap`: a loop of about max V + 1 rounds over all candidates) fail it.
"""

import sys
import time

import numpy as np
from scipy import stats

from privrank import core


def timed_draws(draw, n, seed):
    "(|z|, seconds) of n single draws of draw(rng), in shuffled batches of two generators"
    gens = [np.random.default_rng(seed), np.random.default_rng(seed + 1)]
    order = np.random.default_rng(seed + 2).integers(0, 2, n)  # which generator, shuffled
    z, t = np.empty(n), np.empty(n)
    for i, g in enumerate(order):  # single draws, one at a time: what a timing attacker sees
        t0 = time.perf_counter_ns()
        v = draw(gens[g])
        t[i] = (time.perf_counter_ns() - t0) * 1e-9
        z[i] = abs(int(v[0]))
    return z, t


def report(name, z, t, scale, far):
    near = z < 2 * scale
    tail = z >= far * scale
    ratio = np.median(t[tail]) / np.median(t[near])
    rho = stats.spearmanr(z, t).statistic
    print(
        f"| {name} | {near.sum():,} | {tail.sum():,} | {1e6 * np.median(t[near]):.0f} | "
        f"{1e6 * np.median(t[tail]):.0f} | {ratio:.2f}x | {rho:+.3f} | "
        + ("passes" if abs(ratio - 1) <= 0.10 else "FAILS")
        + " |"
    )
    return ratio


def main(n=40_000):
    core.discrete_laplace(20, 1, rng=0)  # warm up
    print(f"{n:,} single draws each; medians in microseconds")
    print(
        "| sampler | draws near (< 2 scales) | draws far | median near | median far | ratio | "
        "Spearman rho | within 10% |"
    )
    print("|---|---|---|---|---|---|---|---|")
    z, t = timed_draws(lambda g: core.discrete_laplace(20, 1, rng=g), n, 10)
    report("discrete Laplace, scale 20, far: >= 6 scales", z, t, 20, 6)
    z, t = timed_draws(lambda g: core.discrete_gaussian(400, 1, rng=g), n, 20)
    report("discrete Gaussian, sigma 20, far: >= 3 sigma", z, t, 20, 3)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[args.index("--draws") + 1]) if "--draws" in args else 40_000)
