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
