"""Partial and tied ballots (issue 32, item 1, the footrule part): PrefLib orders with unranked
or tied candidates go straight to the footrule (exact and private, central and local, both noise
paths), the position-cost trees and the pairwise in-degree, each candidate at its averaged
position (Fagin et al. 2003, 2004). Checked against brute force on random weak profiles; the
sensitivities are searched over every pair of weak orders at small m; strict ballots give what
they gave before."""

import itertools
import math

import numpy as np
import pytest
from test_partial_ballots import random_profile, tiers_of, weak_orders

import privrank as pr
from privrank import footrule, tree
from privrank.datasets import Preferences, shared_data_dir


def averaged(T):
    "(n, m) averaged positions of weak orders given as tiers, by brute force (one tier at a time)"
    n, m = T.shape
    a = np.zeros((n, m))
    for i in range(n):
        for t in np.unique(T[i]):
            before, mine = (T[i] < t).sum(), T[i] == t
            a[i, mine] = before + (mine.sum() - 1) / 2
    return a


def brute_footrule(a):
    "The minimum of sum_v sum_q |a_v(q) - pi(q)| over all permutations pi, and its minimisers"
    m = a.shape[1]
    P = np.array(list(itertools.permutations(range(m))))
    cost = np.abs(a[None, :, :] - P[:, None, :]).sum(axis=(1, 2))
    return cost.min(), {tuple(p) for p in P[np.isclose(cost, cost.min())]}


def soi_profile(m, n, rng):
    "n .soi-style ballots: a strict top part, the rest unranked"
    orders = []
    for _ in range(n):
        k = int(rng.integers(1, m))
        orders.append(tuple(np.array([q]) for q in rng.permutation(m)[:k]))
    return Preferences(
        orders=tuple(orders),
        counts=np.ones(n, int),
        item_ids=np.arange(1, m + 1),
        item_names=tuple(str(q) for q in range(1, m + 1)),
        data_type="soi",
    )


# (a) the non-private results against brute force


@pytest.mark.parametrize("seed", range(12))
def test_footrule_consensus_is_the_brute_force_optimum_of_the_averaged_positions(seed):
    rng = np.random.default_rng(seed)
    m = 3 + seed % 4  # m = 3..6
    p = (random_profile if seed % 2 else soi_profile)(m, 25, rng)
    a = averaged(tiers_of(p))
    best, argmins = brute_footrule(a)
    res = pr.footrule_aggregate(p)
    assert tuple(res.ranks) in argmins
    assert res.diagnostics["footrule_cost"] == pytest.approx(best / len(a), abs=1e-12)
    assert "averaged positions" in res.diagnostics["ballots"]
    G = np.abs(a[:, :, None] - np.arange(m)).mean(axis=0)  # gamma of the definition
    near = tree.private_position_costs(p, epsilon=1e12, rng=0)  # the trees, no noise to speak of
    np.testing.assert_allclose(near.gamma, G, atol=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_pairwise_indegree_without_noise_orders_by_the_averaged_borda_points(seed):
    rng = np.random.default_rng(50 + seed)
    p = random_profile(int(rng.integers(3, 7)), 40, rng)
    T = tiers_of(p)
    res = footrule.dp_pairwise_indegree_aggregate(p, epsilon=1e12, rng=0)
    beats = (T[:, :, None] < T[:, None, :]).sum(axis=0)
    w = 0.5 + (beats - beats.T) / (2 * len(T))  # ties halved
    np.fill_diagonal(w, 0)
    np.testing.assert_allclose(res.diagnostics["w"], w, atol=1e-9)
    np.testing.assert_allclose(-res.scores, w.sum(axis=0), atol=1e-8)
    borda = pr.borda_aggregate(p).scores  # in-degree = (m - 1) n - Borda points, scaled
    np.testing.assert_allclose(-res.scores, ((T.shape[1] - 1) * len(T) - borda) / len(T), atol=1e-8)


# (b) the sensitivities, over every pair of weak orders


def _nodes(t):
    "Flat node values per level of one weak order's m trees (one voter, whole units)"
    H2 = tree.weak_histograms(tree.doubled_positions(t[None]))
    return [np.concatenate([v.ravel(), u.ravel()]) / 2 for v, u in tree.tree_node_values(H2, 1)]


@pytest.mark.parametrize("m", [2, 3, 4])
def test_the_central_tree_sensitivity_holds_over_every_pair_and_is_attained_at_level_0(m):
    W = np.array(weak_orders(m))
    F = [np.stack(level) for level in zip(*(_nodes(t) for t in W))]
    l1, l2 = tree.tree_sensitivity(m, scope="weak")
    for lev, f in enumerate(F):
        D = f[:, None, :] - f[None, :, :]
        w1, w2 = np.abs(D).sum(-1).max(), np.sqrt((D**2).sum(-1)).max()
        assert w1 <= l1[lev] + 1e-12 and w2 <= l2[lev] + 1e-12
        if lev == 0:  # attained, where (5) equals the strict (4); half of it fails
            assert w1 == pytest.approx(l1[0]) and w2 == pytest.approx(l2[0])
            assert not w1 <= l1[0] / 2 and not w2 <= l2[0] / 2


def test_the_strict_tree_sensitivity_fails_on_weak_orders():
    "The column-wise bound (4) of permutations is exceeded by a pair of weak orders at m = 5"
    W = np.array(weak_orders(5))
    f = np.stack([_nodes(t)[1] for t in W])
    D = f[:, None, :] - f[None, :, :]
    s1, s2 = tree.tree_sensitivity(5, scope="ranking")
    assert np.abs(D).sum(-1).max() > s1[1] and np.sqrt((D**2).sum(-1)).max() > s2[1]
    assert np.abs(D).sum(-1).max() <= tree.tree_sensitivity(5, scope="weak")[0][1]


@pytest.mark.parametrize("m", [2, 3, 4])
def test_the_local_report_sensitivity_is_unchanged_over_every_pair_of_positions(m):
    "One voter's report on averaged positions 0, 1/2, ..., m - 1: within (3), attained"
    a = np.arange(2 * m - 1)
    zero = np.zeros(tree.tree_depth(m))
    rep = tree.weak_local_reports(a, m, "laplace", zero, rng=0)
    l1, l2 = tree.tree_sensitivity(m, scope="value")
    for lev, (v, u) in enumerate(rep):
        f = np.concatenate([v, u], axis=1)
        D = f[:, None, :] - f[None, :, :]
        w1, w2 = np.abs(D).sum(-1).max(), np.sqrt((D**2).sum(-1)).max()
        assert w1 <= l1[lev] + 1e-12 and w2 <= l2[lev] + 1e-12
        if 2 ** (lev + 1) <= m:  # x = 2^l - 1 -> 2^(l+1) - 1 exists: attained
            assert w1 == pytest.approx(l1[lev]) and not w1 <= l1[lev] / 2


@pytest.mark.parametrize("m", [2, 3, 4])
def test_the_pairwise_margin_sensitivity_equals_the_strict_one(m):
    "Margins over 2: per voter, every pair moves by at most 1, attained by a reversal"
    W = np.array(weak_orders(m))
    iu = np.triu_indices(m, 1)
    M = np.sign(W[:, None, :] - W[:, :, None])[:, iu[0], iu[1]] / 2  # (w[u,v] - w[v,u]) / 2
    D = M[:, None, :] - M[None, :, :]
    l1, l2 = footrule.pairwise_sensitivity(m)
    assert np.abs(D).sum(-1).max() == l1 and not np.abs(D).sum(-1).max() <= l1 / 2
    assert np.sqrt((D**2).sum(-1)).max() == pytest.approx(l2)
    assert not np.sqrt((D**2).sum(-1)).max() <= l2 / 2


# (c) private releases on weak ballots


MODELS = [dict(), dict(delta=1e-6), dict(model="local"), dict(model="local", delta=1e-6)]


def _group_costs(p, groups):
    "gamma[q, j] of the voters of group q alone (the local model's estimand), by brute force"
    a = averaged(tiers_of(p))
    d = np.abs(a[:, :, None] - np.arange(a.shape[1]))  # [voter, q, j]
    return np.stack([d[groups == q, q].mean(axis=0) for q in range(a.shape[1])])


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("kw", MODELS, ids=["laplace", "gauss", "local", "local-gauss"])
def test_private_position_costs_on_weak_ballots_are_reproducible_and_centred(mode, kw):
    rng = np.random.default_rng(21)
    p = random_profile(5, 700, rng)  # 1,403 voters (counts 1..3)
    a = averaged(tiers_of(p))
    n = len(a)
    with pr.use_noise(mode):
        r1 = tree.private_position_costs(p, epsilon=1.0, rng=4, **kw)
        r2 = tree.private_position_costs(p, epsilon=1.0, rng=4, **kw)
        c = pr.dp_footrule_aggregate(p, epsilon=1.0, rng=4, **kw)
        # little noise, so that the check bites (local: the noise of a group mean, larger)
        big = 1e5 if kw.get("model") == "local" else 100.0
        sharp = tree.private_position_costs(p, epsilon=big, rng=5, **kw)
    np.testing.assert_array_equal(r1.gamma, r2.gamma)  # the same release for the same seed
    np.testing.assert_array_equal(c.diagnostics["position_costs"].gamma, r1.gamma)
    assert (r1.noise, c.noise, c.epsilon, c.n_voters) == (mode, mode, 1.0, n)
    assert "averaged" in c.diagnostics["ballots"] and sorted(c.order) == list(range(5))
    # centred on the statistic: central, the costs of all voters; local, those of each group's
    # voters (its public assignment, redrawn from the seed), so the error is the noise alone
    if kw.get("model") == "local":
        target = _group_costs(p, tree.assign_groups(n, 5, rng=np.random.default_rng(5)))
        sizes = sharp.diagnostics["group_sizes"]
        rms = tree._rms_bound(5, sharp.noise_law, sharp.noise_scale) / math.sqrt(sizes.min())
    else:
        target = np.abs(a[:, :, None] - np.arange(5)).mean(axis=0)
        rms = sharp.error_bound  # exact RMS of the noise of one entry, worst position
    # each entry's noise is a sum of independent Laplace or Gaussian node noises of total RMS
    # <= rms: beyond 30 rms a Laplace sum has probability < 1e-9 (Chernoff), so over 25
    # entries a false failure is rarer than 1e-7; 30 rms is below 0.1 here, where a wrong
    # normaliser or wrong positions would be off by more than 0.5
    assert 30 * rms < 0.1
    assert np.abs(sharp.gamma - target).max() < 30 * rms, (np.abs(sharp.gamma - target).max(), rms)


@pytest.mark.parametrize("mode", ["fast", "exact"])
def test_private_pairwise_indegree_on_weak_ballots_is_reproducible_and_centred(mode):
    rng = np.random.default_rng(22)
    p = random_profile(5, 700, rng)
    exact = footrule.dp_pairwise_indegree_aggregate(p, epsilon=1e12, rng=0).diagnostics["w"]
    with pr.use_noise(mode):
        r1 = footrule.dp_pairwise_indegree_aggregate(p, epsilon=1.0, rng=3)
        r2 = footrule.dp_pairwise_indegree_aggregate(p, epsilon=1.0, rng=3)
        sharp = footrule.dp_pairwise_indegree_aggregate(p, epsilon=20.0, rng=4)
    np.testing.assert_array_equal(r1.diagnostics["w"], r2.diagnostics["w"])
    # centred: independent Laplace entries of scale b; beyond 25 b each has probability
    # e^-25 ~ 1e-11; 25 b is below 0.02, where a wrong normaliser would be off by ~0.05 or more
    b = sharp.diagnostics["noise_scale"]
    err = (sharp.diagnostics["w"] - exact)[np.triu_indices(5, 1)]
    assert 25 * b < 0.02 and np.abs(err).max() < 25 * b, (np.abs(err).max(), b)
    assert "averaged" in r1.diagnostics["ballots"]
    if mode == "exact":  # margins over 2n: w - 1/2 on the grid 1/(2n)
        n2 = 2 * r1.n_voters
        x = (r1.diagnostics["w"][np.triu_indices(5, 1)] - 0.5) * n2
        np.testing.assert_allclose(x, np.round(x), atol=1e-6)


def test_naive_refuses_weak_ballots_and_says_why():
    p = random_profile(5, 20, np.random.default_rng(9))
    with pytest.raises(ValueError, match="`ranks` holds partial or tied ballots.*not derived"):
        footrule.naive_dp_footrule_aggregate(p, epsilon=1.0)


# (d) strict ballots: exactly what they gave before


def _strict_preferences(R):
    return Preferences(
        orders=tuple(tuple(np.array([q]) for q in np.argsort(r)) for r in R),
        counts=np.ones(len(R), int),
        item_ids=np.arange(1, R.shape[1] + 1),
        item_names=tuple(str(q) for q in range(R.shape[1])),
        data_type="soc",
    )


@pytest.mark.parametrize("mode", ["fast", "exact"])
def test_strict_ballots_give_the_same_results_as_before(mode):
    R = pr.sample_plackett_luce(np.linspace(1, 0, 6), 300, rng=5)
    p = _strict_preferences(R)
    with pr.use_noise(mode):
        for kw in MODELS:
            a = tree.private_position_costs(R, epsilon=1.0, rng=7, **kw)
            b = tree.private_position_costs(p, epsilon=1.0, rng=7, **kw)
            np.testing.assert_array_equal(a.gamma, b.gamma)
            assert "ballots" not in a.diagnostics
            s1, _ = tree.tree_sensitivity(
                6, scope="ranking" if kw.get("model") != "local" else "value"
            )
            np.testing.assert_allclose(
                a.diagnostics["sensitivity_l1"] * (300 if not kw.get("model") else 1), s1
            )
        x = footrule.dp_pairwise_indegree_aggregate(R, epsilon=1.0, rng=2)
        y = footrule.dp_pairwise_indegree_aggregate(p, epsilon=1.0, rng=2)
        np.testing.assert_array_equal(x.diagnostics["w"], y.diagnostics["w"])
        u = footrule.naive_dp_footrule_aggregate(R, epsilon=1.0, rng=2)
        v = footrule.naive_dp_footrule_aggregate(p, epsilon=1.0, rng=2)
        np.testing.assert_array_equal(u.diagnostics["gamma"], v.diagnostics["gamma"])
    f1, f2 = pr.footrule_aggregate(R), pr.footrule_aggregate(p)
    assert np.array_equal(f1.order, f2.order) and f1.diagnostics == f2.diagnostics
    G = tree.exact_position_costs(R)  # the half-unit route gives the same costs, bit for bit
    H2 = tree.weak_histograms(tree.doubled_positions(R))
    np.testing.assert_array_equal(tree.cost_counts(H2) / (2 * len(R)), G)


@pytest.mark.skipif(shared_data_dir() is None, reason="the shared data folder is not here")
def test_the_shared_sushi_soi_goes_straight_to_the_footrule():
    p = pr.read_preflib(shared_data_dir() / "preflib-sushi" / "00014-00000002.soi.gz")
    f, b = pr.footrule_aggregate(p), pr.borda_aggregate(p)
    assert sorted(f.order) == list(range(100))
    assert pr.kendall_tau_distance(f.ranks, b.ranks) < 0.15 * 4950  # 10% of the pairs apart
    d = pr.dp_footrule_aggregate(p, epsilon=1.0, rng=0)
    assert d.epsilon == 1.0 and sorted(d.order) == list(range(100))


@pytest.mark.parametrize("mode", ["fast", "exact"])
def test_weak_ballots_give_the_same_release_whatever_the_chunks(mode):
    "The release of a PrefLib file read in chunks of 7 rows equals that of the whole table"
    p = random_profile(5, 60, np.random.default_rng(31))
    with pr.use_noise(mode):
        for kw in MODELS:
            a = tree.private_position_costs(p, epsilon=1.0, rng=6, **kw)
            b = tree.private_position_costs(p, epsilon=1.0, rng=6, chunk_rows=7, **kw)
            np.testing.assert_allclose(b.gamma, a.gamma, rtol=1e-12, atol=1e-12)
        x = footrule.dp_pairwise_indegree_aggregate(p, epsilon=1.0, rng=6)
        assert "ballots" in x.diagnostics
    f1, f2 = pr.footrule_aggregate(p), pr.footrule_aggregate(p, chunk_rows=7)
    assert np.array_equal(f1.order, f2.order)
    assert f1.diagnostics["footrule_cost"] == pytest.approx(f2.diagnostics["footrule_cost"])
