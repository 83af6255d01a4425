"""Kemeny by default: privrank's `kemeny_aggregate` (solver "auto": the subset DP to 16 candidates,
HiGHS' ILP to 100, proven optimal or stopped at 10 s) against corankco's exact ILP (PuLP + CBC), on
uniform profiles (every order equally likely: the hard case, margins near 0) and Mallows profiles
(dispersion phi = 0.9 around one order), m = 20 to 80 candidates, n = 100 to 10,000 voters.

python benchmarks/bench_kemeny_corankco.py [--quick] [--limit SECONDS]

For each cell: both times (one run each: a cell takes seconds to minutes), their ratio
corankco / privrank (> 1: privrank faster), whether privrank proved its order optimal (else its gap
to HiGHS' lower bound), and the two costs (mean Kendall distance to the voters), which must agree
when both are proven optimal. corankco runs in a child process stopped at `--limit` seconds
(default 120; CBC has no time limit there): a stopped cell prints "> limit" and a lower bound on the
ratio. `--quick`: m = 20, 40 and n = 100, 1,000 only. corankco is in the `bench` extra; without it
only privrank's column is printed.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

from privrank.core import preference_matrix, sample_mallows
from privrank.kemeny import kemeny_aggregate, kemeny_cost

CHILD = r"""
import json, sys, time
import numpy as np
from corankco.algorithms.exact.exactalgorithmpulp import ExactAlgorithmPulp
from corankco.dataset import Dataset
from corankco.scoringscheme import ScoringScheme
orders = np.load(sys.argv[1])
t0 = time.perf_counter()
ds = Dataset.from_raw_list([[{int(c)} for c in o] for o in orders])
cons = ExactAlgorithmPulp().compute_consensus_rankings(
    ds, ScoringScheme.get_unifying_scoring_scheme_p(1.0), True
)
t = time.perf_counter() - t0
print(json.dumps(dict(seconds=t, score=float(cons.kemeny_score))))
"""


def has_corankco():
    try:
        import corankco  # noqa: F401
    except ImportError:
        return False
    return True


def corankco_exact(R, limit):
    "(seconds or None if stopped at `limit`, total Kendall distance or None) in a child process"
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "orders.npy")
        np.save(path, np.argsort(R, axis=1))
        p = subprocess.Popen(
            [sys.executable, "-c", CHILD, path],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # CBC runs as its own process: stopped with the whole group
        )
        try:
            out, err = p.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return None, None
    if p.returncode:
        raise RuntimeError(f"corankco failed: {err.strip().splitlines()[-1:]}")
    r = json.loads(out.strip().splitlines()[-1])
    return r["seconds"], r["score"]


def profile(family, m, n, seed):
    "(n, m) ranks: uniform (every order equally likely) or Mallows (phi = 0.9)"
    if family == "uniform":
        rng = np.random.default_rng(seed)
        return np.argsort(np.argsort(rng.random((n, m)), axis=1), axis=1)
    return sample_mallows(m, n, 0.9, rng=seed)


def main():
    args = sys.argv[1:]
    quick = "--quick" in args
    limit = float(args[args.index("--limit") + 1]) if "--limit" in args else 120.0
    ms, ns = ((20, 40), (100, 1000)) if quick else ((20, 40, 60, 80), (100, 1000, 10000))
    peer = has_corankco()
    if peer:  # the first start of CBC and corankco's imports are not timed in the grid
        corankco_exact(profile("uniform", 5, 10, 0), limit)
    print(
        f"{'profile':8} {'m':>3} {'n':>6} {'privrank (s)':>13} {'proved':>7} {'gap':>8}"
        f" {'corankco (s)':>13} {'ratio':>8} {'cost privrank':>14} {'cost corankco':>14}"
    )
    for family in ("uniform", "mallows"):
        for m in ms:
            for n in ns:
                R = profile(family, m, n, seed=m + n)
                t0 = time.perf_counter()
                res = kemeny_aggregate(R)
                t_pr = time.perf_counter() - t0
                dg = res.diagnostics
                w = preference_matrix(R)
                cost = kemeny_cost(w, res.order)
                t_co, score = corankco_exact(R, limit) if peer else (None, None)
                if not peer:
                    co, ratio, c_co = "-", "-", "-"
                elif t_co is None:
                    co, ratio, c_co = f"> {limit:.0f}", f"> {limit / t_pr:.0f}", "stopped"
                else:
                    co, ratio, c_co = f"{t_co:.2f}", f"{t_co / t_pr:.1f}", f"{score / n:.4f}"
                    if dg["optimal"]:  # both proven optimal: the same optimum
                        assert abs(score / n - cost) < 1e-6 * max(1.0, cost), (score / n, cost)
                gap = f"{dg.get('gap', 0.0):.1e}"
                print(
                    f"{family:8} {m:>3} {n:>6} {t_pr:13.2f} {str(dg['optimal']):>7} {gap:>8}"
                    f" {co:>13} {ratio:>8} {cost:14.4f} {c_co:>14}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
