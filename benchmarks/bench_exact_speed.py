"""Speed of the exact samplers whose time does not tell their draw (issue 35, item 1) against the
samplers they replaced, in one run.

    python benchmarks/bench_exact_speed.py [--baseline REV] [--draws N]

The baseline is `privrank/core.py` at git revision REV (default f7f1697, the last with the
variable-round CKS samplers), loaded from git as a module of its own: the same code that ran
then, on this machine now. For each law and parameter: a single draw (median of 2,000 calls, the
per-call cost a release of one value pays) and N draws in one call (best of 3). Printed: the
times and the ratio new / baseline; the issue's bar is a ratio of at most 2.
"""

import subprocess
import sys
import time
import types
from fractions import Fraction
from pathlib import Path

import numpy as np

from privrank import core

ROOT = Path(__file__).resolve().parent.parent


def baseline(rev):
    "privrank/core.py at `rev` as a module"
    src = subprocess.run(
        ["git", "show", f"{rev}:privrank/core.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    mod = types.ModuleType("core_baseline")
    sys.modules["core_baseline"] = mod  # dataclasses look their module up
    exec(compile(src, f"core.py@{rev}", "exec"), mod.__dict__)
    return mod


def single(f, reps=2000):
    "median seconds of one call"
    g = np.random.default_rng(0)
    t = np.empty(reps)
    for i in range(reps):
        t0 = time.perf_counter()
        f(g)
        t[i] = time.perf_counter() - t0
    return float(np.median(t))


def bulk(f, reps=3):
    "best seconds of one call"
    g, out = np.random.default_rng(1), []
    for _ in range(reps):
        t0 = time.perf_counter()
        f(g)
        out.append(time.perf_counter() - t0)
    return min(out)


def cases(mod, n):
    lap = [1, Fraction(37, 100), 20, 1000, 2**30, 2**52]
    gau = [2, 400, 2**20, 2**40, 2**104]
    for t in lap:
        yield (
            "discrete Laplace",
            f"scale {t}",
            lambda g, t=t, k=1: mod.discrete_laplace(t, k, rng=g),
            lambda g, t=t: mod.discrete_laplace(t, n, rng=g),
        )
    for s2 in gau:
        yield (
            "discrete Gaussian",
            f"sigma^2 {s2}",
            lambda g, s2=s2: mod.discrete_gaussian(s2, 1, rng=g),
            lambda g, s2=s2: mod.discrete_gaussian(s2, n, rng=g),
        )
    num = np.arange(8) * 3
    yield (
        "Bernoulli(exp(-x))",
        "x = 0..10.5",
        lambda g: mod.bernoulli_exp(num, 2, rng=g),
        lambda g: mod.bernoulli_exp(np.tile(num, n // 8), 2, rng=g),
    )
    yield (
        "randomized response's coin",
        "epsilon 1",
        lambda g: mod.rr_flips(1, epsilon=1.0, rng=g, noise="exact"),
        lambda g: mod.rr_flips(n, epsilon=1.0, rng=g, noise="exact"),
    )


def main(rev="f7f1697", n=100_000):
    old = baseline(rev)
    print(
        f"new samplers against core.py at {rev}; single: median of 2,000 calls; "
        f"bulk: {n:,} draws in one call, best of 3"
    )
    print("| sampler | parameter | single new | single old | ratio | bulk new | bulk old | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for (law, par, s_new, b_new), (_, _, s_old, b_old) in zip(cases(core, n), cases(old, n)):
        a, b = single(s_new), single(s_old)
        c, d = bulk(b_new), bulk(b_old)
        worst = max(worst, a / b, c / d)
        print(
            f"| {law} | {par} | {1e6 * a:.0f} us | {1e6 * b:.0f} us | {a / b:.2f} | "
            f"{1e3 * c:.1f} ms | {1e3 * d:.1f} ms | {c / d:.2f} |"
        )
    print(f"largest ratio new / old: {worst:.2f} (the bar: 2)")
    return worst


if __name__ == "__main__":
    args = sys.argv[1:]
    main(
        args[args.index("--baseline") + 1] if "--baseline" in args else "f7f1697",
        int(args[args.index("--draws") + 1]) if "--draws" in args else 100_000,
    )
