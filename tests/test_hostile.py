"""Hostile input (issue 7 item 4): wrong dtypes, NaN/inf, empty arrays, huge m, rows that are not
permutations, ties,
bad epsilon/delta, mismatched lengths and malformed files, thrown at the public API and at every
CLI subcommand.

Each refusal must be a ValueError/TypeError whose message names the parameter in backticks
(readers: the file), never
another exception type, never a silent NaN, never a hang (every call runs under a SIGALRM time
limit) and never a
MemoryError (the module runs under an address-space limit, so an attempt to allocate for a huge m
fails at once instead
of swapping). The CLI must answer one `privrank: error:` line on stderr, exit status 2, nothing on
stdout and no file.
Known defects of modules owned by others are `xfail(strict=True)` with the reason, so a fix turns
them into failures to
remove. The number of cases tried per function is printed at the end of the session (shown with -q
as well)."""

import collections
import contextlib
import dataclasses
import gzip
import io
import math
import os
import signal
import tempfile
import threading
import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from conftest import stable_id
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import sparse

from privrank import (
    audit,
    auto,
    btl,
    cli,
    completion,
    core,
    datasets,
    footrule,
    kemeny,
    mc,
    rr,
    sources,
    tree,
)

COUNTS = collections.Counter()
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
R = core.sample_plackett_luce(np.linspace(1, 0, 4), 6, rng=0)
FUNCS = {
    "dp_borda_aggregate": lambda r, e, d: core.dp_borda_aggregate(r, epsilon=e, delta=d, rng=0),
    "private_position_costs": lambda r, e, d: tree.private_position_costs(
        r, epsilon=e, delta=d, rng=0
    ),
    "naive_dp_footrule_aggregate": lambda r, e, d: footrule.naive_dp_footrule_aggregate(
        r, epsilon=e, delta=d, rng=0
    ),
    "dp_pairwise_indegree_aggregate": lambda r, e, d: footrule.dp_pairwise_indegree_aggregate(
        r, epsilon=e, delta=d, rng=0
    ),
    "dp_footrule_aggregate": lambda r, e, d: footrule.dp_footrule_aggregate(
        r, epsilon=e, delta=d, rng=0
    ),
    "bucketed_instance": lambda r, e, d: kemeny.bucketed_instance(r, epsilon=e, delta=d, rng=0),
    "dp_aggregate": lambda r, e, d: auto.dp_aggregate(r, epsilon=e, delta=d, rng=0),
    # the same entry points on chunks (a function returning them): validated chunk by chunk
    "dp_borda_aggregate, chunks": lambda r, e, d: core.dp_borda_aggregate(
        lambda: iter([r]), epsilon=e, delta=d, rng=0
    ),
    "dp_kemeny_aggregate, chunks": lambda r, e, d: kemeny.dp_kemeny_aggregate(
        lambda: iter([r]), epsilon=e, delta=d, rng=0
    ),
    "dp_footrule_aggregate, chunks": lambda r, e, d: footrule.dp_footrule_aggregate(
        lambda: iter([r]), epsilon=e, delta=d, rng=0
    ),
}
BAD_EPS = [0, -1, math.nan, "1", None, True, [1.0, 2.0, 3.0]]
BAD_DELTA = [-0.1, 1, math.nan, "0", None]
BAD_RANKS = [
    np.zeros((0, 4), int),
    np.array([[0, 0, 1, 2]]),
    np.array([[0.5, 1, 2, 3]]),
    np.array([[0, 1, np.nan, 3]]),
    np.array([[0, 1, 2, 4]]),
    np.array([0, 1, 2, 3]),
    "0 1 2 3",
    np.array([[[0, 1], [1, 0]]]),
]


# ------------------------------------------------------------------------------------------
# guards: an address-space limit (a huge allocation fails at once, as MemoryError) and a time
# limit per call


@pytest.fixture(scope="module", autouse=True)
def memory_guard():
    """Cap this process's address space at its current size + 3 GiB while these tests run
    (Linux); restore it after"""
    try:
        import resource

        vm = next(
            int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize")
        )
    except (ImportError, OSError, StopIteration):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = vm + (3 << 30)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


class Hang(BaseException):
    """A call that did not return within its time limit (a BaseException, so no `except
    Exception` swallows it)"""


LIMIT = 5.0  # seconds per call; every hostile case here answers in milliseconds


@contextlib.contextmanager
def time_limit(seconds=LIMIT):
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def on_alarm(*_):
        raise Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def refuses(fname, f, *names):
    "f() must raise ValueError/TypeError naming one of `names` in backticks; returns the message"
    COUNTS[fname] += 1
    with time_limit():
        try:
            r = f()
        except (ValueError, TypeError) as e:
            msg = str(e)
        else:
            pytest.fail(f"{fname} accepted hostile input and returned {str(r)[:200]}")
    assert not names or any(f"`{n}`" in msg for n in names), (
        f"{fname}: the message does not name {names}: {msg!r}"
    )
    return msg


def _nan_free(x, where="result"):
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        for fl in dataclasses.fields(x):
            _nan_free(getattr(x, fl.name), f"{where}.{fl.name}")
    elif isinstance(x, dict):
        for k, v in x.items():
            _nan_free(v, f"{where}[{k!r}]")
    elif isinstance(x, (list, tuple)):
        for k, v in enumerate(x):
            _nan_free(v, f"{where}[{k}]")
    elif sparse.issparse(x):
        _nan_free(x.data, where)
    elif isinstance(x, (np.ndarray, np.generic, float)) and np.asarray(x).dtype.kind in "fc":
        assert not np.isnan(x).any(), f"silent NaN in {where}"


def answers(fname, f):
    "f() must return, within the time limit, a result with no NaN anywhere in it"
    COUNTS[fname] += 1
    with time_limit():
        r = f()
    _nan_free(r)
    return r


# ------------------------------------------------------------------------------------------
# the colleague's first cut (kept as it was)


@pytest.mark.parametrize("name", sorted(FUNCS))
@SETTINGS
@given(
    e=st.sampled_from(BAD_EPS),
    d=st.sampled_from(BAD_DELTA),
    r=st.sampled_from(BAD_RANKS),
    which=st.integers(0, 2),
)
def test_refuses_bad_input(name, e, d, r, which):
    COUNTS[name] += 1
    args = [(R, e, 0.0), (R, 1.0, d), (r, 1.0, 0.0)][which]
    with pytest.raises((ValueError, TypeError)):
        FUNCS[name](*args)


# ------------------------------------------------------------------------------------------
# hostile values

NAN, INF = math.nan, math.inf
EPS_BAD = [
    0,
    0.0,
    -1,
    -1e-300,
    NAN,
    -INF,
    "1",
    b"1",
    None,
    True,
    np.bool_(True),
    1j,
    [[1.0]],
    [],
    {},
    object(),
    np.array([1.0, NAN]),
    np.array([1.0, -1.0]),
    np.float64(NAN),
]
EPS_BAD_FINITE = EPS_BAD + [
    INF,
    np.inf,
    [1.0, INF],
]  # where epsilon = inf (no privacy) is refused too
DELTA_BAD = [-0.1, 1, 1.0, 1.5, NAN, INF, -INF, "0", b"0", None, True, [0.1], 1j, np.float64(NAN)]
EPS_BAD_RR = [
    e for e in EPS_BAD if not (isinstance(e, list) and e == [[1.0]])
]  # rr takes epsilon of any broadcastable shape
INT_BAD = [-1, 1.5, 2.0, "3", None, True, np.float64(3), [3], NAN, INF]

RANK_KINDS = [
    "tie",
    "out",
    "neg",
    "huge",
    "int64max",
    "uint_huge",
    "float",
    "nan",
    "inf",
    "bool",
    "object",
    "str",
    "complex",
    "3d",
    "no_voters",
    "no_items",
    "None",
    "scalar",
    "text",
]


@st.composite
def bad_ranks(draw, kinds=RANK_KINDS):
    """(kind, value): an (n, m) ranks array spoiled in one way (a tie, a value outside 0..m-1,
    a wrong dtype or shape)"""
    n, m = draw(st.integers(1, 4)), draw(st.integers(2, 6))
    r = np.array([draw(st.permutations(range(m))) for _ in range(n)], dtype=np.int64)
    i, q, kind = (
        draw(st.integers(0, n - 1)),
        draw(st.integers(0, m - 1)),
        draw(st.sampled_from(kinds)),
    )
    if kind == "tie":
        r[i, q] = r[i, (q + 1) % m]
    elif kind == "out":
        r[i, q] = m
    elif kind == "neg":
        r[i, q] = -1
    elif kind == "huge":
        r[i, q] = 10**9
    elif kind == "int64max":
        r[i, q] = 2**63 - 1
    elif kind == "uint_huge":
        r = r.astype(np.uint64)
        r[i, q] = 2**64 - 1
    elif kind in ("float", "nan", "inf"):
        r = r.astype(float)
        if kind != "float":
            r[i, q] = NAN if kind == "nan" else INF
    elif kind == "bool":
        r = r.astype(bool)
    elif kind == "object":
        r = r.astype(object)
    elif kind == "str":
        r = r.astype(str)
    elif kind == "complex":
        r = r.astype(complex)
    elif kind == "3d":
        r = r[None]
    elif kind == "no_voters":
        r = r[:0]
    elif kind == "no_items":
        r = r[:, :0]
    elif kind == "None":
        r = None
    elif kind == "scalar":
        r = 3
    elif kind == "text":
        r = " ".join(map(str, r[0]))
    return kind, r


def valid_ranks(n, m, seed=0):
    return core.sample_plackett_luce(np.zeros(m), n, rng=seed)


# ------------------------------------------------------------------------------------------
# privrank.core


@SETTINGS
@given(e=st.sampled_from(EPS_BAD_FINITE), name=st.sampled_from(["epsilon", "eps_user"]))
def test_check_epsilon(e, name):
    refuses("check_epsilon", lambda: core.check_epsilon(e, name=name), name)


@SETTINGS
@given(d=st.sampled_from(DELTA_BAD + [0.0]), positive=st.booleans())
def test_check_delta(d, positive):
    if d == 0.0 and not positive:
        d = -0.1
    refuses("check_delta", lambda: core.check_delta(d, positive=positive), "delta")


@pytest.mark.parametrize("x", INT_BAD, ids=stable_id)
def test_check_int(x):
    refuses("check_int", lambda: core.check_int(x, name="n", minimum=0), "n")


@pytest.mark.parametrize(
    "rng", [-1, 1.5, "0", b"0", True, np.float64(1), object(), [-1], 2**200 * -1], ids=stable_id
)
def test_check_rng(rng):
    refuses("check_rng", lambda: core.check_rng(rng), "rng")


RANK_FUNCS = {
    "check_ranks": (core.check_ranks, "ranks"),
    "check_orders": (core.check_orders, "orders"),
    "ranks_to_orders": (core.ranks_to_orders, "ranks"),
    "orders_to_ranks": (core.orders_to_ranks, "orders"),
    "preference_matrix": (core.preference_matrix, "ranks"),
    "borda_scores": (core.borda_scores, "ranks"),
    "borda_aggregate": (core.borda_aggregate, "ranks"),
    "kemeny_aggregate": (kemeny.kemeny_aggregate, "ranks"),
    "ranks_to_comparisons": (btl.ranks_to_comparisons, "ranks"),
    "dp_kemeny_aggregate": (
        lambda r: kemeny.dp_kemeny_aggregate(r, epsilon=1.0, delta=1e-6, rng=0),
        "ranks",
    ),
}


@pytest.mark.parametrize("fname", sorted(RANK_FUNCS))
@SETTINGS
@given(case=bad_ranks())
def test_rank_functions_refuse_bad_ranks(fname, case):
    f, name = RANK_FUNCS[fname]
    refuses(fname, lambda: f(case[1]), name)


@pytest.mark.parametrize("fname", ["kendall_tau_distance", "footrule_distance"])
@SETTINGS
@given(
    case=bad_ranks([k for k in RANK_KINDS if k != "scalar"]),
    side=st.booleans(),
    single=st.booleans(),
)
def test_distances_refuse_bad_rankings(fname, case, side, single):
    f = getattr(core, fname)
    kind, bad = case
    if kind in ("text", "None"):
        good = np.arange(4)
    else:
        m = np.shape(bad)[-1] if np.ndim(bad) else 4
        good = np.arange(max(m, 1)) if single else np.arange(max(m, 1))[None]
    a, b = (bad, good) if side else (good, bad)
    refuses(fname, lambda: f(a, b), "a", "b")


@pytest.mark.parametrize("fname", ["kendall_tau_distance", "footrule_distance"])
@pytest.mark.parametrize(
    "a,b",
    [
        ([0, 1, 2], [0, 1]),
        (np.zeros((2, 3), int) + [0, 1, 2], np.zeros((3, 3), int) + [2, 1, 0]),
        ([[0, 1, 2]], [[0, 1]]),
    ],
    ids=["m", "n", "m2"],
)
def test_distances_refuse_mismatched_lengths(fname, a, b):
    refuses(fname, lambda: getattr(core, fname)(a, b), "a", "b")


@SETTINGS
@given(
    which=st.integers(0, 2),
    e=st.sampled_from(EPS_BAD_FINITE),
    d=st.sampled_from(DELTA_BAD + [0.0]),
    s=st.sampled_from([-1, NAN, INF, "1", None, [1.0], 1j]),
)
def test_analytic_gaussian_sigma_refuses(which, e, d, s):
    args = [(e, 1e-6, 1.0), (1.0, d, 1.0), (1.0, 1e-6, s)][which]
    refuses(
        "analytic_gaussian_sigma",
        lambda: core.analytic_gaussian_sigma(
            **dict(zip(["epsilon", "delta", "sensitivity"], args))
        ),
        ["epsilon", "delta", "sensitivity"][which],
    )


@SETTINGS
@given(e=st.floats(1e-6, 1e6), d=st.floats(1e-12, 0.5), s=st.floats(0, 1e6))
def test_analytic_gaussian_sigma_answers_finite(e, d, s):
    sigma = answers(
        "analytic_gaussian_sigma",
        lambda: core.analytic_gaussian_sigma(epsilon=e, delta=d, sensitivity=s),
    )
    assert math.isfinite(sigma) and sigma >= 0


@SETTINGS
@given(
    which=st.integers(0, 1),
    theta=st.sampled_from(
        [
            [],
            [[1.0, 2.0]],
            [1.0, NAN],
            [1.0, INF],
            "12",
            None,
            [True, False],
            np.array([1, None]),
            [1j, 2j],
        ]
    ),
    n=st.sampled_from(INT_BAD + [0]),
)
def test_sample_plackett_luce_refuses(which, theta, n):
    args = [(theta, 3), ([1.0, 2.0], n)][which]
    refuses(
        "sample_plackett_luce",
        lambda: core.sample_plackett_luce(*args, rng=0),
        ["theta", "n"][which],
    )


@pytest.mark.parametrize("model", ["x", None, 1, ["central"], ""], ids=stable_id)
def test_dp_borda_refuses_bad_model(model):
    refuses(
        "dp_borda_aggregate",
        lambda: core.dp_borda_aggregate(R, epsilon=1.0, model=model, rng=0),
        "model",
    )


# ------------------------------------------------------------------------------------------
# privrank.rr

Y_BAD = [
    [0.0, 1.0],
    [0, 2],
    [-1, 0],
    ["0", "1"],
    None,
    "01",
    np.array([0, 1], object),
    [0.5],
    [NAN],
]
IDS_BAD = [
    [0.0, 1.0],
    [-1, 0],
    None,
    "01",
    [[0, 1]],
    np.array([0, 1], object),
    [True, False],
    [NAN, 0],
]


@SETTINGS
@given(which=st.integers(0, 1), y=st.sampled_from(Y_BAD + [[]]), e=st.sampled_from(EPS_BAD_RR))
def test_randomized_response_refuses(which, y, e):
    args = [(y, 1.0), ([0, 1, 1], e)][which]
    refuses(
        "randomized_response",
        lambda: rr.randomized_response(args[0], epsilon=args[1], rng=0),
        ["y", "epsilon"][which],
    )


@pytest.mark.parametrize("eps", [[1.0, 2.0], [[1.0, 2.0]], [1.0, 2.0, 3.0, 4.0], []], ids=stable_id)
def test_randomized_response_refuses_mismatched_epsilon(eps):
    refuses(
        "randomized_response",
        lambda: rr.randomized_response([0, 1, 1], epsilon=eps, rng=0),
        "epsilon",
    )


@SETTINGS
@given(which=st.integers(0, 1), y=st.sampled_from(Y_BAD), e=st.sampled_from(EPS_BAD_RR))
def test_debias_refuses(which, y, e):
    if isinstance(e, list) and e == []:
        e = [1.0, NAN]  # [] against y of length 3: a shape mismatch, see BUGS debias-mismatch
    args = [(y, 1.0), ([0, 1, 1], e)][which]
    refuses("debias", lambda: rr.debias(args[0], epsilon=args[1]), ["y_tilde", "epsilon"][which])


PRIV_OK = dict(i=[0, 1, 2], j=[1, 2, 0], y=[1, 0, 1], user=[0, 0, 1])


@SETTINGS
@given(
    field=st.sampled_from(["i", "j", "y", "user", "epsilon", "n_items", "len", "self"]),
    data=st.data(),
)
def test_privatize_refuses(field, data):
    kw = dict(PRIV_OK, epsilon=1.0, n_items=3)
    if field in ("i", "j", "user"):
        kw[field] = data.draw(st.sampled_from(IDS_BAD + ([[0, 1, 9]] if field != "user" else [])))
    elif field == "y":
        kw["y"] = data.draw(st.sampled_from(Y_BAD))
    elif field == "epsilon":
        kw["epsilon"] = data.draw(st.sampled_from(EPS_BAD + [[1.0]]))
    elif field == "n_items":
        kw["n_items"] = data.draw(st.sampled_from([1, 2, -1, 1.5, "3", True]))
    elif field == "len":
        kw[data.draw(st.sampled_from(["i", "j", "y", "user"]))] = [0, 1]
    else:
        kw["j"] = [0, 2, 0]
    names = {
        "len": ("i", "j", "y", "user"),
        "self": ("i", "j"),
        "n_items": ("n_items", "i", "j"),
        "epsilon": ("epsilon", "user"),
    }
    refuses(
        "privatize",
        lambda: rr.privatize(
            kw["i"],
            kw["j"],
            kw["y"],
            kw["user"],
            epsilon=kw["epsilon"],
            rng=0,
            n_items=kw["n_items"],
        ),
        *names.get(field, (field,)),
    )


@SETTINGS
@given(field=st.sampled_from(["i", "j", "y", "weights", "n_items", "len"]), data=st.data())
def test_pair_statistics_refuses(field, data):
    kw = dict(i=[0, 1, 2], j=[1, 2, 0], y=[1.0, 0.0, 0.5], n_items=3, weights=None)
    if field in ("i", "j"):
        kw[field] = data.draw(st.sampled_from(IDS_BAD + [[0, 1, 3], [0, 1, 10**12]]))
    elif field == "y":
        kw["y"] = data.draw(
            st.sampled_from(
                [[1.0, NAN, 0.0], [1.0, INF, 0.0], ["1", "0", "1"], None, [1.0], [[1.0, 0.0, 1.0]]]
            )
        )
    elif field == "weights":
        kw["weights"] = data.draw(
            st.sampled_from([[1.0, -1.0, 1.0], [1.0, NAN, 1.0], [1.0], "abc"])
        )
    elif field == "n_items":
        kw["n_items"] = data.draw(st.sampled_from([1, 2, -5, 2.5, "3", True, 10**10]))
    else:
        kw["j"] = [1, 2]
    names = {"len": ("i", "j"), "n_items": ("n_items", "i", "j"), "y": ("y", "i")}
    refuses(
        "pair_statistics",
        lambda: rr.pair_statistics(
            kw["i"], kw["j"], kw["y"], n_items=kw["n_items"], weights=kw["weights"]
        ),
        *names.get(field, (field,)),
    )


@SETTINGS
@given(which=st.integers(0, 2), bad=st.sampled_from(INT_BAD + [0]))
def test_sparse_design_refuses(which, bad):
    args = [3, 5, 2]
    args[which] = bad
    if which == 1 and bad == 0:
        args[1] = 1
    refuses(
        "sparse_design",
        lambda: rr.sparse_design(*args, rng=0),
        ["n_users", "n_items", "pairs_per_user"][which],
    )


def test_sparse_design_refuses_too_many_pairs():
    refuses("sparse_design", lambda: rr.sparse_design(2, 4, 7, rng=0), "pairs_per_user")


@SETTINGS
@given(
    m=st.sampled_from([2, 3, 10, 10**4, 10**6, 10**9, 3 * 10**9]),
    k=st.integers(1, 3),
    seed=st.integers(0, 99),
)
def test_sparse_design_huge_m_gives_valid_pairs(m, k, seed):
    k = min(k, m * (m - 1) // 2)
    u, a, b = answers("sparse_design", lambda: rr.sparse_design(4, m, k, rng=seed))
    assert ((0 <= a) & (a < b) & (b < m)).all() and len(
        set(zip(u.tolist(), a.tolist(), b.tolist()))
    ) == len(u)


@SETTINGS
@given(which=st.integers(0, 1), e=st.sampled_from(EPS_BAD_RR), user=st.sampled_from(IDS_BAD))
def test_composed_user_epsilon_refuses(which, e, user):
    e, u = [(e, [0, 1]), (1.0, user)][which]
    refuses(
        "composed_user_epsilon",
        lambda: rr.composed_user_epsilon(u, epsilon=e),
        ["epsilon", "user"][which],
    )


@SETTINGS
@given(
    which=st.integers(0, 1),
    e=st.sampled_from(EPS_BAD_RR),
    p=st.sampled_from([-0.1, 1.1, NAN, "0.5", None, True, [0.5, NAN]]),
)
def test_inverse_variance_weights_refuses(which, e, p):
    if which == 0 and isinstance(e, list) and e == []:
        e = [1.0, NAN]  # an empty epsilon array (no comparisons) is fine here
    args = [(e, 0.5), (1.0, p)][which]
    refuses(
        "inverse_variance_weights",
        lambda: rr.inverse_variance_weights(epsilon=args[0], p=args[1]),
        ["epsilon", "p"][which],
    )


@SETTINGS
@given(
    e=st.one_of(st.floats(1e-6, 1e6), st.just(INF)), n=st.integers(1, 30), seed=st.integers(0, 99)
)
def test_rr_pipeline_answers_finite(e, n, seed):
    g = np.random.default_rng(seed)
    i = g.integers(0, 4, n)
    j = (i + 1 + g.integers(0, 3, n)) % 4
    y = g.integers(0, 2, n)
    u = g.integers(0, 3, n)
    p = answers("privatize", lambda: rr.privatize(i, j, y, u, epsilon=e, rng=seed, n_items=4))
    answers("debias", lambda: rr.debias(p.y_tilde, epsilon=e))
    answers("pair_statistics", lambda: rr.pair_statistics(i, j, p.z, n_items=4))
    if math.isfinite(e):
        answers(
            "composed_user_epsilon", lambda: rr.composed_user_epsilon(u, epsilon=e, n_users=3)
        )  # inf: see BUGS
    answers("inverse_variance_weights", lambda: rr.inverse_variance_weights(epsilon=p.epsilon))


# ------------------------------------------------------------------------------------------
# privrank.btl

BTL_OK = dict(
    i=np.array([0, 1, 2, 0]),
    j=np.array([1, 2, 0, 2]),
    y=np.array([1, 0, 1, 1]),
    user=np.array([0, 0, 1, 1]),
)


@SETTINGS
@given(
    field=st.sampled_from(
        [
            "i",
            "j",
            "y",
            "n_items",
            "lam",
            "tol",
            "solver",
            "weights",
            "max_iter",
            "len",
            "self",
            "empty",
        ]
    ),
    data=st.data(),
)
def test_fit_btl_refuses(field, data):
    kw = dict(
        i=BTL_OK["i"],
        j=BTL_OK["j"],
        y=BTL_OK["y"],
        n_items=3,
        lam="mle",
        tol=1e-9,
        solver="auto",
        weights=None,
        max_iter=200,
    )
    pick = lambda xs: data.draw(st.sampled_from(xs))
    if field in ("i", "j"):
        kw[field] = pick(IDS_BAD + [[0, 1, 2, 3], [0, 1, 2, 10**12]])
    elif field == "y":
        kw["y"] = pick(
            [
                [1, 0, NAN, 1],
                [1, 0, INF, 1],
                ["1", "0", "1", "1"],
                None,
                np.array([1, 0, 1, 1], object),
                [[1, 0, 1, 1]],
            ]
        )
    elif field == "n_items":
        kw["n_items"] = pick([0, -3, 2, 3.0, "3", True, None, NAN])
    elif field == "lam":
        kw["lam"] = pick([-1, NAN, INF, "x", None, True, [1.0], 1j])
    elif field == "tol":
        kw["tol"] = pick([0, -1, NAN, "1e-9", None])
    elif field == "solver":
        kw["solver"] = pick(["x", None, 3, ["newton"], ""])
    elif field == "weights":
        kw["weights"] = pick([[1, 1, NAN, 1], [1, -1, 1, 1], [1, 1], "abcd", [1, 1, INF, 1]])
    elif field == "max_iter":
        kw["max_iter"] = pick(INT_BAD + [0])
    elif field == "len":
        kw["y"] = kw["y"][:3]
    elif field == "self":
        kw["j"] = np.array([0, 2, 0, 2])
    else:
        kw.update(i=np.array([], int), j=np.array([], int), y=np.array([], int))
    names = {
        "len": ("i", "j", "y"),
        "self": ("i", "j"),
        "empty": ("y",),
        "n_items": ("n_items", "i", "j"),
    }
    refuses(
        "fit_btl",
        lambda: btl.fit_btl(
            kw["i"],
            kw["j"],
            kw["y"],
            n_items=kw["n_items"],
            lam=kw["lam"],
            tol=kw["tol"],
            solver=kw["solver"],
            weights=kw["weights"],
            max_iter=kw["max_iter"],
        ),
        *names.get(field, (field,)),
    )


@SETTINGS
@given(field=st.sampled_from(["epsilon", "user", "y", "weighting", "len"]), data=st.data())
def test_private_btl_refuses(field, data):
    kw = dict(BTL_OK, epsilon=1.0, weighting="inverse_variance")
    pick = lambda xs: data.draw(st.sampled_from(xs))
    if field == "epsilon":
        kw["epsilon"] = pick(EPS_BAD_FINITE + [[1.0]])
    elif field == "user":
        kw["user"] = pick(IDS_BAD)
    elif field == "y":
        kw["y"] = pick([[1, 0, 2, 1], [1.0, 0.0, 0.5, 1.0], [1, 0, -1, 1], [1, 0, NAN, 1]])
    elif field == "weighting":
        kw["weighting"] = pick(["x", None, ["uniform"], 1])
    else:
        kw["user"] = np.array([0, 1])
    names = {"len": ("user",), "epsilon": ("epsilon", "user")}
    refuses(
        "private_btl",
        lambda: btl.private_btl(
            kw["i"],
            kw["j"],
            kw["y"],
            kw["user"],
            n_items=3,
            epsilon=kw["epsilon"],
            rng=0,
            weighting=kw["weighting"],
        ),
        *names.get(field, (field,)),
    )


@FEW
@given(e=st.floats(1e-3, 1e3), n=st.integers(3, 30), seed=st.integers(0, 99))
def test_btl_answers_finite(e, n, seed):
    g = np.random.default_rng(seed)
    i = g.integers(0, 4, n)
    j = (i + 1 + g.integers(0, 3, n)) % 4
    y = g.integers(0, 2, n)
    u = g.integers(0, 3, n)
    answers("fit_btl", lambda: btl.fit_btl(i, j, y, n_items=4))
    answers("private_btl", lambda: btl.private_btl(i, j, y, u, n_items=4, epsilon=e, rng=seed))


# ------------------------------------------------------------------------------------------
# privrank.tree


@SETTINGS
@given(
    fname=st.sampled_from(["private_apxmed", "range_count_tree"]),
    field=st.sampled_from(["x", "m", "epsilon", "delta", "kappa"]),
    data=st.data(),
)
def test_tree_refuses(fname, field, data):
    kw = dict(x=np.array([0, 1, 3]), m=4, epsilon=1.0, delta=0.0, kappa=None)
    pick = lambda xs: data.draw(st.sampled_from(xs))
    if field == "x":
        kw["x"] = pick(
            [
                [0.0, 1.0],
                [0, 4],
                [-1, 0],
                [10**9],
                ["0"],
                None,
                "01",
                [[0, 1]],
                [True, False],
                np.array([0, 1], object),
            ]
            + ([[]] if fname == "private_apxmed" else [])
        )
    elif field == "m":
        kw["m"] = pick(INT_BAD + [0])
    elif field == "epsilon":
        kw["epsilon"] = pick(EPS_BAD_FINITE)
    elif field == "delta":
        kw["delta"] = pick(DELTA_BAD)
    elif field == "kappa":
        if fname == "range_count_tree":
            kw["epsilon"] = pick(EPS_BAD_FINITE)
            field = "epsilon"
        else:
            kw["kappa"] = pick([0, -1, NAN, INF, "0.5", True and "x", [0.5]])
    if fname == "private_apxmed":
        f = lambda: tree.private_apxmed(
            kw["x"], kw["m"], epsilon=kw["epsilon"], delta=kw["delta"], kappa=kw["kappa"], rng=0
        )
    else:
        f = lambda: tree.range_count_tree(
            kw["x"], kw["m"], epsilon=kw["epsilon"], delta=kw["delta"], rng=0
        )
    refuses(fname, f, *(("n_items", "x") if field == "m" else (field,)))


@SETTINGS
@given(
    e=st.floats(1e-6, 1e6),
    d=st.sampled_from([0.0, 1e-9, 0.1]),
    m=st.integers(1, 40),
    n=st.integers(1, 20),
    kappa=st.sampled_from([None, 0.01, 0.5, 1.0, 3.0, 100.0]),
    seed=st.integers(0, 99),
)
def test_tree_answers_finite(e, d, m, n, kappa, seed):
    x = np.random.default_rng(seed).integers(0, m, n)
    answers(
        "private_apxmed",
        lambda: tree.private_apxmed(x, m, epsilon=e, delta=d, kappa=kappa, rng=seed),
    )
    answers("range_count_tree", lambda: tree.range_count_tree(x, m, epsilon=e, delta=d, rng=seed))


# ------------------------------------------------------------------------------------------
# privrank.kemeny

W3 = np.array([[0, 0.6, 0.3], [0.4, 0, 0.8], [0.7, 0.2, 0]])
W_BAD = [
    W3 * NAN,
    np.where(W3 > 0.5, INF, W3),
    W3[:2],
    W3[None],
    np.zeros((0, 0)),
    W3.astype(str),
    W3 > 0.5,
    W3.astype(complex),
    None,
    "w",
    np.array(W3, object),
]
ORDER_BAD = [
    [0.0, 1.0, 2.0],
    [0, 0, 2],
    [0, 1],
    [0, 1, 3],
    [0, 1, 10**9],
    [-1, 0, 1],
    [[[0, 1, 2]]],  # (k, m) orders are k consensus rankings; three dimensions are not
    None,
    "012",
    [True, False, True],
]


@SETTINGS
@given(which=st.integers(0, 1), w=st.sampled_from(W_BAD), o=st.sampled_from(ORDER_BAD))
def test_kemeny_cost_refuses(which, w, o):
    args = [(w, [0, 1, 2]), (W3, o)][which]
    refuses("kemeny_cost", lambda: kemeny.kemeny_cost(*args), ["w", "order"][which])


@pytest.mark.parametrize(
    "w", W_BAD + [np.zeros((21, 21)), np.zeros((10**3, 10**3))], ids=lambda w: f"{np.shape(w)}"
)
def test_kemeny_exact_refuses(w):
    refuses("kemeny_exact", lambda: kemeny.kemeny_exact(w), "w")


@pytest.mark.parametrize("solver", ["x", None, 3, ""], ids=stable_id)
def test_kemeny_aggregate_refuses_bad_solver(solver):
    refuses("kemeny_aggregate", lambda: kemeny.kemeny_aggregate(R, solver=solver), "solver")


@SETTINGS
@given(field=st.sampled_from(["epsilon", "delta", "regime", "solver", "n_buckets"]), data=st.data())
def test_dp_kemeny_aggregate_refuses(field, data):
    kw = dict(epsilon=1.0, delta=1e-6, regime="auto", solver="auto", n_buckets=None)
    pick = lambda xs: data.draw(st.sampled_from(xs))
    kw[field] = pick(
        {
            "epsilon": EPS_BAD_FINITE,
            "delta": DELTA_BAD,
            "regime": ["x", None, 1, ""],
            "solver": ["x", None, 3, ""],
            "n_buckets": [0, -1, 5, 10**9, 2.0, "x", True, NAN],
        }[field]
    )
    if field == "n_buckets":
        kw["regime"] = "small_n"
    refuses("dp_kemeny_aggregate", lambda: kemeny.dp_kemeny_aggregate(R, **kw, rng=0), field)


@FEW
@given(
    e=st.floats(1e-3, 1e3),
    d=st.sampled_from([0.0, 1e-9, 0.1]),
    n=st.integers(1, 8),
    m=st.integers(1, 6),
    regime=st.sampled_from(["auto", "large_n", "small_n"]),
    seed=st.integers(0, 99),
)
def test_dp_kemeny_answers_finite(e, d, n, m, regime, seed):
    r = valid_ranks(n, m, seed)
    res = answers(
        "dp_kemeny_aggregate",
        lambda: kemeny.dp_kemeny_aggregate(r, epsilon=e, delta=d, regime=regime, rng=seed),
    )
    assert sorted(res.order.tolist()) == list(range(m))


# ------------------------------------------------------------------------------------------
# privrank.mc (small sparse inputs only)


def small_ratings(users=8, items=6, seed=0):
    g = np.random.default_rng(seed)
    rows, cols = np.nonzero(g.random((users, items)) < 0.6)
    rows, cols = np.r_[rows, np.arange(users)], np.r_[cols, np.arange(users) % items]
    return sparse.csr_array(
        (g.integers(1, 6, len(rows)).astype(float), (rows, cols)), shape=(users, items)
    )


RAT = small_ratings()
RAT_BAD = [
    RAT.toarray(),
    [[1.0]],
    None,
    "r",
    sparse.csr_array(([NAN], ([0], [0])), shape=(1, 2)),
    sparse.csr_array(([INF], ([0], [0])), shape=(1, 2)),
    sparse.csr_array((0, 3)),
    sparse.csr_array((3, 0)),
    sparse.csr_array(np.array([[1.0, 0], [0, 0]])),
]


@SETTINGS
@given(
    field=st.sampled_from(
        [
            "ratings",
            "epsilon",
            "delta",
            "nuclear_norm",
            "n_iter",
            "row_norm",
            "solver",
            "oja_iter",
            "oja_blocks",
            "accountant",
            "schedule",
            "user_mean",
        ]
    ),
    data=st.data(),
)
def test_private_frank_wolfe_refuses(field, data):
    kw = dict(
        epsilon=1.0,
        delta=1e-5,
        nuclear_norm=2.0,
        n_iter=3,
        row_norm=2.0,
        solver="oja",
        oja_iter=5,
        accountant="gdp",
        schedule="constant",
        user_mean=None,
    )
    ratings = RAT
    pick = lambda xs: data.draw(st.sampled_from(xs))
    if field == "ratings":
        ratings = pick(RAT_BAD)
    else:
        kw[field] = pick(
            {
                "epsilon": EPS_BAD_FINITE[:-1],
                "delta": DELTA_BAD + [0.0],
                "nuclear_norm": [0, -1, NAN, INF, None, [1.0]],
                "n_iter": INT_BAD + [0],
                "row_norm": [0, -1, NAN, INF, "2", None, [2.0]],
                "solver": ["x", None, 3, ""],
                "oja_iter": INT_BAD + [0],
                "oja_blocks": INT_BAD + [0],
                "accountant": ["x", None, 3],
                "schedule": ["x", None, 3],
                "user_mean": [np.zeros(3), np.zeros((RAT.shape[0], 2))],
            }[field]
        )
    refuses("private_frank_wolfe", lambda: mc.private_frank_wolfe(ratings, **kw, rng=0), field)


@SETTINGS
@given(field=st.sampled_from(["ratings", "test_fraction", "max_per_user"]), data=st.data())
def test_split_ratings_refuses(field, data):
    kw = dict(test_fraction=0.2, max_per_user=80)
    ratings = RAT
    if field == "ratings":
        ratings = data.draw(st.sampled_from(RAT_BAD))
    else:
        kw[field] = data.draw(
            st.sampled_from(
                {"test_fraction": [-0.1, 1.0, 2.0, NAN, INF], "max_per_user": INT_BAD + [0]}[field]
            )
        )
    refuses("split_ratings", lambda: mc.split_ratings(ratings, **kw, rng=0), field)


@SETTINGS
@given(
    field=st.sampled_from(
        [
            "ratings",
            "epsilon",
            "delta",
            "row_norm",
            "nuclear_norm",
            "n_iter",
            "solver",
            "max_per_user",
        ]
    ),
    data=st.data(),
)
def test_complete_refuses(field, data):
    kw = dict(
        epsilon=1.0,
        delta=1e-5,
        n_iter=2,
        row_norm=2.0,
        nuclear_norm=None,
        solver="oja",
        max_per_user=80,
        test_fraction=0.3,
        rating_range="private",
    )
    ratings = RAT
    pick = lambda xs: data.draw(st.sampled_from(xs))
    if field == "ratings":
        ratings = pick(RAT_BAD)
    else:
        kw[field] = pick(
            {
                "epsilon": EPS_BAD_FINITE[:-1],
                "delta": DELTA_BAD + [0.0],
                "row_norm": [0, -1, NAN, INF, "2"],  # None: chosen privately
                "nuclear_norm": [0, -1, NAN, INF],
                "n_iter": [v for v in INT_BAD if v is not None] + [0],  # None: chosen
                "solver": ["x", 3],
                "max_per_user": [v for v in INT_BAD if v is not None] + [0],  # None: default
            }[field]
        )
    kw["estimator"] = "frank-wolfe"  # the options above are Frank-Wolfe's
    refuses("complete", lambda: completion.complete(ratings, **kw, rng=0), field)


@FEW
@given(
    e=st.floats(1e-2, 1e2),
    users=st.integers(2, 10),
    items=st.integers(2, 6),
    seed=st.integers(0, 99),
    solver=st.sampled_from(["oja", "oja-implicit", "exact", "oja-fresh"]),
    T=st.integers(1, 3),
)
def test_mc_answers_finite(e, users, items, seed, solver, T):
    Rr = small_ratings(users, items, seed)
    sp = answers("split_ratings", lambda: mc.split_ratings(Rr, test_fraction=0.3, rng=seed))
    fit = answers(
        "private_frank_wolfe",
        lambda: mc.private_frank_wolfe(
            sp.train,
            epsilon=e,
            delta=1e-6,
            nuclear_norm=2.0,
            n_iter=T,
            row_norm=2.0,
            solver=solver,
            oja_iter=5,
            rng=seed,
        ),
    )
    _nan_free(fit.predict(np.arange(users)))  # the predictions too, not only the stored factors


# ------------------------------------------------------------------------------------------
# privrank.datasets: malformed files

SOC = (
    "# FILE NAME: t.soc\n# TITLE: t\n# DATA TYPE: soc\n# NUMBER ALTERNATIVES: 3\n# NUMBER "
    "VOTERS: 4\n"
    "# NUMBER UNIQUE ORDERS: 2\n# ALTERNATIVE NAME 1: A\n# ALTERNATIVE NAME 2: B\n# "
    "ALTERNATIVE NAME 3: C\n3: 1,2,3\n1: 3,1,2\n"
)
TOI = "# DATA TYPE: toi\n# NUMBER ALTERNATIVES: 4\n# NUMBER VOTERS: 3\n2: 1,{2,3}\n1: 4\n"
PAIRS = "user,winner,loser,tie\n1,a,b,0\n1,b,c,1\n2,c,a,false\n"
UDATA = "1\t10\t5\t881250949\n1\t20\t3\t881250950\n2\t10\t1\t881250951\n"
MLDAT = "1::10::5::978300760\n2::20::3.5::978302109\n"
MLCSV = "userId,movieId,rating,timestamp\n1,10,4.5,964982703\n2,10,0.5,964982224\n"
JESTER = "user,joke,rating\n1,5,-9.5\n1,7,10\n2,5,0.25\n"
READERS = {
    "preflib_soc": (datasets.read_preflib, "t.soc", SOC),
    "preflib_toi": (datasets.read_preflib, "t.toi", TOI),
    "pairwise_csv": (datasets.read_pairwise_csv, "p.csv", PAIRS),
    "movielens_udata": (datasets.read_movielens, "u.data", UDATA),
    "movielens_dat": (datasets.read_movielens, "ratings.dat", MLDAT),
    "movielens_csv": (datasets.read_movielens, "ratings.csv", MLCSV),
    "jester": (datasets.read_jester, "jester.csv", JESTER),
}
READER_NAME = {
    datasets.read_preflib: "read_preflib",
    datasets.read_pairwise_csv: "read_pairwise_csv",
    datasets.read_movielens: "read_movielens",
    datasets.read_jester: "read_jester",
}


@st.composite
def mutated(draw, text):
    """Bytes of `text` spoiled in one way: truncated, a line dropped/duplicated/edited, bad
    bytes, another encoding, noise, gzip"""
    b = text.encode()
    lines = text.split("\n")
    kind = draw(
        st.sampled_from(
            [
                "truncate",
                "drop_line",
                "dup_line",
                "byte",
                "insert",
                "latin1",
                "utf16",
                "random",
                "empty",
                "header_only",
                "number",
                "gzip_truncated",
                "nul",
                "field",
            ]
        )
    )
    k = draw(st.integers(0, max(len(lines) - 2, 0)))
    if kind == "truncate":
        return kind, b[: draw(st.integers(0, len(b) - 2))]
    if kind == "drop_line":
        return kind, "\n".join(lines[:k] + lines[k + 1 :]).encode()
    if kind == "dup_line":
        return kind, "\n".join(lines[: k + 1] + lines[k:]).encode()
    if kind == "byte":
        p = draw(st.integers(0, len(b) - 1))
        return kind, b[:p] + bytes([draw(st.integers(0, 255))]) + b[p + 1 :]
    if kind == "insert":
        p = draw(st.integers(0, len(b)))
        return kind, b[:p] + draw(st.binary(min_size=1, max_size=8)) + b[p:]
    if kind == "latin1":
        return kind, (
            text.replace(lines[min(k, len(lines) - 1)], lines[min(k, len(lines) - 1)] + "é", 1)
        ).encode("latin-1")
    if kind == "utf16":
        return kind, text.encode("utf-16")
    if kind == "random":
        return kind, draw(st.binary(min_size=1, max_size=200))
    if kind == "empty":
        return kind, b""
    if kind == "header_only":
        return kind, "\n".join(
            l for l in lines if l.startswith("#") or l.startswith("user")
        ).encode()
    if kind == "number":
        digits = [p for p, c in enumerate(text) if c.isdigit()]
        p = draw(st.sampled_from(digits))
        return kind, (
            text[:p]
            + draw(
                st.sampled_from(
                    ["0", "-1", "99999999999999999999999", "1.5", "nan", "x", "", "1e400"]
                )
            )
            + text[p + 1 :]
        ).encode()
    if kind == "gzip_truncated":
        z = gzip.compress(b)
        return kind, z[: draw(st.integers(0, len(z) - 1))]
    if kind == "nul":
        p = draw(st.integers(0, len(b)))
        return kind, b[:p] + b"\x00" + b[p:]
    sep = "\t" if "\t" in text else ("::" if "::" in text else ",")
    return kind, "\n".join(l + sep + "7" if i == k + 1 else l for i, l in enumerate(lines)).encode()


def _reader_invariants(obj):
    "A file that still parses must give a consistent object"
    if isinstance(obj, datasets.Preferences):
        assert obj.n_voters == int(obj.metadata["NUMBER VOTERS"]) and obj.n_items == int(
            obj.metadata["NUMBER ALTERNATIVES"]
        )
    elif isinstance(obj, datasets.Comparisons):
        assert (obj.winner != obj.loser).all() and len(obj.user) == len(obj.winner) == len(
            obj.loser
        ) == len(obj.tie)
    elif isinstance(obj, datasets.Ratings):
        assert np.isfinite(obj.ratings.data).all() and obj.ratings.nnz > 0


@pytest.mark.parametrize("fmt", sorted(READERS))
@SETTINGS
@given(data=st.data())
def test_readers_refuse_malformed_files(fmt, data):
    reader, name, text = READERS[fmt]
    kind, blob = data.draw(mutated(text))
    fname = READER_NAME[reader]
    COUNTS[fname] += 1
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / (name + ".gz" if kind == "gzip_truncated" else name)
        path.write_bytes(blob)
        with time_limit():
            try:
                obj = reader(path)
            except ValueError as e:
                assert str(path) in str(e), f"{fname}: the message does not name the file: {e}"
                return
        _reader_invariants(
            obj
        )  # the mutation left a valid file (e.g. a harmless byte): it must read consistently


@pytest.mark.parametrize(
    "reader",
    [
        datasets.read_preflib,
        datasets.read_pairwise_csv,
        datasets.read_movielens,
        datasets.read_jester,
    ],
    ids=lambda f: f.__name__,
)
@pytest.mark.parametrize("path", [None, 3, b"/tmp/x", ["a.soc"]], ids=stable_id)
def test_readers_refuse_bad_path_types(reader, path):
    refuses(READER_NAME[reader], lambda: reader(path), "path")


@pytest.mark.parametrize(
    "reader",
    [
        datasets.read_preflib,
        datasets.read_pairwise_csv,
        datasets.read_movielens,
        datasets.read_jester,
    ],
    ids=lambda f: f.__name__,
)
def test_readers_missing_file_or_folder(reader, tmp_path):
    for p in (tmp_path / "missing.soc", tmp_path):
        COUNTS[READER_NAME[reader]] += 1
        with pytest.raises(
            OSError
        ):  # FileNotFoundError / IsADirectoryError: the CLI reports these as one line
            reader(p)


# ------------------------------------------------------------------------------------------
# the CLI: demo, aggregate FILE --method M, complete RATINGS

DEMO = str(datasets.demo_path())
METHODS = ["borda", "footrule", "kemeny", "auto", "btl"]


def run_cli(argv, cwd):
    """Run `privrank argv` in folder `cwd`; returns (status, stdout, stderr), and checks no
    file was written"""
    before = sorted(os.listdir(cwd))
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with time_limit(20):
            code = cli.main([str(a) for a in argv], out=out, err=err)
    finally:
        os.chdir(old)
    assert sorted(os.listdir(cwd)) == before, "the CLI left a file behind"
    return code, out.getvalue(), err.getvalue()


def cli_refuses(label, argv, cwd):
    COUNTS[f"cli {label}"] += 1
    code, out, err = run_cli(argv, cwd)
    assert code == 2, (argv, code, out, err)
    assert out == "", (argv, out)
    assert err.count("\n") == 1 and err.startswith("privrank: error:"), (argv, err)
    assert "unexpected error" not in err and "Traceback" not in err, (argv, err)


BAD_PRIVACY = [
    ["--epsilon", "0"],
    ["--epsilon", "-1"],
    ["--epsilon", "nan"],
    ["--epsilon", "-inf"],
    ["--epsilon", "x"],
    ["--epsilon", ""],
    ["--delta", "-0.1"],
    ["--delta", "1"],
    ["--delta", "nan"],
    ["--delta", "inf"],
    ["--delta", "x"],
    ["--model", "x"],
    ["--seed", "-1"],
    ["--seed", "1.5"],
    ["--bogus"],
    ["--epsilon"],
]


@SETTINGS
@given(bad=st.sampled_from(BAD_PRIVACY), eps_first=st.booleans())
def test_cli_demo_refuses_bad_options(bad, eps_first, tmp_path_factory):
    argv = (
        ["demo"] + (["--epsilon", "1"] if eps_first and bad[0] not in ("--epsilon",) else []) + bad
    )
    cli_refuses("demo", argv, tmp_path_factory.getbasetemp())


@SETTINGS
@given(
    method=st.sampled_from(METHODS + ["x", "", "BORDA"]), bad=st.sampled_from(BAD_PRIVACY + [[]])
)
def test_cli_aggregate_refuses_bad_options(method, bad, tmp_path_factory):
    if method in METHODS and not bad:
        bad = ["--epsilon", "0"]
    argv = (
        ["aggregate", DEMO, "--method", method]
        + ([] if bad and bad[0] in ("--epsilon", "--bogus") else ["--epsilon", "1"])
        + bad
    )
    cli_refuses("aggregate", argv, tmp_path_factory.getbasetemp())


@pytest.mark.parametrize(
    "argv",
    [
        ["aggregate", DEMO, "--method", "kemeny", "--epsilon", "1", "--model", "local"],
        [
            "aggregate",
            DEMO,
            "--method",
            "btl",
            "--model",
            "local",
            "--epsilon",
            "1",
            "--delta",
            "0.1",
        ],
        ["aggregate", DEMO, "--method", "btl", "--epsilon", "inf"],
        ["aggregate", DEMO, "--method", "borda", "--delta", "0.1"],
        ["aggregate", DEMO, "--method", "auto", "--epsilon", "1", "--delta", "1"],
        ["aggregate", "--method", "borda"],
        ["aggregate", "/nonexistent/x.soc", "--method", "borda"],
        ["aggregate", "/nonexistent", "--method", "borda"],
        ["aggregate", DEMO + ".txt", "--method", "borda"],
        [],
        ["bogus"],
        ["--json"],
        ["complete"],
        ["complete", DEMO],
    ],
    ids=lambda a: " ".join(a[:1] + a[2:]),
)
def test_cli_refuses_bad_commands(argv, tmp_path):
    cli_refuses(argv[0] if argv else "none", argv, tmp_path)


@pytest.mark.parametrize("fmt", ["preflib_soc", "preflib_toi", "pairwise_csv"])
@SETTINGS
@given(data=st.data(), method=st.sampled_from(METHODS), private=st.booleans())
def test_cli_aggregate_malformed_files(fmt, data, method, private):
    _, name, text = READERS[fmt]
    kind, blob = data.draw(mutated(text))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / (name + ".gz" if kind == "gzip_truncated" else name)
        path.write_bytes(blob)
        argv = ["aggregate", path, "--method", method] + (
            ["--epsilon", "1", "--seed", "0"] if private else []
        )
        try:
            datasets.read_preflib(path) if fmt != "pairwise_csv" else datasets.read_pairwise_csv(
                path
            )
        except (ValueError, OSError):
            cli_refuses("aggregate", argv, d)
            return
        COUNTS["cli aggregate"] += (
            # still a valid file: the CLI answers 0 or refuses cleanly (e.g. borda on
            # comparisons)
            1
        )
        code, out, err = run_cli(argv, d)
        assert (code == 0 and err == "" and out) or (
            code == 2
            and out == ""
            and err.startswith("privrank: error:")
            and err.count("\n") == 1
            and "unexpected" not in err
        ), (argv, code, out, err)


CLI_COMPLETE_BAD = [
    ["--epsilon", "0"],
    ["--epsilon", "-1"],
    ["--epsilon", "nan"],
    ["--epsilon", "inf"],
    ["--delta", "-0.1"],
    ["--delta", "1"],
    ["--delta", "nan"],
    ["--delta", "0"],
    ["--iterations", "0"],
    ["--iterations", "-1"],
    ["--row-norm", "0"],
    ["--row-norm", "nan"],
    ["--row-norm", "inf"],
    ["--nuclear-norm", "nan"],
    ["--nuclear-norm", "-1"],
    ["--solver", "x"],
    ["--max-per-user", "0"],
    ["--seed", "x"],
]


@SETTINGS
@given(bad=st.sampled_from(CLI_COMPLETE_BAD))
def test_cli_complete_refuses_bad_options(bad, tmp_path_factory):
    d = tmp_path_factory.getbasetemp() / "complete_opts"
    d.mkdir(exist_ok=True)
    f = d / "u.data"
    if not f.exists():
        f.write_text(UDATA * 1)
    opts = dict(zip(["--epsilon", "--delta"], ["1", "1e-6"]))
    opts[bad[0]] = bad[1]
    argv = ["complete", f] + [x for kv in opts.items() for x in kv]
    cli_refuses("complete", argv, d)


@pytest.mark.parametrize("fmt", ["movielens_udata", "movielens_dat", "movielens_csv", "jester"])
@SETTINGS
@given(data=st.data())
def test_cli_complete_malformed_files(fmt, data):
    reader, name, text = READERS[fmt]
    kind, blob = data.draw(mutated(text))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / (name + ".gz" if kind == "gzip_truncated" else name)
        path.write_bytes(blob)
        if blob[:2] == b"\x1f\x8b":
            try:
                with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
                    fh.readline()
            except (EOFError, zlib.error):
                pass  # a gzip stream cut before its first line: must be refused (CLI_FIXED)
        try:
            cli.load_ratings(path)
        except (ValueError, OSError):
            pass
        else:
            # a mutation that left a valid file; small valid files are covered by the xfail
            # below
            return
        cli_refuses(
            "complete", ["complete", path, "--epsilon", "1", "--delta", "1e-6", "--seed", "0"], d
        )


def test_cli_valid_runs_still_answer(tmp_path):
    "The guards above do not break the CLI: valid runs exit 0 with output and no stderr"
    for argv in (
        ["aggregate", DEMO, "--method", "borda", "--epsilon", "1", "--seed", "0"],
        ["aggregate", DEMO, "--method", "btl", "--json"],
    ):
        COUNTS["cli aggregate"] += 1
        code, out, err = run_cli(argv, tmp_path)
        assert code == 0 and out and not err, (argv, code, err)


# ------------------------------------------------------------------------------------------
# known defects in modules owned by others: strict xfail, so a fix is noticed (then drop the mark)


def _huge_soc(tmp):
    p = Path(tmp) / "huge_voters.soc"
    p.write_text(
        "# DATA TYPE: soc\n# NUMBER ALTERNATIVES: 2\n# NUMBER VOTERS: "
        "1000000000000\n1000000000000: 1,2\n"
    )
    return p


def _huge_soi(tmp):
    p = Path(tmp) / "huge_m.soi"
    p.write_text("# DATA TYPE: soi\n# NUMBER ALTERNATIVES: 1000000\n# NUMBER VOTERS: 1\n1: 1\n")
    return p


def _refuses_or_correct_pairs():
    m = 10**10
    try:
        s = rr.pair_statistics([m - 2], [m - 1], [1.0], n_items=m)
    except ValueError as e:  # refused by name: n_items beyond what the BTL solvers hold
        assert "`n_items`" in str(e), e
        return
    assert (s.i.tolist(), s.j.tolist()) == ([m - 2], [m - 1]), (
        f"pair ({m - 2}, {m - 1}) came back as ({s.i}, {s.j})"
    )


def _sparse_design_valid(m):
    u, a, b = rr.sparse_design(50, m, 2, rng=0)
    assert ((0 <= a) & (a < b) & (b < m)).all(), "pairs outside 0 <= i < j < m"


BUGS = [
    # (id, function, call, names or None for "must not raise / must be right", reason)
    (
        "pair_statistics-int64-overflow",
        "pair_statistics",
        _refuses_or_correct_pairs,
        None,
        "rr.pair_statistics: key = i*m + j overflows int64 for n_items > ~3.04e9 and "
        "silently returns wrong pairs "
        "(n_items=10**10, i=[m-2], j=[m-1] -> i=776627962, j=1452241919); refuse m*m >= "
        "2**63 naming `n_items` or key by np.unique on (i, j)",
    ),
    (
        "sparse_design-int64-overflow",
        "sparse_design",
        lambda: _sparse_design_valid(4 * 10**9),
        None,
        "rr.sparse_design: _pair_index a*(2m-a-1) overflows int64 for n_items > ~3.04e9: "
        "n_items=4e9 returns pairs outside 0<=i<j<m",
    ),
    (
        "sparse_design-huge-m-message",
        "sparse_design",
        lambda: rr.sparse_design(1, 10**10, 3, rng=0),
        ("n_items",),
        "rr.sparse_design(1, 10**10, 3): numpy's 'high is out of bounds for int64', not "
        "naming `n_items`",
    ),
    (
        "apxmed-kappa-tiny-nan",
        "private_apxmed",
        lambda: tree.private_apxmed([0, 1], 4, epsilon=1.0, kappa=1e-300, rng=0),
        None,
        "tree.level_noise_scales: kappa**(d-l) underflows to 0 for kappa=1e-300 (overflows "
        "for 1e300): w/w.sum() gives inf/NaN "
        "scales and private_apxmed returns NaN gamma silently; normalise in log space or "
        "refuse such kappa naming `kappa`",
    ),
    (
        "apxmed-kappa-huge-nan",
        "private_apxmed",
        lambda: tree.private_apxmed([0, 1], 4, epsilon=1.0, kappa=1e300, rng=0),
        None,
        "tree.level_noise_scales: kappa=1e300 overflows kappa**(d-l) to inf; NaN gamma "
        "returned silently",
    ),
    (
        "position_costs-kappa-nan",
        "private_position_costs",
        lambda: tree.private_position_costs(
            np.array([[0, 1, 2, 3]]), epsilon=1.0, kappa=1e-300, rng=0
        ),
        None,
        "tree.private_position_costs shares level_noise_scales: kappa=1e-300 gives a NaN "
        "gamma silently",
    ),
    (
        "apxmed-epsilon-subnormal-nan",
        "private_apxmed",
        lambda: tree.private_apxmed([0, 1, 2, 3], 4, epsilon=1e-320, rng=0),
        ("epsilon",),
        "tree.private_apxmed(epsilon=1e-320): the Laplace scale l1/(eps w) overflows to inf "
        "and gamma has NaN (inf - inf); "
        "refuse an epsilon whose noise scale is not finite, naming `epsilon`",
    ),
    (
        "apxmed-epsilon-array",
        "private_apxmed",
        lambda: tree.private_apxmed([0], 4, epsilon=[1.0, 2.0], rng=0),
        ("epsilon",),
        "core.check_epsilon accepts 1-D per-user arrays; private_apxmed (central) then "
        "silently broadcasts them against the "
        "tree levels and returns a result. Central mechanisms must require a scalar epsilon "
        "(e.g. check_epsilon(..., scalar=True))",
    ),
    (
        "range_count_tree-epsilon-array",
        "range_count_tree",
        lambda: tree.range_count_tree([0], 4, epsilon=[1.0, 2.0], rng=0),
        ("epsilon",),
        "range_count_tree(epsilon=[1, 2]): numpy broadcast error not naming `epsilon` "
        "(per-user arrays pass check_epsilon)",
    ),
    (
        "pfw-epsilon-array",
        "private_frank_wolfe",
        lambda: mc.private_frank_wolfe(
            RAT, epsilon=[1.0, 2.0], delta=1e-5, nuclear_norm=2.0, n_iter=2, row_norm=2.0, rng=0
        ),
        ("epsilon",),
        "private_frank_wolfe(epsilon=[1, 2]): 'truth value of an array is ambiguous', not "
        "naming `epsilon`",
    ),
    (
        "fit_btl-huge-y",
        "fit_btl",
        lambda: btl.fit_btl([0, 1, 2, 0], [1, 2, 0, 2], [1e308, -1e308, 1e308, 1.0], n_items=3),
        ("y",),
        "btl.fit_btl with finite but huge debiased y (1e308): FloatingPointError('the BTL "
        "solver produced a non-finite "
        "estimate'), not ValueError; refuse |y| whose squares overflow, naming `y`",
    ),
    (
        "private_btl-tiny-epsilon",
        "private_btl",
        lambda: btl.private_btl(
            [0, 1, 2, 0], [1, 2, 0, 2], [1, 0, 1, 1], [0, 0, 1, 1], n_items=3, epsilon=1e-300, rng=0
        ),
        ("epsilon",),
        "btl.private_btl(epsilon=1e-300): debiased outcomes ~1e300, (z1-z0)^2 overflows, "
        "FloatingPointError; the CLI prints "
        "'unexpected error' for `aggregate demo.soc --method btl --epsilon 1e-300`. Work in "
        "a scaled form or refuse, naming `epsilon`",
    ),
    (
        "composed_user_epsilon-huge-n_users",
        "composed_user_epsilon",
        lambda: rr.composed_user_epsilon([0], epsilon=1.0, n_users=10**12),
        ("n_users",),
        "composed_user_epsilon(n_users=10**12): n_users is not validated (check_int) nor "
        "capped: MemoryError",
    ),
    (
        "composed_user_epsilon-huge-id",
        "composed_user_epsilon",
        lambda: rr.composed_user_epsilon([10**12], epsilon=1.0),
        ("user",),
        "composed_user_epsilon(user=[10**12]): np.bincount over ids allocates 7 TiB: MemoryError",
    ),
    (
        "composed_user_epsilon-n_users-float",
        "composed_user_epsilon",
        lambda: rr.composed_user_epsilon([0], epsilon=1.0, n_users=2.5),
        ("n_users",),
        "composed_user_epsilon(n_users=2.5): numpy TypeError not naming `n_users`; "
        "n_users=-1 says '`user` must be < -1'",
    ),
    (
        "privatize-huge-user-id",
        "privatize",
        lambda: rr.privatize([0], [1], [1], [10**12], epsilon=1.0, rng=0),
        ("user",),
        "rr.privatize(user=[10**12]): np.bincount(user) allocates 7 TiB: MemoryError; "
        "private_btl likewise",
    ),
    (
        "sparse_design-huge-n_users",
        "sparse_design",
        lambda: rr.sparse_design(10**12, 3, 1, rng=0),
        ("n_users",),
        "rr.sparse_design(n_users=10**12): MemoryError; refuse outputs beyond a size cap, "
        "naming the parameter",
    ),
    (
        "fit_btl-huge-n_items",
        "fit_btl",
        lambda: btl.fit_btl([0, 1], [1, 0], [1, 0], n_items=10**9),
        ("n_items",),
        "btl.fit_btl(n_items=10**9) with 2 items compared: connected_components / theta "
        "allocate O(m): MemoryError (3.7 GiB)",
    ),
    (
        "range_count_tree-huge-m",
        "range_count_tree",
        lambda: tree.range_count_tree([0, 1], 10**12, epsilon=1.0, rng=0),
        ("n_items",),
        "tree.range_count_tree(n_items=10**12): np.bincount(minlength=2**d) allocates 8 "
        "TiB: MemoryError; refuse, naming `n_items`",
    ),
    (
        "private_apxmed-huge-m",
        "private_apxmed",
        lambda: tree.private_apxmed([0, 1], 10**12, epsilon=1.0, rng=0),
        ("n_items",),
        "tree.private_apxmed(n_items=10**12): MemoryError; refuse, naming `n_items`",
    ),
    (
        "pfw-huge-n_iter",
        "private_frank_wolfe",
        lambda: mc.private_frank_wolfe(
            RAT, epsilon=1.0, delta=1e-5, nuclear_norm=2.0, n_iter=10**12, row_norm=2.0, rng=0
        ),
        ("n_iter",),
        "mc.private_frank_wolfe(n_iter=10**12): MemoryError (and oja_iter=10**12 hangs); "
        "cap n_iter / oja_iter",
    ),
    (
        "pfw-huge-row_norm",
        "private_frank_wolfe",
        lambda: mc.private_frank_wolfe(
            RAT, epsilon=1.0, delta=1e-5, nuclear_norm=2.0, n_iter=2, row_norm=1e200, rng=0
        ),
        ("row_norm",),
        "mc.private_frank_wolfe(row_norm=1e200): row_norm ** 2 * z raises OverflowError "
        "(the CLI prints 'unexpected error')",
    ),
    (
        "pfw-tiny-row_norm-nan",
        "private_frank_wolfe",
        lambda: mc.private_frank_wolfe(
            RAT, epsilon=1.0, delta=1e-5, nuclear_norm=2.0, n_iter=2, row_norm=1e-200, rng=0
        ),
        None,
        "mc.private_frank_wolfe(row_norm=1e-200): sigma underflows and the returned "
        "coefficients are NaN, silently",
    ),
    (
        "pfw-user_mean-nan",
        "private_frank_wolfe",
        lambda: mc.private_frank_wolfe(
            RAT,
            epsilon=1.0,
            delta=1e-5,
            nuclear_norm=2.0,
            n_iter=2,
            row_norm=2.0,
            user_mean=np.full(RAT.shape[0], NAN),
            rng=0,
        ),
        ("user_mean",),
        "mc._check_fw_args accepts a NaN user_mean: every prediction is NaN; (strings give "
        "numpy's 'could not convert')",
    ),
    (
        "pfw-nuclear_norm-str",
        "private_frank_wolfe",
        lambda: mc.private_frank_wolfe(
            RAT, epsilon=1.0, delta=1e-5, nuclear_norm="2", n_iter=2, row_norm=2.0, rng=0
        ),
        ("nuclear_norm",),
        "mc._check_fw_args(nuclear_norm='2'): TypeError \"'>' not supported between 'str' "
        "and 'int'\", not naming `nuclear_norm`",
    ),
    (
        "pfw-accountant-list",
        "private_frank_wolfe",
        lambda: mc.private_frank_wolfe(
            RAT,
            epsilon=1.0,
            delta=1e-5,
            nuclear_norm=2.0,
            n_iter=2,
            row_norm=2.0,
            accountant=[],
            rng=0,
        ),
        ("accountant",),
        "mc.noise_multiplier(accountant=[]): TypeError 'unhashable type: list', not naming "
        "`accountant`",
    ),
    (
        "split_ratings-test_fraction-str",
        "split_ratings",
        lambda: mc.split_ratings(RAT, test_fraction="0.1", rng=0),
        ("test_fraction",),
        "mc.split_ratings(test_fraction='0.1' or None): TypeError from '<=', not naming "
        "`test_fraction` (an array: 'ambiguous')",
    ),
    (
        "complete-no-test-ratings-nan",
        "complete",
        lambda: completion.complete(
            RAT, epsilon=1.0, delta=1e-5, evaluate=True, rng=0, rating_range="private"
        ),
        ("test_fraction",),
        "complete on a small matrix: test_fraction=0.01 holds out 0 ratings and "
        "test_rmse / baseline_rmse_user_mean are NaN, "
        "silently (the CLI prints 'test RMSE nan'); refuse (naming `test_fraction`) or report None",
    ),
    (
        "kemeny_aggregate-solver-list",
        "kemeny_aggregate",
        lambda: kemeny.kemeny_aggregate(R, solver=["exact"]),
        ("solver",),
        "kemeny._solve: dict.get(solver) with a list raises TypeError 'unhashable type', "
        "not naming `solver` (dp_kemeny_aggregate too)",
    ),
    (
        "kendall-ragged",
        "kendall_tau_distance",
        lambda: core.kendall_tau_distance([[0, 1], [0]], [0, 1]),
        ("a",),
        "core._pair calls np.asarray before check_ranks: a ragged list gives numpy's "
        "'inhomogeneous shape' message, not naming `a`",
    ),
    (
        "kemeny_cost-ragged",
        "kemeny_cost",
        lambda: kemeny.kemeny_cost([[0, 1], [1]], [0, 1]),
        ("w",),
        "kemeny.check_weights: ragged `w` gives numpy's 'inhomogeneous shape' message, not "
        "naming `w`",
    ),
    (
        "composed_user_epsilon-mismatch",
        "composed_user_epsilon",
        lambda: rr.composed_user_epsilon([0, 1], epsilon=[1.0, 2.0, 3.0]),
        ("epsilon",),
        "rr.composed_user_epsilon: epsilon of length 3 for 2 comparisons gives numpy's "
        "broadcast message, not naming `epsilon`",
    ),
    (
        "debias-mismatch",
        "debias",
        lambda: rr.debias([0, 1, 1], epsilon=[1.0, 2.0]),
        ("epsilon",),
        "rr.debias: epsilon (2,) against y_tilde (3,) gives numpy's broadcast message, not "
        "naming `epsilon`",
    ),
    (
        "inverse_variance_weights-mismatch",
        "inverse_variance_weights",
        lambda: rr.inverse_variance_weights(epsilon=[1.0, 2.0], p=[0.5] * 3),
        ("epsilon", "p"),
        "rr.inverse_variance_weights: epsilon (2,) against p (3,) gives numpy's broadcast message",
    ),
    (
        "pair_statistics-n_items-None",
        "pair_statistics",
        lambda: rr.pair_statistics([0], [1], [1.0], n_items=None),
        ("n_items",),
        "rr.pair_statistics(n_items=None): _check_pairs allows None, then int(None) raises "
        "a TypeError not naming `n_items`",
    ),
    (
        "composed_user_epsilon-inf-nan",
        "composed_user_epsilon",
        lambda: rr.composed_user_epsilon([0, 0], epsilon=INF, n_users=3),
        None,
        "rr.composed_user_epsilon(user, epsilon=inf, n_users): e * bincount gives inf * 0 = "
        "NaN for users with no comparisons "
        "(returns [inf, nan, nan]); use np.where(count > 0, e * count, 0)",
    ),
    (
        "randomized_response-shape",
        "randomized_response",
        lambda: _rr_shape(),
        None,
        "rr.randomized_response(y of shape (3,), epsilon of shape (1, 3)) returns shape (1, "
        "3): the docstring promises "
        "'same shape as `y`'; require np.broadcast_shapes(p.shape, y.shape) == y.shape, "
        "naming `epsilon`",
    ),
]


def _rr_shape():
    try:
        out = rr.randomized_response([0, 1, 1], epsilon=[[1.0, 2.0, 3.0]], rng=0)
    except (ValueError, TypeError) as e:
        assert "`epsilon`" in str(e)
        return
    assert out.shape == (3,), f"output shape {out.shape} differs from y's (3,)"


def _csv01():
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "p.csv"
        p.write_text("user,winner,loser\n1,01,1\n1,2,3\n")
        c = datasets.read_pairwise_csv(p)
        assert (c.winner != c.loser).all(), "a self-comparison was accepted"


CORE_FIXED = [  # defects found by this file and fixed in 00_core: now ordinary tests
    (
        "dp_borda-epsilon-array",
        "dp_borda_aggregate",
        lambda: core.dp_borda_aggregate(R, epsilon=[1.0, 2.0], rng=0),
        ("epsilon",),
        "dp_borda_aggregate(epsilon=[1, 2]): TypeError 'only 0-dimensional arrays can be "
        "converted to Python scalars', not naming `epsilon`",
    ),
    (
        "analytic_gaussian_sigma-epsilon-array",
        "analytic_gaussian_sigma",
        lambda: core.analytic_gaussian_sigma(epsilon=[1.0, 2.0], delta=0.1),
        ("epsilon",),
        "analytic_gaussian_sigma(epsilon=[1, 2], delta=0.1): TypeError 'only 0-dimensional "
        "arrays ...', not naming `epsilon`",
    ),
    (
        "sample_plackett_luce-huge-n",
        "sample_plackett_luce",
        lambda: core.sample_plackett_luce([1.0, 2.0], 10**12, rng=0),
        ("n",),
        "sample_plackett_luce(n=10**12): MemoryError (14.6 TiB) instead of refusing before "
        "allocating; cap n*m, naming `n`",
    ),
    (
        "dp_kemeny-epsilon-array",
        "dp_kemeny_aggregate",
        lambda: kemeny.dp_kemeny_aggregate(R, epsilon=[1.0], delta=0.1, rng=0),
        ("epsilon",),
        "dp_kemeny_aggregate(epsilon=[1.0]): TypeError from math, not naming `epsilon`",
    ),
]


@pytest.mark.parametrize(
    "fname,call,names", [pytest.param(f, c, n, id=i) for i, f, c, n, why in CORE_FIXED]
)
def test_core_fixed_defects(fname, call, names):
    refuses(fname, call, *names)


def test_read_pairwise_csv_labels_are_strings():
    """Once '1,01,1' was refused as a self-comparison when the labels happened to parse as
    ints; labels are strings now (issue 11 item 8):"""
    "'01' and '1' are two items whatever the other rows hold, and a true self-comparison is refused"
    COUNTS["read_pairwise_csv"] += 1
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "p.csv"
        p.write_text("user,winner,loser\n1,01,1\n1,2,3\n")
        c = datasets.read_pairwise_csv(p)
        assert sorted(map(str, c.item_ids)) == ["01", "1", "2", "3"]
        p.write_text("user,winner,loser\n1,01,01\n")
        with pytest.raises(ValueError, match="same item"):
            datasets.read_pairwise_csv(p)


def test_analytic_gaussian_sigma_tiny_epsilon_and_delta():
    "Fixed in 00_core: the root bracket widens, so (1e-300, 1e-300) answers with a finite sigma"
    answers(
        "analytic_gaussian_sigma",
        lambda: core.analytic_gaussian_sigma(epsilon=1e-300, delta=1e-300),
    )
    answers(
        "analytic_gaussian_sigma", lambda: core.analytic_gaussian_sigma(epsilon=1e30, delta=1e-5)
    )


# ids of BUGS entries fixed since they were found: they run as ordinary tests (the reason
# stays as the record)
FIXED = {
    "kendall-ragged",
    "pfw-epsilon-array",
    "pfw-huge-n_iter",
    "pfw-huge-row_norm",
    "pfw-tiny-row_norm-nan",
    "pfw-user_mean-nan",
    "pfw-nuclear_norm-str",
    "pfw-accountant-list",
    "split_ratings-test_fraction-str",
    "complete-no-test-ratings-nan",
    "apxmed-kappa-tiny-nan",
    "apxmed-kappa-huge-nan",
    "position_costs-kappa-nan",
    "apxmed-epsilon-array",
    "range_count_tree-epsilon-array",
    "range_count_tree-huge-m",
    "private_apxmed-huge-m",
    "kemeny_aggregate-solver-list",
    "kemeny_cost-ragged",
    "apxmed-epsilon-subnormal-nan",
    "pair_statistics-int64-overflow",
    "sparse_design-int64-overflow",
    "sparse_design-huge-m-message",
    "composed_user_epsilon-huge-n_users",
    "composed_user_epsilon-huge-id",
    "composed_user_epsilon-n_users-float",
    "privatize-huge-user-id",
    "sparse_design-huge-n_users",
    "fit_btl-huge-n_items",
    "fit_btl-huge-y",
    "private_btl-tiny-epsilon",
    "composed_user_epsilon-mismatch",
    "debias-mismatch",
    "inverse_variance_weights-mismatch",
    "pair_statistics-n_items-None",
    "composed_user_epsilon-inf-nan",
    "randomized_response-shape",
}


def _known(i, why, fixed):
    "An ordinary test once fixed, a strict xfail until then (an unnoticed fix XPASSes and fails)"
    return () if i in fixed else pytest.mark.xfail(strict=True, reason=why)


@pytest.mark.parametrize(
    "fname,call,names",
    [pytest.param(f, c, n, id=i, marks=_known(i, why, FIXED)) for i, f, c, n, why in BUGS],
)
def test_known_defects(fname, call, names):
    if call == "csv01":
        COUNTS[fname] += 1
        _csv01()
        return
    if names is None:
        answers(
            fname,
            call,
            # must answer without NaN (or raise ValueError/TypeError naming something, see the
            # reason)
        )
    else:
        refuses(fname, call, *names)


CLI_BUGS = [
    (
        "aggregate-huge-m-footrule",
        lambda d: ["aggregate", _huge_soi(d), "--method", "footrule"],
        "a .soi with NUMBER ALTERNATIVES 10**6 and one short order: footrule builds m x m "
        "costs: MemoryError, 'unexpected error'",
    ),
    (
        "aggregate-huge-m-kemeny",
        lambda d: ["aggregate", _huge_soi(d), "--method", "kemeny"],
        "same file, kemeny: preference_matrix m x m: MemoryError, 'unexpected error'",
    ),
    (
        "aggregate-huge-m-btl",
        lambda d: ["aggregate", _huge_soi(d), "--method", "btl"],
        "same file, btl: ranks_to_comparisons / triu_indices m x m: MemoryError, "
        "'unexpected error'",
    ),
    (
        "aggregate-btl-tiny-epsilon",
        lambda d: ["aggregate", DEMO, "--method", "btl", "--epsilon", "1e-300"],
        "FloatingPointError from the BTL solver reaches the user as 'unexpected error'",
    ),
    (
        "complete-huge-iterations",
        lambda d: [
            "complete",
            _udata(d),
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
            "--iterations",
            "1000000000000",
        ],
        "--iterations 10**12: MemoryError, 'unexpected error'; cap --iterations",
    ),
    (
        "complete-huge-row-norm",
        lambda d: [
            "complete",
            _udata(d),
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
            "--row-norm",
            "1e200",
        ],
        "--row-norm 1e200: OverflowError, 'unexpected error'",
    ),
    (
        "complete-small-file-nan",
        lambda d: ["complete", _udata(d), "--epsilon", "1", "--delta", "1e-6"],
        "a valid 3-rating file: exit 0 and 'test RMSE nan on 0 held-out ratings' "
        "(complete() returns NaN); should refuse (exit 2)",
    ),
]


def _write(d, name, blob):
    p = Path(d) / name
    p.write_bytes(blob)
    return p


def _udata(d):
    p = Path(d) / "u.data"
    p.write_text(UDATA)
    return p


CLI_FIXED = [  # defects found by this file and fixed in 09_cli: now ordinary tests
    (
        "aggregate-borda-epsilon-inf",
        lambda d: ["aggregate", DEMO, "--method", "borda", "--epsilon", "inf", "--json"],
        "--epsilon inf is accepted for borda (dp_borda allows inf): text output then fails "
        "with 'unsupported format string "
        "passed to NoneType.__format__' (and --json exits 0 with a 'central' result whose "
        "epsilon is null); refuse in the CLI",
    ),
    (
        "complete-truncated-gzip",
        lambda d: [
            "complete",
            _write(d, "r.data.gz", b"\x1f\x8b"),
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
        ],
        "cli._first_line opens a gzip stream cut before its first line and gzip raises "
        "EOFError, which main() does not catch: "
        "'unexpected error (EOFError)'. Catch EOFError/zlib.error there and raise "
        "ValueError naming the file",
    ),
    (
        "aggregate-huge-voters",
        lambda d: ["aggregate", _huge_soc(d), "--method", "borda"],
        "read_preflib accepts NUMBER VOTERS up to 2**62 on one compact line; "
        "Preferences.ranks then np.repeat's 10**12 rows: "
        "MemoryError, 'unexpected error'. Cap the expansion (or refuse naming NUMBER VOTERS)",
    ),
]


@pytest.mark.parametrize("make", [pytest.param(mk, id=i) for i, mk, why in CLI_FIXED])
def test_cli_fixed_defects(make, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    argv = make(tmp_path)
    cli_refuses(argv[0], argv, work)


CLI_BUGS_FIXED = {  # ids of CLI_BUGS entries fixed since: ordinary tests
    "aggregate-huge-m-kemeny",
    "aggregate-huge-m-btl",
    "aggregate-huge-m-footrule",
    "complete-huge-iterations",
    "complete-huge-row-norm",
    "complete-small-file-nan",
    "aggregate-btl-tiny-epsilon",
}


@pytest.mark.parametrize(
    "make",
    [pytest.param(mk, id=i, marks=_known(i, why, CLI_BUGS_FIXED)) for i, mk, why in CLI_BUGS],
)
def test_cli_known_defects(make, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    argv = make(tmp_path)
    cli_refuses(argv[0], argv, work)


# ------------------------------------------------------------------------------------------
# issue 11: safe by construction (core, kemeny, audit; the other modules' classes are in
# tests/test_hostile_*.py)
TINY = 5e-324  # the smallest positive float


# item 2: the exact samplers accept exactly what they can draw from exactly, and refuse the
# rest by name
SCALES_OK = [
    1,
    2,
    Fraction(3, 2),
    0.1,
    1e-30,
    TINY,
    2**20,
    2**40,
    2**52,
    np.int64(7),
    np.float32(0.5),
]
SCALES_BAD = [0, -1, -0.5, NAN, INF, -INF, True, "1", None, 1j, [1], 2**52 + 1, 1e300]


@pytest.mark.parametrize("law", ["discrete_laplace", "discrete_gaussian"])
@SETTINGS
@given(
    par=st.sampled_from(SCALES_OK),
    size=st.sampled_from([0, 1, 7, (2, 3)]),
    seed=st.integers(0, 2**32),
)
def test_exact_samplers_answer_integers(law, par, size, seed):
    if law == "discrete_gaussian" and isinstance(par, int) and par >= 2**20:
        par = par**2  # up to sigma^2 = 2^104
    z = answers(law, lambda: getattr(core, law)(par, size, rng=seed))
    assert z.dtype == np.int64 and z.shape == ((size,) if isinstance(size, int) else size)


@pytest.mark.parametrize(
    "law,name", [("discrete_laplace", "scale"), ("discrete_gaussian", "sigma2")]
)
@pytest.mark.parametrize("par", SCALES_BAD, ids=stable_id)
def test_exact_samplers_refuse(law, name, par):
    if law == "discrete_gaussian" and par == 2**52 + 1:
        par = 2**104 + 1
    refuses(law, lambda: getattr(core, law)(par, 3, rng=0), name)


@pytest.mark.parametrize("size", [-1, 1.5, "3", (2, -1), 2**40])
def test_exact_samplers_refuse_sizes(size):
    refuses("discrete_laplace", lambda: core.discrete_laplace(1, size, rng=0), "size")


# item 3: the switch refuses what it does not know, is local to a thread, and is recorded in
# every private result
@pytest.mark.parametrize("value", ["Exact", "exakt", "float", "EXACT", " exact", "1", "true"])
def test_noise_switch_refuses_unknown_values(value, monkeypatch):
    monkeypatch.setenv("PRIVRANK_NOISE", value)
    msg = refuses("noise_mode", core.noise_mode)
    assert "PRIVRANK_NOISE" in msg and "'fast', 'exact'" in msg
    refuses("set_noise", lambda: core.set_noise(value), "mode")
    refuses("use_noise", lambda: core.use_noise(value).__enter__(), "mode")
    refuses(
        "dp_borda_aggregate", lambda: core.dp_borda_aggregate(R, epsilon=1.0, rng=0)
    )  # a run cannot fall back to "fast"


def test_noise_mode_is_local_to_a_thread():
    COUNTS["use_noise"] += 1
    seen, go, done = {}, threading.Event(), threading.Event()

    def other():
        go.wait()
        seen["other"] = core.noise_mode()
        seen["borda"] = core.dp_borda_aggregate(R, epsilon=1.0, rng=0).noise
        done.set()

    th = threading.Thread(target=other)
    th.start()
    with core.use_noise("exact"):
        go.set()
        done.wait(10)
        assert core.dp_borda_aggregate(R, epsilon=1.0, rng=0).noise == "exact"
    th.join()
    assert seen == {"other": "fast", "borda": "fast"}


@pytest.mark.parametrize("mode", ["fast", "exact"])
def test_private_results_record_the_noise_mode(mode):
    COUNTS["noise recorded"] += 1
    r = valid_ranks(20, 5)
    with core.use_noise(mode):
        results = [
            core.dp_borda_aggregate(r, epsilon=1.0, rng=0),
            core.dp_borda_aggregate(r, epsilon=1.0, delta=1e-6, model="local", rng=0),
            kemeny.dp_kemeny_aggregate(r, epsilon=1.0, delta=0.0, rng=0),
            kemeny.dp_kemeny_aggregate(r, epsilon=1.0, delta=1e-6, rng=0),
            kemeny.noisy_margins_instance(r, epsilon=1.0, delta=0.0, rng=0),
            kemeny.bucketed_instance(r, epsilon=1.0, delta=0.0, rng=0),
            kemeny.clipped_noisy_instance(r, epsilon=1.0, delta=1e-6, rng=0),
            rr.privatize([0, 1], [1, 2], [1, 0], [0, 1], epsilon=[1.0, 2.0], rng=0),
            btl.dp_btl_aggregate(btl.ranks_to_comparisons(r), epsilon=1.0, rng=0, model="local"),
        ]
    assert [x.noise for x in results] == [mode] * len(results)
    assert core.borda_aggregate(r).noise == "none"


# item 4: epsilon = inf is not private, and says so
def test_borda_epsilon_inf_is_not_private():
    COUNTS["dp_borda_aggregate"] += 1
    res = core.dp_borda_aggregate(R, epsilon=INF, rng=0)
    assert (
        not res.private and res.model == "none" and res.noise == "none" and math.isinf(res.epsilon)
    )


# item 5: every private entry point answers (finite) or refuses `epsilon`/`delta` by name,
# down to the smallest positive float
EPS_RANGE = st.one_of(
    st.sampled_from([TINY, 1e-320, 1e-300, 1e-100, 1e-16, 1e-8, 1e8, 1e100, 1e300, 1.7e308]),
    st.floats(TINY, 1e308, allow_nan=False, allow_infinity=False),
)
DELTA_RANGE = st.one_of(
    st.just(0.0),
    st.sampled_from([TINY, 1e-300, 1e-12, 0.5, 1 - 1e-16]),
    st.floats(TINY, 0.999, allow_nan=False),
)
PRIVATE = {
    "dp_borda_aggregate": lambda r, e, d: core.dp_borda_aggregate(r, epsilon=e, delta=d, rng=0),
    "dp_borda_aggregate(local)": lambda r, e, d: core.dp_borda_aggregate(
        r, epsilon=e, delta=d, model="local", rng=0
    ),
    "dp_kemeny_aggregate": lambda r, e, d: kemeny.dp_kemeny_aggregate(r, epsilon=e, delta=d, rng=0),
    "dp_kemeny_aggregate(large_n)": lambda r, e, d: kemeny.dp_kemeny_aggregate(
        r, epsilon=e, delta=d, regime="large_n", solver="ptas", rng=0
    ),
    "bucketed_instance(B=2)": lambda r, e, d: kemeny.bucketed_instance(
        r, epsilon=e, delta=d, n_buckets=2, rng=0
    ),
    "clipped_noisy_instance": lambda r, e, d: kemeny.clipped_noisy_instance(
        r, epsilon=e, delta=d or 1e-6, rng=0
    ),
}


@pytest.mark.parametrize("fname", sorted(PRIVATE))
@pytest.mark.parametrize("mode", ["fast", "exact"])
@SETTINGS
@given(
    e=EPS_RANGE, d=DELTA_RANGE, m=st.integers(2, 6), n=st.integers(1, 30), seed=st.integers(0, 99)
)
def test_private_entry_points_answer_or_refuse_by_name(fname, mode, e, d, m, n, seed):
    r = valid_ranks(n, m, seed)
    COUNTS[fname] += 1
    with core.use_noise(mode), time_limit():
        try:
            res = PRIVATE[fname](r, e, d)
        except (ValueError, TypeError) as err:
            assert "`epsilon`" in str(err) or "`delta`" in str(err), (
                f"{fname}: refusal names neither: {err}"
            )
            return
    _nan_free(res)
    arrays = [getattr(res, k) for k in ("scores", "w") if getattr(res, k, None) is not None]
    assert all(np.isfinite(a).all() for a in arrays), (
        f"{fname}: a non-finite release at epsilon={e}, delta={d}"
    )
    if hasattr(res, "order"):
        assert np.array_equal(np.sort(res.order), np.arange(m))


@pytest.mark.parametrize("mode", ["fast", "exact"])
@SETTINGS
@given(e=EPS_RANGE, d=DELTA_RANGE, l1=st.floats(0, 1e300), l2=st.floats(0, 1e300))
def test_calibrate_noise_answers_or_refuses(mode, e, d, l1, l2):
    COUNTS["calibrate_noise"] += 1
    try:
        law, scale = core.calibrate_noise(epsilon=e, delta=d, l1=l1, l2=l2, noise=mode)
    except ValueError as err:
        assert "`epsilon`" in str(err) or "`delta`" in str(err), str(err)
        return
    assert law in ("laplace", "gaussian") and math.isfinite(scale) and scale >= 0


# item 6: arrays sized by the input are estimated and refused before they are built
def test_memory_limit_is_checked_before_allocating(monkeypatch):
    monkeypatch.setenv("PRIVRANK_MEMORY_LIMIT", "1M")
    r = valid_ranks(3, 400)
    refuses("preference_counts", lambda: core.preference_counts(r), "ranks")
    refuses(
        "dp_kemeny_aggregate",
        lambda: kemeny.dp_kemeny_aggregate(r, epsilon=1.0, delta=1e-6, rng=0),
        "ranks",
    )
    with core.use_noise("exact"):  # each voter's own integer noise: 24 n m bytes a chunk
        refuses(
            "dp_borda_aggregate(local)",
            lambda: core.dp_borda_aggregate(
                valid_ranks(5000, 40), epsilon=1.0, model="local", rng=0
            ),
            "ranks",
        )
    # the fast path draws the sum of the n reports' noise at once: m draws, no n x m array
    core.dp_borda_aggregate(valid_ranks(5000, 40), epsilon=1.0, model="local", rng=0)
    refuses("discrete_laplace", lambda: core.discrete_laplace(1, 10**6, rng=0), "size")
    monkeypatch.delenv("PRIVRANK_MEMORY_LIMIT")
    refuses("kemeny_ilp", lambda: kemeny.kemeny_ilp(np.zeros((3000, 3000))), "w")


# item 7: public helpers validate their arguments (NaN in, error out)
HELPERS = [
    ("gaussian_delta", lambda: core.gaussian_delta(epsilon=NAN, sigma=1.0), "epsilon"),
    ("gaussian_delta", lambda: core.gaussian_delta(epsilon=1.0, sigma=NAN), "sigma"),
    ("gaussian_delta", lambda: core.gaussian_delta(epsilon=1.0, sigma=0.0), "sigma"),
    (
        "gaussian_delta",
        lambda: core.gaussian_delta(epsilon=1.0, sigma=1.0, sensitivity=-1.0),
        "sensitivity",
    ),
    ("sample_laplace", lambda: core.sample_laplace(NAN, 3, rng=0), "scale"),
    ("sample_laplace", lambda: core.sample_laplace(-1.0, 3, rng=0), "scale"),
    ("sample_gaussian", lambda: core.sample_gaussian(INF, 3, rng=0), "sigma"),
    (
        "calibrate_noise",
        lambda: core.calibrate_noise(epsilon=-1.0, delta=0.0, l1=1, l2=1),
        "epsilon",
    ),
    ("calibrate_noise", lambda: core.calibrate_noise(epsilon=1.0, delta=0.0, l1=NAN, l2=1), "l1"),
    ("calibrate_noise", lambda: core.calibrate_noise(epsilon=1.0, delta=NAN, l1=1, l2=1), "delta"),
    ("sample_noise", lambda: core.sample_noise("bogus", 1.0, 3, rng=0), "law"),
    ("sample_noise", lambda: core.sample_noise("laplace", NAN, 3, rng=0), "scale"),
    ("release", lambda: core.release([1, 2], "laplace", NAN, rng=0), "scale"),
    ("release", lambda: core.release([1, 2], "bogus", 1.0, rng=0), "law"),
    ("release", lambda: core.release([1.5], "laplace", 1.0, rng=0, noise="exact"), "counts"),
    ("release", lambda: core.release(["a"], "laplace", 1.0, rng=0), "counts"),
    ("release", lambda: core.release([1], "laplace", 1.0, denom=NAN, rng=0), "denom"),
    ("release", lambda: core.release([1], "laplace", 1.0, rng=0, noise="Exact"), "noise"),
    ("snap", lambda: core.snap([1.0], 0.3), "grid"),
    ("snap", lambda: core.snap([NAN], 0.5), "x"),
    ("snap_grid", lambda: core.snap_grid(NAN, 3), "l2"),
    ("snap_grid", lambda: core.snap_grid(1.0, 0), "changed"),
    ("snapped_sensitivity", lambda: core.snapped_sensitivity(1.0, 1.0, 4, 0.5, error=NAN), "error"),
    ("float_sum_error", lambda: core.float_sum_error(0, 1.0), "n_terms"),
    ("float_sum_error", lambda: core.float_sum_error(10, NAN), "magnitude"),
    ("float_sum_error", lambda: core.float_sum_error(2**60, 1.0), "n_terms"),
    ("rr_flips", lambda: core.rr_flips(epsilon=NAN, size=3, rng=0), "epsilon"),
    ("zcdp_sigma", lambda: core.zcdp_sigma(epsilon=NAN, delta=1e-6), "epsilon"),
    ("zcdp_sigma", lambda: core.zcdp_sigma(epsilon=1.0, delta=0.0), "delta"),
    ("borda_sensitivity", lambda: core.borda_sensitivity(0), "n_items"),
    (
        "private_position_costs_from_histograms",
        lambda: tree.private_position_costs_from_histograms(np.eye(3), n_voters=1, epsilon=1),
        "histograms",
    ),
    (
        "private_position_costs_from_histograms",
        lambda: tree.private_position_costs_from_histograms(
            np.eye(3, dtype=int), n_voters=2, epsilon=1
        ),
        "histograms",
    ),
    (
        "private_position_costs_from_histograms",
        lambda: tree.private_position_costs_from_histograms(
            np.eye(3, dtype=int), n_voters=1, epsilon=NAN
        ),
        "epsilon",
    ),
    ("dp_footrule_from_costs", lambda: footrule.dp_footrule_from_costs(np.eye(3)), "costs"),
    (
        "btl.dp_btl_aggregate",
        lambda: btl.dp_btl_aggregate([[0, 0, 1]], n_items=2, epsilon=1, model="local"),
        "comparisons",
    ),
    (
        "btl.dp_btl_aggregate",
        lambda: btl.dp_btl_aggregate([[0, 5, 1]], n_items=2, epsilon=1, model="local"),
        "comparisons",
    ),
    (
        "btl.dp_btl_aggregate",
        lambda: btl.dp_btl_aggregate([[0.5, 1, 1]], n_items=2, epsilon=1, model="local"),
        "comparisons",
    ),
    (
        "btl.dp_btl_aggregate",
        lambda: btl.dp_btl_aggregate([[0, 1]], n_items=2, epsilon=1, model="local"),
        "comparisons",
    ),
    (
        "btl.dp_btl_aggregate",
        lambda: btl.dp_btl_aggregate([[0, 1, NAN]], n_items=2, epsilon=1, model="local"),
        "comparisons",
    ),
    (
        "btl.dp_btl_aggregate",
        lambda: btl.dp_btl_aggregate([[0, 1, 1]], n_items=2, epsilon=NAN, model="local"),
        "epsilon",
    ),
    (
        "btl.dp_btl_aggregate",
        lambda: btl.dp_btl_aggregate([[0, 1]], n_items=1, epsilon=1, model="local"),
        "n_items",
    ),
    (
        "btl.dp_btl_aggregate",
        lambda: btl.dp_btl_aggregate(
            [[0, 1]], n_items=2, epsilon=1, privacy_unit="person", model="local"
        ),
        "privacy_unit",
    ),
    ("fit_btl_counts", lambda: btl.fit_btl_counts(np.ones((1, 2, 2, 2)), epsilon=[1]), "counts"),
    ("fit_btl_counts", lambda: btl.fit_btl_counts(np.ones((1, 2, 2), int), epsilon=[1]), "counts"),
    (
        "fit_btl_counts",
        lambda: btl.fit_btl_counts(np.ones((1, 2, 2, 2), int), epsilon=[1]),
        "counts",
    ),
    (
        "fit_btl_counts",
        lambda: btl.fit_btl_counts(np.zeros((1, 2, 2, 2), int), epsilon=[NAN]),
        "epsilon",
    ),
    (
        "fit_btl_counts",
        lambda: btl.fit_btl_counts(np.zeros((1, 2, 2, 2), int), epsilon=[1], weighting="x"),
        "weighting",
    ),
    (
        "dp_borda_from_scores",
        lambda: core.dp_borda_from_scores([1, 2], n_voters=1, epsilon=1),
        "scores",
    ),
    (
        "dp_borda_from_scores",
        lambda: core.dp_borda_from_scores([NAN, 1], n_voters=1, epsilon=1),
        "scores",
    ),
    (
        "dp_borda_from_scores",
        lambda: core.dp_borda_from_scores(["a"], n_voters=1, epsilon=1),
        "scores",
    ),
    (
        "dp_borda_from_scores",
        lambda: core.dp_borda_from_scores([1, 0], n_voters=0, epsilon=1),
        "n_voters",
    ),
    (
        "dp_borda_from_scores",
        lambda: core.dp_borda_from_scores([1, 0], n_voters=1, epsilon=NAN),
        "epsilon",
    ),
    (
        "dp_kemeny_from_margins",
        lambda: kemeny.dp_kemeny_from_margins(np.ones((2, 2)), n_voters=1, epsilon=1),
        "margin_counts",
    ),
    (
        "dp_kemeny_from_margins",
        lambda: kemeny.dp_kemeny_from_margins(np.full((2, 2), NAN), n_voters=1, epsilon=1),
        "margin_counts",
    ),
    (
        "dp_kemeny_from_margins",
        lambda: kemeny.dp_kemeny_from_margins(np.zeros((2, 3)), n_voters=1, epsilon=1),
        "margin_counts",
    ),
    (
        "dp_kemeny_from_margins",
        lambda: kemeny.dp_kemeny_from_margins([[0, 1], [-1, 0]], n_voters=1, epsilon=1, delta=2),
        "delta",
    ),
    ("borda_sensitivity", lambda: core.borda_sensitivity(2.5), "n_items"),
    ("check_memory", lambda: core.set_memory_limit(-5), "nbytes"),
    ("local_search", lambda: kemeny.local_search(np.zeros((3, 3)), max_iter=-1), "max_iter"),
    ("local_search", lambda: kemeny.local_search(np.zeros((3, 3)), tol=NAN), "tol"),
    ("kemeny_ilp", lambda: kemeny.kemeny_ilp(np.zeros((3, 3)), time_limit=NAN), "time_limit"),
    ("kemeny_ilp", lambda: kemeny.kemeny_ilp(np.zeros((3, 3)), time_limit=-1), "time_limit"),
    ("is_bounded", lambda: kemeny.is_bounded(np.zeros((3, 3)), lo=NAN), "lo"),
    ("bucket_of", lambda: kemeny.bucket_of(5, 0), "n_buckets"),
    ("bucket_of", lambda: kemeny.bucket_of(5, 6), "n_buckets"),
    ("bucket_of", lambda: kemeny.bucket_of(0, 1), "n_items"),
    ("same_bucket_pairs", lambda: kemeny.same_bucket_pairs(4, 1.5), "n_buckets"),
    ("margin_sensitivity", lambda: kemeny.margin_sensitivity(0, 3), "n_voters"),
    (
        "margin_noise_scale",
        lambda: kemeny.margin_noise_scale(10, 3, epsilon=NAN, delta=0.0),
        "epsilon",
    ),
    ("large_n_ok", lambda: kemeny.large_n_ok(10, 3, epsilon=1.0, delta=-1.0), "delta"),
    ("bucketed_noise", lambda: kemeny.bucketed_noise(10, 5, 2, epsilon=1.0, delta=NAN), "delta"),
    ("choose_buckets", lambda: kemeny.choose_buckets(0, 5, epsilon=1.0, delta=0.0), "n_voters"),
    ("paper_buckets", lambda: kemeny.paper_buckets(10, 5, epsilon=NAN, delta=0.0), "epsilon"),
    ("clopper_pearson", lambda: audit.clopper_pearson(5, 3, 0.05), "k"),
    ("clopper_pearson", lambda: audit.clopper_pearson(1, 3, NAN), "alpha"),
    ("clopper_pearson", lambda: audit.clopper_pearson(-1, 3, 0.05), "k"),
    (
        "epsilon_from_counts",
        lambda: audit.epsilon_from_counts(1, 1, 10, 10, delta=NAN, alpha=0.1),
        "delta",
    ),
    ("exact_epsilon", lambda: audit.exact_epsilon([NAN, 1.0], [0.5, 0.5], delta=0.0), "p0"),
    (
        "audit_epsilon",
        lambda: audit.audit_epsilon(lambda d, g: d, 0.0, 1.0, delta=0.0, alpha=NAN),
        "alpha",
    ),
    ("lattice_leaks", lambda: audit.lattice_leaks([[NAN]], [[1.0]], [1.0]), "x0"),
]


@pytest.mark.parametrize(
    "fname,call,name", HELPERS, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(HELPERS)]
)
def test_public_helpers_validate(fname, call, name):
    refuses(fname, call, name)


# item 10: no public function of core, kemeny or audit modifies its arguments. Every array
# argument is passed read-only
# (an in-place write raises) and compared with a copy afterwards; the registry must cover
# every public function.
RO_R = valid_ranks(12, 5, 3)
RO_W = core.preference_matrix(RO_R)
PILOT = np.random.default_rng(0).normal(size=(20, 2))
CALLS = {
    sources: {
        "iter_chunks": lambda a: list(sources.iter_chunks(a(RO_R), chunk_rows=5)),
        "match_roles": lambda a: sources.match_roles(a(np.array([3, 1])), "ranks"),
    },
    auto: {
        "dp_aggregate": lambda a: auto.dp_aggregate(a(RO_R), epsilon=1.0, rng=0),
    },
    core: {
        "check_epsilon": lambda a: core.check_epsilon(a(np.array([0.5, 1.0]))),
        "check_ranks": lambda a: core.check_ranks(a(RO_R)),
        "dp_borda_from_scores": lambda a: core.dp_borda_from_scores(
            a(core.borda_scores(RO_R)), n_voters=len(RO_R), epsilon=1.0, rng=0
        ),
        "check_orders": lambda a: core.check_orders(a(RO_R)),
        "ranks_to_orders": lambda a: core.ranks_to_orders(a(RO_R)),
        "orders_to_ranks": lambda a: core.orders_to_ranks(a(RO_R)),
        "sample_plackett_luce": lambda a: core.sample_plackett_luce(
            a(np.linspace(1, 0, 5)), 4, rng=0
        ),
        "sample_mallows": lambda a: core.sample_mallows(
            5, 4, 0.5, center=a(np.array([2, 0, 1, 4, 3])), rng=0
        ),
        "kendall_tau_distance": lambda a: core.kendall_tau_distance(a(RO_R), a(RO_R[::-1])),
        "footrule_distance": lambda a: core.footrule_distance(a(RO_R), a(RO_R[::-1])),
        "preference_counts": lambda a: core.preference_counts(a(RO_R)),
        "preference_matrix": lambda a: core.preference_matrix(a(RO_R)),
        "borda_scores": lambda a: core.borda_scores(a(RO_R)),
        "borda_aggregate": lambda a: core.borda_aggregate(a(RO_R)),
        "dp_borda_aggregate": lambda a: (
            core.dp_borda_aggregate(a(RO_R), epsilon=1.0, rng=0),
            core.dp_borda_aggregate(a(RO_R), epsilon=1.0, model="local", rng=0),
            core.dp_borda_aggregate(
                a(RO_R), epsilon=1.0, model="local", rng=0, chunk_rows=5
            ),  # in chunks
        ),
        "release": lambda a: (
            core.release(a(np.arange(4)), "laplace", 1.0, rng=0),
            core.release(a(np.arange(4.0)), "gaussian", 1.0, rng=0, noise="exact"),
        ),
        "snap": lambda a: core.snap(a(np.array([0.3, 1.7])), 0.5),
        "rr_flips": lambda a: (
            core.rr_flips(epsilon=a(np.array([0.5, 1.0])), size=(3, 2), rng=0),
            core.rr_flips(epsilon=a(np.array([0.5, 1.0])), size=(3, 2), rng=0, noise="exact"),
        ),
    },
    kemeny: {
        "dp_kemeny_from_margins": lambda a: kemeny.dp_kemeny_from_margins(
            a(core.preference_counts(RO_R) - core.preference_counts(RO_R).T),
            n_voters=len(RO_R),
            epsilon=1.0,
            rng=0,
        ),
        "check_weights": lambda a: kemeny.check_weights(a(RO_W)),
        "check_order": lambda a: kemeny.check_order(a(np.arange(5)), 5),
        "kemeny_cost": lambda a: kemeny.kemeny_cost(a(RO_W), a(np.arange(5))),
        "reduce_instance": lambda a: kemeny.reduce_instance(a(RO_W)),
        "is_bounded": lambda a: kemeny.is_bounded(a(RO_W)),
        "kemeny_exact": lambda a: kemeny.kemeny_exact(a(RO_W)),
        "kemeny_ilp": lambda a: kemeny.kemeny_ilp(a(RO_W)),
        "indegree_order": lambda a: kemeny.indegree_order(a(RO_W)),
        "kwiksort": lambda a: kemeny.kwiksort(a(RO_W), rng=0),
        "local_search": lambda a: kemeny.local_search(a(RO_W), a(np.arange(5))),
        "kemeny_ptas": lambda a: kemeny.kemeny_ptas(a(RO_W), window=3, rng=0),
        "kemeny_aggregate": lambda a: kemeny.kemeny_aggregate(a(RO_R)),
        "noisy_margins_instance": lambda a: kemeny.noisy_margins_instance(
            a(RO_R), epsilon=1.0, delta=0.0, rng=0
        ),
        "clipped_noisy_instance": lambda a: kemeny.clipped_noisy_instance(
            a(RO_R), epsilon=1.0, delta=1e-6, rng=0
        ),
        "project_marginals": lambda a: kemeny.project_marginals(
            a(np.full((6, 6), 0.25) + 0.25 * np.eye(6)), 3, 2, max_iter=5
        ),
        "bucketed_instance": lambda a: kemeny.bucketed_instance(
            a(RO_R), epsilon=1.0, delta=1e-6, n_buckets=2, rng=0
        ),
        "dp_kemeny_aggregate": lambda a: kemeny.dp_kemeny_aggregate(
            a(RO_R), epsilon=1.0, delta=1e-6, rng=0
        ),
    },
    audit: {
        "clopper_pearson": lambda a: audit.clopper_pearson(
            a(np.array([1, 2])), a(np.array([5, 5])), 0.05
        ),
        "epsilon_from_counts": lambda a: audit.epsilon_from_counts(
            a(np.array([3])), a(np.array([1])), 10, 10, delta=0.0, alpha=0.1
        ),
        "run_mechanism": lambda a: audit.run_mechanism(
            lambda d, g: d + g.normal(size=2), a(np.zeros(2)), 3, rng=0
        ),
        **{
            k: (lambda f: lambda a: f(a(PILOT + 1), a(PILOT))(a(PILOT[:5])))(getattr(audit, k))
            for k in (
                "projection_statistic",
                "laplace_statistic",
                "raw_laplace_statistic",
                "histogram_statistic",
                "gaussian_statistic",
                "raw_gaussian_statistic",
            )
        },
        "choose_event": lambda a: audit.choose_event(
            a(np.arange(50.0)), a(np.arange(50.0) + 3), 100, delta=0.0, alpha=0.1
        ),
        "audit_epsilon": lambda a: audit.audit_epsilon(
            lambda d, g, n: d + g.laplace(size=n),
            a(np.zeros(1)),
            a(np.ones(1)),
            delta=0.0,
            n_runs=100,
            batch=True,
            rng=0,
        ),
        "exact_epsilon": lambda a: audit.exact_epsilon(
            a(np.array([0.4, 0.6])), a(np.array([0.6, 0.4])), delta=0.0
        ),
        "discrete_laplace_cdf": lambda a: audit.discrete_laplace_cdf(a(np.arange(-3, 4)), 2.0),
        "discrete_gaussian_cdf": lambda a: audit.discrete_gaussian_cdf(a(np.arange(-3, 4)), 2.0),
        "chi_square_law": lambda a: audit.chi_square_law(
            a(np.arange(-3, 4)), lambda z: audit.discrete_laplace_cdf(z, 2.0), a(np.arange(-2, 3))
        ),
        "tail_pvalue": lambda a: audit.tail_pvalue(
            a(np.arange(-3, 4)), lambda z: audit.discrete_laplace_cdf(z, 2.0), 2
        ),
        "lattice_leaks": lambda a: audit.lattice_leaks(
            a(np.ones((3, 2))), a(np.ones((3, 2))), a(np.array([0.5, 1.0]))
        ),
    },
}
NO_ARRAYS = {  # public functions that take no array argument (nothing to modify)
    sources: {"use_client"},
    auto: {"choose_aggregator", "Choice"},
    core: {
        "check_delta",
        "check_rng",
        "check_int",
        "memory_limit",
        "set_memory_limit",
        "check_memory",
        "analytic_gaussian_sigma",
        "gaussian_delta",
        "noise_mode",
        "set_noise",
        "use_noise",
        "sample_laplace",
        "sample_gaussian",
        "discrete_laplace",
        "discrete_gaussian",
        "zcdp_delta",
        "zcdp_sigma",
        "calibrate_noise",
        "sample_noise",
        "exact_noise",
        "snap_grid",
        "snapped_sensitivity",
        "float_sum_error",
        "borda_sensitivity",
        "Consensus",
        "privacy_record",
    },
    kemeny: {
        "margin_sensitivity",
        "margin_noise_scale",
        "large_n_ok",
        "NoisyInstance",
        "bucket_of",
        "same_bucket_pairs",
        "bucketed_noise",
        "choose_buckets",
        "paper_buckets",
        "cost_error_bound",
        "solver_guarantee",
    },
    audit: {
        "scaled_noise",
        "AuditResult",
        "MechanismAudit",
        "standard_audits",
        "run_audit",
        "audit_results",
        "audit_table",
        "lattice_spacings",
    },
}


def test_immutability_registry_covers_every_public_function():
    for mod, calls in CALLS.items():
        public = {k for k in mod.__all__ if callable(getattr(mod, k))}
        missing = public - set(calls) - NO_ARRAYS[mod]
        assert not missing, (
            f"{mod.__name__}: public functions with no immutability check: {sorted(missing)}"
        )


@pytest.mark.parametrize(
    "mod,fname",
    [(m, f) for m, c in CALLS.items() for f in c],
    ids=lambda x: getattr(x, "__name__", x),
)
def test_public_functions_leave_their_arguments_unchanged(mod, fname):
    COUNTS["unchanged:" + fname] += 1
    given_ = []

    def ro(x):
        x = np.array(x)
        copy = x.copy()
        x.setflags(write=False)
        given_.append((x, copy))
        return x

    with time_limit():
        CALLS[mod][fname](ro)
    for x, copy in given_:
        assert x.dtype == copy.dtype and np.array_equal(x, copy, equal_nan=True), (
            f"{fname} modified an argument"
        )
