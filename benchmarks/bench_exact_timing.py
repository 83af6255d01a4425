"""Does an exact sampler's running time tell the size of the noise it drew? (issue 35, item 2)

    python benchmarks/bench_exact_timing.py [--draws N] [--baseline REV]

Times single draws of `core.discrete_laplace` (scale 20) and `core.discrete_gaussian` (sigma 20),
one at a time, in shuffled batches: the draws of a batch are timed in a random order of two
interleaved generators, so that a drift of the machine's speed falls on both size groups alike.
Each draw's time is grouped by its size: |z| below 2 scales (most draws) against |z| beyond 6
scales for the Laplace (e^-6 of them: about 0.25%) and beyond 3 sigma for the Gaussian. Printed:
the ratio of the groups' median times and Spearman's rho between |z| and the time.

Whole releases too: `dp_borda_aggregate` on the exact path (8 candidates, 200 voters; Laplace, and
Gaussian with delta = 1e-6), each call timed against the largest |noise| of its 8 coordinates
(beyond 6 scales / 3 sigma against within 2 / 1).

The bar the issue sets for a sampler whose time does not depend on its output: the ratio within
10% of 1 (medians are robust to the machine's spikes; rho near 0). With --baseline REV the same
run also times the samplers of `privrank/core.py` at git revision REV (default f7f1697, the CKS
samplers whose loops ran about max V + 1 rounds), patched into privrank: they fail it.
"""

import contextlib
import sys
import time

import numpy as np
from bench_exact_speed import baseline
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


def timed_releases(n, seed, delta=0.0):
    """(max |noise| / scale, seconds) of n exact-path `dp_borda_aggregate` releases (8
    candidates, 200 voters), timed one at a time: the noise is the released scores minus the true"""
    r = core.sample_plackett_luce(np.linspace(1, 0, 8), 200, rng=0)
    s = core.borda_scores(r)
    g = np.random.default_rng(seed)
    z, t = np.empty(n), np.empty(n)
    with core.use_noise("exact"):
        for i in range(n):
            t0 = time.perf_counter_ns()
            c = core.dp_borda_aggregate(r, epsilon=1.0, delta=delta, rng=g)
            t[i] = (time.perf_counter_ns() - t0) * 1e-9
            z[i] = np.abs(c.scores - s).max() / c.diagnostics["noise_scale"]
    return z, t


@contextlib.contextmanager
def samplers_of(rev):
    "privrank's exact samplers replaced by those of core.py at git revision `rev`"
    old = baseline(rev)
    saved = core._dlap, core.discrete_gaussian
    core._dlap, core.discrete_gaussian = old._dlap, old.discrete_gaussian
    try:
        yield
    finally:
        core._dlap, core.discrete_gaussian = saved


def report(name, z, t, scale, far, close=2):
    near = z < close * scale
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


def run(label, n):
    "the four rows of one set of samplers: {name: ratio}"
    core.discrete_laplace(20, 1, rng=0)  # warm up
    out = {}
    z, t = timed_draws(lambda g: core.discrete_laplace(20, 1, rng=g), n, 10)
    out["laplace"] = report(f"{label}: discrete Laplace, scale 20, far >= 6 scales", z, t, 20, 6)
    z, t = timed_draws(lambda g: core.discrete_gaussian(400, 1, rng=g), n, 20)
    out["gaussian"] = report(f"{label}: discrete Gaussian, sigma 20, far >= 3 sigma", z, t, 20, 3)
    z, t = timed_releases(n // 4, 30)
    out["borda"] = report(
        f"{label}: Borda release, Laplace, max of 8 >= 6 scales (near: < 2)", z, t, 1, 6
    )
    z, t = timed_releases(n // 4, 40, delta=1e-6)
    out["borda_gauss"] = report(
        f"{label}: Borda release, Gaussian, max of 8 >= 3 sigma (near: < 1)", z, t, 1, 3, 1
    )
    return out


def main(n=40_000, rev=None):
    print(f"{n:,} single draws and {n // 4:,} whole releases each; medians in microseconds")
    print("| sampler | near | far | median near | median far | ratio | Spearman rho | within 10% |")
    print("|---|---|---|---|---|---|---|---|")
    new = run("privrank", n)
    if rev is None:
        return new, None
    with samplers_of(rev):
        old = run(f"core.py at {rev}", n)
    return new, old


if __name__ == "__main__":
    args = sys.argv[1:]
    main(
        int(args[args.index("--draws") + 1]) if "--draws" in args else 40_000,
        args[args.index("--baseline") + 1] if "--baseline" in args else None,
    )
