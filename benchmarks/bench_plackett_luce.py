"""Time privrank's Plackett-Luce MLE on partial rankings against choix in one run; print ratios.

    python benchmarks/bench_plackett_luce.py [--quick]

`btl.fit_plackett_luce` (Newton-CG, O(total length) per gradient and Hessian product) against
`choix.ilsr_rankings` (iterative Luce spectral ranking, run to tol 1e-12) on the same rankings:
NASCAR 2002 (36 races, 43 of 83 drivers; drivers 84-87 only lose and are left out, as Hunter
2004 does) and Sushi's second survey (5,000 voters, 10 of 100 sushis each), both from the shared
data folder, and simulated subset rankings (m = 1,000 items, 20,000 rankings of 20, from a
Plackett-Luce law; --quick: 2,000 rankings). Accuracy: the largest |theta difference| (both
centred) is printed next to each ratio. Target: ours / choix <= 1 everywhere. Best of k runs.
"""

import gzip
import sys

import _timing  # benchmarks/ is the script's folder
import numpy as np

from privrank.btl import fit_plackett_luce
from privrank.datasets import read_preflib, shared_data_dir

try:
    import choix
except ImportError:  # the dev extra installs it
    sys.exit("choix is not installed: pip install choix (or the dev extra)")


def compare(name, rankings, m, counts=None, k=3):
    every = (
        [list(r) for r in rankings]
        if counts is None
        else [list(r) for r, c in zip(rankings, counts) for _ in range(int(c))]
    )
    t_ours, (th, _) = _timing.best_of(lambda: fit_plackett_luce(rankings, m, counts=counts), k)
    t_peer, ref = _timing.best_of(
        lambda: choix.ilsr_rankings(m, every, alpha=0.0, tol=1e-12, max_iter=10_000), k
    )
    gap = np.abs(th - (ref - ref.mean())).max()
    print(
        f"{name:<34} ours {t_ours:8.3f} s  choix {t_peer:8.3f} s  ratio {t_ours / t_peer:6.3f}"
        f"  max |diff| {gap:.1e}"
    )


def main():
    quick = "--quick" in sys.argv
    shared = shared_data_dir()
    if shared is not None:
        path = shared / "plackettluce-rankings" / "nascar2002_orderings.csv.gz"
        with gzip.open(path, "rt") as f:
            races = np.loadtxt(f, delimiter=",", skiprows=1, dtype=np.int64)[:, 1:] - 1
        compare("NASCAR 2002 (36 x 43 of 83)", [r[r < 83] for r in races], 83)
        sushi = read_preflib(shared / "preflib-sushi" / "00014-00000002.soi.gz")
        tens = [np.concatenate(o) for o in sushi.orders]
        compare("Sushi .soi (5,000 x 10 of 100)", tens, sushi.n_items, sushi.counts, k=2)
    g = np.random.default_rng(0)
    m, n, L = 1000, 2000 if quick else 20_000, 20
    theta = g.normal(0, 1, m)
    subsets = np.argsort(g.random((n, m)), axis=1)[:, :L]  # the items each voter is shown
    gumbel = theta[subsets] + g.gumbel(size=subsets.shape)  # PL: order by theta + Gumbel noise
    rankings = list(np.take_along_axis(subsets, np.argsort(-gumbel, axis=1), axis=1))
    compare(f"simulated ({n:,} x {L} of {m:,})", rankings, m, k=1 if not quick else 2)


if __name__ == "__main__":
    main()
