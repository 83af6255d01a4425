"""Tests for privrank.mc: the RDP accountant against Google's dp-accounting, calibration round trips,
user-side data handling, and bad input refused with an error naming the parameter."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import sparse

from privrank import mc


@settings(max_examples=30, deadline=None)
@given(z=st.floats(0.5, 200), T=st.integers(1, 100), logd=st.floats(-12, -3))
def test_rdp_matches_dp_accounting(z, T, logd):
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp
    acc = rdp.RdpAccountant()
    acc.compose(dpa.GaussianDpEvent(z), T)
    ours = mc.epsilon_rdp([z] * T, 10 ** logd)
    theirs = acc.get_epsilon(10 ** logd)    # ours also searches orders close to 1, so it may be a little lower
    assert theirs * (1 - 0.1) - 1e-6 <= ours <= theirs * (1 + 1e-4) + 1e-6
    assert mc.epsilon_gdp([z] * T, 10 ** logd) <= ours + 1e-9   # the exact accountant is never looser


def test_rdp_matches_dp_accounting_at_issue_scale():
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp
    acc = rdp.RdpAccountant(); acc.compose(dpa.GaussianDpEvent(20.0), 20)
    assert abs(mc.epsilon_rdp([20.0] * 20, 1e-6) - acc.get_epsilon(1e-6)) < 1e-3


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(0.05, 10), T=st.integers(1, 60), acc=st.sampled_from(["gdp", "rdp", "advanced"]))
def test_calibration_round_trip(eps, T, acc):
    z = mc.noise_multiplier(eps, 1e-6, T, accountant=acc)
    assert abs(mc.ACCOUNTANTS[acc](z, 1e-6) - eps) < 1e-7 * max(1, eps)


def test_issue_scale():
    assert 19.5 < mc.noise_multiplier(1, 1e-6, 20, accountant="rdp")[0] < 21
    assert 100 < mc.noise_multiplier(1, 1e-6, 20, accountant="advanced")[0] < 110


def test_split_is_per_user_and_vectorised():
    R = sparse.random_array((2000, 300), density=0.4, rng=0, format="csr")
    sp = mc.split_ratings(R, rng=1)
    cnt = np.diff(sp.train.indptr)
    assert cnt.max() == 80 and cnt.min() >= 1
    np.testing.assert_allclose(sp.train.sum(axis=1), 0, atol=1e-10)
    train = set(zip(*sp.train.nonzero())); test = set(zip(sp.test_user, sp.test_item))
    assert not train & test


@pytest.mark.parametrize("kw, msg", [
    (dict(epsilon=0), "`epsilon` must be positive"), (dict(epsilon=np.nan), "`epsilon` must not be NaN"),
    (dict(delta=0), "`delta` must be positive"), (dict(delta=1.5), "0 <= delta < 1"),
    (dict(row_norm=-1), "`row_norm` must be a positive"), (dict(rank_bound=0), "`rank_bound` must be a positive"),
    (dict(n_iter=0), "`n_iter` must be >= 1"), (dict(method="power"), "`method` must be"),
    (dict(accountant="moments"), "`accountant` must be one of"), (dict(noise_schedule="cos"), "`noise_schedule` must be"),
])
def test_bad_arguments(kw, msg):
    R = sparse.csr_array(np.eye(5) + 1)
    args = dict(epsilon=1.0, delta=1e-6, rank_bound=1.0, n_iter=2, row_norm=1.0) | kw
    with pytest.raises((ValueError, TypeError), match=msg.replace("(", r"\(")):
        mc.private_frank_wolfe(R, **args)


def test_bad_ratings():
    ok = dict(epsilon=1.0, delta=1e-6, rank_bound=1.0, n_iter=2, row_norm=1.0)
    with pytest.raises(TypeError, match="`ratings` must be a scipy.sparse"):
        mc.private_frank_wolfe(np.eye(3), **ok)
    with pytest.raises(ValueError, match="users have no ratings"):
        mc.private_frank_wolfe(sparse.csr_array(np.diag([1.0, 0, 1])), **ok)
    bad = sparse.csr_array(np.eye(3)); bad.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        mc.private_frank_wolfe(bad, **ok)
    with pytest.raises(ValueError, match="`user_mean` must have one entry per user"):
        mc.private_frank_wolfe(sparse.csr_array(np.eye(3)), user_mean=np.zeros(2), **ok)


def test_private_beats_mean_on_synthetic_and_records_spend():
    R, u, v = mc.synthetic_rank_one(20000, 400, rng=0)
    sp = mc.split_ratings(R, rng=1)
    k = np.linalg.norm(u) * np.linalg.norm(v)
    res = mc.private_frank_wolfe(sp.train, epsilon=5.0, delta=1e-6, rank_bound=k, n_iter=10, row_norm=2.0,
                                 user_mean=sp.user_mean, rng=2)
    base = np.sqrt(np.mean((sp.user_mean[sp.test_user] - sp.test_value) ** 2))
    assert res.rmse(sp) < 0.8 * base
    assert res.privacy_unit == "user (whole row)" and res.accountant == "gdp"
    assert abs(mc.epsilon_gdp(res.noise_multiplier, 1e-6) - 5.0) < 1e-7
