"""Property tests for privrank.btl: gradients against finite differences, Lemma 3, agreement
between solvers and with choix, bad input refused with an error naming the parameter (never a
silent NaN), and BTL as an aggregator (the same consensus as the CLI's code; its refusals)."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import check_grad

from privrank import btl, rr

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw, real=True):
    m = draw(st.integers(2, 15))
    n = draw(st.integers(1, 300))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    i = rng.integers(0, m, n)
    j = (i + rng.integers(1, m, n)) % m
    y = rng.normal(0.5, 3.0, n) if real else rng.integers(0, 2, n)
    return m, i, j, y, rng


@SETTINGS
@given(problems())
def test_gradient_and_lemma3(prob):
    m, i, j, y, rng = prob
    s = rr.pair_statistics(i, j, y, n_items=m, weights=rng.random(len(y)) + 0.1)
    th = rng.normal(0, 1, m)
    g = btl.btl_grad(th, s, 0.7)
    assert check_grad(
        lambda t: btl.btl_loss(t, s, 0.7), lambda t: btl.btl_grad(t, s, 0.7), th
    ) < 1e-5 * max(1, np.abs(g).max() * np.sqrt(m))
    f = btl.fit_btl_pairs(s, lam=0.7)
    assert f.converged and np.isfinite(f.theta).all()
    assert abs(f.theta.sum()) < 1e-8 * max(1, np.abs(f.theta).max())  # Lemma 3
    assert np.abs(btl.btl_grad(f.theta, s, 0.7)).max() < 1e-6


@SETTINGS
@given(problems(real=False))
def test_solvers_agree(prob):
    m, i, j, y, _ = prob
    fits = [
        btl.fit_btl(i, j, y, n_items=m, lam=0.5, solver=k, tol=1e-7)
        for k in ("newton", "newton-cg", "lbfgs")
    ]
    for f in fits:
        assert f.converged
        np.testing.assert_allclose(f.theta, fits[0].theta, atol=1e-5)


def test_disconnected_graph_each_component_centred():
    i = np.array([0, 1, 3] * 20)
    j = np.array([1, 2, 4] * 20)
    y = np.array([1, 0, 1] * 20)
    f = btl.fit_btl(i, j, y, n_items=6, lam=0.3)
    assert f.n_components == 3
    assert (
        abs(f.theta[:3].sum()) < 1e-10
        and abs(f.theta[3:5].sum()) < 1e-10
        and abs(f.theta[5]) < 1e-12
    )
    with pytest.raises(ValueError, match="connected components"):
        btl.fit_btl(i, j, y, n_items=6, lam=0)


bad_inputs = st.sampled_from(
    [
        (dict(i=[0, 1], j=[1]), "equal lengths"),
        (dict(i=[0, 5]), "`i` has ids outside"),
        (dict(j=[1, -1]), "`j` has ids outside"),
        (dict(y=[0.5, np.nan]), "`y` must be finite"),
        (dict(y=[0.5, np.inf]), "`y` must be finite"),
        (dict(i=[0.0, 1.0]), "`i` must be an integer"),
        (dict(j=[0, 1]), "must differ"),
        (dict(lam=-1.0), "`lam` must be"),
        (dict(lam=np.nan), "`lam` must be"),
        (dict(weights=[1.0, -2.0]), "`weights`"),
        (dict(n_items=0), "`n_items`"),
        (dict(solver="gd"), "`solver`"),
    ]
)


@settings(max_examples=30, deadline=None)
@given(bad_inputs)
def test_bad_input_fit(case):
    kw, msg = case
    args = dict(i=[0, 1], j=[1, 2], y=[1, 0], n_items=3)
    args.update(kw)
    i, j, y = args.pop("i"), args.pop("j"), args.pop("y")
    with pytest.raises((ValueError, TypeError), match=msg):
        btl.fit_btl(i, j, y, **args)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([0, -1.0, np.nan, np.inf, [1.0, 0.0], "1"]))
def test_bad_epsilon_private(e):
    user, i, j = rr.complete_design(2, 3)
    with pytest.raises((ValueError, TypeError), match="epsilon"):
        btl.private_btl(i, j, np.ones(len(i), int), user, n_items=3, epsilon=e)


def test_private_pipeline_records_privacy_and_recovers_order():
    user, i, j = rr.complete_design(400, 6)
    theta = np.linspace(1, -1, 6)
    y = btl.simulate_btl(theta, i, j, rng=0)
    res = btl.private_btl(i, j, y, user, n_items=6, epsilon=2.0, rng=1)
    assert res.epsilon_per_comparison == 2.0 and np.all(res.epsilon_per_user == 30.0)
    assert res.fit.converged and list(res.order[:2]) == [0, 1]


def test_agrees_with_choix():
    choix = pytest.importorskip("choix")
    rng = np.random.default_rng(0)
    m, n = 8, 3000
    i = rng.integers(0, m, n)
    j = (i + rng.integers(1, m, n)) % m
    y = btl.simulate_btl(np.linspace(-1, 1, m), i, j, rng=rng)
    winners, losers = np.where(y == 1, i, j), np.where(y == 1, j, i)
    data = list(zip(winners.tolist(), losers.tolist()))
    ours = btl.fit_btl(i, j, y, n_items=m, lam=0.5).theta
    theirs = choix.opt_pairwise(
        m, data, alpha=0.5, tol=1e-10
    )  # alpha * sum(theta^2): the same penalty
    np.testing.assert_allclose(ours, theirs - theirs.mean(), atol=1e-5)
    mle = btl.fit_btl(i, j, y, n_items=m, lam=0.0).theta
    comp = np.bincount(winners * m + losers, minlength=m * m).reshape(m, m).astype(float)
    np.testing.assert_allclose(mle, choix.ilsr_pairwise_dense(comp, tol=1e-12), atol=1e-6)


# NaN in, error out; per-user epsilon arrays at the extremes (finite, converged, or refused by name)


def test_win_probability_refuses_nan():
    with pytest.raises(ValueError, match="`theta` must be finite"):
        btl.win_probability([0, np.nan], [0], [1])
    with pytest.raises(TypeError, match="`s` must be a PairStats"):
        btl.btl_loss(np.zeros(3), {"i": [0]}, 0.1)


@pytest.mark.parametrize("weighting", ["inverse_variance", "uniform"])
@pytest.mark.parametrize(
    "eu", [[1e-100, 1.0], [1e-100, 1e300], [1e300, 1e300], [1e-100, 1e-100]], ids=str
)
def test_per_user_epsilon_extremes_converge(eu, weighting):
    user, i, j = rr.complete_design(40, 6)
    y = btl.simulate_btl(np.linspace(1, -1, 6), i, j, rng=0)
    res = btl.private_btl(
        i, j, y, user, n_items=6, epsilon=np.tile(eu, 20), rng=1, weighting=weighting
    )
    assert np.isfinite(res.theta).all() and np.isfinite(res.epsilon_per_user).all()
    assert (
        res.fit.converged and res.fit.n_iter < 20
    )  # a user at 1e-100 once stalled the solver for 200 iterations


def test_per_user_epsilon_overflow_refused():
    user, i, j = rr.complete_design(4, 6)
    y = btl.simulate_btl(np.zeros(6), i, j, rng=0)
    with pytest.raises(ValueError, match="`epsilon`: a user's total"):
        btl.private_btl(i, j, y, user, n_items=6, epsilon=np.array([1.0, 1e308, 1.0, 1.0]), rng=0)
    with pytest.raises(ValueError, match="`epsilon` must be >= 1e-100"):
        btl.private_btl(i, j, y, user, n_items=6, epsilon=np.array([1.0, 5e-324, 1.0, 1.0]), rng=0)


# BTL as an aggregator: the same consensus as the CLI's code on the same data and seed
R6 = np.argsort(np.random.default_rng(0).random((60, 6)) + np.linspace(0, 1, 6), axis=1)
R6 = np.argsort(R6, axis=1)  # ranks of a noisy common order


def _same(a, b):
    for k in ("method", "epsilon", "delta", "model", "n_voters", "privacy_unit", "noise"):
        assert getattr(a, k) == getattr(b, k), k
    assert np.array_equal(a.order, b.order) and np.array_equal(a.scores, b.scores)
    assert a.diagnostics.keys() == b.diagnostics.keys()
    for k, v in a.diagnostics.items():
        assert (
            np.array_equal(v, b.diagnostics[k])
            if isinstance(v, np.ndarray)
            else v == b.diagnostics[k]
        ), k


@pytest.mark.parametrize("mode", ["fast", "exact"])
def test_aggregators_match_the_cli(mode):
    from privrank import cli, core

    pairs = btl.ranks_to_comparisons(R6)
    with core.use_noise(mode):
        ours = btl.btl_aggregate(pairs)
        theirs = cli.METHODS["btl"].aggregate(pairs)
        for k in ("order", "scores"):
            assert np.array_equal(getattr(ours, k), getattr(theirs, k))
        assert (ours.model, ours.epsilon, ours.n_voters) == ("none", math.inf, 60)
        for eps, seed in [(1.0, 0), (5.0, 3)]:  # one rule for lambda on both sides
            _same(
                btl.dp_btl_aggregate(pairs, epsilon=eps, rng=seed, lam="private"),
                cli.METHODS["btl"].private(pairs, epsilon=eps, rng=seed, lam="private"),
            )


def _rows(i, j, y, user=None):
    "(winner, loser[, user], tie) rows of comparisons (i, j, y): y = 1 i won, 0 j won, 1/2 a tie"
    i, j, y = np.asarray(i), np.asarray(j), np.asarray(y, float)
    won = y != 0
    cols = [np.where(won, i, j), np.where(won, j, i)] + ([] if user is None else [user])
    return np.column_stack([*cols, (y == 0.5).astype(int)])


def test_a_table_and_its_rows_give_one_release_with_ties_and_users():
    from privrank import cli, core, datasets

    rng = np.random.default_rng(4)
    n, m = 400, 5
    i = rng.integers(0, m, n)
    j = (i + rng.integers(1, m, n)) % m
    y = rng.choice([0.0, 0.5, 1.0], n)
    user = rng.integers(3, 40, n)
    rows = _rows(i, j, y, user)
    ids, index = np.unique(user, return_inverse=True)
    table = datasets.Comparisons(
        user=index, winner=rows[:, 0], loser=rows[:, 1], tie=rows[:, 3] == 1, user_ids=ids,
        item_ids=np.arange(m),
    )  # fmt: skip
    for seed in range(3):
        ours = btl.dp_btl_aggregate(rows, n_items=m, ties=True, epsilon=2.0, rng=seed)
        assert ours.diagnostics["n_comparisons"] == n and ours.n_voters == len(ids)
        theirs = cli.METHODS["btl"].private(table, epsilon=2.0, rng=seed, lam="private")
        assert np.array_equal(ours.scores, theirs.scores)
        assert core.privacy_record(ours) == core.privacy_record(theirs)
    ours = btl.btl_aggregate(rows, n_items=m, ties=True)
    theirs = cli.METHODS["btl"].aggregate(table)
    assert np.array_equal(ours.order, theirs.order) and np.array_equal(ours.scores, theirs.scores)
    assert ours.n_voters == theirs.n_voters == len(ids)
    # a tie counts half a win to each item: the non-private fit of the same y
    assert np.allclose(ours.scores, btl.fit_btl(i, j, y, n_items=m).theta, atol=1e-8)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(epsilon=1.0, delta=1e-6, model="local"), "`delta` must be 0"),
        (dict(epsilon=1.0, model="joint"), "`model` must be 'local'"),
        (dict(epsilon=-1.0), "`epsilon`"),
        (dict(epsilon=math.nan), "`epsilon`"),
        (dict(epsilon=[1.0, 2.0]), "`epsilon`"),
        (dict(epsilon=1.0, delta=-0.1), "`delta`"),
        (dict(epsilon=1.0, rng="seed"), "`rng`"),
        (dict(epsilon=1e-320), "`epsilon`"),
    ],
)
def test_dp_btl_aggregate_refuses(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        btl.dp_btl_aggregate(btl.ranks_to_comparisons(R6), **kwargs)


def test_dp_btl_aggregate_refuses_pure_dp_violations_by_saying_why():
    with pytest.raises(ValueError, match="pure epsilon-local DP"):
        btl.dp_btl_aggregate(btl.ranks_to_comparisons(R6), epsilon=1.0, delta=1e-5, model="local")
    # model="central" is the curator's release (tests/test_central_btl.py), not a refusal
    assert (
        btl.dp_btl_aggregate(
            btl.ranks_to_comparisons(R6), epsilon=1.0, model="central", rng=0
        ).model
        == "central"
    )


@pytest.mark.parametrize("bad", [[[0, 0, 1]], [[0, 1, 3]], "ranks", None])
def test_btl_from_bad_ranks_is_refused(bad):
    with pytest.raises((ValueError, TypeError), match="`ranks`"):
        btl.ranks_to_comparisons(bad)


def test_btl_aggregators_refuse_rankings_passed_as_rows():
    for f in (
        btl.btl_aggregate,
        lambda r: btl.dp_btl_aggregate(r, epsilon=1.0, rng=0, model="local"),
    ):
        with pytest.raises(ValueError, match="looks like rankings.*ranks_to_comparisons"):
            f(R6)
    one = btl.ranks_to_comparisons(np.zeros((2, 1), int))  # one item: nothing compared
    with pytest.raises(ValueError, match="a Comparisons table of 1 item; at least 2"):
        btl.btl_aggregate(one)


def test_btl_consensus():
    votes = btl.ranks_to_comparisons(R6)
    user, i, j = votes.user, votes.winner, votes.loser
    y = np.ones(len(i), np.int8)
    fit = btl.fit_btl(i, j, y, n_items=6)
    c = btl.btl_consensus(fit, n_voters=60)
    assert np.array_equal(c.order, fit.order) and np.array_equal(c.scores, fit.theta)
    assert (c.private, c.model, c.epsilon) == (False, "none", math.inf)
    p = btl.private_btl(i, j, y, user, n_items=6, epsilon=0.1, rng=0)
    cp = btl.btl_consensus(p)
    assert cp.private and cp.model == "local" and cp.delta == 0.0
    assert cp.n_voters == 60 and math.isclose(cp.epsilon, 1.5)  # 15 comparisons at 0.1 each
    with pytest.raises(ValueError, match="`n_voters`"):
        btl.btl_consensus(fit)
    with pytest.raises(ValueError, match="`epsilon`"):
        btl.btl_consensus(fit, n_voters=60, epsilon=1.0)
    with pytest.raises(ValueError, match="`epsilon`"):
        btl.btl_consensus(p, epsilon=1.0)
    with pytest.raises(TypeError, match="`fit`"):
        btl.btl_consensus(c)


# lam="mle": the maximum likelihood estimate when it exists (Zermelo / Ford), a stated ridge
# otherwise; "r3" for debiased data; the retired "auto" refused by name


def season(rng, sizes=(10, 10, 10, 10, 9, 9), rounds=2, away=9):
    "58 teams in 6 conferences: rivals twice, `away` random games outside (as in 02_btl)"
    conf = np.repeat(np.arange(len(sizes)), sizes)
    a, b = np.triu_indices(len(conf), 1)
    same = conf[a] == conf[b]
    t = np.repeat(np.arange(len(conf)), away)
    o = rng.integers(0, len(conf), len(t))
    keep = conf[o] != conf[t]
    i = np.r_[np.tile(a[same], rounds), t[keep]]
    j = np.r_[np.tile(b[same], rounds), o[keep]]
    theta = rng.normal(0, 0.6, len(sizes))[conf] + rng.normal(0, 1.0, len(conf))
    return len(conf), i, j, btl.simulate_btl(theta, i, j, rng=rng)


def test_default_is_the_mle_on_a_sparse_schedule_as_choix_computes_it():
    choix = pytest.importorskip("choix")
    kendalltau = pytest.importorskip("scipy.stats").kendalltau
    found = 0
    for seed in range(12):
        m, i, j, y = season(np.random.default_rng([2026, seed]))
        f = btl.fit_btl(i, j, y, n_items=m)
        assert 2 * len(y) / m > 30  # a sparse schedule: about 32 games per team, 58 teams
        if f.lam_rule != "mle":
            assert f.lam == btl.LAM_MLE_RIDGE and f.n_strong_components > 1
            continue
        found += 1
        assert f.lam == 0 and f.n_strong_components == 1 and f.converged
        won, lost = np.where(y == 1, i, j), np.where(y == 1, j, i)
        th = choix.ilsr_pairwise(m, np.c_[won, lost].tolist(), alpha=1e-8, max_iter=10_000)
        assert kendalltau(f.theta, th)[0] >= 0.99
        np.testing.assert_allclose(f.theta, th - th.mean(), atol=1e-4)
        r3 = btl.fit_btl(i, j, y, n_items=m, lam="r3")
        assert 1.0 < r3.lam < 1.3 and kendalltau(r3.theta, f.theta)[0] < 0.99  # (R3) reorders
        c = btl.btl_aggregate(_rows(i, j, y), n_items=m, privacy_unit="comparison", ties=True)
        assert np.array_equal(c.order, f.order) and c.diagnostics["lam_rule"] == "mle"
    assert found >= 6


@SETTINGS
@given(st.integers(2, 12), st.integers(1, 40), st.integers(0, 2**32 - 1), st.booleans())
def test_strong_components_match_scipy(m, n, seed, weighted):
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(seed)
    i = rng.integers(0, m, n)
    j = (i + rng.integers(1, m, n)) % m
    y = rng.choice([0.0, 0.5, 1.0], n)
    w = np.where(rng.random(n) < 0.2, 0.0, rng.random(n) + 0.1) if weighted else None
    if w is not None and not w.any():
        return
    s = rr.pair_statistics(i, j, y, n_items=m, weights=w)
    # the win graph by definition: an edge loser -> winner per comparison of positive weight
    ww = np.ones(n) if w is None else w
    A = np.zeros((m, m), bool)
    for a, b, v, wt in zip(i, j, y, ww):
        if wt > 0 and v > 0:
            A[b, a] = True  # a won (or tied): b -> a
        if wt > 0 and v < 1:
            A[a, b] = True
    n_ref = connected_components(A, connection="strong")[0]
    nscc, ncc = btl._components(s)
    assert nscc == n_ref and ncc == connected_components(A | A.T, directed=False)[0]
    f = btl.fit_btl(i, j, y, n_items=m, weights=w)
    assert f.n_strong_components == n_ref and f.converged
    assert (f.lam_rule, f.lam) == (("mle", 0.0) if n_ref == 1 else ("mle-ridge", 1 / 8))
    if n_ref == 1:  # the MLE: the unpenalised gradient vanishes
        assert np.abs(btl.btl_grad(f.theta, s, 0.0)).max() < 1e-6 * max(1.0, s.weight.sum())
    else:
        with pytest.raises(ValueError, match="connected components"):
            btl.fit_btl(i, j, y, n_items=m, weights=w, lam=0)


def test_mle_on_debiased_outcomes_refused_or_defined():
    rng = np.random.default_rng(5)
    m, L = 6, 3
    user, i, j = rr.complete_design(L, m)
    y = btl.simulate_btl(np.linspace(-1, 1, m), i, j, rng=rng)
    z = rr.privatize(i, j, y, user, epsilon=1.0, rng=1).z  # 3 per pair: means outside [0, 1]
    with pytest.raises(ValueError, match="`lam`='mle' needs every pair's mean outcome in"):
        btl.fit_btl(i, j, z, n_items=m)
    with pytest.raises(ValueError, match="`lam`='mle' needs"):
        btl.private_btl(i, j, y, user, n_items=m, epsilon=1.0, rng=0, lam="mle")
    assert btl.private_btl(i, j, y, user, n_items=m, epsilon=1.0, rng=0).fit.lam_rule == "r3"
    # many comparisons per pair: every debiased mean inside [0, 1], "mle" is the lambda = 0 fit
    user, i, j = rr.complete_design(3000, 4)
    y = btl.simulate_btl(np.linspace(-0.5, 0.5, 4), i, j, rng=rng)
    z = rr.privatize(i, j, y, user, epsilon=2.0, rng=2).z
    f = btl.fit_btl(i, j, z, n_items=4)
    assert (f.lam, f.lam_rule) == (0.0, "mle")
    np.testing.assert_allclose(f.theta, btl.fit_btl(i, j, z, n_items=4, lam=0.0).theta)


@pytest.mark.parametrize(
    "call",
    [
        lambda lam: btl.fit_btl([0, 1], [1, 0], [1, 1], n_items=2, lam=lam),
        lambda lam: btl.fit_btl_pairs(rr.pair_statistics([0], [1], [1], n_items=2), lam=lam),
        lambda lam: btl.private_btl([0, 1], [1, 0], [1, 0], [0, 1], n_items=2, epsilon=1, lam=lam),
        lambda lam: btl.btl_aggregate(btl.ranks_to_comparisons([[0, 1], [1, 0]]), lam=lam),
        lambda lam: btl.dp_btl_aggregate(
            btl.ranks_to_comparisons([[0, 1], [1, 0]]), epsilon=1.0, rng=0, lam=lam, model="local"
        ),
        lambda lam: btl.btl_aggregate([[0, 1, 0]], n_items=2, lam=lam),
        lambda lam: btl.dp_btl_aggregate(
            [[0, 1, 0]], n_items=2, epsilon=1.0, rng=0, lam=lam, model="local"
        ),
    ],
)
def test_auto_is_retired_everywhere_with_the_new_names(call):
    with pytest.raises(ValueError, match="'auto' was retired: use 'mle'.*'r3'"):
        call("auto")


def test_defaults_and_diagnostics_of_the_aggregators():
    import inspect

    for f in (btl.fit_btl, btl.fit_btl_pairs, btl.btl_aggregate):
        assert inspect.signature(f).parameters["lam"].default == "mle", f.__name__
    assert inspect.signature(btl.private_btl).parameters["lam"].default == "r3"
    assert inspect.signature(btl.dp_btl_aggregate).parameters["lam"].default == "private"
    R = btl.ranks_to_comparisons(np.array([[0, 1, 2], [1, 0, 2], [0, 2, 1], [2, 1, 0]]))
    c = btl.btl_aggregate(R)
    assert c.diagnostics["lam_rule"] == "mle" and c.diagnostics["lam"] == 0.0
    cp = btl.dp_btl_aggregate(R, epsilon=2.0, rng=0, model="local")
    assert cp.diagnostics["lam_rule"] == "private" and cp.diagnostics["lam"] > 0
    c2 = btl.btl_aggregate(R, lam=0.3)
    assert (c2.diagnostics["lam"], c2.diagnostics["lam_rule"]) == (0.3, "given")


def test_privacy_unit_comparison():
    rows = _rows([0, 1, 2, 0], [1, 2, 0, 2], [1, 0.5, 0, 1])  # winner, loser, tie: no users
    c = btl.btl_aggregate(rows, n_items=3, privacy_unit="comparison", ties=True)
    assert (c.privacy_unit, c.n_voters) == ("comparison", 4)
    d = btl.dp_btl_aggregate(rows, n_items=3, epsilon=1.0, rng=0, privacy_unit="comparison",
                             ties=True, model="local")  # fmt: skip
    assert (d.privacy_unit, d.n_voters, d.epsilon) == ("comparison", 4, 1.0)
    assert d.diagnostics["comparisons_per_unit_max"] == 1
    assert d.diagnostics["epsilon_per_comparison_max"] <= 1.0
    for f in (
        btl.btl_aggregate,
        lambda *a, **k: btl.dp_btl_aggregate(*a, epsilon=1.0, model="local", **k),
    ):
        with pytest.raises(ValueError, match="expected 4 columns"):
            f(rows, n_items=3, ties=True)  # privacy_unit "user" needs a user column
        with pytest.raises(ValueError, match="`privacy_unit` must be"):
            f(rows, n_items=3, privacy_unit="row", ties=True)
