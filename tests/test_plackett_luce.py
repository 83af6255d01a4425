"""Plackett-Luce on partial rankings (issue 32, item 2; nbs/02_btl.ipynb): the MLE equals
choix's ILSR on the shared NASCAR and Sushi data, the likelihood and its gradient equal their
definitions for both readings of an unranked item, a missing MLE is refused, bad input is named."""

import gzip

import numpy as np
import pytest

from privrank.btl import PL_UNRANKED, _pl_layout, fit_plackett_luce
from privrank.datasets import read_preflib, shared_data_dir

choix = pytest.importorskip("choix")
SHARED = shared_data_dir()
needs_data = pytest.mark.skipif(SHARED is None, reason="the shared data folder is not here")


def centred(x):
    return x - x.mean()


@needs_data
def test_nascar_equals_choix_and_the_four_drivers_who_only_lose_are_refused():
    with gzip.open(SHARED / "plackettluce-rankings" / "nascar2002_orderings.csv.gz", "rt") as f:
        races = np.loadtxt(f, delimiter=",", skiprows=1, dtype=np.int64)[:, 1:] - 1
    kept = [r[r < 83] for r in races]
    th, dg = fit_plackett_luce(kept, 83)
    ref = choix.ilsr_rankings(83, [list(r) for r in kept], alpha=0.0, tol=1e-12, max_iter=10_000)
    assert dg["converged"] and np.abs(th - centred(ref)).max() < 1e-6
    with pytest.raises(ValueError, match="does not exist"):
        fit_plackett_luce(list(races), 87)
    th_ridge, _ = fit_plackett_luce(list(races), 87, lam=0.1)  # a ridge gives one answer
    assert np.isfinite(th_ridge).all() and th_ridge[83:].max() < th_ridge[:83].min() + 1.0


@needs_data
def test_sushi_soi_equals_choix():
    sushi = read_preflib(SHARED / "preflib-sushi" / "00014-00000002.soi.gz")
    tens = [np.concatenate(o) for o in sushi.orders]
    th, dg = fit_plackett_luce(tens, sushi.n_items, counts=sushi.counts)
    every = [list(r) for r, k in zip(tens, sushi.counts) for _ in range(k)]
    ref = choix.ilsr_rankings(sushi.n_items, every, alpha=0.0, tol=1e-12)
    assert dg["converged"] and np.abs(th - centred(ref)).max() < 1e-6
    # counts and repeated rankings are the same data
    th2, _ = fit_plackett_luce([np.array(r) for r in every[:500]], sushi.n_items, lam=0.5)
    th3, _ = fit_plackett_luce(tens[:500], sushi.n_items, counts=sushi.counts[:500], lam=0.5)
    assert np.abs(th2 - th3).max() < 1e-8


def brute_ll(th, rankings, m, unranked):
    total = 0.0
    for r in rankings:
        offer = list(r) + ([q for q in range(m) if q not in r] if unranked == "below" else [])
        n_choices = len(r) - (unranked == "absent" or len(r) == m)
        for i in range(n_choices):
            total += th[offer[i]] - np.log(np.exp(th[offer[i:]]).sum())
    return total


@pytest.mark.parametrize("unranked", PL_UNRANKED)
def test_likelihood_and_stationarity_against_the_definition(unranked):
    g = np.random.default_rng(5)
    for _ in range(30):
        m = int(g.integers(3, 8))
        rks = [g.permutation(m)[: int(g.integers(1, m + 1))] for _ in range(int(g.integers(3, 15)))]
        lam = 0.2
        th, dg = fit_plackett_luce(rks, m, unranked=unranked, lam=lam)
        assert dg["log_likelihood"] == pytest.approx(brute_ll(th, rks, m, unranked), abs=1e-9)
        f = lambda t: brute_ll(t, rks, m, unranked) - lam / 2 * t @ t
        num = np.array([(f(th + 1e-6 * e) - f(th - 1e-6 * e)) / 2e-6 for e in np.eye(m)])
        assert np.abs(num).max() < 1e-5
        # a wrong estimate is not stationary: the check can fail
        num2 = np.array(
            [(f(th + 0.1 + 1e-6 * e) - f(th + 0.1 - 1e-6 * e)) / 2e-6 for e in np.eye(m)]
        )
        assert np.abs(num2).max() > 1e-3 or m < 2


def test_dtypes_and_lists_give_the_same_estimate():
    g = np.random.default_rng(2)
    rks = [g.permutation(6)[:4] for _ in range(40)]
    base = fit_plackett_luce(rks, 6)[0]
    for conv in (lambda r: r.astype(np.int32), lambda r: r.astype(np.uint8), list):
        assert np.abs(fit_plackett_luce([conv(r) for r in rks], 6)[0] - base).max() < 1e-10


@pytest.mark.parametrize(
    "kw, name",
    [
        (dict(rankings=np.arange(3)), "rankings"),
        (dict(rankings=[]), "rankings"),
        (dict(rankings=[np.array([0, 5])]), "rankings"),
        (dict(rankings=[np.array([0, 0, 1])]), "rankings"),
        (dict(rankings=[np.array([0.0, 1.0])]), "rankings"),
        (dict(rankings=[np.array([], int)]), "rankings"),
        (dict(rankings=[np.array([[0, 1]])]), "rankings"),
        (dict(n_items=1), "n_items"),
        (dict(n_items="3"), "n_items"),
        (dict(counts=[1.0]), "counts"),
        (dict(counts=[1.0, -1.0, 1.0]), "counts"),
        (dict(counts=[1.0, np.nan, 1.0]), "counts"),
        (dict(unranked="last"), "unranked"),
        (dict(lam=-1.0), "lam"),
        (dict(lam=np.inf), "lam"),
        (dict(max_iter=0), "max_iter"),
    ],
)
def test_bad_input_is_named(kw, name):
    args = dict(rankings=[np.array([0, 1]), np.array([1, 2]), np.array([2, 0])], n_items=3)
    args.update(kw)
    with pytest.raises((TypeError, ValueError), match=f"`{name}`"):
        fit_plackett_luce(**args)


def test_layout_appends_each_rankings_unranked_items_after_it():
    o, choice, c, lens, seg = _pl_layout([np.array([2, 0]), np.array([1])], 4, None, "below")
    assert o.tolist() == [2, 0, 1, 3, 1, 0, 2, 3]
    assert choice.tolist() == [True, True, False, False, True, False, False, False]


@needs_data
def test_the_entry_point_on_sushi_equals_choix_and_rank_breaking_is_close_to_it():
    import privrank as pr
    from privrank.core import kendall_tau_distance

    sushi = read_preflib(SHARED / "preflib-sushi" / "00014-00000002.soi.gz")
    res = pr.plackett_luce_aggregate(sushi)
    every = [list(np.concatenate(o)) for o, k in zip(sushi.orders, sushi.counts) for _ in range(k)]
    ref = choix.ilsr_rankings(sushi.n_items, every, alpha=0.0, tol=1e-12)
    assert np.abs(res.scores - centred(ref)).max() < 1e-6
    assert (res.method, res.private, res.n_voters) == ("plackett-luce", False, 5000)
    assert np.array_equal(res.order, np.argsort(-res.scores, kind="stable"))
    # full rank breaking of the items each voter ranked: BTL's estimate is near PL's (4.3% of
    # the pairs measured in 02); every pair of every ballot ("below") is not PL's likelihood
    broken = pr.ranks_to_comparisons(sushi, unranked="absent")
    assert broken.n_comparisons == 5000 * 45 and np.bincount(broken.user).max() == 45
    pairs = 100 * 99 / 2
    near = kendall_tau_distance(pr.btl_aggregate(broken).ranks, res.ranks) / pairs
    assert near < 0.06, near


def test_absent_keeps_exactly_the_pairs_of_ranked_items():
    "Against brute force on random partial and tied ballots"
    from test_partial_ballots import random_profile, tiers_of

    import privrank as pr

    rng = np.random.default_rng(5)
    p = random_profile(6, 30, rng)
    T = tiers_of(p)
    lens = np.repeat([len(o) for o in p.orders], p.counts)  # each voter's number of tiers
    c = pr.ranks_to_comparisons(p, unranked="absent")
    want = set()
    for v in range(len(T)):
        for a in range(6):
            for b in range(a + 1, 6):
                if T[v, a] < lens[v] and T[v, b] < lens[v]:  # both ranked
                    want.add((v, min(a, b), max(a, b), T[v, a] == T[v, b]))
    got = {(u, min(w, l), max(w, l), t) for u, w, l, t in zip(c.user, c.winner, c.loser, c.tie)}
    assert got == want and len(got) == c.n_comparisons
    for u, w, l, t in zip(c.user, c.winner, c.loser, c.tie):  # the winner is ranked higher
        assert t or T[u, w] < T[u, l]
    full = pr.ranks_to_comparisons(p)  # "below": every pair of every voter
    assert full.n_comparisons == len(T) * 15
    with pytest.raises(ValueError, match="Plackett-Luce ranks strictly"):
        pr.plackett_luce_aggregate(p)  # tied orders: refused by their declared type
