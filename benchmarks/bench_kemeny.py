"""Exact Kemeny: privrank's subset DP (kemeny_exact) against corankco's exact ILP (PuLP + CBC),
pref_voting's exact Kemeny-Young (`pref_voting.other_methods.kemeny_young_rankings`, brute force
over all m! orders) and scipy's HiGHS ILP, and local search at m = 500 against KwikSort and in-
degree sorting.

python benchmarks/bench_kemeny.py

Same optimal cost is asserted; the time ratios are printed (best of k; shared machines are noisy,
read the ratios). corankco's `ExactAlgorithm` picks its CPLEX back end even when CPLEX is absent, so
its PuLP variant is called. pref_voting enumerates all m! orders in Python (about 30 s at m = 8, and
x90 per two more candidates), so it runs up to PREF_VOTING_MAX_M only and the larger sizes are
reported as skipped.

"""

import numpy as np
from _timing import best_of  # benchmarks/ is the script's folder

from privrank.core import preference_matrix, sample_plackett_luce
from privrank.kemeny import (
    dp_kemeny_aggregate,
    indegree_order,
    kemeny_cost,
    kemeny_exact,
    kemeny_ilp,
    kwiksort,
    local_search,
)


def corankco_exact(R):
    """Optimal order and cost by corankco's exact ILP (PuLP/CBC), or None if corankco is not
    installed"""
    try:
        from corankco.algorithms.exact.exactalgorithmpulp import ExactAlgorithmPulp
        from corankco.dataset import Dataset
        from corankco.scoringscheme import ScoringScheme
    except ImportError:
        return None
    orders = np.argsort(R, axis=1)
    ds = Dataset.from_raw_list([[{int(c)} for c in o] for o in orders])
    cons = ExactAlgorithmPulp().compute_consensus_rankings(
        ds, ScoringScheme.get_unifying_scoring_scheme_p(1.0), True
    )
    return cons


PREF_VOTING_MAX_M = 8


def pref_voting_exact(R):
    """(optimal orders, total Kendall distance) by pref_voting's exact Kemeny-Young, or None if
    pref_voting is not installed"""
    try:
        from pref_voting.other_methods import kemeny_young_rankings
        from pref_voting.profiles import Profile
    except ImportError:
        return None
    return kemeny_young_rankings(Profile(np.argsort(R, axis=1).tolist()))


def main():
    print(
        f"{'m':>3} {'dp (s)':>8} {'highs (s)':>10} {'corankco (s)':>13} {'pref_voting (s)':>16}"
        f" {'corankco/dp':>12} "
        f"{'pref_voting/dp':>15} {'highs/dp':>9}"
    )
    skipped = []
    warm = sample_plackett_luce(
        np.zeros(4), 5, rng=0
    )  # imports, numba's JIT and CBC's first start are not timed
    corankco_exact(warm)
    pref_voting_exact(warm)
    for m in (8, 10, 12, 14, 16, 20):
        R = sample_plackett_luce(np.random.default_rng(m).normal(0, 0.3, m), 50, rng=m)
        w = preference_matrix(R)
        t_dp, o_dp = best_of(lambda: kemeny_exact(w), 3)
        t_hi, o_hi = best_of(lambda: kemeny_ilp(w), 1)
        assert abs(kemeny_cost(w, o_dp) - kemeny_cost(w, o_hi)) < 1e-9
        try:
            t_co, cons = best_of(lambda: corankco_exact(R), 1)
        except Exception as e:  # a broken corankco/PuLP install: say so and carry on with HiGHS
            t_co, cons = np.nan, None
            print(f"    corankco failed: {type(e).__name__}: {e}")
        if cons is not None:
            assert abs(cons.kemeny_score / len(R) - kemeny_cost(w, o_dp)) < 1e-9, (
                cons.kemeny_score / len(R),
                kemeny_cost(w, o_dp),
            )
        t_pv = np.nan
        if m <= PREF_VOTING_MAX_M:
            t_pv, pv = best_of(lambda: pref_voting_exact(R), 1)
            if pv is not None:
                orders, dist = pv
                assert abs(dist / len(R) - kemeny_cost(w, o_dp)) < 1e-9, (
                    dist / len(R),
                    kemeny_cost(w, o_dp),
                )
                assert all(
                    abs(kemeny_cost(w, np.array(o)) - kemeny_cost(w, o_dp)) < 1e-9 for o in orders
                )
            else:
                t_pv = np.nan
        else:
            skipped.append(m)
        pv_t, pv_r = (
            (f"{t_pv:16.3f}", f"{t_pv / t_dp:15.0f}")
            if np.isfinite(t_pv)
            else (f"{'skipped':>16}", f"{'-':>15}")
        )
        print(
            f"{m:>3} {t_dp:8.3f} {t_hi:10.3f} {t_co:13.3f} {pv_t} {t_co / t_dp:12.2f} {pv_r}"
            f" {t_hi / t_dp:9.2f}"
        )
    if skipped:
        print(
            f"    pref_voting skipped at m = {skipped}: its exact method enumerates all m! orders"
            " in Python "
            f"(m = 10 would take ~90x the m = 8 time, m = 20 ~10^13 x)"
        )
    m = 500
    w = preference_matrix(
        sample_plackett_luce(np.random.default_rng(1).normal(0, 0.2, m), 200, rng=1)
    )
    t_in, o_in = best_of(lambda: indegree_order(w), 3)
    t_kw, o_kw = best_of(lambda: kwiksort(w, rng=0), 3)
    t_ls, o_ls = best_of(lambda: local_search(w, o_in), 1)
    c_ls = kemeny_cost(w, o_ls)
    print(
        f"m = 500: local search {t_ls:.2f} s (cost {c_ls:.1f}); in-degree {t_in:.4f} s, cost ratio "
        f"{kemeny_cost(w, o_in) / c_ls:.4f}; KwikSort {t_kw:.4f} s,"
        f" cost ratio {kemeny_cost(w, o_kw) / c_ls:.4f}"
    )
    private_releases()


def private_releases():
    """Time and additive error of dp_kemeny_aggregate's four mechanisms (n = 10^4, m = 12, eps = 1),
    exact solver"""
    R = sample_plackett_luce(np.random.default_rng(2).normal(0, 0.3, 12), 10_000, rng=2)
    w = preference_matrix(R)
    opt = kemeny_cost(w, kemeny_exact(w))
    for name, kw in (
        ("large n, Gaussian", dict(delta=1e-6, regime="large_n")),
        ("large n, Laplace", dict(delta=0.0, regime="large_n")),
        ("small n, our B", dict(delta=1e-6, regime="small_n")),
        ("small n, paper B", dict(delta=1e-6, regime="small_n", n_buckets="paper")),
    ):
        t, res = best_of(
            lambda: dp_kemeny_aggregate(R, epsilon=1.0, solver="exact", rng=0, **kw), 3
        )
        print(
            f"{name:>18}: {t:.3f} s, additive error {kemeny_cost(w, res.order) - opt:.4f},"
            f" B = {res.diagnostics.get('n_buckets', '-')}"
        )


if __name__ == "__main__":
    main()
