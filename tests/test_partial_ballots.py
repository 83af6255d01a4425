"""Partial and tied ballots (issue 32, item 1, first part): PrefLib orders with unranked or tied
candidates go straight to Borda and Kemeny, under one semantics (a ranked candidate beats an
unranked one; tied and unranked candidates express no preference among themselves). Checked
against brute force on random weak profiles; the sensitivities are searched over every pair of
weak orders at small m; the other aggregators refuse them by name."""

import itertools

import numpy as np
import pytest

import privrank as pr
from privrank import core, kemeny
from privrank.datasets import Preferences, shared_data_dir


def weak_orders(m):
    "Every weak order of m candidates, as tiers (0 = best): the ordered set partitions"
    out = set()
    for levels in itertools.product(range(m), repeat=m):
        used = sorted(set(levels))
        out.add(tuple(used.index(x) for x in levels))  # dense tiers
    return [np.array(t) for t in sorted(out)]


def random_profile(m, n, rng):
    "n random ballots: a few candidates ranked in tiers (ties), the rest unranked (tied last)"
    orders = []
    for _ in range(n):
        k = int(rng.integers(1, m + 1))  # candidates ranked
        ranked = rng.permutation(m)[:k]
        cuts = np.sort(rng.choice(np.arange(1, k), size=int(rng.integers(0, k)), replace=False))
        orders.append(tuple(np.split(ranked, cuts)))
    return Preferences(
        orders=tuple(orders),
        counts=rng.integers(1, 4, len(orders)),
        item_ids=np.arange(1, m + 1),
        item_names=tuple(str(q) for q in range(1, m + 1)),
        data_type="toi",
    )


def tiers_of(prefs):
    "(voters, m) tiers: each order's tier per candidate, the unranked after the last, by voter"
    m, rows = prefs.n_items, []
    for order, c in zip(prefs.orders, prefs.counts):
        t = np.full(m, len(order))
        for k, tier in enumerate(order):
            t[tier] = k
        rows += [t] * int(c)
    return np.array(rows)


def brute_counts(T):
    return (T[:, :, None] < T[:, None, :]).sum(axis=0)


def brute_borda(T):
    m = T.shape[1]
    beats = (T[:, :, None] < T[:, None, :]).sum(axis=2)
    tied = (T[:, :, None] == T[:, None, :]).sum(axis=2) - 1
    return (beats + tied / 2).sum(axis=0) + 0 * m


@pytest.mark.parametrize("seed", range(6))
def test_borda_scores_each_candidate_by_its_averaged_position(seed):
    rng = np.random.default_rng(seed)
    p = random_profile(int(rng.integers(2, 9)), 40, rng)
    res = pr.borda_aggregate(p)
    assert np.array_equal(res.scores, brute_borda(tiers_of(p)))
    assert "averaged positions" in res.diagnostics["ballots"]
    strict = pr.borda_aggregate(p.to_ranks())  # completing the ballots changes the scores
    assert strict.scores.sum() == res.scores.sum()


@pytest.mark.parametrize("seed", range(8))
def test_kemeny_is_the_brute_force_optimum_of_the_margins(seed):
    rng = np.random.default_rng(100 + seed)
    m = int(rng.integers(3, 8))
    p = random_profile(m, 30, rng)
    C = brute_counts(tiers_of(p))
    cost = lambda order: sum(C[v, u] for a, u in enumerate(order) for v in order[a + 1 :])
    best = min(cost(o) for o in itertools.permutations(range(m)))
    for solver in ("auto", "exact", "ilp"):
        got = pr.kemeny_aggregate(p, solver=solver)
        assert cost(list(got.order)) == best, (solver, got.order)


def subset_dp_optimum(C):
    """The least Kemeny cost of the margins C (C[u, v]: voters putting u before v), by an
    independent dynamic programme over the sets of candidates placed first (Held-Karp style)"""
    m = len(C)
    best = np.full(1 << m, np.inf)
    best[0] = 0.0
    for S in range(1 << m):
        if best[S] == np.inf:
            continue
        placed = [y for y in range(m) if S >> y & 1]
        for x in range(m):
            if not S >> x & 1:  # x after every placed y: each voter putting x before y disagrees
                c = best[S] + sum(C[x, y] for y in placed)
                best[S | 1 << x] = min(best[S | 1 << x], c)
    return best[-1]


@pytest.mark.parametrize("seed", range(4))
def test_kemeny_is_optimal_up_to_ten_candidates_against_a_subset_dp(seed):
    "The done-when of issue 32: m <= 10 random partial profiles, an independent exact optimum"
    rng = np.random.default_rng(300 + seed)
    for m in (8, 9, 10):
        p = random_profile(m, 25, rng)
        C = brute_counts(tiers_of(p))
        want = subset_dp_optimum(C)
        for solver in ("auto", "exact", "ilp"):
            order = list(pr.kemeny_aggregate(p, solver=solver).order)
            got = sum(C[v, u] for a, u in enumerate(order) for v in order[a + 1 :])
            assert got == want, (m, solver, got, want)


def test_the_sensitivities_hold_over_every_pair_of_weak_ballots_and_are_attained():
    "Borda (averaged) and the margins, under replacing one ballot by any other, at m = 2..4"
    for m in (2, 3, 4):
        W = np.array(weak_orders(m))
        pts = core._level_points2(W) / 2  # each ballot's averaged Borda points
        M = np.sign(W[:, None, :] - W[:, :, None])  # M[b, u, v] = +1 if u beats v in ballot b
        iu = np.triu_indices(m, 1)
        margins = M[:, iu[0], iu[1]]
        d_pts = pts[:, None, :] - pts[None, :, :]
        d_mar = margins[:, None, :] - margins[None, :, :]
        l1, l2 = core.borda_sensitivity(m)
        assert np.abs(d_pts).sum(-1).max() == l1 and np.abs(d_pts).sum(-1).max() > l1 / 2
        assert np.sqrt((d_pts**2).sum(-1)).max() == pytest.approx(l2)
        k1, k2 = kemeny.margin_sensitivity(1, m)  # per voter: n = 1
        assert np.abs(d_mar).sum(-1).max() == k1 and np.abs(d_mar).sum(-1).max() > k1 / 2
        assert np.sqrt((d_mar**2).sum(-1)).max() == pytest.approx(k2)


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_private_borda_on_weak_ballots(mode, delta):
    rng = np.random.default_rng(7)
    p = random_profile(6, 300, rng)
    exact = pr.borda_aggregate(p)
    with pr.use_noise(mode):
        r1 = pr.dp_borda_aggregate(p, epsilon=1.0, delta=delta, rng=3)
        r2 = pr.dp_borda_aggregate(p, epsilon=1.0, delta=delta, rng=3)
        big = pr.dp_borda_aggregate(p, epsilon=1e4, delta=delta, rng=3)
    assert np.array_equal(r1.scores, r2.scores)  # the same release for the same seed
    assert r1.epsilon == 1.0 and r1.noise == mode and "averaged" in r1.diagnostics["ballots"]
    assert np.abs(big.scores - exact.scores).max() < 5  # the noise is centred on the points
    if mode == "exact":
        assert np.array_equal(r1.scores * 2, np.round(r1.scores * 2))  # on the half-point grid


def test_private_kemeny_takes_weak_ballots_in_the_large_n_regime():
    rng = np.random.default_rng(8)
    p = random_profile(5, 2000, rng)
    res = pr.dp_kemeny_aggregate(p, epsilon=1.0, rng=0)
    assert res.diagnostics["regime"] == "large_n"
    with pytest.raises(ValueError, match="partial or tied ballots"):
        pr.dp_kemeny_aggregate(p, epsilon=1.0, regime="small_n", n_buckets=2, rng=0)


def test_the_reading_comes_from_the_declared_type_never_from_the_ballots():
    """A reading chosen by the ballots would tell, by the kind of release, whether a voter left
    candidates unranked: .soi/.toc/.toi data are weak orders even when every ballot is complete
    and strict, and .soc data that are not complete strict are refused"""
    rng = np.random.default_rng(11)
    m = 6
    orders = tuple(tuple(np.array([q]) for q in rng.permutation(m)) for _ in range(40))
    make = lambda o, t: Preferences(
        orders=o, counts=np.ones(len(o), np.int64), item_ids=np.arange(1, m + 1),
        item_names=tuple(map(str, range(1, m + 1))), data_type=t,
    )  # fmt: skip
    complete, soc = make(orders, "soi"), make(orders, "soc")
    partial = make(((orders[0][0],), *orders[1:]), "soi")  # voter 0 ranks one candidate
    assert core.rank_source(complete, None, None, None)[1] is core.WEAK
    assert core.rank_source(soc, None, None, None)[1] is False
    assert np.array_equal(pr.borda_aggregate(complete).scores, pr.borda_aggregate(soc).scores)
    with pr.use_noise("exact"):  # one lattice for both neighbours: half points
        half = [
            pr.dp_borda_aggregate(p, epsilon=1.0, rng=s).scores * 2
            for p in (complete, partial)
            for s in range(5)
        ]
        strict = [pr.dp_borda_aggregate(soc, epsilon=1.0, rng=s).scores for s in range(5)]
    assert all(np.array_equal(h, np.round(h)) for h in half)
    assert sum(int((h % 2 == 1).sum()) for h in half) > 0  # odd half points: released as such
    assert all(np.array_equal(s, np.round(s)) for s in strict)
    assert pr.dp_kemeny_aggregate(complete, epsilon=1.0, rng=0).diagnostics["regime"] == "large_n"
    with pytest.raises(ValueError, match=r"^`ranks`: .* order 0 is partial or tied.*'soi'"):
        pr.borda_aggregate(make(partial.orders, "soc"))


@pytest.mark.parametrize(
    "call",
    [
        # the footrule, its trees and the pairwise in-degree take them now (issue 32, item 1:
        # tests/test_partial_footrule.py); the naive footrule baseline refuses them, saying why
        lambda p: pr.footrule.naive_dp_footrule_aggregate(p, epsilon=1.0),
    ],
)
def test_the_aggregators_that_do_not_take_weak_ballots_yet_say_so(call):
    p = random_profile(5, 20, np.random.default_rng(9))
    with pytest.raises(ValueError, match="`ranks` holds partial or tied ballots"):
        call(p)


@pytest.mark.skipif(shared_data_dir() is None, reason="the shared data folder is not here")
def test_the_shared_sushi_soi_goes_straight_to_borda_and_kemeny():
    p = pr.read_preflib(shared_data_dir() / "preflib-sushi" / "00014-00000002.soi.gz")
    b, k = pr.borda_aggregate(p), pr.kemeny_aggregate(p)
    assert sorted(b.order) == list(range(100)) and sorted(k.order) == list(range(100))
    assert pr.kendall_tau_distance(b.ranks, k.ranks) < 0.05 * 4950  # they nearly agree


def test_btl_compares_every_pair_and_ties_the_unexpressed_ones():
    "The pairs a voter compares never depend on her ballot: all pairs, a tie where she is silent"
    rng = np.random.default_rng(11)
    p = random_profile(5, 40, rng)
    T = tiers_of(p)
    c = pr.ranks_to_comparisons(p)
    n = p.n_voters
    assert c.n_comparisons == n * 10 and np.array_equal(np.bincount(c.user), np.full(n, 10))
    I, J = np.triu_indices(5, 1)
    assert np.array_equal(c.tie, (T[:, I] == T[:, J]).ravel())
    strict = ~c.tie
    assert (T[c.user[strict], c.winner[strict]] < T[c.user[strict], c.loser[strict]]).all()
    full = Preferences(  # a strict complete profile: the comparisons of its ranks
        orders=tuple(tuple(np.array([q]) for q in rng.permutation(4)) for _ in range(10)),
        counts=np.ones(10, int),
        item_ids=np.arange(1, 5),
        item_names=tuple("abcd"),
        data_type="soc",
    )
    a, b = pr.ranks_to_comparisons(full), pr.ranks_to_comparisons(full.ranks)
    assert np.array_equal(a.winner, b.winner) and not a.tie.any()
    direct, via = pr.btl_aggregate(p), pr.btl_aggregate(c)
    assert np.array_equal(direct.order, via.order) and np.allclose(direct.scores, via.scores)
    res = pr.dp_btl_aggregate(p, epsilon=1.0, rng=0, model="local")
    assert res.epsilon == 1.0 and res.privacy_unit == "voter" and res.n_voters == n
