"""Property tests for privrank.footrule: the matching is optimal (brute force over all
permutations), its cost is the mean footrule distance, the private consensus is always a
permutation that records what it spent, the Kemeny 2-approximation holds, and bad input gets a
ValueError/TypeError naming the parameter."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_tree import _neighbours, grid_release, lattice_agrees, on_lattice

from privrank import core, footrule, kemeny
from privrank.tree import exact_position_costs

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PERMS = {m: np.array(list(itertools.permutations(range(m)))) for m in range(1, 8)}


@st.composite
def profiles(draw, max_n=25, max_m=7):
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(1, max_m))
    seed = draw(st.integers(0, 2**32 - 1))
    return np.argsort(np.random.default_rng(seed).random((n, m)), axis=1)


@SETTINGS
@given(profiles())
def test_matching_is_optimal(R):
    n, m = R.shape
    res = footrule.footrule_aggregate(R)
    g = exact_position_costs(R)
    brute = g[np.arange(m), PERMS[m]].sum(1).min()
    cost = res.diagnostics["footrule_cost"]
    assert math.isclose(cost, brute, rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(
        cost, core.footrule_distance(R, res.ranks).mean(), rel_tol=1e-9, abs_tol=1e-9
    )
    assert np.array_equal(np.sort(res.order), np.arange(m)) and np.array_equal(
        res.ranks[res.order], np.arange(m)
    )
    assert not res.private and res.epsilon == math.inf


@SETTINGS
@given(profiles(max_m=6))
def test_kemeny_two_approximation(R):
    W = core.preference_matrix(R)
    k_all = kemeny.kemeny_cost(W, ranks=PERMS[R.shape[1]])
    k_fr = kemeny.kemeny_cost(W, footrule.footrule_aggregate(R))
    assert k_all.min() - 1e-9 <= k_fr <= 2 * k_all.min() + 1e-9
    assert math.isclose(
        k_fr,
        core.kendall_tau_distance(R, footrule.footrule_aggregate(R).ranks).mean(),
        abs_tol=1e-9,
    )


@SETTINGS
@given(
    profiles(max_n=40, max_m=8),
    st.floats(0.01, 50),
    st.sampled_from([0.0, 1e-6, 0.1]),
    st.sampled_from(["central", "local"]),
    st.integers(0, 2**32 - 1),
)
def test_dp_footrule_is_a_valid_consensus(R, epsilon, delta, model, seed):
    n, m = R.shape
    if model == "local" and n < m:
        with pytest.raises(ValueError):
            footrule.dp_footrule_aggregate(R, epsilon=epsilon, delta=delta, model=model, rng=seed)
        return
    res = footrule.dp_footrule_aggregate(R, epsilon=epsilon, delta=delta, model=model, rng=seed)
    assert np.array_equal(np.sort(res.order), np.arange(m))
    assert (res.epsilon, res.delta, res.model, res.privacy_unit, res.n_voters) == (
        epsilon,
        delta,
        model,
        "voter",
        n,
    )
    assert res.private and math.isfinite(res.diagnostics["noisy_footrule_cost"])
    again = footrule.dp_footrule_aggregate(R, epsilon=epsilon, delta=delta, model=model, rng=seed)
    assert np.array_equal(res.order, again.order)
    # Result 3: the additive error is within the spread of the released noise over all matchings
    g = exact_position_costs(R)
    err = (
        footrule.footrule_cost(g, res.ranks)
        - footrule.footrule_aggregate(R).diagnostics["footrule_cost"]
    )
    assert (
        -1e-9
        <= err
        <= footrule.matching_error_bound(res.diagnostics["position_costs"].gamma - g) + 1e-9
    )


@SETTINGS
@given(
    profiles(max_n=30, max_m=7),
    st.floats(0.05, 20),
    st.sampled_from([0.0, 1e-6]),
    st.integers(0, 2**32 - 1),
)
def test_baselines_are_valid(R, epsilon, delta, seed):
    m = R.shape[1]
    for f in (footrule.naive_dp_footrule_aggregate, footrule.dp_pairwise_indegree_aggregate):
        res = f(R, epsilon=epsilon, delta=delta, rng=seed)
        assert np.array_equal(np.sort(res.order), np.arange(m)) and (res.epsilon, res.delta) == (
            epsilon,
            delta,
        )


R0 = np.argsort(np.random.default_rng(0).random((30, 5)), axis=1)
BAD = [
    (dict(ranks=[[0, 1, 1]]), "`ranks`"),
    (dict(ranks=[[0, 1, 3]]), "`ranks`"),
    (dict(ranks=np.zeros((0, 4), int)), "`ranks`"),
    (dict(ranks=[[0.0, 1.0]]), "`ranks`"),
    (dict(epsilon=0), "`epsilon`"),
    (dict(epsilon=-1.0), "`epsilon`"),
    (dict(epsilon=math.nan), "`epsilon`"),
    (dict(epsilon=True), "`epsilon`"),
    (dict(delta=1.0), "`delta`"),
    (dict(delta=-0.1), "`delta`"),
    (dict(delta=math.nan), "`delta`"),
    (dict(model="global"), "`model`"),
]


@pytest.mark.parametrize("kw,name", BAD, ids=[str(k) for k, _ in BAD])
def test_bad_input(kw, name):
    args = dict(ranks=R0, epsilon=1.0, delta=0.0, model="central", rng=0) | kw
    with pytest.raises((ValueError, TypeError), match=name):
        footrule.dp_footrule_aggregate(args.pop("ranks"), **args)
    if "model" not in kw:
        args.pop("model")
        for f in (footrule.naive_dp_footrule_aggregate, footrule.dp_pairwise_indegree_aggregate):
            with pytest.raises((ValueError, TypeError), match=name):
                f(kw.get("ranks", R0), **args)
    if set(kw) == {"ranks"}:
        with pytest.raises((ValueError, TypeError), match=name):
            footrule.footrule_aggregate(kw["ranks"])


def test_cost_helpers_reject_bad_consensus():
    with pytest.raises(ValueError, match="`consensus`"):
        footrule.footrule_cost(np.zeros((3, 3)), [0, 0, 1])
    with pytest.raises(ValueError, match="`ranks`"):
        kemeny.kemeny_cost(np.zeros((3, 3)), ranks=[0, 2, 3])


def test_sensitivities_by_brute_force():
    for m in range(1, 6):
        P = PERMS[m]
        J = np.arange(m)
        D = np.abs(P[:, None, :, None] - J) - np.abs(P[None, :, :, None] - J)
        l1, l2 = footrule.cost_matrix_sensitivity(m)
        assert np.abs(D).sum((2, 3)).max() == l1
        assert math.isclose(np.sqrt((D**2).sum((2, 3)).max()), l2, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize(
    "f",
    [
        lambda r: footrule.footrule_aggregate(r),
        lambda r: footrule.dp_footrule_aggregate(r, epsilon=1.0),
        lambda r: footrule.naive_dp_footrule_aggregate(r, epsilon=1.0),
        lambda r: footrule.dp_pairwise_indegree_aggregate(r, epsilon=1.0),
    ],
)
def test_huge_m_refused_before_m_by_m(f):
    "One voter over 10^6 candidates (the CLI's huge .soi): refused at once, naming `ranks`"
    with pytest.raises(ValueError, match="`ranks` has m = 1,000,000"):
        f(np.arange(10**6)[None])


def test_matching_size_cap():
    with pytest.raises(ValueError, match="handles m <= 10,000"):
        footrule.footrule_aggregate(np.arange(20_000)[None])


# --------------------------------------------------------------------------------------------------
# exact noise (issue 11): n gamma and n w are integer counts, released over n;
# the fast path unchanged


def _draws(f, R, key, k, g, iu):
    with core.use_noise("exact"):
        out = [f(R, epsilon=k, rng=g) for _ in range(6)]
    assert all(r.noise == "exact" and r.diagnostics["denom"] == len(R) for r in out)
    return np.stack(
        [r.diagnostics[key].ravel() if key == "gamma" else r.diagnostics[key][iu] for r in out]
    )


@pytest.mark.parametrize("m", [9, 100])
@pytest.mark.parametrize("eps", [1.0, 1e-3])
def test_baselines_exact_release_is_on_one_lattice(m, eps):
    R0, R1 = _neighbours(m)
    n = len(R0)
    g = np.random.default_rng([m, int(1 / eps)])
    iu = np.triu_indices(m, 1)
    for f, key, counts in (
        (
            footrule.naive_dp_footrule_aggregate,
            "gamma",
            lambda R: np.rint(exact_position_costs(R) * n).ravel(),
        ),
        (
            footrule.dp_pairwise_indegree_aggregate,
            "w",
            lambda R: np.rint(core.preference_matrix(R)[iu] * n),
        ),
    ):
        X0, X1 = (_draws(f, R, key, eps, g, iu) for R in (R0, R1))
        assert on_lattice(X0, n) and on_lattice(X1, n) and lattice_agrees(X0, X1, n), f.__name__
        d = f(
            R0, epsilon=eps, rng=0
        ).diagnostics  # the former grid rule on the same counts: two lattices
        O0, O1 = (
            np.stack(
                [grid_release(counts(R), d["noise_law"], d["noise_scale"], n, g) for _ in range(6)]
            )
            for R in (R0, R1)
        )
        assert not lattice_agrees(O0, O1, n), f.__name__


def test_algorithm2_records_the_mode_and_its_release():
    R0, R1 = _neighbours(9)
    n = len(R0)
    g = np.random.default_rng(0)
    with core.use_noise("exact"):
        res = [
            [footrule.dp_footrule_aggregate(R, epsilon=1.0, rng=g) for _ in range(6)]
            for R in (R0, R1)
        ]
    assert all(
        r.noise == "exact" and r.diagnostics["position_costs"].noise == "exact"
        for side in res
        for r in side
    )
    X0, X1 = (
        np.stack(
            [
                np.concatenate(
                    [
                        a.ravel()
                        for vu in r.diagnostics["position_costs"].diagnostics["released_nodes"]
                        for a in vu
                    ]
                )
                for r in side
            ]
        )
        for side in res
    )
    assert on_lattice(X0, n) and on_lattice(X1, n) and lattice_agrees(X0, X1, n)
    assert footrule.dp_footrule_aggregate(R0, epsilon=1.0, rng=0).noise == "fast"


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_baselines_fast_path_is_the_former_release_bit_for_bit(delta):
    R = np.argsort(np.random.default_rng(3).random((40, 7)), axis=1)
    iu = np.triu_indices(7, 1)
    res = footrule.naive_dp_footrule_aggregate(R, epsilon=0.9, delta=delta, rng=1)
    d = res.diagnostics
    assert np.array_equal(
        d["gamma"],
        exact_position_costs(R)
        + core.sample_noise(d["noise_law"], d["noise_scale"], (7, 7), rng=1),
    )
    res = footrule.dp_pairwise_indegree_aggregate(R, epsilon=0.9, delta=delta, rng=2)
    d = res.diagnostics
    assert np.array_equal(
        d["w"][iu],
        core.preference_matrix(R)[iu]
        + core.sample_noise(d["noise_law"], d["noise_scale"], len(iu[0]), rng=2),
    )


def test_memory_estimated_before_m_by_m():
    core.set_memory_limit(1 << 22)
    try:
        for f in (
            footrule.footrule_aggregate,
            lambda r: footrule.naive_dp_footrule_aggregate(r, epsilon=1.0),
            lambda r: footrule.dp_pairwise_indegree_aggregate(r, epsilon=1.0),
            lambda r: footrule.dp_footrule_aggregate(r, epsilon=1.0),
        ):
            with pytest.raises(ValueError, match=r"`ranks`: .* would need about"):
                f(np.arange(500)[None])
        with pytest.raises(ValueError, match=r"`n_items`: .* would need about"):
            footrule.cost_matrix_sensitivity(500)
    finally:
        core.set_memory_limit(None)


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: footrule.footrule_cost(np.full((3, 3), np.nan), [0, 1, 2]), ValueError, "`gamma`"),
        (lambda: footrule.footrule_cost(np.zeros((3, 4)), [0, 1, 2]), ValueError, "`gamma`"),
        (lambda: footrule.footrule_cost(np.zeros((3, 3)), [[0, 1, 2]]), ValueError, "`consensus`"),
        (lambda: footrule.footrule_cost(np.zeros((3, 3), object), [0, 1, 2]), TypeError, "`gamma`"),
        (lambda: kemeny.kemeny_cost([[0, np.nan], [1, 0]], ranks=[0, 1]), ValueError, "`w`"),
        (lambda: kemeny.kemeny_cost(np.zeros((3, 3)), ranks=[0, 1]), ValueError, "`w`"),
        (lambda: footrule.matching_error_bound(np.full((2, 2), np.inf)), ValueError, "`noise`"),
        (lambda: footrule.matching_error_bound("noise"), TypeError, "`noise`"),
        (lambda: footrule.cost_matrix_sensitivity(-1), ValueError, "`n_items`"),
        (lambda: footrule.cost_matrix_sensitivity(20_000), ValueError, "`n_items`"),
        (lambda: footrule.pairwise_sensitivity(1.5), TypeError, "`n_items`"),
    ],
)
def test_helpers_validate(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_footrule_consensus_identical_for_every_dtype(dtype):
    "The footrule consensus, private (both models) and not, does not depend on the ranks' dtype"
    R = np.argsort(np.random.default_rng(8).random((2000, 15)), axis=1)
    Rd = R.astype(dtype)
    a, b = footrule.footrule_aggregate(Rd), footrule.footrule_aggregate(R)
    assert np.array_equal(a.order, b.order) and a.diagnostics == b.diagnostics
    for model in ("central", "local"):
        for delta in (0.0, 1e-6):
            a = footrule.dp_footrule_aggregate(Rd, epsilon=1.0, delta=delta, model=model, rng=5)
            b = footrule.dp_footrule_aggregate(R, epsilon=1.0, delta=delta, model=model, rng=5)
            assert np.array_equal(a.order, b.order)
            assert a.diagnostics["noisy_footrule_cost"] == b.diagnostics["noisy_footrule_cost"]
    a = footrule.naive_dp_footrule_aggregate(Rd, epsilon=1.0, rng=5)
    b = footrule.naive_dp_footrule_aggregate(R, epsilon=1.0, rng=5)
    assert np.array_equal(a.diagnostics["gamma"], b.diagnostics["gamma"])


def test_footrule_refuses_float_and_bool_ranks():
    R = np.argsort(np.random.default_rng(0).random((50, 5)), axis=1)
    for bad in (R.astype(float), R < 2):
        for f in (
            footrule.footrule_aggregate,
            lambda r: footrule.dp_footrule_aggregate(r, epsilon=1.0, rng=0),
        ):
            with pytest.raises(TypeError, match="`ranks` must be an integer array"):
                f(bad)
