"""Hostile input (partial coverage): bad epsilon/delta, NaN/inf, wrong dtypes, non-permutation rows and empty arrays
on the main public aggregators; each must raise ValueError/TypeError (never a silent NaN). A count of cases tried
per function is printed at the end of the session (pytest -s)."""
import collections, io, math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from privrank import core, tree, footrule, kemeny

COUNTS = collections.Counter()
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
R = core.sample_plackett_luce(np.linspace(1, 0, 4), 6, rng=0)
FUNCS = {
    "dp_borda_aggregate": lambda r, e, d: core.dp_borda_aggregate(r, epsilon=e, delta=d, rng=0),
    "private_position_costs": lambda r, e, d: tree.private_position_costs(r, epsilon=e, delta=d, rng=0),
    "naive_dp_footrule_aggregate": lambda r, e, d: footrule.naive_dp_footrule_aggregate(r, epsilon=e, delta=d, rng=0),
    "dp_pairwise_indegree_aggregate": lambda r, e, d: footrule.dp_pairwise_indegree_aggregate(r, epsilon=e, delta=d, rng=0),
    "dp_footrule_aggregate": lambda r, e, d: footrule.dp_footrule_aggregate(r, epsilon=e, delta=d, rng=0),
    "bucketed_instance": lambda r, e, d: kemeny.bucketed_instance(r, epsilon=e, delta=d, rng=0),
}
BAD_EPS = [0, -1, math.nan, "1", None, True, [1.0, 2.0, 3.0]]
BAD_DELTA = [-0.1, 1, math.nan, "0", None]
BAD_RANKS = [np.zeros((0, 4), int), np.array([[0, 0, 1, 2]]), np.array([[0.5, 1, 2, 3]]), np.array([[0, 1, np.nan, 3]]),
             np.array([[0, 1, 2, 4]]), np.array([0, 1, 2, 3]), "0 1 2 3", np.array([[[0, 1], [1, 0]]])]


@pytest.fixture(scope="session", autouse=True)
def report_counts():
    yield
    print("\nhostile cases tried per function:", dict(COUNTS))


@pytest.mark.parametrize("name", sorted(FUNCS))
@SETTINGS
@given(e=st.sampled_from(BAD_EPS), d=st.sampled_from(BAD_DELTA), r=st.sampled_from(BAD_RANKS), which=st.integers(0, 2))
def test_refuses_bad_input(name, e, d, r, which):
    COUNTS[name] += 1
    args = [(R, e, 0.0), (R, 1.0, d), (r, 1.0, 0.0)][which]
    with pytest.raises((ValueError, TypeError)):
        FUNCS[name](*args)
