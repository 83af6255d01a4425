"""The private BTL's ridge, lam="private" (equation (R4) of 02_btl): lambda = k^2 / 8 from public
quantities only, the stated ridge as epsilon grows, the "mle" rule on raw outcomes, and closer to
the non-private order than (R3) on sparse schedules (the guard; the full table is in
11_which_method)."""

import math

import numpy as np
import pytest
from test_btl import season  # 58 teams in 6 conferences, about 32 games each (as in 02 and 11)

from privrank import btl, rr


def _rows(i, j, y, user=None):
    "(winner, loser[, user], tie) rows of comparisons (i, j, y): y = 1 i won, 0 j won, 1/2 a tie"
    i, j, y = np.asarray(i), np.asarray(j), np.asarray(y, float)
    won = y != 0
    cols = [np.where(won, i, j), np.where(won, j, i)] + ([] if user is None else [user])
    return np.column_stack([*cols, (y == 0.5).astype(int)])


def k2(eps):
    "Variance inflation of a debiased outcome: ((e^eps + 1) / (e^eps - 1))^2"
    return (1 / np.tanh(np.asarray(eps, float) / 2)) ** 2


def released(g, m, i, j, y, eps):
    "counts[0, a, b, t] of randomized response at eps per comparison (a tie: a fair coin)"
    yy = np.where(y == 0.5, g.integers(0, 2, len(y)), y).astype(np.int64)
    t = yy ^ (g.random(len(y)) < 1 / (1 + math.exp(eps)))
    return np.bincount((i * m + j) * 2 + t, minlength=m * m * 2).reshape(1, m, m, 2)


def discordant(a, b):
    "Fraction of pairs ordered one way by scores a, the other by b"
    d = np.sign(a[:, None] - a) * np.sign(b[:, None] - b)
    return float((d < 0).sum() / (len(a) * (len(a) - 1)))


def distances(make, epsilons, rules, seeds, key):
    "err[epsilon, rule, seed]: Kendall distance of each rule's private fit to the default's order"
    err = np.zeros((len(epsilons), len(rules), seeds))
    for s in range(seeds):
        g = np.random.default_rng([key, s])
        m, i, j, y = make(g)
        target = btl.fit_btl(i, j, y, n_items=m).theta
        for a, e in enumerate(epsilons):
            c = released(g, m, i, j, y, e)
            for r, rule in enumerate(rules):
                lam = rule(e) if callable(rule) else rule
                err[a, r, s] = discordant(btl.fit_btl_counts(c, epsilon=[e], lam=lam).theta, target)
    return err


def paired(err, r1, r2):
    "(mean, standard error) over seeds of err[:, r1] - err[:, r2], per epsilon"
    d = err[:, r1] - err[:, r2]
    return d.mean(-1), d.std(-1, ddof=1) / np.sqrt(d.shape[-1])


# --------------------------------------------------------------------------- the rule itself


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.5, 1.0, 3.0, 10.0, 30.0])
def test_one_epsilon_is_k2_over_8(eps):
    g = np.random.default_rng(1)
    m, n = 12, 300
    i = g.integers(0, m, n)
    j = (i + g.integers(1, m, n)) % m
    z = rr.debias(g.integers(0, 2, n), epsilon=eps)
    s = rr.pair_statistics(i, j, z, n_items=m)
    lam = btl.private_lambda(s)
    assert lam == pytest.approx(k2(eps) / 8, rel=1e-12) and lam >= btl.LAM_MLE_RIDGE
    f = btl.fit_btl_pairs(s, lam="private")
    assert (f.lam, f.lam_rule) == (lam, "private") and f.converged
    assert "(R4)" in f.lam_reason


def test_lambda_falls_with_epsilon_to_the_stated_ridge():
    eps = np.array([0.05, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0])
    counts = np.zeros((1, 3, 3, 2), np.int64)
    counts[0, 0, 1] = counts[0, 1, 2] = counts[0, 2, 0] = [3, 4]
    lam = np.array([btl.fit_btl_counts(counts, epsilon=[e]).lam for e in eps])
    assert (np.diff(lam) < 0).all()
    assert lam[-1] == pytest.approx(btl.LAM_MLE_RIDGE, rel=1e-12)  # k^2 = 1 + 4e-13
    assert lam[0] == pytest.approx(1 / (2 * 0.05**2), rel=1e-3)  # small epsilon: 1/(2 eps^2)


def test_groups_mix_their_variance_by_weight():
    """Two epsilon groups with inverse-variance weights: lambda = sum_g w_g^2 n_g k_g^2 / (8
    sum_g w_g n_g), the weights normalised to mean 1 per comparison; the counts path and the
    per-comparison path agree"""
    g = np.random.default_rng(2)
    m, n = 8, 4000
    i = g.integers(0, m, n)
    j = (i + g.integers(1, m, n)) % m
    grp = (g.random(n) < 0.3).astype(int)
    eps = np.array([0.5, 3.0])
    t = g.integers(0, 2, n)
    c = np.zeros((2, m, m, 2), np.int64)
    np.add.at(c, (grp, i, j, t), 1)
    n_g = np.bincount(grp, minlength=2)
    w = rr.inverse_variance_weights(epsilon=eps)
    w = w * n_g.sum() / (w @ n_g)
    want = (w**2 * n_g) @ k2(eps) / (w @ n_g) / 8
    f = btl.fit_btl_counts(c, epsilon=eps)
    assert f.lam_rule == "private" and f.lam == pytest.approx(want, rel=1e-12)
    z = rr.debias(t, epsilon=eps[grp])
    s = rr.pair_statistics(i, j, z, n_items=m, weights=w[grp])
    assert btl.private_lambda(s) == pytest.approx(want, rel=1e-12)


def test_public_same_schedule_other_outcomes_same_lambda():
    g = np.random.default_rng(3)
    m, i, j, y = season(g)
    rows_a = _rows(i, j, y)
    rows_b = _rows(i, j, 1 - y)  # every game's result reversed
    for unit, eps in (("comparison", 1.0), ("comparison", 3.0)):
        kw = dict(n_items=m, epsilon=eps, privacy_unit=unit, ties=True, model="local")
        a = btl.dp_btl_aggregate(rows_a, rng=1, **kw)
        b = btl.dp_btl_aggregate(rows_b, rng=2, **kw)
        assert a.diagnostics["lam"] == b.diagnostics["lam"] == pytest.approx(k2(eps) / 8)
        assert not np.array_equal(a.order, b.order)
    # per user: users with 1 to 6 comparisons form epsilon groups; outcomes do not move lambda
    user = g.integers(0, 200, len(y))
    a = btl.dp_btl_aggregate(
        _rows(i, j, y, user), n_items=m, epsilon=2.0, rng=1, ties=True, model="local"
    )
    b = btl.dp_btl_aggregate(
        _rows(i, j, 1 - y, user), n_items=m, epsilon=2.0, rng=5, ties=True, model="local"
    )
    assert a.diagnostics["lam_rule"] == b.diagnostics["lam_rule"] == "private"
    assert a.diagnostics["lam"] == pytest.approx(b.diagnostics["lam"], rel=1e-12)
    assert a.diagnostics["lam"] > k2(2.0) / 8  # each comparison at most 2.0 / its user's count


def test_raw_outcomes_are_the_mle_rule():
    g = np.random.default_rng(4)
    seen = set()
    for s in range(12):
        m, i, j, y = season(np.random.default_rng([4, s]))
        f = btl.fit_btl(i, j, y, n_items=m, lam="private")
        f0 = btl.fit_btl(i, j, y, n_items=m)
        assert (f.lam, f.lam_rule) == (f0.lam, f0.lam_rule)
        np.testing.assert_array_equal(f.theta, f0.theta)
        seen.add(f.lam_rule)
    assert seen == {"mle", "mle-ridge"}  # both branches: the MLE exists, and it does not
    votes = btl.ranks_to_comparisons(np.argsort(g.random((50, 5)), axis=1))
    c = btl.dp_btl_aggregate(votes, epsilon=np.inf, model="local")
    assert c.diagnostics["lam_rule"] == "mle"
    np.testing.assert_array_equal(c.scores, btl.btl_aggregate(votes).scores)


def test_well_posed_at_small_epsilon_within_the_bound():
    """Debiased means far outside [0, 1]: the fit converges and |theta_i| <= (k + 1) D_i / (4
    lambda), the non-private stated ridge's bound carried over (02_btl)"""
    g = np.random.default_rng(5)
    m, i, j, y = season(g)
    for eps in (0.05, 0.3, 1.0):
        z = rr.debias(rr.randomized_response(y, epsilon=eps, rng=g), epsilon=eps)
        s = rr.pair_statistics(i, j, z, n_items=m)
        assert ((s.zbar < 0) | (s.zbar > 1)).any()
        f = btl.fit_btl_pairs(s, lam="private")
        k = 1 / math.tanh(eps / 2)
        D = np.bincount(s.i, s.weight, m) + np.bincount(s.j, s.weight, m)
        assert f.converged and (np.abs(f.theta) <= (k + 1) * D / (4 * f.lam)).all()


def test_tiny_noise_gives_the_target_order():
    """epsilon = 30 (a flip has probability 1e-13): on a dense schedule where the MLE exists the
    private order is the MLE's; on a sparse season it is the stated ridge's, lambda = 1/8. From
    epsilon ~ 37 on, k^2 rounds to 1 in double precision, the released outcomes are the raw ones
    to the last bit, and the rule is the "mle" rule itself"""
    g = np.random.default_rng(6)
    a, b = np.triu_indices(10, 1)
    i, j = np.tile(a, 100), np.tile(b, 100)
    y = btl.simulate_btl(np.linspace(1.5, -1.5, 10), i, j, rng=g)
    mle = btl.fit_btl(i, j, y, n_items=10)
    assert mle.lam_rule == "mle"
    kw = dict(rng=1, privacy_unit="comparison", ties=True, model="local")
    c = btl.dp_btl_aggregate(_rows(i, j, y), n_items=10, epsilon=30.0, **kw)
    assert c.diagnostics["lam"] == pytest.approx(btl.LAM_MLE_RIDGE, rel=1e-12)
    np.testing.assert_array_equal(c.order, mle.order)
    c = btl.dp_btl_aggregate(_rows(i, j, y), n_items=10, epsilon=40.0, **kw)
    assert (c.diagnostics["lam"], c.diagnostics["lam_rule"]) == (0.0, "mle")
    np.testing.assert_allclose(c.scores, mle.theta, atol=1e-8)
    m, i, j, y = season(g)
    c = btl.dp_btl_aggregate(_rows(i, j, y), n_items=m, epsilon=30.0, **kw)
    np.testing.assert_array_equal(c.order, btl.fit_btl(i, j, y, n_items=m, lam=1 / 8).order)


# --------------------------------------------------------------------------- the guard

RULES = ["private", "r3", lambda e: k2(e)]  # the last: a ridge 8 times (R4)'s, not 1/8 at large e


def test_guard_sparse_season_closer_than_r3():
    """58-team season, 30 seeds, paired by seed: (R4) is closer to the non-private order than
    (R3) at epsilon 3 and 10 by more than 5 standard errors, not behind by 0.005 at epsilon 1;
    at epsilon 10 it is within 0.015 of the target, which a ridge 8 times larger is not"""
    err = distances(season, [1.0, 3.0, 10.0], RULES, 30, key=11)
    dm, ds = paired(err, 0, 1)
    assert dm[1] + 5 * ds[1] < 0 and dm[2] + 5 * ds[2] < 0
    assert dm[0] - 5 * ds[0] < 0.005
    mean, se = err.mean(-1), err.std(-1, ddof=1) / np.sqrt(err.shape[-1])
    assert mean[2, 0] + 5 * se[2, 0] < 0.015 < mean[2, 2] - 5 * se[2, 2]


def test_guard_chameleons(shared_data):
    f = shared_data / "bradleyterry2-chameleons" / "chameleons_contests.csv.gz"
    if not f.exists():
        pytest.skip("no bradleyterry2-chameleons in the shared data folder")
    from privrank.datasets import read_pairwise_csv

    wins = ("1", "2", "all")  # covariates, not read
    not_read = ["contest"] + [f"{w}_prev.wins.{k}" for w in ("winner", "loser") for k in wins]
    cc = read_pairwise_csv(f, ignore=not_read)

    def make(g):
        return cc.n_items, cc.winner, cc.loser, np.ones(cc.n_comparisons)

    err = distances(make, [1.0, 3.0, 10.0], RULES[:2], 40, key=12)
    dm, ds = paired(err, 0, 1)
    assert dm[2] + 5 * ds[2] < 0  # epsilon 10: (R3) stays about 0.035 of pairs away
    assert (dm[:2] - 5 * ds[:2] < 0.005).all()  # epsilon 1, 3: not behind by half a percent
    assert err[2, 0].mean() < 0.01 < err[2, 1].mean()


# --------------------------------------------------------------------------- defaults, refusals


def test_defaults_and_diagnostics():
    import inspect

    for f in (btl.dp_btl_aggregate, btl.fit_btl_counts):
        assert inspect.signature(f).parameters["lam"].default == "private", f.__name__
    for f in (btl.fit_btl, btl.fit_btl_pairs, btl.btl_aggregate):
        assert inspect.signature(f).parameters["lam"].default == "mle", f.__name__
    votes = btl.ranks_to_comparisons(np.array([[0, 1, 2], [1, 0, 2], [0, 2, 1], [2, 1, 0]]))
    c = btl.dp_btl_aggregate(
        votes, epsilon=1.5, rng=0, model="local"
    )  # 3 comparisons per voter: 0.5 each
    eps_c = c.diagnostics["epsilon_per_comparison_max"]
    assert c.diagnostics["lam_rule"] == "private"
    assert c.diagnostics["lam"] == pytest.approx(k2(eps_c) / 8, rel=1e-12)
    assert (
        btl.dp_btl_aggregate(votes, epsilon=1.5, rng=0, lam="r3", model="local").diagnostics[
            "lam_rule"
        ]
        == "r3"
    )


ONE, UNIT = [[0, 1]], "comparison"  # one game: item 0 beat item 1


@pytest.mark.parametrize("lam", ["Private", "privat", "PRIVATE", ""])
def test_bad_rule_names_refused_naming_lam(lam):
    with pytest.raises(ValueError, match="`lam` must be a number >= 0, 'mle', 'r3' or 'private'"):
        btl.fit_btl([0, 1], [1, 0], [1, 1], n_items=2, lam=lam)
    with pytest.raises(ValueError, match="`lam`"):
        btl.dp_btl_aggregate(
            ONE, n_items=2, epsilon=1.0, rng=0, lam=lam, privacy_unit=UNIT, model="local"
        )


def test_other_refusals():
    with pytest.raises(TypeError, match="`s` must be a PairStats"):
        btl.private_lambda(np.ones(3))
    with pytest.raises(TypeError, match="`lam`"):
        btl.fit_btl([0, 1], [1, 0], [1, 1], n_items=2, lam=None)
    with pytest.raises(ValueError, match="'auto' was retired: use 'mle'.*'r3'.*'private'"):
        btl.dp_btl_aggregate(
            ONE, n_items=2, epsilon=1.0, rng=0, lam="auto", privacy_unit=UNIT, model="local"
        )
    with pytest.raises(ValueError, match="`lam`='mle' needs"):
        btl.dp_btl_aggregate(
            ONE, n_items=2, epsilon=1.0, rng=0, lam="mle", privacy_unit=UNIT, model="local"
        )
