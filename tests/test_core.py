"""Property tests for privrank.core: random valid input agrees with the definitions, random
malformed input
gets a ValueError/TypeError naming the parameter (never another exception, never a silent NaN)."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.optimize import linear_sum_assignment  # noqa: F401  (scipy is a runtime dependency)

from privrank import core

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def profiles(draw, max_n=12, max_m=12):
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(1, max_m))
    seed = draw(st.integers(0, 2**32 - 1))
    return np.argsort(np.random.default_rng(seed).random((n, m)), axis=1)


def kendall_brute(a, b):
    return (
        (np.sign(a[:, :, None] - a[:, None, :]) * np.sign(b[:, :, None] - b[:, None, :])) < 0
    ).sum((1, 2)) // 2


@SETTINGS
@given(profiles(), st.integers(0, 2**32 - 1))
def test_distances_match_definitions(A, seed):
    B = np.argsort(np.random.default_rng(seed).random(A.shape), axis=1)
    K, F = core.kendall_tau_distance(A, B), core.footrule_distance(A, B)
    assert np.array_equal(K, kendall_brute(A, B))
    assert np.array_equal(F, np.abs(A - B).sum(1))
    assert np.all(K <= F) and np.all(F <= 2 * K)  # Diaconis-Graham
    assert np.array_equal(core.orders_to_ranks(core.ranks_to_orders(A)), A)


@SETTINGS
@given(profiles())
def test_preference_matrix_and_borda(R):
    n, m = R.shape
    W = core.preference_matrix(R)
    assert np.allclose(W + W.T + np.eye(m), 1)
    assert np.allclose(W, (R[:, :, None] < R[:, None, :]).mean(0))
    s = core.borda_scores(R)
    assert np.array_equal(
        s, (W * n).sum(1).round().astype(int)
    )  # Borda = row sums of pairwise wins
    res = core.borda_aggregate(R)
    assert sorted(res.order) == list(range(m)) and np.all(np.diff(s[res.order]) <= 0)


bad_numbers = st.sampled_from(
    [0, -1, -0.5, math.nan, math.inf, -math.inf, True, None, "1", [], [[1.0]], [1.0, -2.0]]
)


@SETTINGS
@given(bad_numbers)
def test_bad_epsilon(x):
    with pytest.raises((ValueError, TypeError), match="`epsilon`"):
        core.check_epsilon(x)


@SETTINGS
@given(st.sampled_from([-0.1, 1, 1.5, math.nan, math.inf, None, "0", True, [0.1]]))
def test_bad_delta(x):
    with pytest.raises((ValueError, TypeError), match="`delta`"):
        core.check_delta(x)


malformed = st.one_of(
    hnp.arrays(
        st.sampled_from([np.float64, np.int64, np.int8, np.bool_, np.uint8]),
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6),
    ),
    st.lists(st.lists(st.integers(-3, 8), max_size=6), max_size=5),
    st.just("ranks"),
    st.none(),
    st.just([[None]]),
    st.just([[1.5, 0.0]]),
)


def _is_valid(x):
    a = np.asarray(x) if not isinstance(x, np.ndarray) else x
    return (
        a.dtype.kind in "iu"
        and a.ndim == 2
        and a.size > 0
        and np.array_equal(np.sort(a, axis=1), np.broadcast_to(np.arange(a.shape[1]), a.shape))
    )


@SETTINGS
@given(malformed)
def test_malformed_ranks_rejected(x):
    try:
        valid = _is_valid(x)
    except Exception:
        valid = False
    if valid:
        got = core.check_ranks(x)
        assert got.dtype.kind == "i" and np.array_equal(got, np.asarray(x))
        return
    for f in (
        core.check_ranks,
        core.borda_aggregate,
        core.preference_matrix,
        lambda r: core.dp_borda_aggregate(r, epsilon=1.0, rng=0),
    ):
        with pytest.raises((ValueError, TypeError), match="`ranks`"):
            f(x)


@SETTINGS
@given(
    profiles(max_n=30, max_m=8),
    st.floats(0.01, 50),
    st.sampled_from([0.0, 1e-6, 0.1]),
    st.sampled_from(["central", "local"]),
    st.integers(0, 2**32 - 1),
)
def test_dp_borda_is_a_valid_consensus(R, epsilon, delta, model, seed):
    res = core.dp_borda_aggregate(R, epsilon=epsilon, delta=delta, model=model, rng=seed)
    assert sorted(res.order) == list(range(R.shape[1]))
    assert np.all(np.isfinite(res.scores)) and res.epsilon == epsilon and res.delta == delta
    again = core.dp_borda_aggregate(R, epsilon=epsilon, delta=delta, model=model, rng=seed)
    assert np.array_equal(res.order, again.order)


@SETTINGS
@given(st.floats(1e-3, 30), st.floats(1e-12, 0.5))
def test_analytic_gaussian_is_tight(epsilon, delta):
    s = core.analytic_gaussian_sigma(epsilon=epsilon, delta=delta)
    assert math.isfinite(s) and s > 0
    assert abs(core.gaussian_delta(epsilon=epsilon, sigma=s) - delta) <= 1e-6 * delta + 1e-15


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64])
def test_permutation_check_is_the_sort_definition(dtype):
    "The O(nm) scatter check accepts exactly the rows whose sorted values are 0..m-1"
    rng = np.random.default_rng(7)
    for m in (1, 2, 5, 17, 100):
        a = np.argsort(rng.random((300, m)), axis=1)
        k = rng.integers(0, 300, 60)
        a[k, rng.integers(0, m, 60)] = rng.integers(0, m, 60)  # repeats (or no change)
        if np.issubdtype(dtype, np.signedinteger):
            a[k[:10], 0] = -1
        a[k[10:20], -1] = m + 3  # out of range
        a = a.astype(dtype)
        expected = (np.sort(a.astype(np.int64), axis=1) == np.arange(m)).all(axis=1)
        got = core._permutation_rows(a, block=64)  # several blocks
        assert np.array_equal(got, expected), (dtype, m)


INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def _sort_definition(a):
    "Which rows are permutations of 0..m-1, by the definition: the sorted row is 0..m-1"
    m = a.shape[1]
    s = np.sort(a, axis=1)
    return ((s >= 0) & (s == np.arange(m))).all(axis=1)  # compared as Python-exact integers


def _adversarial(dtype, m, rng, n=300):
    "Permutation rows of `dtype`, some spoiled: repeats, -1, m, and the dtype's extreme values"
    a = np.argsort(rng.random((n, m)), axis=1)
    info = np.iinfo(dtype)
    a = a.astype(dtype)
    k = rng.permutation(n)
    for j, v in enumerate([info.max, info.min, info.max - 1, m, m + 1, -1, -m, 2**31 - 1]):
        if info.min <= v <= info.max and v != 0:
            a[k[j], rng.integers(m)] = v
    d = k[10:30]
    a[d, rng.integers(0, m, d.size)] = a[d, rng.integers(0, m, d.size)]  # repeats (or no change)
    return a


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_check_ranks_is_the_sort_definition(dtype):
    """check_ranks accepts exactly the arrays whose rows all sort to 0..m-1, for every integer
    dtype and adversarial values (extremes that would overflow r + i m), and its error names the
    first bad row and the number of bad rows; an accepted array comes back uncopied (or, unsigned,
    as a signed view of it)"""
    rng = np.random.default_rng(11)
    for m in (1, 2, 3, 17, 100, 127, 128, 129, 200):
        if m > np.iinfo(dtype).max + 1:
            continue
        a = _adversarial(dtype, m, rng)
        ok = _sort_definition(a)
        assert not ok.all()
        with pytest.raises(ValueError, match=f"`ranks` row {np.flatnonzero(~ok)[0]} is not") as e:
            core.check_ranks(a)
        assert f"{(~ok).sum()} of {len(a)} rows are invalid" in str(e.value)
        good = a[ok]
        got = core.check_ranks(good)
        assert got.dtype.kind == "i" and np.array_equal(got, good)
        if np.dtype(dtype).kind == "i" or m <= 2 ** (8 * np.dtype(dtype).itemsize - 1):
            assert np.shares_memory(got, good) and got.itemsize == good.itemsize
        for r in np.flatnonzero(~ok)[:5]:  # each bad row alone is refused, each good row accepted
            with pytest.raises(ValueError, match="row 0 is not a permutation"):
                core.check_ranks(a[r : r + 1])


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_blocked_check_is_the_sort_definition(dtype):
    "The blocked fast check and the row-by-row check agree with the sort definition, block by block"
    rng = np.random.default_rng(3)
    for m in (1, 5, 17, 100):
        a = _adversarial(dtype, m, rng)
        s = core._signed(a, m)
        ok = _sort_definition(a)
        assert np.array_equal(core._permutation_rows(s, block=64), ok)
        for block in (1, 64, 1000, 1 << 16):
            assert core._all_permutations(s, block=block) == ok.all()
            assert core._all_permutations(s[ok], block=block)
            for r in np.flatnonzero(~ok)[:3]:  # one bad row among good ones, in any block
                b = np.concatenate([s[ok][:50], s[r : r + 1], s[ok][50:90]])
                assert not core._all_permutations(b, block=block)


def test_check_ranks_refuses_floats_and_bools_and_keeps_noncontiguous_input():
    R = np.argsort(np.random.default_rng(0).random((40, 6)), axis=1)
    for bad in (R.astype(float), R.astype(np.float32), R == 0):
        with pytest.raises(TypeError, match="`ranks` must be an integer array"):
            core.check_ranks(bad)
    F = np.asfortranarray(R.astype(np.int32))
    assert core.check_ranks(F) is F
    wide = np.argsort(np.random.default_rng(1).random((40, 12)), axis=1).astype(np.int16)
    sub = wide[::2]
    assert core.check_ranks(sub) is sub  # a strided view, validated as it is


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_rank_functions_give_identical_results_for_every_dtype(dtype):
    "Borda (private and not), the preference matrix and the distances do not depend on the dtype"
    rng = np.random.default_rng(5)
    R = np.argsort(rng.random((400, 12)), axis=1)
    B = np.argsort(rng.random((400, 12)), axis=1)
    Rd, Bd = R.astype(dtype), B.astype(dtype)
    assert np.array_equal(core.borda_scores(Rd), core.borda_scores(R))
    assert core.borda_scores(Rd).dtype == np.int64
    assert np.array_equal(core.borda_aggregate(Rd).order, core.borda_aggregate(R).order)
    for model in ("central", "local"):
        a = core.dp_borda_aggregate(Rd, epsilon=1.0, model=model, rng=7)
        b = core.dp_borda_aggregate(R, epsilon=1.0, model=model, rng=7)
        assert np.array_equal(a.scores, b.scores) and np.array_equal(a.order, b.order)
    assert np.array_equal(core.preference_counts(Rd), core.preference_counts(R))
    assert np.array_equal(core.kendall_tau_distance(Rd, Bd), core.kendall_tau_distance(R, B))
    assert np.array_equal(core.footrule_distance(Rd, Bd), core.footrule_distance(R, B))
    assert np.array_equal(core.ranks_to_orders(Rd), core.ranks_to_orders(R))
    assert np.array_equal(core.orders_to_ranks(Rd), core.orders_to_ranks(R))


def test_uint8_ranks_beyond_int8_are_widened():
    "uint8 positions up to 255 (m = 256) are valid: they come back as int16, equal"
    R = np.argsort(np.random.default_rng(2).random((30, 256)), axis=1)
    got = core.check_ranks(R.astype(np.uint8))
    assert got.dtype == np.int16 and np.array_equal(got, R)
    assert np.array_equal(
        core.footrule_distance(R.astype(np.uint8), R[::-1]), core.footrule_distance(R, R[::-1])
    )


def test_the_default_completion_reads_the_same_subspace_from_the_top_eigenpairs(monkeypatch):
    """The private subspace takes its ten eigenpairs from `top_eigh` (issue 34, item 2): the
    same release as with every eigenpair of the full solver, up to rounding"""
    import privrank.completion as C
    from privrank import mc

    R = mc.synthetic_rank_one(3000, 120, rng=0)[0]

    def run():
        return C.complete(R, epsilon=1.0, delta=1e-6, rng=5, rating_range=(-1, 1))

    fast = run()

    def full(S, k):
        lam, V = np.linalg.eigh(S)
        return lam[::-1][:k], V[:, ::-1][:, :k]

    monkeypatch.setattr(C, "top_eigh", full)
    slow = run()
    assert fast.params == slow.params  # the chosen rank and ridge
    assert np.allclose(fast.diagnostics["eigenvalues"], slow.diagnostics["eigenvalues"], rtol=1e-9)
    P, Q = (np.stack([c.predict_user(u) for u in range(50)]) for c in (fast, slow))
    assert np.allclose(P, Q, rtol=0, atol=1e-8), np.abs(P - Q).max()
