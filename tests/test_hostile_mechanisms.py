"""Hostile input for the mechanisms of privrank.rr, .btl, .tree and .footrule (issue 11, items 1,
4-7 and 10).

The guards are test_hostile's: an address-space limit (this process may grow by 3 GiB at most, so
an allocation the code
forgot to estimate fails at once as MemoryError) and a SIGALRM time limit on every call.
privrank's own memory budget is
lowered to 1 GiB here, below that headroom, so a call sized past it must be refused by
`core.check_memory` before it
allocates. Every refusal must be a ValueError/TypeError whose message names the parameter in
backticks; every answer must
be finite (no NaN, no infinity) and arrive within the time limit.

What is thrown:
- item 5: epsilon from the smallest positive double to 1e300 (and delta from 0, the smallest
  double, to 1 - 2^-53), on
  both noise paths, at every private entry point; per-user epsilon arrays of extreme values for
  privatize / private_btl;
- item 7: for every public function of the four modules, each argument replaced by NaN-bearing,
  wrongly typed, ragged,
  empty or out-of-range values (a meta-test checks that every public function is in the table);
- item 6: calls sized past the memory budget by m or n, refused with the estimate;
- item 10: every public function called on fresh valid inputs (C, Fortran, strided and read-only
  layouts): its array
  arguments keep their values, dtype and flags.
The number of cases tried per function is printed at the end of the module (shown with -q as
well)."""

import contextlib
import copy
import dataclasses
import inspect
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# noqa: F401  (memory_guard is an autouse fixture: importing it applies it here)
from test_hostile import COUNTS, refuses, time_limit

from privrank import btl, core, footrule, kemeny, ledger, rr, topk, tree

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAN, INF = math.nan, math.inf
MODULES = (rr, btl, tree, footrule, topk)


@pytest.fixture(scope="module", autouse=True)
def memory_budget():
    "privrank's memory limit below the guard's headroom, restored after"
    core.set_memory_limit(1 << 30)
    try:
        yield
    finally:
        core.set_memory_limit(None)


def _finite(x, where="result"):
    """No NaN or infinity anywhere in a result (dataclasses, dicts, sequences, arrays,
    floats); a non-private result's epsilon is inf"""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        for fl in dataclasses.fields(x):
            if not (fl.name == "epsilon" and getattr(x, "model", None) == "none"):
                _finite(getattr(x, fl.name), f"{where}.{fl.name}")
    elif isinstance(x, dict):
        for k, v in x.items():
            _finite(v, f"{where}[{k!r}]")
    elif isinstance(x, (list, tuple)):
        for k, v in enumerate(x):
            _finite(v, f"{where}[{k}]")
    elif isinstance(x, (np.ndarray, np.generic, float)) and np.asarray(x).dtype.kind in "fc":
        assert np.isfinite(x).all(), f"non-finite value in {where}"


def answers(fname, f):
    "f() must return within the time limit a result with only finite numbers"
    COUNTS[fname] += 1
    with time_limit():
        r = f()
    _finite(r)
    return r


def finite_or_refused(fname, f, *names):
    "Either a finite answer or a ValueError naming one of `names`"
    COUNTS[fname] += 1
    with time_limit():
        try:
            r = f()
        except ValueError as e:
            assert any(f"`{n}`" in str(e) for n in names), (
                f"{fname}: the refusal does not name {names}: {e}"
            )
            return None
    _finite(r, fname)
    return r


# ------------------------------------------------------------------------------------------
# item 5 (and 4): epsilon and delta over their whole accepted range, on both noise paths

R5 = core.sample_plackett_luce(np.linspace(1, 0, 5), 8, rng=0)
X5 = np.array([0, 4, 2, 2, 1, 3])
I5, J5, Y5, U5 = (
    np.array([0, 1, 2, 0, 3, 4]),
    np.array([1, 2, 0, 2, 4, 0]),
    np.array([1, 0, 1, 1, 0, 1]),
    np.array([0, 0, 1, 1, 2, 2]),
)
PRIVATE = {  # name -> f(epsilon, delta); the mode is set around the call
    "private_position_costs": lambda e, d: tree.private_position_costs(
        R5, epsilon=e, delta=d, rng=0
    ),
    "private_position_costs (local)": lambda e, d: tree.private_position_costs(
        R5, epsilon=e, delta=d, model="local", rng=0
    ),
    "private_apxmed": lambda e, d: tree.private_apxmed(X5, 5, epsilon=e, delta=d, rng=0),
    "range_count_tree": lambda e, d: tree.range_count_tree(X5, 5, epsilon=e, delta=d, rng=0),
    "level_noise_scales": lambda e, d: tree.level_noise_scales(
        *tree.tree_sensitivity(5, scope="ranking"), epsilon=e, delta=d
    ),
    "local_reports": lambda e, d: tree.local_reports(
        X5,
        5,
        *tree.level_noise_scales(*tree.tree_sensitivity(5, scope="value"), epsilon=e, delta=d),
        rng=0,
    ),
    "dp_footrule_aggregate": lambda e, d: footrule.dp_footrule_aggregate(
        R5, epsilon=e, delta=d, rng=0
    ),
    "dp_footrule_aggregate (local)": lambda e, d: footrule.dp_footrule_aggregate(
        R5, epsilon=e, delta=d, model="local", rng=0
    ),
    "naive_dp_footrule_aggregate": lambda e, d: footrule.naive_dp_footrule_aggregate(
        R5, epsilon=e, delta=d, rng=0
    ),
    "dp_pairwise_indegree_aggregate": lambda e, d: footrule.dp_pairwise_indegree_aggregate(
        R5, epsilon=e, delta=d, rng=0
    ),
    "private_btl": lambda e, d: btl.private_btl(I5, J5, Y5, U5, n_items=5, epsilon=e, rng=0),
    "privatize": lambda e, d: rr.privatize(I5, J5, Y5, U5, epsilon=e, rng=0),
    "randomized_response": lambda e, d: rr.randomized_response(Y5, epsilon=e, rng=0),
    "debias": lambda e, d: rr.debias([0, 1], epsilon=e),
    "privacy_variance": lambda e, d: rr.privacy_variance(epsilon=e),
    "variance_inflation": lambda e, d: rr.variance_inflation(epsilon=e),
    "g_epsilon": lambda e, d: rr.g_epsilon(epsilon=[e, 1.0]),
    "debiased_variance": lambda e, d: rr.debiased_variance(0.3, epsilon=e),
    "inverse_variance_weights": lambda e, d: rr.inverse_variance_weights(epsilon=[e, 2.0]),
    "composed_user_epsilon": lambda e, d: rr.composed_user_epsilon(U5, epsilon=e),
    "privatized_win_probability": lambda e, d: rr.privatized_win_probability(0.7, epsilon=e),
    "dp_top_k": lambda e, d: topk.dp_top_k(R5, 2, epsilon=e, delta=d, rng=0),
    "dp_top_k (scores, gumbel)": lambda e, d: topk.dp_top_k(
        X5, 2, epsilon=e, delta=d, sensitivity=1, method="gumbel", rng=0
    ),
    "dp_top_k (scores, permute-and-flip)": lambda e, d: topk.dp_top_k(
        X5 * 0.3, 3, epsilon=e, delta=d, sensitivity=0.5, method="permute-and-flip", rng=0
    ),
}
EXTREME_EPS = [
    5e-324,
    1e-320,
    2.2e-308,
    6e-309,
    1e-300,
    1e-200,
    1e-155,
    1e-153,
    1e-100,
    1e-20,
    1e-6,
    1.0,
    700.0,
    1e20,
    1e200,
    1e300,
]
EPS = st.one_of(st.sampled_from(EXTREME_EPS), st.floats(-323.3, 300.0).map(lambda u: 10.0**u))
DELTAS = [0.0, 5e-324, 1e-300, 1e-12, 1e-6, 0.5, 1 - 2**-53]


@pytest.mark.parametrize("name", sorted(PRIVATE))
@SETTINGS
@given(e=EPS, d=st.sampled_from(DELTAS), mode=st.sampled_from(["fast", "exact"]))
def test_private_entry_points_answer_finite_or_refuse_by_name(name, e, d, mode):
    with core.use_noise(mode):
        r = finite_or_refused(name, lambda: PRIVATE[name](e, d), "epsilon", "delta")
    if r is not None and hasattr(r, "noise") and name not in ("level_noise_scales",):
        assert r.noise == mode, (name, r.noise, mode)


MUST_ANSWER_TINY = (
    "randomized_response",
    "composed_user_epsilon",
    "privatized_win_probability",
)  # nothing scales like 1/epsilon


def test_the_ends_that_must_answer_do():
    """epsilon = 1e300 everywhere and 1e-100 where nothing overflows (fast path, Laplace); the
    smallest double where nothing scales with 1/epsilon"""
    for name, f in PRIVATE.items():
        answers(name, lambda: f(1e300, 0.0))
        answers(name, lambda: f(1e-100, 0.0)) if name not in (
            "privacy_variance",
            "variance_inflation",
            "g_epsilon",
            "debiased_variance",
            "inverse_variance_weights",
        ) else refuses(name, lambda: f(1e-200, 0.0), "epsilon")
    for name in MUST_ANSWER_TINY:
        answers(name, lambda: PRIVATE[name](5e-324, 0.0))


@SETTINGS
@given(eu=st.lists(EPS, min_size=3, max_size=3), w=st.sampled_from(["inverse_variance", "uniform"]))
def test_per_user_epsilon_arrays_at_the_extremes(eu, w):
    """One epsilon per user (the CLI splits a voter's budget over her comparisons): finite or
    refused by name, never a stall"""
    eu = np.array(eu)
    r = finite_or_refused(
        "private_btl",
        lambda: btl.private_btl(I5, J5, Y5, U5, n_items=5, epsilon=eu, weighting=w, rng=1),
        "epsilon",
    )
    if r is not None:
        assert r.fit.converged and r.fit.n_iter < 50
    finite_or_refused(
        "privatize", lambda: rr.privatize(I5, J5, Y5, U5, epsilon=eu, rng=1), "epsilon"
    )
    finite_or_refused(
        "composed_user_epsilon", lambda: rr.composed_user_epsilon(U5, epsilon=eu[U5]), "epsilon"
    )
    finite_or_refused(
        "inverse_variance_weights", lambda: rr.inverse_variance_weights(epsilon=eu), "epsilon"
    )


ENDS = {
    "debias-1e-320": ("debias", lambda: rr.debias([0, 1], epsilon=1e-320), ("epsilon",)),
    "privacy_variance-1e-200": (
        "privacy_variance",
        lambda: rr.privacy_variance(epsilon=1e-200),
        ("epsilon",),
    ),
    "composed-overflow": (
        "composed_user_epsilon",
        lambda: rr.composed_user_epsilon([0, 0], epsilon=1e308),
        ("epsilon",),
    ),
    "privatize-1e-320": (
        "privatize",
        lambda: rr.privatize([0], [1], [1], [0], epsilon=1e-320, rng=0),
        ("epsilon",),
    ),
    "privatize-total-overflow": (
        "privatize",
        lambda: rr.privatize([0, 1], [1, 2], [1, 1], [0, 0], epsilon=1e308, rng=0),
        ("epsilon",),
    ),
    "ivw-p0-eps800": (
        "inverse_variance_weights",
        lambda: rr.inverse_variance_weights(epsilon=800.0, p=0.0),
        ("p",),
    ),
    "btl-total-overflow": (
        "private_btl",
        lambda: btl.private_btl(I5, J5, Y5, np.zeros(6, int), n_items=5, epsilon=1e308, rng=0),
        ("epsilon",),
    ),
    "apxmed-1e-320": (
        "private_apxmed",
        lambda: tree.private_apxmed(X5, 5, epsilon=1e-320, rng=0),
        ("epsilon",),
    ),
    "range-1e-306": (
        "range_count_tree",
        lambda: tree.range_count_tree(X5, 5, epsilon=1e-306, rng=0),
        ("epsilon",),
    ),
    "exact-gaussian-5e-324": (
        "naive_dp_footrule_aggregate",
        lambda: _exact(
            lambda: footrule.naive_dp_footrule_aggregate(R5, epsilon=5e-324, delta=1e-6)
        ),
        ("epsilon",),
    ),
}


def _exact(f):
    with core.use_noise("exact"):
        return f()


@pytest.mark.parametrize("case", sorted(ENDS))
def test_named_refusals_at_the_ends(case):
    fname, call, names = ENDS[case]
    refuses(fname, call, *names)


# ------------------------------------------------------------------------------------------
# item 7: every public function validates every argument

GOOD_R = np.array([[0, 1, 2], [2, 0, 1], [1, 2, 0]])
PD = rr.pair_statistics([0, 1, 2], [1, 2, 0], [1, 0, 1], n_items=3)
GOOD_H = tree.position_histograms(GOOD_R)
GOOD_COUNTS = np.zeros((1, 3, 3, 2), np.int64)
GOOD_COUNTS[0, [0, 1, 2], [1, 2, 0], 1] = 5
GOOD_COUNTS[0, [0, 1, 2], [1, 2, 0], 0] = 2
DIAG_COUNTS = GOOD_COUNTS.copy()
DIAG_COUNTS[0, 1, 1, 0] = 1
FIT3 = btl.fit_btl([0, 1, 2], [1, 2, 0], [1, 0, 1], n_items=3)
TREE13 = tree.range_count_tree([0, 5, 12], 13, epsilon=1.0, rng=0)
NODES4 = tree.tree_node_values(tree.position_histograms(np.array([[0, 1, 2, 3], [3, 2, 1, 0]])), 2)
REPORTS4 = tree.local_reports(np.array([0, 1, 2, 3]), 4, "laplace", np.ones(2), rng=0)
RAGGED = [[0, 1], [1]]
OBJ = np.array([0, 1], object)
EPS_BAD = [0, -1.0, NAN, -INF, "1", None, True, 1j, [1.0, NAN], np.array([1.0, -1.0])]
EPS_BAD_SCALAR = EPS_BAD + [INF, [1.0, 2.0]]
DELTA_BAD = [-0.1, 1.0, NAN, INF, "0", None, True, [0.1]]
RNG_BAD = ["x", 1.5, -1, True, object()]
INT_BAD = [-1, 1.5, "3", None, True, NAN, [3]]
RANKS_BAD = [
    [[0, 0, 1]],
    [[0.5, 1, 2]],
    [[0, 1, NAN]],
    "012",
    None,
    np.zeros((0, 3), int),
    RAGGED,
    [[[0, 1, 2]]],
    [0, 1, 2],
    np.array([[0, 1, 2]], object),
    [[0, 1, 3]],
]
REAL_BAD = [[0.0, NAN], [INF, 0.0], "ab", None, OBJ, RAGGED]
# how an entry point reads its data (`sources.Source`): the valid defaults and hostile values
SOURCE_OK = dict(columns=None, chunk_rows=None, client=None)
SOURCE_BAD = dict(columns=["c0", [1], 3], chunk_rows=[0, -1, 1.5, "3"], client=["x", 3])
# rows of comparisons (winner, loser, user, tie), and hostile ones
GOOD_ROWS = [[0, 1, 0, 0], [1, 2, 0, 1], [0, 2, 1, 0]]
ROWS_BAD = [
    [[0, 0, 1, 0]],
    [[0, 5, 1, 0]],
    [[0.5, 1, 0, 0]],
    [[0, 1, NAN, 0]],
    [[0, 1, 0, 2]],
    "012",
    None,
    np.zeros((0, 4), int),
    [[0, 1]],
    np.tile(np.arange(4), (3, 1)),  # rankings, not comparisons
]
IDS_BAD = [[0.5, 1.0], [-1, 0], None, "01", OBJ, [True, False], RAGGED, [10**12, 0]]
Y01_BAD = [[0.5, 1.0], [0, 2], [-1, 0], "01", None, OBJ, RAGGED]
SQ_BAD = [
    np.full((3, 3), NAN),
    np.full((3, 3), INF),
    np.zeros((3, 4)),
    np.zeros((2, 2)),
    "abc",
    None,
    np.zeros((3, 3), object),
    [[0, 1, 2], [0, 1]],
    np.zeros(3),
]

# name -> (function, valid keyword arguments, {parameter: bad values}); each bad value must be
# refused naming the parameter
SPEC = {
    # rr
    "flip_probability": (rr.flip_probability, dict(epsilon=1.0), dict(epsilon=EPS_BAD)),
    "randomized_response": (
        rr.randomized_response,
        dict(y=[0, 1, 1], epsilon=1.0, rng=0),
        dict(y=Y01_BAD, epsilon=EPS_BAD + [[1.0, 2.0]], rng=RNG_BAD),
    ),
    "rr_output_probability": (
        rr.rr_output_probability,
        dict(out=[0, 1], y=[1, 1], epsilon=1.0),
        dict(out=Y01_BAD[:-1] + [[0, 1, 1]], y=Y01_BAD[:-1], epsilon=EPS_BAD + [[1.0, 2.0, 3.0]]),
    ),
    "epsilon_of_comparisons": (
        rr.epsilon_of_comparisons,
        dict(user=[0, 1, 1], epsilon=[1.0, 2.0]),
        dict(user=IDS_BAD + [[0, 2]], epsilon=EPS_BAD),
    ),
    "composed_user_epsilon": (
        rr.composed_user_epsilon,
        dict(epsilon=1.0, user=[0, 1, 1], n_users=3),
        dict(
            epsilon=EPS_BAD + [[1.0, 2.0]],
            user=IDS_BAD + [[0, 5]],
            n_users=[-1, 1.5, "3", True, NAN, [3], 0],
        ),
    ),
    "privatized_win_probability": (
        rr.privatized_win_probability,
        dict(p=0.3, epsilon=1.0),
        dict(p=[NAN, -0.1, 1.1, "0.5", None, RAGGED], epsilon=EPS_BAD),
    ),
    "debias": (
        rr.debias,
        dict(y_tilde=[0, 1], epsilon=1.0),
        dict(y_tilde=Y01_BAD, epsilon=EPS_BAD + [[1.0, 2.0, 3.0], 1e-320]),
    ),
    "privacy_variance": (rr.privacy_variance, dict(epsilon=1.0), dict(epsilon=EPS_BAD + [1e-200])),
    "debiased_variance": (
        rr.debiased_variance,
        dict(p=0.3, epsilon=1.0),
        dict(p=[NAN, 1.5, "x", None], epsilon=EPS_BAD + [1e-200]),
    ),
    "variance_inflation": (
        rr.variance_inflation,
        dict(epsilon=1.0),
        dict(epsilon=EPS_BAD + [1e-200]),
    ),
    "g_epsilon": (rr.g_epsilon, dict(epsilon=[1.0, 2.0]), dict(epsilon=EPS_BAD + [[]])),
    "complete_design": (
        rr.complete_design,
        dict(n_users=2, n_items=3),
        dict(n_users=INT_BAD + [0, 10**12], n_items=INT_BAD + [1]),
    ),
    "sparse_design": (
        rr.sparse_design,
        dict(n_users=2, n_items=4, pairs_per_user=2, rng=0),
        dict(
            n_users=INT_BAD + [0],
            n_items=INT_BAD + [1],
            pairs_per_user=INT_BAD + [0, 7],
            rng=RNG_BAD,
        ),
    ),
    "pair_statistics": (
        rr.pair_statistics,
        dict(i=[0, 1], j=[1, 2], y=[1.0, 0.5], n_items=3, weights=None),
        dict(
            i=IDS_BAD + [[0, 3]],
            j=IDS_BAD + [[0, 1]],
            y=REAL_BAD + [[1.0]],
            n_items=INT_BAD + [10**10],
            weights=[[1.0, NAN], [1.0, -1.0], [1.0], "ab"],
        ),
    ),
    "privatize": (
        rr.privatize,
        dict(i=[0, 1], j=[1, 2], y=[1, 0], user=[0, 1], epsilon=1.0, rng=0, n_items=3),
        dict(
            i=IDS_BAD + [[0, 3]],
            j=IDS_BAD,
            y=Y01_BAD,
            user=IDS_BAD,
            epsilon=EPS_BAD + [1e-320],
            rng=RNG_BAD,
            n_items=[-1, 1.5, "3", True, NAN, [3], 1],
        ),
    ),
    "inverse_variance_weights": (
        rr.inverse_variance_weights,
        dict(epsilon=[1.0, 2.0], p=0.5),
        dict(epsilon=EPS_BAD + [1e-200], p=[NAN, -0.1, 1.1, "x", None, [0.5, 0.5, 0.5]]),
    ),
    # btl
    "win_probability": (
        btl.win_probability,
        dict(theta=[0.0, 1.0, 2.0], i=[0, 1], j=[1, 2], link="logit"),
        dict(
            theta=REAL_BAD + [[]],
            i=IDS_BAD + [[0, 3]],
            j=IDS_BAD + [[1]],
            link=["cauchit", None, 1],
        ),
    ),
    "simulate_btl": (
        btl.simulate_btl,
        dict(theta=[0.0, 1.0, 2.0], i=[0, 1], j=[1, 2], link="logit", rng=0),
        dict(theta=REAL_BAD, i=IDS_BAD, j=IDS_BAD, link=["x"], rng=RNG_BAD),
    ),
    "btl_loss": (
        btl.btl_loss,
        dict(theta=np.zeros(3), s=PD, lam=0.1, link="logit"),
        dict(
            theta=REAL_BAD + [np.zeros(4)],
            s=[None, {"i": [0]}, "s"],
            lam=[-1.0, NAN, INF, "x", None, [0.1]],
            link=["x"],
        ),
    ),
    "btl_grad": (
        btl.btl_grad,
        dict(theta=np.zeros(3), s=PD, lam=0.1, link="logit"),
        dict(theta=REAL_BAD + [np.zeros(2)], s=[None, 3], lam=[-1.0, NAN], link=[None]),
    ),
    "btl_hessian": (
        btl.btl_hessian,
        dict(theta=np.zeros(3), s=PD, lam=0.1, link="logit"),
        dict(theta=REAL_BAD, s=[None, PD.__dict__], lam=[-1.0, INF], link=[1]),
    ),
    "default_lambda": (btl.default_lambda, dict(s=PD), dict(s=[None, "s", PD.__dict__])),
    "private_lambda": (btl.private_lambda, dict(s=PD), dict(s=[None, "s", PD.__dict__])),
    "fit_btl_counts": (
        btl.fit_btl_counts,
        dict(
            counts=GOOD_COUNTS,
            epsilon=[1.0],
            weighting="inverse_variance",
            lam="r3",
            tol=1e-9,
            solver="auto",
            link="logit",
        ),
        dict(
            counts=[None, "x", GOOD_COUNTS * 1.0, -GOOD_COUNTS, GOOD_COUNTS[0], DIAG_COUNTS],
            epsilon=[0, -1.0, NAN, "1", None, [1.0, 2.0]],
            weighting=["x", None],
            lam=[-1.0, NAN, "x"],
            tol=[0, -1.0, NAN],
            solver=["x", None],
            link=["x", None],
        ),
    ),
    "private_position_costs_from_histograms": (
        tree.private_position_costs_from_histograms,
        dict(histograms=GOOD_H, n_voters=3, epsilon=1.0, delta=0.0, kappa=None, rng=0),
        dict(
            histograms=[None, "x", GOOD_H * 1.0, -GOOD_H, GOOD_H[:2], GOOD_H + 1],
            n_voters=INT_BAD + [0],
            epsilon=EPS_BAD_SCALAR,
            delta=DELTA_BAD,
            kappa=[0, -1.0, NAN, INF, "x"],
            rng=RNG_BAD,
        ),
    ),
    "dp_footrule_from_costs": (
        footrule.dp_footrule_from_costs,
        dict(costs=tree.private_position_costs(GOOD_R, epsilon=1.0, rng=0), priority=None),
        dict(costs=[None, np.eye(3), "x"], priority=["x", [0.5], [[0]], [-1], 1.5]),
    ),
    "fit_btl_pairs": (
        btl.fit_btl_pairs,
        dict(s=PD, lam="r3", tol=1e-9, solver="auto", max_iter=200, link="logit"),
        dict(
            s=[None, "s"],
            lam=[-1.0, NAN, "x", "auto", None, [0.1]],
            tol=[0, -1.0, NAN, "1e-9", None, True],
            solver=["x", None, 3, ["newton"]],
            max_iter=INT_BAD + [0],
            link=["x", None],
        ),
    ),
    "fit_btl": (
        btl.fit_btl,
        dict(
            i=[0, 1, 2],
            j=[1, 2, 0],
            y=[1, 0, 1],
            n_items=3,
            lam="mle",
            weights=None,
            tol=1e-9,
            solver="auto",
            max_iter=200,
            link="logit",
        ),
        dict(
            i=IDS_BAD + [[0, 1, 3]],
            j=IDS_BAD,
            y=[[1, NAN, 0], [1, INF, 0], None, OBJ],
            n_items=INT_BAD + [0],
            lam=[-1.0, NAN, "auto"],
            weights=[[1, NAN, 1]],
            tol=[NAN],
            solver=["x"],
            max_iter=[0, 1.5],
            link=["x"],
        ),
    ),
    "private_btl": (
        btl.private_btl,
        dict(
            i=I5,
            j=J5,
            y=Y5,
            user=U5,
            n_items=5,
            epsilon=1.0,
            rng=0,
            weighting="inverse_variance",
            lam="r3",
            tol=1e-9,
            solver="auto",
            link="logit",
        ),
        dict(
            i=IDS_BAD,
            j=IDS_BAD,
            y=Y01_BAD,
            user=IDS_BAD + [[0, 1]],
            n_items=INT_BAD + [0],
            epsilon=EPS_BAD_SCALAR + [1e-200, 1e308],
            rng=RNG_BAD,
            weighting=["x", None, 1],
            lam=[-1.0, NAN],
            tol=[NAN, 0],
            solver=["x"],
            link=["x"],
        ),
    ),
    "ranks_to_comparisons": (
        btl.ranks_to_comparisons,
        dict(ranks=GOOD_R, unranked="below"),
        dict(ranks=RANKS_BAD, unranked=["x", None, 1, "Absent"]),
    ),
    "plackett_luce_aggregate": (
        btl.plackett_luce_aggregate,
        dict(ranks=GOOD_R, unranked="absent", lam=0.5),
        dict(ranks=RANKS_BAD, unranked=["x", None, 1, "Below"], lam=[-1.0, NAN, INF, "x", None]),
    ),
    "btl_consensus": (
        btl.btl_consensus,
        dict(fit=FIT3, n_voters=3, epsilon=None, privacy_unit="voter", diagnostics=None),
        dict(
            fit=[None, "x", PD],
            n_voters=INT_BAD + [0],
            epsilon=[1.0, -1.0, NAN],
            privacy_unit=["x", None, 1, "comparisons"],
            diagnostics=["x", [1]],
        ),
    ),
    "per_comparison_epsilon": (
        btl.per_comparison_epsilon,
        dict(counts=[1, 3], epsilon=1.0),
        dict(counts=IDS_BAD + [[0, 1], []], epsilon=EPS_BAD_SCALAR),
    ),
    "btl_aggregate": (
        btl.btl_aggregate,
        dict(
            comparisons=GOOD_ROWS,
            lam="mle",
            privacy_unit=None,
            n_items=3,
            items=None,
            ties=True,
            **SOURCE_OK,
            ignore=(),
        ),  # fmt: skip
        dict(
            comparisons=ROWS_BAD,
            lam=[-1.0, NAN, "auto", "x", None],
            privacy_unit=["x", 1, ["user"]],
            n_items=[v for v in INT_BAD if v is not None] + [0, 1, 2],  # None: the data's
            items=[["a", "a", "b"], 5, ["x", "y"], [1.5, 2, 3], [None, 1, 2]],
            ties=["yes", 1, "no"],
            **SOURCE_BAD,
            ignore=["x", ["winner"], 3],
        ),
    ),
    "dp_btl_aggregate": (
        btl.dp_btl_aggregate,
        dict(
            comparisons=GOOD_ROWS,
            epsilon=1.0,
            delta=0.0,
            model="local",
            rng=0,
            privacy_unit=None,
            lam="r3",
            n_items=3,
            items=None,
            ties=True,
            **SOURCE_OK,
            ignore=(),
            estimator=None,
            max_per_unit=None,
        ),  # fmt: skip
        dict(
            comparisons=ROWS_BAD,
            epsilon=EPS_BAD + [[1.0, 2.0]],
            delta=[1e-6, -1.0, NAN, "0"],
            model=["joint", None, 1],
            estimator=["mle", 1, ""],
            max_per_unit=[0, -1, 1.5, "2", True],
            rng=RNG_BAD,
            privacy_unit=["x", 1, ["user"]],
            lam=[-1.0, NAN, "auto", "x", None],
            n_items=[v for v in INT_BAD if v is not None] + [0, 1, 2],  # None: the data's
            items=[["a", "a", "b"], 5, ["x", "y"], [1.5, 2, 3], [None, 1, 2]],
            ties=["yes", 1, "no"],
            **SOURCE_BAD,
            ignore=["x", ["winner"], 3],
        ),
    ),
    # tree
    "tree_depth": (tree.tree_depth, dict(n_items=5), dict(n_items=INT_BAD + [0])),
    "position_histograms": (tree.position_histograms, dict(ranks=GOOD_R), dict(ranks=RANKS_BAD)),
    "costs_from_histograms": (
        tree.costs_from_histograms,
        dict(H=[[1, 2, 0]], n_voters=3),
        dict(
            H=[
                [[1.0, NAN]],
                [[1, -1]],
                "ab",
                None,
                RAGGED,
                [1, 2],
                np.zeros((0, 3), int),
                [[2**62, 1]],
            ],
            n_voters=INT_BAD + [0],
        ),
    ),
    "exact_position_costs": (tree.exact_position_costs, dict(ranks=GOOD_R), dict(ranks=RANKS_BAD)),
    "range_count_tree": (
        tree.range_count_tree,
        dict(x=[0, 3], n_items=4, epsilon=1.0, delta=0.0, rng=0),
        dict(
            x=[[0.0, 1.0], [0, 4], [-1], "01", None, OBJ, [[0, 1]], [True]],
            n_items=INT_BAD + [0],
            epsilon=EPS_BAD_SCALAR + [1e-306],
            delta=DELTA_BAD,
            rng=RNG_BAD,
        ),
    ),
    "range_counts": (
        tree.range_counts,
        dict(tree=TREE13, lo=[0, 3], hi=[5, 12]),
        dict(
            tree=[None, TREE13.levels, "t"],
            lo=[[0.5], [-1, 0], [13, 0], "0", None, [[0], [1, 2]], [6, 6]],
            hi=[[0, 99], [NAN, 1.0], [4, 2], "5", None, [5]],
        ),
    ),
    "tree_node_counts": (
        tree.tree_node_counts,
        dict(H=[[1, 2, 0, 4]]),
        dict(H=[[[1.0, NAN]], [[-1, 2]], "H", None, RAGGED]),
    ),
    "tree_node_values": (
        tree.tree_node_values,
        dict(H=[[1, 2, 0, 4]], n_voters=7),
        dict(H=[[[1, NAN]], None, RAGGED], n_voters=INT_BAD + [0]),
    ),
    "reconstruct_costs": (
        tree.reconstruct_costs,
        dict(nodes=NODES4, n_items=4),
        dict(
            nodes=[
                None,
                "n",
                NODES4[:1],
                [(NODES4[0][0] * NAN, NODES4[0][1]), NODES4[1]],
                [(NODES4[0][0], NODES4[0][1][:, :2]), NODES4[1]],
                [NODES4[0][0], NODES4[1]],
            ],
            n_items=INT_BAD + [0, 5],
        ),
    ),
    "tree_sensitivity": (
        tree.tree_sensitivity,
        dict(n_items=5, scope="ranking"),
        dict(n_items=INT_BAD + [0, 2**40], scope=["voter", None, 1]),
    ),
    "level_shares": (
        tree.level_shares,
        dict(d=3, kappa=0.5),
        dict(d=INT_BAD + [10**9], kappa=[0, -1.0, NAN, INF, "0.5", None, True]),
    ),
    "level_noise_scales": (
        tree.level_noise_scales,
        dict(l1=[2.0, 4.0], l2=[1.5, 3.0], epsilon=1.0, delta=0.0, kappa=None, noise=None),
        dict(
            l1=[[2.0, NAN], [-1.0, 2.0], "ab", None, [2.0]],
            l2=[[1.0, INF], [1.0]],
            epsilon=EPS_BAD[:-2] + [[1.0, 2.0]],
            delta=DELTA_BAD,
            kappa=[0, NAN, "x"],
            noise=["Exact", 1, "float"],
        ),
    ),
    "assign_groups": (
        tree.assign_groups,
        dict(n_voters=6, n_groups=3, rng=0),
        dict(n_voters=INT_BAD + [0, 10**12], n_groups=INT_BAD + [0, 7], rng=RNG_BAD),
    ),
    "local_reports": (
        tree.local_reports,
        dict(x=[0, 3], n_items=4, law="laplace", scales=[1.0, 1.0], rng=0, noise=None),
        dict(
            x=[[0.5], [4], [-1], None, "0", [[0]]],
            n_items=INT_BAD + [0],
            law=["fast", None, "cauchy"],
            scales=[[1.0], [1.0, NAN], [1.0, -1.0], "ab", None],
            rng=RNG_BAD,
            noise=["Exact"],
        ),
    ),
    "aggregate_local_reports": (
        tree.aggregate_local_reports,
        dict(reports=REPORTS4, groups=[0, 1, 2, 3], n_items=4),
        dict(
            reports=[None, REPORTS4[:1], [(REPORTS4[0][0][:2], REPORTS4[0][1][:2]), REPORTS4[1]]],
            groups=[[0, 0, 1, 2], [0, 1, 2, 4], [0.0, 1.0, 2.0, 3.0], None, [0, 1, 2]],
            n_items=INT_BAD + [0],
        ),
    ),
    "private_position_costs": (
        tree.private_position_costs,
        dict(ranks=GOOD_R, epsilon=1.0, delta=0.0, model="central", kappa=None, rng=0, **SOURCE_OK),
        dict(
            ranks=RANKS_BAD,
            epsilon=EPS_BAD_SCALAR,
            delta=DELTA_BAD,
            model=["x", None, 1, ["central"]],
            kappa=[0, -1.0, NAN, INF, "x"],
            rng=RNG_BAD,
            **SOURCE_BAD,
        ),
    ),
    "private_apxmed": (
        tree.private_apxmed,
        dict(x=[0, 3, 1], n_items=4, epsilon=1.0, delta=0.0, kappa=None, rng=0),
        dict(
            x=[[], [0.0], [4], [-1], None, "0", OBJ, [[0]]],
            n_items=INT_BAD + [0, 10**12],
            epsilon=EPS_BAD_SCALAR,
            delta=DELTA_BAD,
            kappa=[0, NAN, "x", [0.5]],
            rng=RNG_BAD,
        ),
    ),
    # footrule
    "footrule_cost": (
        footrule.footrule_cost,
        dict(gamma=np.zeros((3, 3)), consensus=[0, 1, 2]),
        dict(
            gamma=SQ_BAD,
            consensus=[[0, 0, 1], [0, 1, 3], [[0, 1, 2]], None, "012", [0.0, 1.0, 2.0], [0, 1]],
        ),
    ),
    "check_matching_size": (
        footrule.check_matching_size,
        dict(ranks=GOOD_R),
        dict(ranks=RANKS_BAD),
    ),
    "footrule_aggregate": (
        footrule.footrule_aggregate,
        dict(ranks=GOOD_R, **SOURCE_OK),
        dict(ranks=RANKS_BAD, **SOURCE_BAD),
    ),
    # topk
    "dp_top_k": (
        topk.dp_top_k,
        dict(
            data=GOOD_R,
            k=2,
            epsilon=1.0,
            delta=0.0,
            method="auto",
            sensitivity=None,
            statistic="first",
            approve=None,
            rng=0,
            **SOURCE_OK,
            ignore=(),
        ),
        dict(
            data=RANKS_BAD,
            k=INT_BAD + [0, 4],
            epsilon=[e for e in EPS_BAD_SCALAR if e is not INF] + [5e-324],  # inf: not private
            delta=DELTA_BAD,
            method=["best", None, 3, "Gumbel", "auto "],
            sensitivity=[0, -1.0, NAN, INF, "1", True, [1.0]],
            statistic=["plurality", None, 3, "Borda"],
            approve=[0, -1, 1.5, "2", True, 3],
            rng=RNG_BAD,
            **SOURCE_BAD,
            ignore=["x", ["score"], 3],
        ),
    ),
    "kemeny_cost": (
        kemeny.kemeny_cost,
        dict(w=np.zeros((3, 3)), ranks=[0, 1, 2]),
        dict(
            w=SQ_BAD,
            order=[[0, 1, 2]],  # with `ranks`: two consensus arguments
            ranks=[[0, 0, 1], "012", [[[0, 1, 2]]], [0, 1]],
        ),
    ),
    "dp_footrule_aggregate": (
        footrule.dp_footrule_aggregate,
        dict(ranks=GOOD_R, epsilon=1.0, delta=0.0, model="central", rng=0, **SOURCE_OK),
        dict(
            ranks=RANKS_BAD,
            epsilon=EPS_BAD_SCALAR,
            delta=DELTA_BAD,
            model=["x", None],
            rng=RNG_BAD,
            **SOURCE_BAD,
        ),
    ),
    "matching_error_bound": (
        footrule.matching_error_bound,
        dict(noise=np.eye(3)),
        dict(noise=[b for k, b in enumerate(SQ_BAD) if k != 3]),
    ),
    "cost_matrix_sensitivity": (
        footrule.cost_matrix_sensitivity,
        dict(n_items=4),
        dict(n_items=INT_BAD + [0, 10**5]),
    ),
    "naive_dp_footrule_aggregate": (
        footrule.naive_dp_footrule_aggregate,
        dict(ranks=GOOD_R, epsilon=1.0, delta=0.0, rng=0),
        dict(ranks=RANKS_BAD, epsilon=EPS_BAD_SCALAR, delta=DELTA_BAD, rng=RNG_BAD),
    ),
    "pairwise_sensitivity": (
        footrule.pairwise_sensitivity,
        dict(n_items=4),
        dict(n_items=INT_BAD + [0, 2**40]),
    ),
    "dp_pairwise_indegree_aggregate": (
        footrule.dp_pairwise_indegree_aggregate,
        dict(ranks=GOOD_R, epsilon=1.0, delta=0.0, rng=0),
        dict(ranks=RANKS_BAD, epsilon=EPS_BAD_SCALAR, delta=DELTA_BAD, rng=RNG_BAD),
    ),
}
ALSO = {  # a bad value of one argument may be reported through the argument it is checked against
    ("btl_aggregate", "n_items"): ("n_items", "comparisons"),
    ("dp_btl_aggregate", "n_items"): ("n_items", "comparisons"),
    ("btl_aggregate", "items"): ("items", "comparisons"),
    ("dp_btl_aggregate", "items"): ("items", "comparisons"),
    ("rr_output_probability", "out"): ("out", "y", "epsilon"),
    ("rr_output_probability", "epsilon"): ("epsilon", "out", "y"),
    ("epsilon_of_comparisons", "user"): ("user",),
    ("privatize", "user"): ("user", "epsilon"),
    ("privatize", "i"): ("i", "n_items"),
    ("privatize", "j"): ("j", "n_items", "i"),
    ("pair_statistics", "j"): ("j", "i", "n_items"),
    ("pair_statistics", "i"): ("i", "n_items"),
    ("pair_statistics", "y"): ("y", "i"),
    ("pair_statistics", "n_items"): ("n_items", "i", "j"),
    ("composed_user_epsilon", "user"): ("user", "n_users"),
    ("composed_user_epsilon", "n_users"): ("n_users", "user"),
    ("fit_btl", "n_items"): ("n_items", "i", "j"),
    ("fit_btl", "i"): ("i", "j"),
    ("fit_btl", "j"): ("j", "i"),
    ("private_btl", "n_items"): ("n_items", "i", "j"),
    ("private_btl", "user"): ("user", "y"),
    ("private_btl", "j"): ("j", "i"),
    ("private_btl", "epsilon"): ("epsilon", "user"),
    ("win_probability", "j"): ("j", "i"),
    ("simulate_btl", "j"): ("j", "i"),
    ("sparse_design", "pairs_per_user"): ("pairs_per_user", "n_users"),
    ("range_count_tree", "n_items"): ("n_items", "x"),
    ("private_apxmed", "n_items"): ("n_items", "x"),
    ("local_reports", "n_items"): ("n_items", "x", "scales"),
    ("aggregate_local_reports", "n_items"): ("n_items", "groups"),
    ("aggregate_local_reports", "groups"): ("groups", "reports"),
    ("reconstruct_costs", "n_items"): ("n_items", "nodes"),
    ("range_counts", "lo"): ("lo", "hi"),
    ("range_counts", "hi"): ("hi", "lo"),
    ("footrule_cost", "consensus"): ("consensus", "gamma"),
    ("kemeny_cost", "ranks"): ("ranks", "w"),
    ("btl_loss", "theta"): ("theta",),
    ("inverse_variance_weights", "p"): ("p", "epsilon"),
    ("assign_groups", "n_voters"): ("n_voters", "n_groups"),
    ("tree_node_values", "n_voters"): ("n_voters",),
    ("level_noise_scales", "l2"): ("l2", "l1"),
    ("simulate_btl", "i"): ("i", "j"),
    ("win_probability", "i"): ("i", "j"),
    ("debiased_variance", "p"): ("p",),
    ("privatize", "n_items"): ("n_items", "i", "j"),
    ("randomized_response", "epsilon"): ("epsilon", "y"),
    ("debias", "epsilon"): ("epsilon", "y_tilde"),
    ("dp_top_k", "data"): ("data", "ranks"),
}
# a private entry point's `budget=` (issue 31): anything but a privrank Budget (or None) is
# refused naming `budget`, the context manager `pr.budget` included
BUDGET_BAD = [3, 1.0, "budget", (1.0, 1e-6), dict(epsilon=1.0), ledger.budget, np.float64(2.0)]
for _f, _ok, _bad in SPEC.values():
    if "budget" in inspect.signature(_f).parameters:
        _bad.setdefault("budget", BUDGET_BAD)

CASES = [
    (f, p, k)
    for f, (_, _, bad) in SPEC.items()
    for p, vals in bad.items()
    for k in range(len(vals))
]


# in the table but not in `__all__`: internal exports (importable from their module, not public)
INTERNAL = {
    # the derivation's positional (i, j, y, user) building blocks of 01 and 02: internal, tested
    "win_probability",
    "simulate_btl",
    "btl_loss",
    "btl_grad",
    "btl_hessian",
    "fit_btl",
    "private_btl",
    "pair_statistics",
    "privatize",
    "complete_design",
    "sparse_design",
    "tree_depth",
    "tree_node_counts",
    "tree_node_values",
    "reconstruct_costs",
    "tree_sensitivity",
    "level_shares",
    "level_noise_scales",
    "assign_groups",
    "local_reports",
    "aggregate_local_reports",
    "check_matching_size",
    "matching_error_bound",
    "cost_matrix_sensitivity",
    "pairwise_sensitivity",
    "kemeny_cost",
    # issue 30 item 7, the curated surface: the paper's formulas and the `*_from_*` stages behind
    # the entry points (randomized_response, debias, dp_btl_aggregate, private_position_costs,
    # dp_footrule_aggregate), internal, tested here as before
    "rr_output_probability",
    "epsilon_of_comparisons",
    "composed_user_epsilon",
    "privatized_win_probability",
    "privacy_variance",
    "debiased_variance",
    "inverse_variance_weights",
    "default_lambda",
    "private_lambda",
    "btl_consensus",
    "per_comparison_epsilon",
    "costs_from_histograms",
    "private_position_costs_from_histograms",
    "dp_footrule_from_costs",
}


def test_every_public_function_is_in_the_table():
    public = {n for mod in MODULES for n in mod.__all__ if inspect.isfunction(getattr(mod, n))}
    assert public == set(SPEC) - INTERNAL, (public - set(SPEC), set(SPEC) - INTERNAL - public)
    for name, (
        f,
        ok,
        bad,
    ) in SPEC.items():  # every parameter is thrown something, and the valid call answers
        assert set(bad) == set(inspect.signature(f).parameters), (
            name,
            set(inspect.signature(f).parameters) - set(bad),
        )
        answers(name, lambda: f(**ok))


@pytest.mark.parametrize("fname, param, k", CASES, ids=[f"{f}-{p}-{k}" for f, p, k in CASES])
def test_every_argument_is_validated(fname, param, k):
    f, ok, bad = SPEC[fname]
    kw = dict(ok, **{param: copy.deepcopy(bad[param][k])})
    refuses(fname, lambda: f(**kw), *ALSO.get((fname, param), (param,)))


# ------------------------------------------------------------------------------------------
# item 6: sized past the memory budget by m or n: refused with the estimate, before allocating


@contextlib.contextmanager
def budget(nbytes):
    core.set_memory_limit(nbytes)
    try:
        yield
    finally:
        core.set_memory_limit(1 << 30)


BIG = [  # (function, call, parameter named, budget)
    (
        "range_count_tree",
        lambda: tree.range_count_tree([0, 5], 10**9, epsilon=1.0),
        "n_items",
        1 << 30,
    ),
    (
        "range_count_tree",
        lambda: tree.range_count_tree([0, 5], 10**9, epsilon=1.0, delta=1e-6),
        "n_items",
        8 << 30,
    ),
    ("private_apxmed", lambda: tree.private_apxmed([0, 5], 2**30, epsilon=1.0), "n_items", 1 << 30),
    (
        "position_histograms",
        lambda: tree.position_histograms(np.arange(20_000)[None]),
        "ranks",
        1 << 30,
    ),
    (
        "exact_position_costs",
        lambda: tree.exact_position_costs(np.arange(20_000)[None]),
        "ranks",
        1 << 30,
    ),
    (
        "private_position_costs",
        lambda: tree.private_position_costs(np.arange(20_000)[None], epsilon=1.0),
        "ranks",
        1 << 30,
    ),
    (
        "private_position_costs",
        lambda: tree.private_position_costs(
            np.tile(np.arange(300), (2000, 1)), epsilon=1.0, model="local"
        ),
        "ranks",
        1 << 24,
    ),
    (
        "costs_from_histograms",
        lambda: tree.costs_from_histograms(np.ones((1, 3000), int), 1),
        "H",
        1 << 17,
    ),
    ("tree_node_counts", lambda: tree.tree_node_counts(np.ones((1, 3000), int)), "H", 1 << 17),
    ("reconstruct_costs", lambda: tree.reconstruct_costs(NODES4, 4), "nodes", 1 << 6),
    ("assign_groups", lambda: tree.assign_groups(10**10, 3, rng=0), "n_voters", 1 << 30),
    (
        "local_reports",
        lambda: tree.local_reports(np.zeros(10**5, int), 2000, "laplace", np.ones(11), rng=0),
        "x",
        1 << 30,
    ),
    (
        "footrule_aggregate",
        lambda: footrule.footrule_aggregate(np.arange(9000)[None]),
        "ranks",
        1 << 30,
    ),
    (
        "dp_footrule_aggregate",
        lambda: footrule.dp_footrule_aggregate(np.arange(9000)[None], epsilon=1.0),
        "ranks",
        1 << 30,
    ),
    (
        "naive_dp_footrule_aggregate",
        lambda: footrule.naive_dp_footrule_aggregate(np.arange(9000)[None], epsilon=1.0),
        "ranks",
        1 << 30,
    ),
    (
        "dp_pairwise_indegree_aggregate",
        lambda: footrule.dp_pairwise_indegree_aggregate(np.arange(9000)[None], epsilon=1.0),
        "ranks",
        1 << 30,
    ),
    ("cost_matrix_sensitivity", lambda: footrule.cost_matrix_sensitivity(9000), "n_items", 1 << 30),
    (
        "kemeny_cost",
        lambda: kemeny.kemeny_cost(np.zeros((300, 300)), ranks=np.tile(np.arange(300), (100, 1))),
        "ranks",
        1 << 26,
    ),
    (
        "matching_error_bound",
        lambda: footrule.matching_error_bound(np.zeros((2000, 2000))),
        "noise",
        1 << 26,
    ),
    (
        "ranks_to_comparisons",
        lambda: btl.ranks_to_comparisons(np.tile(np.arange(300), (3000, 1))),
        "ranks",
        1 << 30,
    ),
    (
        "dp_top_k",
        lambda: topk.dp_top_k(np.zeros(10**6), 100, epsilon=1.0, sensitivity=1, method="joint"),
        "data",
        1 << 30,
    ),
    (
        "btl_hessian",
        lambda: btl.btl_hessian(
            np.zeros(20_000), rr.pair_statistics([0], [1], [1], n_items=20_000), 0.1
        ),
        "s",
        1 << 30,
    ),
]


@pytest.mark.parametrize(
    "fname, call, name, nbytes", BIG, ids=[f"{b[0]}-{k}" for k, b in enumerate(BIG)]
)
def test_sized_past_the_budget_is_refused_with_the_estimate(fname, call, name, nbytes):
    with budget(nbytes):
        msg = refuses(fname, call, name)
    assert "would need about" in msg or "exceed" in msg, msg


# ------------------------------------------------------------------------------------------
# item 10: no public function modifies its arguments


def _snapshot(x):
    "A comparable record of x: every array's bytes, dtype, shape and flags, recursively"
    if isinstance(x, np.ndarray):
        return (
            "array",
            x.dtype.str,
            x.shape,
            x.flags.writeable,
            x.flags.c_contiguous,
            x.flags.f_contiguous,
            x.tobytes(),
        )
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (
            type(x).__name__,
            tuple(_snapshot(getattr(x, f.name)) for f in dataclasses.fields(x)),
        )
    if isinstance(x, dict):
        return ("dict", tuple((k, _snapshot(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_snapshot(v) for v in x))
    return ("value", repr(x))


def _layout(x, how):
    "The same values in another memory layout: Fortran order, a strided view, or read-only"
    if not isinstance(x, np.ndarray) or x.dtype == object:
        return x
    if how == "fortran":
        return np.asfortranarray(x)
    if how == "strided" and x.ndim >= 1:
        y = np.repeat(x, 2, axis=-1)
        return y[..., ::2]
    if how == "readonly":
        y = x.copy()
        y.setflags(write=False)
        return y
    return x


def _arrays(kw, g):
    "Fresh valid keyword arguments of each function, drawn with generator g (sizes vary)"
    m = int(g.integers(3, 7))
    n = int(g.integers(m, 12))
    R = np.argsort(g.random((n, m)), axis=1)
    i = g.integers(0, m, 10)
    j = (i + 1 + g.integers(0, m - 1, 10)) % m
    y = g.integers(0, 2, 10)
    u = g.integers(0, 3, 10)
    H = np.bincount(R[:, 0], minlength=m)[None]
    return dict(
        R=R,
        m=m,
        n=n,
        i=i,
        j=j,
        y=y,
        u=u,
        H=H,
        gamma=g.random((m, m)),
        z=g.normal(size=10),
        x=R[:, 0].copy(),
        theta=g.normal(size=m),
        eu=g.uniform(0.1, 3, 3),
        w=g.uniform(0.1, 1.0, 10),
    )


def _valid(name, a):
    "Valid keyword arguments of function `name` built from the draws `a`"
    R, m, n, i, j, y, u, H, x = (
        a["R"],
        a["m"],
        a["n"],
        a["i"],
        a["j"],
        a["y"],
        a["u"],
        a["H"],
        a["x"],
    )
    pd_ = rr.pair_statistics(i, j, y, n_items=m)
    won = np.asarray(y) != 0  # rows of comparisons: winner, loser, user, tie
    rows = np.column_stack([np.where(won, i, j), np.where(won, j, i), u, np.asarray(y) == 0.5])
    t = tree.range_count_tree(x, m, epsilon=1.0, rng=0)
    law, sc = tree.level_noise_scales(
        *tree.tree_sensitivity(m, scope="value"), epsilon=1.0, delta=0.0
    )
    rep = tree.local_reports(np.arange(m), m, law, sc, rng=0)
    table = {
        "flip_probability": dict(epsilon=a["eu"]),
        "randomized_response": dict(y=y, epsilon=a["eu"][u], rng=1),
        "rr_output_probability": dict(out=y, y=1 - y, epsilon=a["eu"][u]),
        "epsilon_of_comparisons": dict(user=u, epsilon=a["eu"]),
        "composed_user_epsilon": dict(epsilon=a["eu"][u], user=u, n_users=3),
        "privatized_win_probability": dict(p=a["gamma"], epsilon=1.0),
        "debias": dict(y_tilde=y, epsilon=a["eu"][u]),
        "privacy_variance": dict(epsilon=a["eu"]),
        "debiased_variance": dict(p=a["gamma"][0, :3], epsilon=a["eu"]),
        "variance_inflation": dict(epsilon=a["eu"]),
        "g_epsilon": dict(epsilon=a["eu"]),
        "complete_design": dict(n_users=2, n_items=m),
        "sparse_design": dict(n_users=2, n_items=m, pairs_per_user=2, rng=0),
        "pair_statistics": dict(i=i, j=j, y=a["z"], n_items=m, weights=a["w"]),
        "privatize": dict(i=i, j=j, y=y, user=u, epsilon=a["eu"], rng=0, n_items=m),
        "inverse_variance_weights": dict(epsilon=a["eu"], p=a["gamma"][0, :3] * 0.9 + 0.05),
        "win_probability": dict(theta=a["theta"], i=i, j=j, link="probit"),
        "simulate_btl": dict(theta=a["theta"], i=i, j=j, link="logit", rng=0),
        "btl_loss": dict(theta=a["theta"], s=pd_, lam=0.2, link="logit"),
        "btl_grad": dict(theta=a["theta"], s=pd_, lam=0.2, link="logit"),
        "btl_hessian": dict(theta=a["theta"], s=pd_, lam=0.2, link="logit"),
        "default_lambda": dict(s=pd_),
        "private_lambda": dict(s=pd_),
        "fit_btl_pairs": dict(s=pd_, lam=0.5, tol=1e-9, solver="auto", max_iter=200, link="logit"),
        "fit_btl": dict(
            i=i,
            j=j,
            y=y,
            n_items=m,
            lam=0.5,
            weights=None,
            tol=1e-9,
            solver="newton-cg",
            max_iter=200,
            link="logit",
        ),
        "private_btl": dict(
            i=i,
            j=j,
            y=y,
            user=u,
            n_items=m,
            epsilon=a["eu"],
            rng=0,
            weighting="inverse_variance",
            lam="r3",
            tol=1e-9,
            solver="auto",
            link="logit",
        ),
        "ranks_to_comparisons": dict(ranks=R),
        "plackett_luce_aggregate": dict(ranks=R, lam=0.5),
        "btl_consensus": dict(fit=btl.fit_btl(i, j, y, n_items=m), n_voters=3),
        "per_comparison_epsilon": dict(counts=np.bincount(u) + 1, epsilon=1.0),
        "btl_aggregate": dict(comparisons=rows, n_items=m, ties=True),
        "dp_btl_aggregate": dict(comparisons=rows, n_items=m, ties=True, epsilon=1.0, rng=0),
        "tree_depth": dict(n_items=m),
        "position_histograms": dict(ranks=R),
        "costs_from_histograms": dict(H=H, n_voters=n),
        "exact_position_costs": dict(ranks=R),
        "range_count_tree": dict(x=x, n_items=m, epsilon=1.0, delta=1e-6, rng=0),
        "range_counts": dict(tree=t, lo=np.zeros(3, int), hi=np.full(3, m - 1)),
        "tree_node_counts": dict(H=H),
        "tree_node_values": dict(H=H, n_voters=n),
        "reconstruct_costs": dict(nodes=tree.tree_node_values(H, n), n_items=m),
        "tree_sensitivity": dict(n_items=m, scope="value"),
        "level_shares": dict(d=3, kappa=0.4),
        "level_noise_scales": dict(
            l1=np.ones(3), l2=np.ones(3), epsilon=1.0, delta=1e-6, kappa=0.5, noise="exact"
        ),
        "assign_groups": dict(n_voters=n, n_groups=m, rng=0),
        "local_reports": dict(x=x, n_items=m, law=law, scales=sc, rng=0, noise=None),
        "aggregate_local_reports": dict(reports=rep, groups=np.arange(m), n_items=m),
        "private_position_costs": dict(
            ranks=R, epsilon=1.0, delta=0.0, model="local", kappa=None, rng=0
        ),
        "private_apxmed": dict(x=x, n_items=m, epsilon=1.0, delta=1e-6, kappa=None, rng=0),
        "footrule_cost": dict(gamma=a["gamma"], consensus=R[0]),
        "check_matching_size": dict(ranks=R),
        "footrule_aggregate": dict(ranks=R),
        "kemeny_cost": dict(w=a["gamma"], ranks=R),
        "dp_footrule_aggregate": dict(ranks=R, epsilon=1.0, delta=0.0, model="central", rng=0),
        "dp_footrule_from_costs": dict(costs=tree.private_position_costs(R, epsilon=1.0, rng=0)),
        "private_position_costs_from_histograms": dict(
            histograms=tree.position_histograms(R),
            n_voters=len(R),
            epsilon=1.0,
            delta=0.0,
            kappa=None,
            rng=0,
        ),
        "fit_btl_counts": dict(
            counts=np.add.at(c_ := np.zeros((1, m, m, 2), np.int64), (0, i, j, y), 1) or c_,
            epsilon=np.array([1.0]),
            weighting="inverse_variance",
            lam=0.5,
            tol=1e-9,
            solver="auto",
            link="logit",
        ),
        "matching_error_bound": dict(noise=a["gamma"]),
        "cost_matrix_sensitivity": dict(n_items=m),
        "naive_dp_footrule_aggregate": dict(ranks=R, epsilon=1.0, delta=1e-6, rng=0),
        "pairwise_sensitivity": dict(n_items=m),
        "dp_pairwise_indegree_aggregate": dict(ranks=R, epsilon=1.0, delta=0.0, rng=0),
        "dp_top_k": dict(data=R, k=min(2, m), epsilon=1.0, delta=0.0, statistic="borda", rng=0),
    }
    return table[name]


@pytest.mark.parametrize("name", sorted(SPEC))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    how=st.sampled_from(["plain", "fortran", "strided", "readonly"]),
    mode=st.sampled_from(["fast", "exact"]),
)
def test_arguments_are_never_modified(name, seed, how, mode):
    f = SPEC[name][0]
    kw = {
        k: _layout(v, how)
        for k, v in _valid(name, _arrays(None, np.random.default_rng(seed))).items()
    }
    before = _snapshot(kw)
    with core.use_noise(mode):
        answers(name, lambda: f(**kw))
    assert _snapshot(kw) == before, f"{name} modified an argument ({how})"
