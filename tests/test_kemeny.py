"""Property tests for privrank.kemeny: the exact subset DP and the ILP agree with brute force on
any real weights; every heuristic returns a permutation no better than the optimum; the
margins and bucketed releases decompose and are calibrated; bad input raises
ValueError/TypeError naming the parameter."""

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privrank import core, kemeny
from privrank import kemeny as K

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def brute(w):
    return min(K.kemeny_cost(w, p) for p in itertools.permutations(range(len(w))))


@st.composite
def weights(draw, max_m=7):
    m = draw(st.integers(1, max_m))
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).normal(size=(m, m)) * draw(
        st.sampled_from([0.1, 1.0, 100.0])
    )


@SETTINGS
@given(weights())
def test_exact_and_ilp_are_optimal(w):
    opt = brute(w)
    assert math.isclose(K.kemeny_cost(w, K.kemeny_exact(w)), opt, rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(K.kemeny_cost(w, K.kemeny_ilp(w)), opt, rel_tol=1e-7, abs_tol=1e-7)


@SETTINGS
@given(weights(), st.integers(0, 100))
def test_heuristics_return_permutations(w, seed):
    m = len(w)
    opt = K.kemeny_cost(w, K.kemeny_exact(w))
    for o in (
        K.indegree_order(w),
        K.kwiksort(w, rng=seed),
        K.local_search(w),
        K.kemeny_ptas(w, window=4, rng=seed),
    ):
        assert np.array_equal(np.sort(o), np.arange(m))
        assert K.kemeny_cost(w, o) >= opt - 1e-9


@SETTINGS
@given(weights())
def test_reduction_is_a_constant_shift(w):
    wr, c = K.reduce_instance(w)
    for p in itertools.islice(itertools.permutations(range(len(w))), 50):
        assert math.isclose(
            K.kemeny_cost(w, p), c + K.kemeny_cost(wr, p), rel_tol=1e-9, abs_tol=1e-7
        )


def test_kemeny_cost_is_mean_kendall():
    R = core.sample_plackett_luce(np.linspace(1, 0, 9), 200, rng=0)
    res = K.kemeny_aggregate(R)
    assert math.isclose(
        res.diagnostics["kemeny_cost"],
        core.kendall_tau_distance(R, res.ranks).mean(),
        rel_tol=1e-12,
    )


def test_margin_noise_is_calibrated_and_unbiased():
    R = core.sample_plackett_luce(np.linspace(1, 0, 5), 100, rng=1)
    w = core.preference_matrix(R)
    d = (w - w.T)[np.triu_indices(5, 1)]
    noise = np.concatenate(
        [
            (lambda x: (x - x.T)[np.triu_indices(5, 1)])(
                K.noisy_margins_instance(R, epsilon=0.5, delta=1e-5, rng=s).w
            )
            - d
            for s in range(2000)
        ]
    )
    sigma = core.analytic_gaussian_sigma(
        epsilon=0.5, delta=1e-5, sensitivity=K.margin_sensitivity(100, 5)[1]
    )
    assert abs(noise.std() - sigma) < 5 * sigma / math.sqrt(2 * noise.size)
    assert abs(noise.std() / 2 - sigma) > 5 * sigma / math.sqrt(
        2 * noise.size
    )  # half the noise is detected
    assert abs(noise.mean()) < 5 * sigma / math.sqrt(noise.size)


def test_dp_entry_point_records_what_it_spent():
    R = core.sample_plackett_luce(np.linspace(1, 0, 6), 3000, rng=2)
    res = K.dp_kemeny_aggregate(R, epsilon=1.0, delta=1e-6, rng=0)
    assert res.epsilon == 1.0 and res.delta == 1e-6 and res.privacy_unit == "voter"
    assert res.diagnostics["regime"] in ("large_n", "small_n")
    assert np.array_equal(np.sort(res.order), np.arange(6))


@pytest.mark.parametrize(
    "bad, msg",
    [
        (np.ones((2, 3)), "`w` must be a non-empty square matrix"),
        (np.array([[0, np.nan], [1, 0]]), "`w` must be finite"),
    ],
)
def test_bad_weights(bad, msg):
    with pytest.raises(ValueError, match=msg):
        K.kemeny_exact(bad)


def test_exact_limit_and_bad_input():
    with pytest.raises(ValueError, match="handles m <= 20"):
        K.kemeny_exact(np.zeros((21, 21)))
    with pytest.raises(TypeError, match="`w` must be a real matrix"):
        K.kemeny_cost(np.array([["a"]]), [0])
    with pytest.raises(ValueError, match="not a permutation"):
        K.kemeny_aggregate([[0, 0, 1]])
    with pytest.raises(
        ValueError, match="`delta` must be positive"
    ):  # Alabi et al.'s clipped instance needs delta > 0
        K.clipped_noisy_instance([[0, 1], [1, 0]], epsilon=1.0, delta=0.0)
    with pytest.raises(ValueError, match="`n_buckets` must be None, 'paper' or an int"):
        K.dp_kemeny_aggregate(
            [[0, 1], [1, 0]], epsilon=1.0, delta=0.0, regime="small_n", n_buckets="x"
        )


def test_laplace_margins_are_calibrated():
    """epsilon-DP large-n variant: Laplace(l1 sensitivity / epsilon) on the margins, E|L| = b within
    5 s.e.; half is detected"""
    R = core.sample_plackett_luce(np.linspace(1, 0, 5), 100, rng=1)
    w = core.preference_matrix(R)
    iu = np.triu_indices(5, 1)
    d = (w - w.T)[iu]
    noise = np.concatenate(
        [
            (lambda x: (x - x.T)[iu])(K.noisy_margins_instance(R, epsilon=0.5, delta=0.0, rng=s).w)
            - d
            for s in range(2000)
        ]
    )
    b = K.margin_sensitivity(100, 5)[0] / 0.5
    assert abs(np.abs(noise).mean() - b) < 5 * b / math.sqrt(noise.size)
    assert abs(np.abs(noise / 2).mean() - b) > 5 * b / math.sqrt(noise.size)
    res = K.dp_kemeny_aggregate(R, epsilon=1.0, delta=0.0, regime="large_n", rng=0)
    assert res.diagnostics["mechanism"] == "margins_laplace" and res.delta == 0.0


def test_paper_buckets_reproduce_the_exponents():
    """B of result 4.4: B ~ m^(1/11) and error*eps*n ~ m^(65/22) at eps n = m; B ~ m^(1/7) at eps n
    = m^2 (epsilon-DP)"""
    ms = np.logspace(20, 60, 5)  # B is tiny below astronomically large m; rounding would dominate
    Bd = np.array(
        [K.paper_buckets(1, int(m), epsilon=float(m), delta=1e-6) for m in ms]
    )  # eps n = m
    Bp = np.array(
        [K.paper_buckets(1, int(m), epsilon=float(m) ** 2, delta=0.0) for m in ms]
    )  # eps n = m^2
    assert abs(np.polyfit(np.log(ms), np.log(Bd), 1)[0] - 1 / 11) < 0.01
    assert abs(np.polyfit(np.log(ms), np.log(Bp), 1)[0] - 1 / 7) < 0.01
    for n, m in ((1, 3), (10, 50), (10**6, 10)):
        for delta in (0.0, 1e-6):
            assert 1 <= K.paper_buckets(n, m, epsilon=1.0, delta=delta) <= m


def _errors(eps, n, seeds, scale):
    out = np.zeros(seeds)
    for s in range(seeds):
        R = core.sample_plackett_luce(np.random.default_rng(100 + s).normal(0, scale, 8), n, rng=s)
        W = core.preference_matrix(R)
        opt = K.kemeny_cost(W, K.kemeny_exact(W))
        out[s] = (
            K.kemeny_cost(
                W, K.dp_kemeny_aggregate(R, epsilon=eps, delta=1e-6, regime="large_n", rng=s).order
            )
            - opt
        )
    return out


def test_error_slope_in_epsilon():
    """Scaled-down sweep: with margins scaled with the noise the large-n error falls like 1/epsilon
    (slope -1 within 5 bootstrap s.e.)"""
    eps = np.array([0.25, 0.5, 1, 2, 4])
    E = np.array([_errors(e, 2000, 16, 0.3 / e) for e in eps])
    slope = lambda E: np.polyfit(np.log(eps), np.log(E.mean(axis=1) + 1e-4), 1)[0]
    idx = np.random.default_rng(0).integers(0, 16, (300, 16))
    se = np.std([slope(E[:, i]) for i in idx])
    assert abs(slope(E) + 1) < 5 * se, (slope(E), se)


R6 = core.sample_plackett_luce(np.linspace(1, 0, 6), 20, rng=0)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: K.kemeny_aggregate(R6, solver=["exact"]), "`solver`"),
        (lambda: K.dp_kemeny_aggregate(R6, epsilon=1.0, delta=1e-6, solver=["exact"]), "`solver`"),
        (lambda: K.dp_kemeny_aggregate(R6, epsilon=1.0, delta=1e-6, regime=["auto"]), "`regime`"),
        (lambda: K.dp_kemeny_aggregate(R6, epsilon=[1.0, 2.0], delta=1e-6), "`epsilon`"),
        (lambda: K.dp_kemeny_aggregate(R6, epsilon=1e-320, delta=0.0), "`epsilon`"),
        (lambda: K.kemeny_cost([[0, 1], [1]], [0, 1]), "`w`"),
        (lambda: K.kemeny_ptas(np.zeros((30, 30)), window=20), "`window`"),
        (
            lambda: K.dp_kemeny_aggregate(
                core.sample_plackett_luce(np.zeros(60), 5, rng=0),
                epsilon=1.0,
                delta=1e-6,
                regime="small_n",
                n_buckets=60,
            ),
            "`n_buckets`",
        ),
        (lambda: K.dp_kemeny_aggregate(np.arange(10**6)[None], epsilon=1.0, delta=1e-6), "`ranks`"),
    ],
)
def test_refusals_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_project_marginals_refuses_by_name():
    G = np.full((6, 6), 0.25) + 0.25 * np.eye(6)
    for kw, msg in (
        (dict(relaxation="cut"), "`relaxation` must be"),
        (dict(rho=-1.0), "`rho` must be"),
        (dict(rho=float("nan")), "`rho` must be"),
        (dict(tol=0.0), "`tol` must be in (0, 1)"),
        (dict(tol=True), "`tol` must be in (0, 1)"),
        (dict(max_iter=0), "`max_iter` must be >= 1"),
    ):
        with pytest.raises(ValueError, match=re.escape(msg)):
            kemeny.project_marginals(G, 3, 2, **kw)
    for bad in (G[:5, :5], G + np.triu(np.ones((6, 6)), 1), np.where(np.eye(6) > 0, np.nan, G)):
        with pytest.raises(ValueError, match="`G_noisy` must be a finite symmetric"):
            kemeny.project_marginals(bad, 3, 2)
    big = np.eye(130)
    with pytest.raises(ValueError, match="too slow above 128"):
        kemeny.project_marginals(big, 65, 2)
    R = core.sample_plackett_luce(np.linspace(1, 0, 65), 4, rng=0)
    with pytest.raises(ValueError, match="`projection` = 'elliptope' with m x n_buckets = 130"):
        kemeny.bucketed_instance(R, epsilon=1.0, n_buckets=2, projection="elliptope", rng=0)
    with pytest.raises(ValueError, match="`projection` must be one of"):
        kemeny.bucketed_instance(R[:, :5].argsort(1).argsort(1), epsilon=1.0, projection="x")


def test_elliptope_projection_keeps_a_true_G_and_records_its_gap():
    R = core.sample_plackett_luce(np.linspace(1, 0, 6), 40, rng=1)
    _, G = kemeny._bucket_stats(R, 2)
    Gh, info = kemeny.project_marginals(G, 6, 2, rng=0)  # G is feasible with zero penalty
    assert np.abs(Gh - G).max() < 0.05 and info["gap"] >= 0
    inst = kemeny.bucketed_instance(
        R, epsilon=1.0, delta=1e-6, n_buckets=2, projection="elliptope", rng=0
    )
    d = inst.diagnostics
    assert d["projection"] == "elliptope" and d["projection_iterations"] >= 1
    same = kemeny.bucketed_instance(R, epsilon=1.0, delta=1e-6, n_buckets=2, rng=0)
    np.testing.assert_array_equal(d["G_noisy"], same.diagnostics["G_noisy"])  # the same release
    assert same.diagnostics["projection"] == "psd_trace"


# issue 33, items 1 and 2 (first part): the ILP by default at m = 17..20, its incumbent at the
# time limit with the gap, and bounds capped by the trivial one


def test_auto_solves_m_17_to_20_by_the_ilp_and_proves_it_optimal():
    R = core.sample_plackett_luce(np.linspace(1, 0, 18), 60, rng=3)
    res = K.kemeny_aggregate(R)
    w = core.preference_matrix(R)
    assert res.diagnostics["solver"] == "ilp" and res.diagnostics["optimal"] is True
    assert res.diagnostics["approximation_factor"] == 1.0 and res.diagnostics["gap"] == 0.0
    assert res.diagnostics["kemeny_cost"] == pytest.approx(K.kemeny_cost(w, K.kemeny_exact(w)))
    assert K.kemeny_aggregate(R[:, :16].argsort(1).argsort(1)).diagnostics["solver"] == "exact"


def test_the_ilp_returns_its_incumbent_at_the_time_limit_with_the_gap(monkeypatch):
    from scipy import optimize

    R = core.sample_plackett_luce(np.linspace(1, 0, 18), 60, rng=4)
    t = K._tie_rule(core.preference_counts(R), np.arange(18))  # the instance the solvers see
    const = t[np.triu_indices(18, 1)].sum()  # cost = const + c . x
    real = optimize.milp

    def stopped(*a, **kw):  # HiGHS at its time limit: a feasible order, 5% above its lower bound
        res = real(*a, **kw)
        res.status, res.message = 1, "Time limit reached"
        res.mip_dual_bound = res.fun - 0.05 * (const + res.fun)
        return res

    monkeypatch.setattr(K.optimize, "milp", stopped)
    for solver in ("auto", "ilp"):
        dg = K.kemeny_aggregate(R, solver=solver).diagnostics
        assert dg["optimal"] is False and dg["gap"] == pytest.approx(0.05, rel=1e-9)
        assert dg["solver"] == "ilp" and dg["order_from"] in ("ilp", "heuristic")  # the better
        assert dg["approximation_factor"] is None and "none proven" in dg["guarantee"]

    def nothing(*a, **kw):  # stopped before any feasible order
        res = real(*a, **kw)
        res.status, res.x, res.message = 1, None, "Time limit reached"
        res.mip_dual_bound = res.fun - 0.05 * (const + res.fun)
        return res

    monkeypatch.setattr(K.optimize, "milp", nothing)
    for solver in ("auto", "ilp"):  # the heuristic, said
        dg = K.kemeny_aggregate(R, solver=solver).diagnostics
        assert (dg["solver"], dg["optimal"], dg["order_from"]) == ("ilp", False, "heuristic")
        assert dg["gap"] == pytest.approx(0.05, rel=1e-9)  # it is the incumbent HiGHS lacked
    with pytest.raises(RuntimeError, match="found no order"):
        K.kemeny_ilp(core.preference_matrix(R))


def test_reported_bounds_never_exceed_the_trivial_one():
    R = core.sample_plackett_luce(np.linspace(1, 0, 20), 200, rng=5)
    dg = K.dp_kemeny_aggregate(R, epsilon=1.0, rng=0).diagnostics
    assert max(dg["bound_large_n"], dg["bound_small_n"]) <= 190  # binom(20, 2)
    assert dg["solver"] == "ilp" and isinstance(dg["optimal"], bool)


def test_auto_returns_the_optimum_on_a_uniform_profile_at_m_40_n_1000_within_15_s():
    # the done-when: every order equally likely (margins near 0, the hard case)
    import time

    rng = np.random.default_rng(33)
    R = np.argsort(np.argsort(rng.random((1000, 40)), axis=1), axis=1)
    t0 = time.perf_counter()
    res = K.kemeny_aggregate(R)
    took = time.perf_counter() - t0
    w = core.preference_matrix(R)
    best = K.kemeny_cost(w, K.kemeny_ilp(w, time_limit=600.0))  # the ILP, no practical limit
    assert res.diagnostics["solver"] == "ilp" and res.diagnostics["optimal"] is True
    assert res.diagnostics["kemeny_cost"] == pytest.approx(best, rel=1e-12)
    assert took < 15.0, took
    assert K.kemeny_cost(w, K.kemeny_ptas(w, rng=0)) >= best - 1e-9  # no order beats the optimum
