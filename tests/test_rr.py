"""Property tests and the privacy audit for privrank.rr (randomized response, debiasing, pair
statistics).

Random shapes and epsilons: the RR output is 0/1 with the input's shape; debias(RR(y)) averages to
y; pair statistics match a direct computation; malformed input raises ValueError/TypeError naming
the parameter. The audit checks the exact likelihood ratio e^eps and measures it from the sampler
(5 standard errors), and shows that a miscalibrated flip probability is detected."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from privrank import rr

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
epsilons = st.floats(0.01, 20.0, allow_nan=False)
seeds = st.integers(0, 2**32 - 1)


@SETTINGS
@given(hnp.array_shapes(min_dims=0, max_dims=3, max_side=6), epsilons, seeds, st.booleans())
def test_rr_output_is_binary_with_input_shape(shape, eps, seed, per_entry):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=shape)
    epsilon = rng.uniform(0.01, 20, size=shape) if per_entry else eps
    out = rr.randomized_response(y, epsilon=epsilon, rng=rng)
    assert out.shape == y.shape and out.dtype == np.int8
    assert np.isin(out, [0, 1]).all()
    z = rr.debias(out, epsilon=epsilon)
    assert z.shape == y.shape and np.isfinite(z).all()
    assert np.array_equal(rr.randomized_response(y, epsilon=np.inf, rng=rng), y)


@settings(max_examples=15, deadline=None)
@given(st.floats(0.2, 5.0), st.floats(0.0, 1.0), seeds)
def test_debiased_rr_averages_to_y(eps, p, seed):
    """E[debias(RR(y))] = P(y = 1), within 5 standard errors from Lemma 2's variance."""
    rng = np.random.default_rng(seed)
    n = 100_000
    y = (rng.random(n) < p).astype(np.int8)
    z = rr.debias(rr.randomized_response(y, epsilon=eps, rng=rng), epsilon=eps)
    assert abs(z.mean() - p) < 5 * math.sqrt(rr.debiased_variance(p, epsilon=eps) / n)
    # and conditionally on y: the mean of z given y is y itself
    for v in (0, 1):
        zv = z[y == v]
        if len(zv) > 100:
            assert abs(zv.mean() - v) < 5 * math.sqrt(rr.privacy_variance(epsilon=eps) / len(zv))


@SETTINGS
@given(st.integers(2, 30), st.integers(1, 400), seeds, st.booleans())
def test_pair_statistics_match_direct_computation(m, n, seed, weighted):
    rng = np.random.default_rng(seed)
    i = rng.integers(0, m, n)
    j = (i + rng.integers(1, m, n)) % m
    z = rng.normal(size=n)
    w = rng.uniform(0.1, 2, n) if weighted else np.ones(n)
    ps = rr.pair_statistics(i, j, z, n_items=m, weights=w if weighted else None)
    assert np.all(ps.i < ps.j)
    num, den, cnt = {}, {}, {}
    for a, b, v, wt in zip(i, j, z, w):
        k = (min(a, b), max(a, b))
        v = v if a < b else 1 - v
        num[k] = num.get(k, 0) + wt * v
        den[k] = den.get(k, 0) + wt
        cnt[k] = cnt.get(k, 0) + 1
    assert [(a, b) for a, b in zip(ps.i, ps.j)] == sorted(num)
    assert np.allclose(ps.zbar, [num[k] / den[k] for k in sorted(num)])
    assert np.array_equal(ps.count, [cnt[k] for k in sorted(num)])
    assert np.allclose(ps.weight, [den[k] for k in sorted(num)])


@SETTINGS
@given(st.integers(1, 20), st.integers(2, 12), st.data())
def test_designs(L, m, data):
    P = m * (m - 1) // 2
    user, i, j = rr.complete_design(L, m)
    assert len(user) == L * P and np.all(i < j) and np.array_equal(np.bincount(user), np.full(L, P))
    k = data.draw(st.integers(1, P))
    user, i, j = rr.sparse_design(L, m, k, rng=data.draw(seeds))
    assert len(user) == L * k and np.all((0 <= i) & (i < j) & (j < m))
    assert len(np.unique(user * m * m + i * m + j)) == L * k


@SETTINGS
@given(st.integers(1, 8), st.integers(2, 8), seeds)
def test_privatize_accounting(L, m, seed):
    rng = np.random.default_rng(seed)
    user, i, j = rr.complete_design(L, m)
    y = rng.integers(0, 2, len(user))
    eu = rng.uniform(0.1, 3, L)
    res = rr.privatize(i, j, y, user, epsilon=eu, rng=rng)
    assert np.allclose(res.epsilon_per_user, eu * m * (m - 1) / 2)
    assert np.allclose(
        res.epsilon_per_user,
        rr.composed_user_epsilon(user, epsilon=res.comparison_epsilon, n_users=L),
    )
    assert res.epsilon_per_comparison == eu.max()
    assert np.allclose(res.z, rr.debias(res.y_tilde, epsilon=eu[user]))


bad_eps = st.sampled_from(
    [0, -1.0, math.nan, -math.inf, True, None, "1", [1.0, -2.0], [1.0, math.nan]]
)


@SETTINGS
@given(bad_eps)
def test_bad_epsilon_is_named(eps):
    with pytest.raises((ValueError, TypeError), match="`epsilon`"):
        rr.randomized_response([0, 1], epsilon=eps)
    with pytest.raises((ValueError, TypeError), match="`epsilon`"):
        rr.debias([0, 1], epsilon=eps)
    with pytest.raises((ValueError, TypeError), match="`epsilon`"):
        rr.privatize([0, 1], [1, 2], [0, 1], [0, 1], epsilon=eps)


@SETTINGS
@given(st.sampled_from([[0, 2], [-1, 1], [0.0, 1.0], [0.5, 1], ["a", "b"], [None, 1]]))
def test_bad_outcomes_are_named(y):
    with pytest.raises((ValueError, TypeError), match="`y`"):
        rr.randomized_response(y, epsilon=1.0)
    with pytest.raises((ValueError, TypeError), match="`y`"):
        rr.privatize([0, 1], [1, 2], y, [0, 1], epsilon=1.0)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(i=[0, 1], j=[1, 5], y=[1, 0]), "`j`"),
        (dict(i=[-1, 1], j=[1, 2], y=[1, 0]), "`i`"),
        (dict(i=[0, 1], j=[1], y=[1, 0]), "equal lengths"),
        (dict(i=[0, 1], j=[1, 2], y=[1.0]), "equal lengths"),
        (dict(i=[0, 1], j=[1, 2], y=[1.0, math.inf]), "`y`"),
        (dict(i=[0.0, 1.0], j=[1, 2], y=[1, 0]), "`i`"),
        (dict(i=[1, 1], j=[1, 2], y=[1, 0]), "must differ"),
    ],
)
def test_bad_pairs(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        rr.pair_statistics(**kwargs, n_items=4)


def test_bad_privatize_lengths_and_ids():
    with pytest.raises(ValueError, match="equal lengths"):
        rr.privatize([0, 1], [1, 2], [0, 1, 1], [0, 1], epsilon=1.0)
    with pytest.raises(ValueError, match="`user` must be < 2"):
        rr.privatize([0, 1], [1, 2], [0, 1], [0, 2], epsilon=[1.0, 2.0])
    with pytest.raises(ValueError, match="`i` must be < 2"):
        rr.privatize([0, 2], [1, 0], [0, 1], [0, 1], epsilon=1.0, n_items=2)
    with pytest.raises(ValueError, match="`pairs_per_user`"):
        rr.sparse_design(2, 3, 4)


# --- the privacy audit ---------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0, 3.0, 10.0, 30.0])
def test_exact_likelihood_ratio(eps):
    """max over outputs of |log P(out | y=1)/P(out | y=0)| is exactly epsilon."""
    ratios = [
        rr.rr_output_probability(o, 1, epsilon=eps) / rr.rr_output_probability(o, 0, epsilon=eps)
        for o in (0, 1)
    ]
    assert math.isclose(float(np.max(np.abs(np.log(ratios)))), eps, rel_tol=1e-10)
    p = rr.flip_probability(epsilon=eps)
    assert math.isclose((1 - p) / p, math.exp(eps), rel_tol=1e-10)


def _measured_log_ratio(mechanism, eps, n=1_000_000, seed=0):
    rng = np.random.default_rng(seed)
    q1 = mechanism(np.ones(n, np.int8), epsilon=eps, rng=rng).mean()
    q0 = mechanism(np.zeros(n, np.int8), epsilon=eps, rng=rng).mean()
    lr = np.array([math.log(q1 / q0), math.log((1 - q0) / (1 - q1))])
    se = np.array(
        [
            math.sqrt((1 - q1) / (n * q1) + (1 - q0) / (n * q0)),
            math.sqrt(q1 / (n * (1 - q1)) + q0 / (n * (1 - q0))),
        ]
    )
    return lr, se


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 4.0])
def test_sampler_likelihood_ratio_and_miscalibration(eps):
    lr, se = _measured_log_ratio(rr.randomized_response, eps)
    assert np.all(np.abs(lr - eps) < 5 * se), (lr, se)

    # flips with probability p_eps / 2 (the coin of epsilon' = log(2/p - 1)): leaks more than eps
    def too_few_flips(y, *, epsilon, rng):
        e2 = np.log(2 / rr.flip_probability(epsilon=epsilon) - 1)
        return rr.randomized_response(np.asarray(y), epsilon=e2, rng=rng)

    lr_bad, se_bad = _measured_log_ratio(too_few_flips, eps)
    assert np.any(lr_bad - eps > 5 * se_bad), (lr_bad, se_bad)


# extreme budgets: a finite answer, or a refusal naming `epsilon` (never -inf/inf/NaN)


@pytest.mark.parametrize(
    "call",
    [
        lambda: rr.debias([0, 1], epsilon=1e-320),
        lambda: rr.debias([0, 1], epsilon=[1.0, 5e-324]),
        lambda: rr.privacy_variance(epsilon=1e-200),
        lambda: rr.variance_inflation(epsilon=1e-160),
        lambda: rr.g_epsilon(epsilon=[1e-160, 1.0]),
        lambda: rr.debiased_variance(0.3, epsilon=1e-200),
        lambda: rr.privatize([0], [1], [1], [0], epsilon=1e-320, rng=0),
        lambda: rr.composed_user_epsilon([0, 0], epsilon=1e308),
        lambda: rr.composed_user_epsilon([0, 0], epsilon=[1e308, 1e308]),
        lambda: rr.privatize([0, 1], [1, 2], [1, 0], [0, 0], epsilon=1e308, rng=0),
    ],
)
def test_extreme_epsilon_refused_by_name(call):
    with pytest.raises(ValueError, match="`epsilon`"):
        call()


def test_extreme_epsilon_answers_where_finite():
    for e in (6e-309, 1e-300, 1e300, 1.7e308):
        assert np.isfinite(rr.debias([0, 1], epsilon=e)).all()
    assert (
        np.isfinite(rr.privacy_variance(epsilon=1e-153))
        and rr.privacy_variance(epsilon=1e300) == 0.0
    )
    assert rr.composed_user_epsilon([0, 0], epsilon=np.inf, n_users=2).tolist() == [
        np.inf,
        0.0,
    ]  # inf = no privacy, kept
    with pytest.raises(
        ValueError, match="`p` must lie strictly inside"
    ):  # the variance underflows to 0
        rr.inverse_variance_weights(epsilon=800.0, p=1.0)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: rr.randomized_response([[0, 1], [1]], epsilon=1.0), "`y`"),
        (lambda: rr.pair_statistics([[0], [1, 2]], [1, 2], [1.0, 0.0], n_items=3), "`i`"),
        (lambda: rr.debiased_variance([0.3, 0.4], epsilon=[1.0, 2.0, 3.0]), "`p`"),
        (lambda: rr.rr_output_probability([0, 1, 1], [1, 1], epsilon=1.0), "`out`"),
    ],
)
def test_shapes_named(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# every dtype a user passes: the same statistics, on the dense path and on the compressed one

ID_DTYPES = [np.int64, np.int32, np.uint32, np.uint64, np.int16, np.uint16]
Y_DTYPES = [bool, np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64]


@pytest.mark.parametrize("m, n", [(7, 60), (300, 500), (40_000, 300)])  # dense, dense, compressed
def test_pair_statistics_identical_for_every_dtype(m, n):
    rng = np.random.default_rng(m)
    i = rng.integers(0, m, n)
    j = (i + rng.integers(1, m, n)) % m
    y = rng.integers(0, 2, n)
    ref = rr.pair_statistics(i, j, y, n_items=m)
    for idt in ID_DTYPES:
        if np.iinfo(idt).max < m:
            continue
        for ydt in Y_DTYPES:
            ps = rr.pair_statistics(i.astype(idt), j.astype(idt), y.astype(ydt), n_items=m)
            for k in ("i", "j", "count", "weight", "zbar", "n_comparisons", "sum_w2_v"):
                assert np.array_equal(getattr(ps, k), getattr(ref, k)), (idt, ydt, k)
            assert ps.i.dtype == np.int64 and ps.weight.dtype == np.float64
    # ties (0.5) and integers other than 0/1 take the general path: the same as floats
    yt = np.where(rng.random(n) < 0.3, 0.5, y)
    for ydt in (np.float32, np.float64):
        a = rr.pair_statistics(i.astype(np.int32), j, yt.astype(ydt), n_items=m)
        b = rr.pair_statistics(i, j, yt, n_items=m)
        assert np.allclose(a.zbar, b.zbar) and np.array_equal(a.count, b.count)
    y3 = np.where(rng.random(n) < 0.3, 2, y)
    a, b = rr.pair_statistics(i, j, y3, n_items=m), rr.pair_statistics(i, j, y3 * 1.0, n_items=m)
    assert np.allclose(a.zbar, b.zbar) and a.sum_w2_v == b.sum_w2_v


def test_pair_statistics_large_ids_do_not_overflow_narrow_dtypes():
    m = 60_000  # m^2 > 2^31: a key a m + b computed in int32 would overflow
    i = np.array([59_999, 1, 59_998, 59_999], np.int32)
    j = np.array([59_998, 59_999, 59_999, 1], np.uint32)
    ps = rr.pair_statistics(i, j, np.array([1.0, 0.0, 0.0, 1.0]), n_items=m)
    assert ps.i.tolist() == [1, 59_998] and ps.j.tolist() == [59_999, 59_999]
    assert ps.count.tolist() == [2, 2] and ps.zbar.tolist() == [0.0, 0.0]


def test_ids_are_not_copied_and_negative_ids_refused_for_every_dtype():
    for dt in (np.int32, np.int64, np.uint16):
        a = np.array([0, 2, 1], dt)
        assert rr._ids_any(a, "i", 3) is a  # validated in place, no int64 copy
    for dt in (np.int8, np.int32, np.int64):
        with pytest.raises(ValueError, match="`i` has ids outside"):
            rr.pair_statistics(np.array([0, -1], dt), [1, 2], [1, 0], n_items=3)


@pytest.mark.parametrize("y", [[1.0, np.nan], [1.0, np.inf], [0.0, 1e200]])
def test_non_binary_floats_still_validated(y):
    with pytest.raises(ValueError, match="`y`"):
        rr.pair_statistics([0, 1], [1, 2], y, n_items=3)
