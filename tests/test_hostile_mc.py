"""Hostile input for privrank.mc (issue 11, items 5, 7, 10 and 11), in the manner of
tests/test_hostile.py and under its
guards: an address-space limit (a huge allocation fails at once) and a time limit per call (a hang
fails).

* every public function of mc leaves its arguments as they were (arrays, sparse data/indices/indptr,
  flags), on sorted,
  unsorted, read-only and non-CSR inputs; duplicates (user, item) are refused naming `ratings` and
  one duplicate;
* every public function refuses NaN, wrong types and out-of-range values with a ValueError/TypeError
  naming the parameter;
* `noise_multiplier` gives, for every accountant and every epsilon in [5e-324, 1e300] and delta in
  [5e-324, 1), a finite
  multiplier that spends at most epsilon (and 0.999999 of it spends at least epsilon), or refuses
  naming `epsilon`/`delta`;
* the private entry points (private_frank_wolfe, private_pgd, private_svd_cleansing, complete), on
  both noise paths, give
  a finite answer or refuse the parameter by name over epsilon, delta, row_norm extremes and n_iter
  up to the cap.
The number of cases tried per function is printed at the end of the session."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import sparse
from test_hostile import (
    COUNTS,
    _nan_free,
    memory_guard,  # noqa: F401 (an autouse fixture)
    small_ratings,
    time_limit,
)

from privrank import completion, core, mc

SET = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAN, INF = math.nan, math.inf
TINY, HUGE = 5e-324, 1e300


def refuses(fname, f, *names, seconds=5.0):
    "f() must raise ValueError/TypeError naming one of `names` in backticks, within the time limit"
    COUNTS[fname] += 1
    with time_limit(seconds):
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


def answers_or_refuses(fname, f, names, seconds=5.0):
    "f() returns a NaN-free result, or refuses naming one of `names`; returns the result or None"
    COUNTS[fname] += 1
    with time_limit(seconds):
        try:
            r = f()
        except (ValueError, TypeError) as e:
            assert any(f"`{n}`" in str(e) for n in names), (
                f"{fname}: the refusal does not name {names}: {e}"
            )
            return None
    _nan_free(r)
    return r


# --------------------------------------------------------------------------------------------------
# item 10: no public function modifies its arguments


def _snap(x):
    "A deep snapshot of an argument: values, dtypes, shapes and flags of every array inside it"
    if sparse.issparse(x):
        parts = {
            k: _snap(getattr(x, k))
            for k in ("data", "indices", "indptr", "row", "col", "offsets")
            if hasattr(x, k)
        }
        if hasattr(x, "has_sorted_indices"):
            parts["sorted"] = bool(x.has_sorted_indices)
        if hasattr(x, "has_canonical_format"):
            parts["canonical"] = bool(x.has_canonical_format)
        return ("sparse", type(x).__name__, x.format, x.shape, x.dtype.str, parts)
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tobytes(), x.flags.writeable, x.flags.c_contiguous)
    if isinstance(x, dict):
        return ("dict", tuple((k, _snap(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_snap(v) for v in x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (
            "dc",
            type(x).__name__,
            tuple((f.name, _snap(getattr(x, f.name))) for f in dataclasses.fields(x)),
        )
    return ("obj", repr(x))


@st.composite
def rating_inputs(draw):
    """A small ratings matrix in one of several layouts: CSR sorted / unsorted / read-only / with
    slack, CSC, COO, float or int"""
    users, items = draw(st.integers(2, 7)), draw(st.integers(2, 6))
    seed = draw(st.integers(0, 10**6))
    R = small_ratings(users, items, seed)
    kind = draw(
        st.sampled_from(
            [
                "csr",
                "csr_unsorted",
                "csr_readonly_unsorted",
                "csr_matrix",
                "csc",
                "coo",
                "int",
                "csr_slack",
            ]
        )
    )
    g = np.random.default_rng(seed)
    if kind == "csr":
        X = R
    elif kind in ("csr_unsorted", "csr_readonly_unsorted"):
        data, ind = R.data.copy(), R.indices.copy()
        for a, b in zip(
            R.indptr[:-1], R.indptr[1:]
        ):  # reverse each row's entries: unsorted, same matrix
            data[a:b], ind[a:b] = data[a:b][::-1], ind[a:b][::-1]
        X = sparse.csr_array((data, ind, R.indptr.copy()), shape=R.shape)
        if kind == "csr_readonly_unsorted":
            for arr in (X.data, X.indices, X.indptr):
                arr.flags.writeable = False
    elif kind == "csr_matrix":
        X = sparse.csr_matrix(R)
    elif kind == "csc":
        X = sparse.csc_array(R)
    elif kind == "coo":
        C = R.tocoo()
        p = g.permutation(C.nnz)
        X = sparse.coo_array((C.data[p], (C.row[p], C.col[p])), shape=R.shape)
    elif kind == "int":
        X = sparse.csr_array(R.astype(np.int64))
    else:  # arrays longer than nnz (scipy allows slack after indptr[-1])
        X = sparse.csr_array(
            (np.r_[R.data, 99.0], np.r_[R.indices, 0], R.indptr.copy()), shape=R.shape
        )
    return kind, X


def _calls(R):
    """Every public function of mc, called on R (or what it needs), as (name, thunk,
    arguments-to-watch)"""
    um = np.zeros(R.shape[0])
    s = np.array([3.0, 1.0, 0.5])
    w = np.ones(3)
    v0 = np.ones(R.shape[1])
    A = mc.scaled_rows(R, 1.0)
    sp = mc.split_ratings(R, test_fraction=0.3, rng=0)
    fit = mc.private_frank_wolfe(
        sp.train, epsilon=1.0, delta=1e-6, nuclear_norm=2.0, n_iter=2, row_norm=2.0, rng=0
    )
    users, items = np.array([0, 1]), np.array([1, 0])
    coo = sparse.coo_array(R)
    rows = np.column_stack([coo.row, coo.col, coo.data])  # the same ratings as (u, i, r) rows
    kw = dict(epsilon=1.0, delta=1e-6)
    fw, pgd, cl = (
        dict(nuclear_norm=2.0, n_iter=2, row_norm=2.0),
        dict(nuclear_norm=2.0, n_iter=2, row_norm=2.0),
        dict(row_norm=1.0),
    )
    return [
        ("epsilon_gdp", lambda: mc.epsilon_gdp(w, delta=1e-6), (w,)),
        ("epsilon_rdp", lambda: mc.epsilon_rdp(w, delta=1e-6), (w,)),
        ("epsilon_advanced", lambda: mc.epsilon_advanced(w, delta=1e-6), (w,)),
        (
            "noise_multiplier",
            lambda: mc.noise_multiplier(epsilon=1.0, delta=1e-6, n_iter=3, weights=w),
            (w,),
        ),
        ("schedule_weights", lambda: mc.schedule_weights(3, "increasing"), ()),
        ("check_ratings", lambda: mc.check_ratings(R), (R,)),
        ("split_ratings", lambda: mc.split_ratings(R, test_fraction=0.3, rng=0), (R,)),
        ("clip_rows", lambda: mc.clip_rows(R, 1.0), (R,)),
        ("scaled_rows", lambda: mc.scaled_rows(R, 1.0), (R,)),
        ("sym_gaussian", lambda: mc.sym_gaussian(1.0, 3, rng=0), ()),
        ("gram", lambda: mc.gram(R), (R,)),
        ("changed_entries", lambda: mc.changed_entries("gram", 4), ()),
        ("top_eig_exact", lambda: mc.top_eig_exact(A, 1.0, rng=0), (A,)),
        ("implicit_noise_matvec", lambda: mc.implicit_noise_matvec(1.0, 4, 0)(np.ones(4)), ()),
        ("top_eig_oja", lambda: mc.top_eig_oja(A, 1.0, 3, rng=0), (A,)),
        ("top_eig_oja_fresh", lambda: mc.top_eig_oja_fresh(A, 1.0, 3, rng=0), (A,)),
        ("top_eig_oja_stream", lambda: mc.top_eig_oja_stream(A, 1.0, v0=v0, rng=0), (A, v0)),
        (
            "frank_wolfe",
            lambda: mc.frank_wolfe(R, nuclear_norm=2.0, n_iter=2, user_mean=um),
            (R, um),
        ),
        (
            "private_frank_wolfe",
            lambda: mc.private_frank_wolfe(R, **kw, **fw, user_mean=um, rng=0),
            (R, um),
        ),
        (
            "private_frank_wolfe/exact",
            lambda: mc.private_frank_wolfe(R, **kw, **fw, user_mean=um, noise="exact", rng=0),
            (R, um),
        ),
        ("synthetic_rank_one", lambda: mc.synthetic_rank_one(5, 4, per_user=2, rng=0), ()),
        ("project_l1_ball", lambda: mc.project_l1_ball(s, 2.0), (s,)),
        ("private_pgd", lambda: mc.private_pgd(R, **kw, **pgd, user_mean=um, rng=0), (R, um)),
        (
            "private_svd_cleansing",
            lambda: mc.private_svd_cleansing(R, **kw, user_mean=um, rng=0),
            (R, um),
        ),
        ("complete", lambda: completion.complete(R, **kw, rng=0), (R,)),
        (
            "complete/frank-wolfe",
            lambda: completion.complete(R, **kw, estimator="frank-wolfe", n_iter=2, rng=0),
            (R,),
        ),
        (
            "complete/evaluate",
            lambda: completion.complete(R, **kw, evaluate=True, test_fraction=0.3, rng=0),
            (R,),
        ),
        (
            "complete/rows",
            lambda: completion.complete(rows, **kw, n_items=R.shape[1], spill=None, rng=0),
            (rows,),
        ),
        ("truncated_svd", lambda: mc.truncated_svd(R, 1, user_mean=um), (R, um)),
        (
            "rmse_against_epsilon",
            lambda: mc.rmse_against_epsilon(
                sp, epsilons=[1.0], delta=1e-6, seeds=[0], fw=fw, pgd=pgd, cleansing=cl
            ),
            (sp, fw, pgd, cl),
        ),
        ("top_items", lambda: mc.top_items(R, 2), (R,)),
        ("Completion.predict", lambda: fit.predict(users), (users, fit)),
        (
            "Completion.predict_entries",
            lambda: fit.predict_entries(users, items),
            (users, items, fit),
        ),
        ("Completion.rmse", lambda: fit.rmse(sp), (sp, fit)),
    ]


def test_every_public_function_is_covered():
    names = {n for n, *_ in _calls(small_ratings())}
    public = {
        n for n in mc.__all__ if callable(getattr(mc, n)) and not isinstance(getattr(mc, n), type)
    }
    assert public <= names, (
        f"public functions of mc without a no-modification check: {sorted(public - names)}"
    )


@SET
@given(inp=rating_inputs())
def test_no_public_function_modifies_its_arguments(inp):
    kind, R = inp
    for name, call, watched in _calls(R):
        if call is None:
            continue
        before = [_snap(x) for x in watched]
        COUNTS[f"unmodified:{name}"] += 1
        with time_limit(10.0):
            try:
                call()
            except (ValueError, TypeError):
                pass  # a refusal (e.g. no held-out rating in a tiny matrix) must not modify either
        assert [_snap(x) for x in watched] == before, f"{name} modified its argument ({kind} input)"


def test_issue_reproducer_input_left_as_it_was():
    d = np.array([4.0, 2.0, 3.0])
    R = sparse.csr_array((d, [1, 0, 0], [0, 2, 3]))
    mc.split_ratings(R, test_fraction=0)
    np.testing.assert_array_equal(d, [4.0, 2.0, 3.0])
    np.testing.assert_array_equal(R.indices, [1, 0, 0])
    for a in (R.data, R.indices, R.indptr):
        a.flags.writeable = False
    assert mc.split_ratings(R, test_fraction=0).train.shape == (
        2,
        2,
    )  # read-only and unsorted: no WRITEBACKIFCOPY error


@SET
@given(inp=rating_inputs(), data=st.data())
def test_duplicates_refused_with_position(inp, data):
    kind, R = inp
    C = sparse.coo_array(R).tocoo()
    k = data.draw(st.integers(0, C.nnz - 1))
    row, col, val = (
        np.r_[C.row, C.row[k]],
        np.r_[C.col, C.col[k]],
        np.r_[C.data, 7.0],
    )  # entry k stored twice
    fmt = data.draw(st.sampled_from(["coo", "csr", "csc"]))
    if fmt == "coo":
        D = sparse.coo_array((val, (row, col)), shape=R.shape)
    # CSR/CSC built from indptr form, so that scipy does not sum the duplicate on construction
    else:
        o = np.lexsort((col, row)) if fmt == "csr" else np.lexsort((row, col))
        major, minor = (row, col) if fmt == "csr" else (col, row)
        ip = np.r_[0, np.cumsum(np.bincount(major, minlength=R.shape[0 if fmt == "csr" else 1]))]
        D = (sparse.csr_array if fmt == "csr" else sparse.csc_array)(
            (val[o], minor[o], ip), shape=R.shape
        )
    before = _snap(D)
    for fname, f in (
        ("check_ratings", lambda: mc.check_ratings(D)),
        ("split_ratings", lambda: mc.split_ratings(D)),
        (
            "private_frank_wolfe",
            lambda: mc.private_frank_wolfe(
                D, epsilon=1.0, delta=1e-6, nuclear_norm=1.0, n_iter=1, row_norm=1.0
            ),
        ),
    ):
        msg = refuses(fname, f, "ratings")
        assert f"user {C.row[k]}, item {C.col[k]}" in msg or "more than once" in msg, msg
    assert _snap(D) == before


# --------------------------------------------------------------------------------------------------
# item 7: every public function validates its arguments

RAT = small_ratings()
A1 = mc.scaled_rows(RAT, 1.0)
FIT = mc.private_frank_wolfe(
    RAT, epsilon=1.0, delta=1e-6, nuclear_norm=2.0, n_iter=2, row_norm=2.0, rng=0
)
SPLIT = mc.split_ratings(RAT, test_fraction=0.3, rng=0)
NUM_BAD = [NAN, INF, -INF, "1", None, True, [1.0, 2.0], 1j, object()]
HELPERS = [  # (function name, call with one hostile value x, parameter names, hostile values)
    (
        "project_l1_ball",
        lambda x: mc.project_l1_ball([1.0, 2.0], x),
        ("radius",),
        [-1, -1e-300] + NUM_BAD,
    ),
    (
        "project_l1_ball",
        lambda x: mc.project_l1_ball(x, 1.0),
        ("s",),
        [[1.0, NAN], [INF], [[1.0]], "ab", None, [object()]],
    ),
    ("top_items", lambda x: mc.top_items(RAT, x), ("n_items",), [-1, 0, 1.5, NAN, "2", None, True]),
    ("top_items", lambda x: mc.top_items(x, 2), ("ratings",), [RAT.toarray(), None, "r"]),
    (
        "schedule_weights",
        lambda x: mc.schedule_weights(x),
        ("n_iter",),
        [-1, 0, 1.5, NAN, None, 10**9],
    ),
    (
        "schedule_weights",
        lambda x: mc.schedule_weights(3, x),
        ("schedule",),
        ["cos", None, 3, ["constant"]],
    ),
    (
        "noise_multiplier",
        lambda x: mc.noise_multiplier(epsilon=1.0, delta=1e-6, n_iter=3, weights=x),
        ("weights",),
        [[1, NAN, 1], [1, INF, 1], [0, 1, 1], [-1, 1, 1], [1, 1], ["a", "b", "c"]],
    ),
    (
        "noise_multiplier",
        lambda x: mc.noise_multiplier(epsilon=1.0, delta=1e-6, n_iter=x),
        ("n_iter",),
        [0, -1, 1.5, None, NAN, 2**40],
    ),
    (
        "noise_multiplier",
        lambda x: mc.noise_multiplier(epsilon=1.0, delta=1e-6, n_iter=3, accountant=x),
        ("accountant",),
        ["moments", None, [], 3],
    ),
    (
        "epsilon_gdp",
        lambda x: mc.epsilon_gdp(x, delta=1e-6),
        ("noise_multipliers",),
        [[1.0, NAN], [0.0], [-1.0], [], "1", None, [[1.0, 2.0]]],
    ),
    (
        "epsilon_rdp",
        lambda x: mc.epsilon_rdp(x, delta=1e-6),
        ("noise_multipliers",),
        [[1.0, NAN], [INF], [], "1", None],
    ),
    (
        "epsilon_advanced",
        lambda x: mc.epsilon_advanced(x, delta=1e-6),
        ("noise_multipliers",),
        [[1.0, 2.0], [NAN], "1", None],
    ),
    (
        "epsilon_gdp",
        lambda x: mc.epsilon_gdp([1.0], delta=x),
        ("delta",),
        [0, 1, NAN, -1, "0.1", None],
    ),
    (
        "check_ratings",
        lambda x: mc.check_ratings(x),
        ("ratings",),
        [
            RAT.toarray(),
            None,
            sparse.csr_array((0, 3)),
            sparse.csr_array(np.array([[1.0, NAN]])),
            sparse.csr_array(np.array([[True, False]])),
            sparse.csr_array(np.array([[1 + 1j, 0]])),
        ],
    ),
    ("check_ratings", lambda x: mc.check_ratings(RAT, name=x), ("name",), [None, 3, ["r"]]),
    (
        "split_ratings",
        lambda x: mc.split_ratings(RAT, center=x),
        ("center",),
        [None, 1, "yes", NAN],
    ),
    ("clip_rows", lambda x: mc.clip_rows(RAT, x), ("row_norm",), [0, -1] + NUM_BAD),
    (
        "clip_rows",
        lambda x: mc.clip_rows(x, 1.0),
        ("R",),
        [RAT.toarray(), None, sparse.csr_array(np.array([[NAN, 1.0]]))],
    ),
    (
        "scaled_rows",
        lambda x: mc.scaled_rows(x, 1.0),
        ("R",),
        [RAT.toarray(), None, sparse.csr_array(np.array([[1.0, 0], [0, 0]]))],
    ),
    (
        "sym_gaussian",
        lambda x: mc.sym_gaussian(1.0, x, rng=0),
        ("n",),
        [0, -1, 1.5, None, NAN, 10**6],
    ),
    ("sym_gaussian", lambda x: mc.sym_gaussian(x, 3, rng=0), ("sigma",), [-1, NAN, INF, "1", None]),
    (
        "gram",
        lambda x: mc.gram(x),
        ("A",),
        [
            RAT.toarray(),
            None,
            sparse.csr_array(np.array([[INF, 1.0]])),
            sparse.csr_array((3, 10**6)),
        ],
    ),
    ("gram", lambda x: mc.gram(RAT, x), ("block",), [0, -1, 1.5, None]),
    ("changed_entries", lambda x: mc.changed_entries(x, 3), ("kind",), ["matrix", None, 3]),
    ("changed_entries", lambda x: mc.changed_entries("gram", x), ("n",), [0, -1, 1.5, None]),
    (
        "top_eig_exact",
        lambda x: mc.top_eig_exact(A1, x, rng=0),
        ("sigma",),
        [-1, NAN, INF, "1", None],
    ),
    (
        "top_eig_exact",
        lambda x: mc.top_eig_exact(A1, 1.0, rng=0, beta=x),
        ("beta",),
        [0, 1, -0.1, NAN, "0.1", None],
    ),
    (
        "top_eig_exact",
        lambda x: mc.top_eig_exact(A1, 1.0, rng=0, noise="exact", grid=x),
        ("grid",),
        [None, 0.3, -1.0, NAN, "1"],
    ),
    (
        "top_eig_exact",
        lambda x: mc.top_eig_exact(A1, 1.0, rng=0, noise=x),
        ("noise",),
        ["Exact", "exakt", 3],
    ),
    (
        "top_eig_oja",
        lambda x: mc.top_eig_oja(A1, 1.0, x, rng=0),
        ("n_iter",),
        [0, -1, 1.5, None, 10**9],
    ),
    (
        "top_eig_oja_fresh",
        lambda x: mc.top_eig_oja_fresh(A1, 1.0, x, rng=0),
        ("n_iter",),
        [0, 1.5, None, 10**9],
    ),
    (
        "top_eig_oja_stream",
        lambda x: mc.top_eig_oja_stream(A1, 1.0, rng=0, v0=x),
        ("v0",),
        [np.zeros(RAT.shape[1]), np.ones(2), [NAN] * RAT.shape[1], "v"],
    ),
    (
        "top_eig_oja_stream",
        lambda x: mc.top_eig_oja_stream(A1, 1.0, rng=0, n_blocks=x),
        ("n_blocks",),
        [0, 1.5, None],
    ),
    (
        "top_eig_oja_stream",
        lambda x: mc.top_eig_oja_stream(A1, 1.0, rng=0, noise="exact", grid=x),
        ("grid",),
        [None, 0.5, (0.5,), (0.5, 0.3)],
    ),
    (
        "implicit_noise_matvec",
        lambda x: mc.implicit_noise_matvec(1.0, 4, x),
        ("seed",),
        [-1, 1.5, "s", None],
    ),
    (
        "implicit_noise_matvec",
        lambda x: mc.implicit_noise_matvec(x, 4, 0),
        ("sigma",),
        [-1, NAN, "1"],
    ),
    (
        "truncated_svd",
        lambda x: mc.truncated_svd(RAT, x),
        ("rank",),
        [0, -1, 1.5, None, min(RAT.shape)],
    ),
    (
        "truncated_svd",
        lambda x: mc.truncated_svd(RAT, 1, user_mean=x),
        ("user_mean",),
        [np.full(RAT.shape[0], NAN), np.zeros(2), "u"],
    ),
    (
        "frank_wolfe",
        lambda x: mc.frank_wolfe(RAT, nuclear_norm=1.0, n_iter=2, row_norm=x),
        ("row_norm",),
        [0, -1, NAN, "1", None],
    ),
    (
        "synthetic_rank_one",
        lambda x: mc.synthetic_rank_one(x, 4, rng=0),
        ("n_users",),
        [0, -1, 1.5, None],
    ),
    (
        "private_pgd",
        lambda x: mc.private_pgd(
            RAT, epsilon=1.0, delta=1e-6, nuclear_norm=1.0, n_iter=1, row_norm=1.0, step=x
        ),
        ("step",),
        [0, 3, NAN, "1", None],
    ),
    (
        "private_svd_cleansing",
        lambda x: mc.private_svd_cleansing(RAT, epsilon=1.0, delta=1e-6, ridge=x),
        ("ridge",),
        [0, -1, NAN, "1", None],
    ),
    (
        "private_svd_cleansing",
        lambda x: mc.private_svd_cleansing(RAT, epsilon=1.0, delta=1e-6, beta_items=x),
        ("beta_items",),
        [-1, NAN, INF, "1"],
    ),
    (
        "private_svd_cleansing",
        lambda x: mc.private_svd_cleansing(RAT, epsilon=1.0, delta=1e-6, rank=x),
        ("rank",),
        [0, RAT.shape[1] + 1, 1.5],
    ),
    (
        "complete",
        lambda x: completion.complete(
            RAT, epsilon=1.0, delta=1e-6, evaluate=x, rating_range="private"
        ),
        ("evaluate",),
        [None, 1, "yes"],
    ),
    (
        "complete",
        lambda x: completion.complete(
            RAT, epsilon=1.0, delta=1e-6, test_fraction=x, rating_range="private"
        ),
        ("test_fraction",),
        [-0.1, 1.0, NAN, "0.1"],
    ),
    (
        "rmse_against_epsilon",
        lambda x: mc.rmse_against_epsilon(
            x, epsilons=[1.0], delta=1e-6, seeds=[0], fw={}, pgd={}, cleansing={}
        ),
        ("split",),
        [None, RAT],
    ),
    (
        "rmse_against_epsilon",
        lambda x: mc.rmse_against_epsilon(
            SPLIT, epsilons=x, delta=1e-6, seeds=[0], fw={}, pgd={}, cleansing={}
        ),
        ("epsilons",),
        [[NAN], [], [-1.0], "1"],
    ),
    (
        "Completion.predict",
        lambda x: FIT.predict(x),
        ("user_rows",),
        [-1, RAT.shape[0], [0, -1], 1.5, "0", None, [0.0]],
    ),
    ("Completion.predict_user", lambda x: FIT.predict_user(x), ("u",), [-1, 1.5, None, [0, 1]]),
    (
        "Completion.predict_entries",
        lambda x: FIT.predict_entries([0], x),
        ("items",),
        [[-1], [RAT.shape[1]], [0.5], None],
    ),
    (
        "Completion.rmse",
        lambda x: FIT.rmse(x),
        ("split",),
        [None, RAT, mc.split_ratings(RAT, test_fraction=0.0, rng=0)],
    ),
]


@pytest.mark.parametrize("i", range(len(HELPERS)), ids=[f"{h[0]}-{h[2][0]}" for h in HELPERS])
def test_public_helpers_refuse_bad_arguments(i):
    fname, call, names, values = HELPERS[i]
    for x in values:
        refuses(fname, lambda: call(x), *names)


def test_exact_mode_refusals_name_the_parameter():
    with core.use_noise("exact"):
        refuses(
            "private_frank_wolfe",
            lambda: mc.private_frank_wolfe(
                RAT,
                epsilon=1.0,
                delta=1e-6,
                nuclear_norm=1.0,
                n_iter=2,
                row_norm=1.0,
                accountant="gdp",
            ),
            "accountant",
        )
        refuses(
            "private_pgd",
            lambda: mc.private_pgd(
                RAT,
                epsilon=1.0,
                delta=1e-6,
                nuclear_norm=1.0,
                n_iter=2,
                row_norm=1.0,
                accountant="advanced",
            ),
            "accountant",
        )
        refuses("implicit_noise_matvec", lambda: mc.implicit_noise_matvec(1.0, 4, 0), "solver")
        refuses("top_eig_exact", lambda: mc.top_eig_exact(A1, 1.0, rng=0), "grid")
        refuses(
            "sym_gaussian", lambda: mc.sym_gaussian(1.0, 3, rng=0)
        )  # floating-point noise is refused in exact mode (core)
        old = core.memory_limit()
        core.set_memory_limit(1 << 20)
        try:
            Rw = mc.synthetic_rank_one(50, 600, per_user=3, rng=0)[0]
            refuses(
                "private_frank_wolfe",
                lambda: mc.private_frank_wolfe(
                    Rw,
                    epsilon=1.0,
                    delta=1e-6,
                    nuclear_norm=1.0,
                    n_iter=2,
                    row_norm=1.0,
                    solver="oja-implicit",
                ),
                "solver",
            )
        finally:
            core.set_memory_limit(None if old == core.DEFAULT_MEMORY_LIMIT else old)


# --------------------------------------------------------------------------------------------------
# item 11: noise_multiplier over the whole valid range, every accountant

LOG_EPS = st.one_of(
    st.sampled_from([TINY, 1e-300, 1e-20, 1.0, 1e6, 1e100, HUGE]),
    st.floats(-323.0, 300.0).map(lambda x: 10.0**x),
)
LOG_DELTA = st.one_of(
    st.sampled_from([TINY, 1e-300, 1e-6, 0.5, 1 - 1e-16]),
    st.floats(-323.0, -1e-9).map(lambda x: 10.0**x),
)


@settings(max_examples=150, deadline=None)
@given(
    eps=LOG_EPS,
    delta=LOG_DELTA,
    T=st.one_of(st.integers(1, 20), st.sampled_from([mc.MAX_ITER])),
    acc=st.sampled_from(["gdp", "rdp", "advanced"]),
    sched=st.sampled_from(["constant", "increasing"]),
)
def test_noise_multiplier_whole_range(eps, delta, T, acc, sched):
    if not (0 < eps < INF and 0 < delta < 1):
        return
    z = answers_or_refuses(
        f"noise_multiplier/{acc}",
        lambda: mc.noise_multiplier(
            epsilon=eps,
            delta=delta,
            n_iter=T,
            accountant=acc,
            weights=mc.schedule_weights(T, sched),
        ),
        ("epsilon", "delta", "accountant"),
    )
    if z is None:
        return
    assert np.isfinite(z).all() and (z > 0).all()
    f = mc.ACCOUNTANTS[acc]
    assert f(z, delta=delta) <= eps * (1 + 1e-9), "spends more than asked"
    assert f(z * (1 - 1e-6), delta=delta) >= eps, "more noise than needed"


def test_noise_multiplier_issue_reproducer():
    for acc in mc.ACCOUNTANTS:
        z = mc.noise_multiplier(epsilon=1e6, delta=1e-6, n_iter=1, accountant=acc)
        assert (
            0 < z[0] < 1
            and mc.ACCOUNTANTS[acc](z, delta=1e-6) <= 1e6 * (1 + 1e-9)
            and mc.ACCOUNTANTS[acc](z * (1 - 1e-6), delta=1e-6) >= 1e6
        )


# --------------------------------------------------------------------------------------------------
# item 5: the private entry points, finite or refused by name over their whole accepted range

RN = st.one_of(
    st.sampled_from([1e-300, 1e-150, 1e-20, 1.0, 1e20, 1e150, 1e300]),
    st.floats(-300.0, 300.0).map(lambda x: 10.0**x),
)
ENTRY_NAMES = ("epsilon", "delta", "row_norm", "nuclear_norm", "ratings", "solver")


def _check_fit(res):
    if res is None:
        return
    _nan_free(res.predict(np.arange(res.coef.shape[0])))
    assert np.isfinite(res.predict(np.arange(res.coef.shape[0]))).all()


@FEW
@given(
    eps=LOG_EPS,
    delta=LOG_DELTA,
    L=RN,
    T=st.integers(1, 3),
    mode=st.sampled_from(["fast", "exact"]),
    solver=st.sampled_from(list(mc.SOLVERS)),
    seed=st.integers(0, 99),
)
def test_private_frank_wolfe_whole_range(eps, delta, L, T, mode, solver, seed):
    R = small_ratings(6, 5, seed)
    _check_fit(
        answers_or_refuses(
            f"private_frank_wolfe/{mode}",
            lambda: mc.private_frank_wolfe(
                R,
                epsilon=eps,
                delta=delta,
                nuclear_norm=2.0 * L,
                n_iter=T,
                row_norm=L,
                solver=solver,
                oja_iter=3,
                noise=mode,
                rng=seed,
            ),
            ENTRY_NAMES,
        )
    )


@FEW
@given(
    eps=LOG_EPS,
    delta=LOG_DELTA,
    L=RN,
    T=st.integers(1, 3),
    mode=st.sampled_from(["fast", "exact"]),
    seed=st.integers(0, 99),
)
def test_private_pgd_whole_range(eps, delta, L, T, mode, seed):
    R = small_ratings(6, 5, seed)
    _check_fit(
        answers_or_refuses(
            f"private_pgd/{mode}",
            lambda: mc.private_pgd(
                R,
                epsilon=eps,
                delta=delta,
                nuclear_norm=2.0 * L,
                n_iter=T,
                row_norm=L,
                noise=mode,
                rng=seed,
            ),
            ENTRY_NAMES,
        )
    )


@FEW
@given(
    eps=LOG_EPS,
    delta=LOG_DELTA,
    B=RN,
    mode=st.sampled_from(["fast", "exact"]),
    seed=st.integers(0, 99),
)
def test_private_svd_cleansing_whole_range(eps, delta, B, mode, seed):
    R = small_ratings(6, 5, seed)
    _check_fit(
        answers_or_refuses(
            f"private_svd_cleansing/{mode}",
            lambda: mc.private_svd_cleansing(
                R, epsilon=eps, delta=delta, row_norm=B, noise=mode, rng=seed
            ),
            ENTRY_NAMES,
        )
    )


@FEW
@given(
    eps=LOG_EPS,
    delta=LOG_DELTA,
    L=RN,
    mode=st.sampled_from(["fast", "exact"]),
    seed=st.integers(0, 99),
)
def test_complete_whole_range(eps, delta, L, mode, seed):
    R = small_ratings(6, 5, seed)
    _check_fit(
        answers_or_refuses(
            f"complete/{mode}",
            lambda: completion.complete(
                R,
                epsilon=eps,
                delta=delta,
                estimator="frank-wolfe",
                n_iter=2,
                row_norm=L,
                noise=mode,
                rng=seed,
                rating_range="private",
            ),
            ENTRY_NAMES,
        )
    )


@pytest.mark.parametrize(
    "mode,solver", [("fast", "oja"), ("fast", "exact"), ("exact", "oja"), ("exact", "oja-fresh")]
)
def test_n_iter_up_to_the_cap(mode, solver):
    "n_iter = MAX_ITER answers (finite), n_iter = MAX_ITER + 1 is refused by name before any work"
    R = small_ratings(4, 3, 0)
    res = answers_or_refuses(
        f"private_frank_wolfe/{mode}/n_iter=cap",
        lambda: mc.private_frank_wolfe(
            R,
            epsilon=1.0,
            delta=1e-6,
            nuclear_norm=2.0,
            n_iter=mc.MAX_ITER,
            row_norm=2.0,
            solver=solver,
            oja_iter=1,
            noise=mode,
            rng=0,
        ),
        ("n_iter",),
        seconds=120.0,
    )
    _check_fit(res)
    refuses(
        "private_frank_wolfe",
        lambda: mc.private_frank_wolfe(
            R,
            epsilon=1.0,
            delta=1e-6,
            nuclear_norm=2.0,
            n_iter=mc.MAX_ITER + 1,
            row_norm=2.0,
            noise=mode,
        ),
        "n_iter",
    )
