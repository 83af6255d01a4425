"""Private top-k selection (nbs/13_top_k.ipynb, issue 32 item 3): each mechanism's output law
against its exact law on tiny instances, its privacy on worst-case neighbours (calibrated: within
epsilon; half the noise: beyond), on both noise paths; seeds, dtypes, sources, refusals by name,
and the ledger's events."""

import fractions
import itertools
import math

import numpy as np
import pytest
from scipy import stats

import privrank as pr
from privrank import core, topk
from privrank.datasets import Preferences
from privrank.topk import dp_top_k, exact_law

ALPHA = 1e-6  # a correct sampler fails a law test with this probability

FAST = {
    "gumbel": topk.gumbel_top_k,
    "permute-and-flip": topk.pnf_top_k,
    "laplace": topk.laplace_top_k,
    "joint": topk.joint_top_k,
}
EXACT = {  # exact sampler -> the law it must have
    "gumbel": (topk.gumbel_top_k_exact, "gumbel"),
    "permute-and-flip": (topk.pnf_top_k_exact, "permute-and-flip"),
    "laplace": (topk.laplace_top_k_exact, "discrete laplace"),
}
INSTANCES = [  # (scores, k, noise scale): ties, a clear best, negative scores, k = d
    (np.array([2.0, 1.0, 1.0, 0.0]), 1, 1.5),
    (np.array([2.0, 1.0, 1.0, 0.0]), 2, 1.5),
    (np.array([3.0, -1.0, 0.0, 2.0, 2.0]), 2, 2.0),
    (np.array([0.0, 0.0, 1.0]), 2, 0.7),
    (np.array([1.0, 0.0]), 2, 1.0),
]


def pvalue(outputs, law):
    keys = list(law)
    index = {s: i for i, s in enumerate(keys)}
    obs = np.bincount([index[tuple(o)] for o in outputs], minlength=len(keys))
    p = np.array([law[s] for s in keys])
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    return stats.chisquare(obs, p / p.sum() * len(outputs)).pvalue


@pytest.mark.parametrize("method", list(FAST))
@pytest.mark.parametrize("case", range(len(INSTANCES)))
def test_fast_sampler_has_its_exact_law(method, case):
    u, k, scale = INSTANCES[case]
    out = FAST[method](u, k, scale, rng=np.random.default_rng(100 + case), n=60_000)
    assert pvalue(out, exact_law(method, u, k, scale)) > ALPHA


@pytest.mark.parametrize("method", list(EXACT))
@pytest.mark.parametrize("case", [1, 2, 3])
def test_exact_sampler_has_its_exact_law(method, case):
    u, k, scale = INSTANCES[case]
    f, law = EXACT[method]
    q = fractions.Fraction(scale)
    out = f(u.astype(np.int64), k, q, rng=np.random.default_rng(200 + case), n=20_000)
    assert pvalue(out, exact_law(law, u, k, float(q))) > ALPHA


def test_the_law_test_catches_a_wrong_scale():
    "The chi-square test has the power to see a mechanism run at half its scale"
    u, k, scale = INSTANCES[1]
    for method, f in FAST.items():
        out = f(u, k, scale / 2, rng=np.random.default_rng(1), n=60_000)
        assert pvalue(out, exact_law(method, u, k, scale)) < ALPHA, method


def privacy_loss(method, u, k, scale):
    """The largest |log p(s) / p'(s)| over outputs s and the neighbours u + v, v in {-1, 0, 1}^d
    (sensitivity 1)"""
    base = exact_law(method, u, k, scale)
    worst = 0.0
    for v in itertools.product((-1, 0, 1), repeat=u.size):
        law = exact_law(method, u + np.array(v), k, scale)
        worst = max(worst, max(abs(math.log(base[s] / law[s])) for s in base))
    return worst


E = 1.0
CALIBRATED = {  # the scale dp_top_k uses at epsilon 1, sensitivity 1
    "gumbel": lambda k: 2 * k / E,
    "permute-and-flip": lambda k: 2 * k / E,
    "laplace": lambda k: 2 * k / E,
    "discrete laplace": lambda k: 2 * k / E,
    "joint": lambda k: 4 / E,
}
WORST = [  # (method, base scores, k): where half the noise shows
    ("gumbel", np.array([1.0, 1, 0, 0, 0, 0]), 2),
    ("gumbel", np.zeros(3), 1),
    ("permute-and-flip", np.array([1.0, 1, 0, 0, 0, 0]), 2),
    ("permute-and-flip", np.zeros(3), 1),
    ("joint", np.array([1.0, 0, 0, 0, 0, 0]), 2),
    ("joint", np.array([1.0, 0, 0, 0, 0, 0, 0]), 2),  # the audit's pair (08): 1.21 at half
    ("laplace", np.zeros(3), 1),
    ("laplace", np.zeros(4), 2),
    ("discrete laplace", np.zeros(3), 1),
]


@pytest.mark.parametrize("method, u, k", WORST, ids=[f"{w[0]}-{w[1].size}-{w[2]}" for w in WORST])
def test_privacy_on_worst_case_neighbours(method, u, k):
    "Calibrated: every output's probability within e^epsilon; half the noise: beyond"
    s = CALIBRATED[method](k)
    assert privacy_loss(method, u, k, s) <= E + 1e-9
    assert privacy_loss(method, u, k, s / 2) > E


def test_the_monotone_factor_is_caught():
    "exp(eps u / Delta) (the monotone case's factor) exceeds epsilon under replacement"
    u = np.zeros(3)
    for method in ("gumbel", "permute-and-flip"):
        assert privacy_loss(method, u, 1, 1 / E) > E  # scale Delta / epsilon: half of 2 Delta / eps


def test_the_joint_mechanism_at_k1_is_over_noised_by_two():
    "Its utility c_j - c_(1) moves by at most 2 Delta across j: epsilon / 2 at k = 1"
    assert privacy_loss("joint", np.zeros(4), 1, 4 / E) <= E / 2 + 1e-9


def test_joint_counts_against_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(60):
        d = int(rng.integers(2, 7))
        k = int(rng.integers(1, d + 1))
        u = rng.integers(0, 3, d).astype(float)
        items, row, col, U, logm, by_row = topk.joint_tables(u, k)
        c = u[items]
        count = {}
        for s in itertools.permutations(range(d), k):
            top = max(((c[i] - c[s[i]], (k - 1 - i) * d + s[i]), i, s[i]) for i in range(k))
            count[top[1:]] = count.get(top[1:], 0) + 1
        got = np.where(np.isfinite(logm), np.exp(logm), 0.0)
        want = [count.get((r, j), 0) for r, j in zip(row, col)]
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------------------------------
# the entry point

S = np.array([0, 3, 1, 3, 2, 0, 5, 1])
METHODS = ("auto", "permute-and-flip", "gumbel", "laplace", "joint")


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("method", METHODS)
def test_every_dtype_gives_the_same_release(mode, method):
    if mode == "exact" and method == "joint":
        pytest.skip("no exact sampler")
    with pr.use_noise(mode):
        got = [
            dp_top_k(S.astype(t), 3, epsilon=1.5, sensitivity=1, method=method, rng=9).items
            for t in (np.int64, np.int32, np.uint8, np.int16, np.float64, np.float32)
        ]
        bits = (S > 1).astype(float)  # 0/1 scores
        got01 = [
            dp_top_k(bits.astype(t), 3, epsilon=1.5, sensitivity=1, method=method, rng=9).items
            for t in (np.int64, np.int32, np.float64, np.uint8)
        ]
    # the exact path: integer dtypes stay whole, float dtypes go to the grid (the dtype decides)
    same = (range(6), range(4)) if mode == "fast" else ((0, 1, 2, 3), (0, 1, 3))
    for g in same[0]:
        np.testing.assert_array_equal(got[g], got[0])
    for g in same[1]:
        np.testing.assert_array_equal(got01[g], got01[0])
    if mode == "exact":
        np.testing.assert_array_equal(got[5], got[4])


@pytest.mark.parametrize("mode", ["fast", "exact"])
def test_a_seed_reproduces_a_release_and_the_batch_path_replays_it(mode):
    with pr.use_noise(mode):
        for m in METHODS[1:] if mode == "fast" else topk.EXACT_METHODS:
            for seed in (1, 2, 3):
                a = dp_top_k(S, 3, epsilon=1.0, sensitivity=1, method=m, rng=seed)
                b = dp_top_k(S, 3, epsilon=1.0, sensitivity=1, method=m, rng=seed)
                np.testing.assert_array_equal(a.items, b.items)
                r = topk.select_runs(S, 3, m, epsilon=1.0, rng=np.random.default_rng(seed), n=1)
                np.testing.assert_array_equal(r[0], a.items)


def test_the_exact_path_draws_no_floating_point_noise(monkeypatch):
    def boom(*a, **kw):
        raise AssertionError("a floating-point sampler decided an exact selection")

    for name in ("sample_gumbel", "sample_exponential", "sample_em", "sample_laplace"):
        monkeypatch.setattr(topk, name, boom)
    with pr.use_noise("exact"):
        for m in topk.EXACT_METHODS + ("auto",):
            r = dp_top_k(S, 3, epsilon=1.0, sensitivity=1, method=m, rng=0)
            assert r.noise == "exact" and r.diagnostics["noise_law"] in (
                "exact coins",
                "discrete laplace",
            )
        r = dp_top_k(S * 0.37, 2, epsilon=1.0, sensitivity=0.5, method="permute-and-flip", rng=0)
        assert r.diagnostics["grid"] == 2.0**-11 and r.diagnostics["sensitivity_units"] == 1024
        with pytest.raises(ValueError, match="`method`"):
            dp_top_k(S, 3, epsilon=1.0, sensitivity=1, method="joint", rng=0)


def test_statistics_of_rankings_and_their_sources():
    votes = pr.load_demo()
    R = votes.ranks
    truth = {
        "first": (R == 0).sum(0),
        "borda": core.borda_scores(R),
        "approval": (R < 3).sum(0),
    }
    for statistic, t in (("first", None), ("borda", None), ("approval", 3)):
        u = truth[statistic]
        # no noise to speak of: the true top 3 (up to ties: every voter puts Course 9 first)
        top = dp_top_k(R, 3, epsilon=1e9, statistic=statistic, approve=t, method="gumbel", rng=0)
        np.testing.assert_array_equal(u[top.items], np.sort(u)[::-1][:3])
        ref = dp_top_k(votes, 3, epsilon=0.5, statistic=statistic, approve=t, rng=4)
        assert ref.labels == tuple(votes.item_names[i] for i in ref.items)
        assert ref.diagnostics["n_voters"] == len(R) and ref.privacy_unit == "voter"
        for other in (R, R.astype(np.int8), [R[:40], R[40:100], R[100:]], R.tolist()):
            again = dp_top_k(other, 3, epsilon=0.5, statistic=statistic, approve=t, rng=4)
            np.testing.assert_array_equal(again.items, ref.items)
        linf, l1 = topk.topk_sensitivity(statistic, R.shape[1], t)
        assert ref.diagnostics["sensitivity_linf"] == linf
        assert ref.diagnostics["sensitivity_l1"] == l1


def test_partial_and_tied_ballots_select_by_their_averaged_statistics():
    "Each tier shares the first place, the approvals or the Borda points evenly (issue 32)"
    from test_partial_ballots import random_profile, tiers_of

    rng = np.random.default_rng(32)
    p = random_profile(7, 150, rng)
    T = tiers_of(p)
    lt = (T[:, None, :] < T[:, :, None]).sum(-1)  # candidates in a better tier
    le = (T[:, None, :] <= T[:, :, None]).sum(-1)  # ... at least as good, itself included
    truth = {
        "first": np.clip((1 - lt) / (le - lt), 0, 1).sum(0),
        "approval": np.clip((2 - lt) / (le - lt), 0, 1).sum(0),
        "borda": (2 * (7 - le) + (le - lt - 1)).sum(0) / 2,
    }
    for statistic, t in (("first", None), ("approval", 2), ("borda", None)):
        u = truth[statistic]
        for mode in ("fast", "exact"):
            with pr.use_noise(mode):
                top = dp_top_k(p, 3, epsilon=1e6, statistic=statistic, approve=t, rng=0)
                again = dp_top_k(p, 3, epsilon=1.0, statistic=statistic, approve=t, rng=5)
                np.testing.assert_array_equal(
                    again.items,
                    dp_top_k(p, 3, epsilon=1.0, statistic=statistic, approve=t, rng=5).items,
                )
            assert np.allclose(u[top.items], np.sort(u)[::-1][:3]), (statistic, mode)
            linf, l1 = topk.topk_sensitivity(statistic, 7, t)
            if statistic == "borda":  # in half points
                assert (top.diagnostics["sensitivity_linf"], top.diagnostics["sensitivity_l1"]) == (
                    2 * linf,
                    2 * l1,
                )
            elif mode == "exact":  # shares: on the grid, the float error in the sensitivity
                assert top.diagnostics["grid"] == 2.0**-10
                assert top.diagnostics["sensitivity_units"] == 1025
    # the declared type picks the reading: complete ballots in a .soi are weak orders too
    orders = np.argsort(T, axis=1, kind="stable")[:20]  # complete strict orders
    strict = Preferences(
        orders=tuple(tuple(np.array([q]) for q in o) for o in orders),
        counts=np.ones(20, np.int64), item_ids=np.arange(1, 8),
        item_names=tuple(map(str, range(1, 8))), data_type="soi",
    )  # fmt: skip
    assert "tiers sharing" in dp_top_k(strict, 2, epsilon=1.0, rng=0).diagnostics["statistic"]


def test_a_frame_and_a_series_give_labels():
    pd = pytest.importorskip("pandas")
    s = pd.Series([5.0, 1.0, 9.0], index=["a", "b", "c"])
    r = dp_top_k(s, 2, epsilon=1e9, sensitivity=1, rng=0)
    assert r.labels == ("c", "a") and r.privacy_unit == "user"
    R = pr.load_demo().ranks
    frame = pd.DataFrame(R, columns=[f"course {q}" for q in range(R.shape[1])])
    r = dp_top_k(frame, 2, epsilon=1.0, rng=3)
    assert r.labels == tuple(f"course {q}" for q in r.items)
    np.testing.assert_array_equal(r.items, dp_top_k(R, 2, epsilon=1.0, rng=3).items)


BAD = [
    (dict(data=np.array([1.0, np.nan])), "data"),
    (dict(data=np.array([1.0, -np.inf])), "data"),
    (dict(data=np.ones((2, 3))), "data"),
    (dict(data=np.array([], float)), "data"),
    (dict(data="123"), "data"),
    (dict(data=np.array(["a", "b"])), "data"),
    (dict(data=[[1.0], [2.0, 3.0]]), "data"),
    (dict(k=0), "k"),
    (dict(k=9), "k"),
    (dict(k=2.0), "k"),
    (dict(k=True), "k"),
    (dict(sensitivity=0), "sensitivity"),
    (dict(sensitivity=-1.0), "sensitivity"),
    (dict(sensitivity=math.nan), "sensitivity"),
    (dict(sensitivity=math.inf), "sensitivity"),
    (dict(sensitivity="1"), "sensitivity"),
    (dict(sensitivity=True), "sensitivity"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=math.nan), "epsilon"),
    (dict(epsilon=5e-324), "epsilon"),  # the noise scale would be infinite
    (dict(delta=1.0), "delta"),
    (dict(delta=-0.1), "delta"),
    (dict(method="pnf"), "method"),
    (dict(method=None), "method"),
    (dict(statistic="borda"), "statistic"),  # scores: no statistic of rankings to pick
    (dict(approve=2), "approve"),
    (dict(rng="seed"), "rng"),
    (dict(chunk_rows=10), "chunk_rows"),
    (dict(columns=["a"]), "columns"),
]


@pytest.mark.parametrize("change, name", BAD, ids=[f"{n}-{i}" for i, (_, n) in enumerate(BAD)])
def test_bad_input_is_refused_by_name(change, name):
    kw = dict(data=S.astype(float), k=2, epsilon=1.0, sensitivity=1, rng=0) | change
    with pytest.raises((ValueError, TypeError), match=f"`{name}`"):
        dp_top_k(**kw)


BAD_RANKINGS = [
    (dict(statistic="plurality"), "statistic"),
    (dict(statistic="approval"), "approve"),
    (dict(statistic="approval", approve=0), "approve"),
    (dict(statistic="approval", approve=9), "approve"),
    (dict(approve=3), "approve"),
    (dict(k=10), "k"),
    (dict(data=np.array([[0, 0, 1]])), "ranks"),
    (dict(data=np.array([[0.0, 1.0, 2.0]])), "ranks"),
]


@pytest.mark.parametrize("change, name", BAD_RANKINGS)
def test_bad_rankings_are_refused_by_name(change, name):
    kw = dict(data=pr.load_demo().ranks, k=2, epsilon=1.0, rng=0) | change
    with pytest.raises((ValueError, TypeError), match=f"`{name}`"):
        dp_top_k(**kw)


def test_sizes_beyond_the_memory_limit_are_refused():
    core.set_memory_limit(1 << 20)
    try:
        with pytest.raises(ValueError, match="`data`.*would need about"):
            dp_top_k(np.zeros(10_000), 10, epsilon=1.0, sensitivity=1, method="joint")
        with pytest.raises(ValueError, match="`data`.*would need about"):
            dp_top_k(np.zeros(100_000), 10, epsilon=1.0, sensitivity=1)
    finally:
        core.set_memory_limit(None)


# ------------------------------------------------------------------------------------------
# calibration and the ledger


def test_the_calibration_of_each_method():
    sc = dict(sensitivity=2.0, rng=0)
    r = dp_top_k(S, 4, epsilon=2.0, method="gumbel", **sc)
    assert r.diagnostics["noise_scale"] == pytest.approx(2 * 2.0 / 0.5) and r.delta == 0
    r = dp_top_k(S, 4, epsilon=2.0, method="permute-and-flip", **sc)
    assert r.diagnostics["noise_scale"] == pytest.approx(2 * 2.0 / 0.5)
    r = dp_top_k(S, 4, epsilon=2.0, method="laplace", **sc)
    assert r.diagnostics["noise_scale"] == pytest.approx(2 * 4 * 2.0 / 2.0)
    r = dp_top_k(S, 4, epsilon=2.0, method="joint", **sc)
    assert r.diagnostics["noise_scale"] == pytest.approx(4 * 2.0 / 2.0)
    # with delta: the Gumbel steps by zCDP, and the record says what was spent
    r = dp_top_k(S, 8, epsilon=1.0, delta=1e-6, method="gumbel", **sc)
    e = r.diagnostics["step_epsilon"]
    assert e > 1 / 8 and r.delta == 1e-6
    assert pr.ledger.zcdp_epsilon(8 * e * e / 8, delta=1e-6) <= 1.0
    r = dp_top_k(S, 2, epsilon=1.0, delta=1e-6, method="gumbel", **sc)
    assert r.diagnostics["step_epsilon"] == 0.5 and r.delta == 0.0  # pure is better at k = 2


def test_qsz_theorem_22_releases_the_set():
    u = np.arange(3000.0)
    r = dp_top_k(u, 1000, epsilon=0.1, delta=1e-6, sensitivity=1, method="laplace", rng=0)
    assert not r.ordered and r.delta == 1e-6
    assert np.all(np.diff(r.items) > 0)  # the set, in index order
    lam = 8 * math.sqrt(1000 * math.log(3000 / 1e-6)) / 0.1
    assert r.diagnostics["noise_scale"] == pytest.approx(lam)
    with pr.budget(epsilon=1.0, delta=1e-5) as b:
        dp_top_k(u, 1000, epsilon=0.1, delta=1e-6, sensitivity=1, method="laplace", rng=0)
    assert [ev.privacy for ev in b.log] == [("pure", 0.1, 1e-6)]
    with pr.use_noise("exact"):  # the theorem is about continuous noise: pure on the exact path
        r = dp_top_k(u, 1000, epsilon=0.1, delta=1e-6, sensitivity=1, method="laplace", rng=0)
    assert r.ordered and r.delta == 0.0


@pytest.mark.parametrize("mode", ["fast", "exact"])
def test_the_ledger_events_of_each_method(mode):
    eps, k = 0.9, 3
    e3 = topk.step_epsilon(k, "gumbel", epsilon=eps, delta=0.0)
    want = {
        "gumbel": [("exponential", e3)] * k,
        "permute-and-flip": [("rr", e3)] * k,
        "laplace": [("rr", eps)],
        "joint": [("exponential", eps)],
    }
    for m, events in want.items():
        if mode == "exact" and m == "joint":
            continue
        with pr.use_noise(mode), pr.budget(epsilon=5.0, delta=1e-6) as b:
            dp_top_k(S, k, epsilon=eps, sensitivity=1, method=m, rng=0)
        assert [ev.privacy for ev in b.log] == events, m
        assert all(ev.mechanism == "dp_top_k" and ev.privacy_unit == "user" for ev in b.log)
        assert b.spent[0] <= eps + 1e-12
    # the l1 route of first places is the Laplace mechanism (fast path), a pure release (exact)
    votes = pr.load_demo()
    with pr.use_noise(mode), pr.budget(epsilon=5.0) as b:
        r = dp_top_k(votes, 3, epsilon=eps, method="laplace", rng=0)
    assert r.diagnostics["noise_scale"] == pytest.approx(2 / eps, rel=1e-9)
    assert [ev.privacy for ev in b.log] == [("laplace" if mode == "fast" else "rr", eps)]
    assert b.log[0].privacy_unit == "voter"


def test_the_k_releases_are_charged_all_or_none_before_any_draw():
    g = np.random.default_rng(5)
    with pr.budget(epsilon=1.0) as b:
        dp_top_k(S, 4, epsilon=0.8, sensitivity=1, method="permute-and-flip", rng=g)
        state = g.bit_generator.state
        with pytest.raises(pr.BudgetExceeded):
            dp_top_k(S, 4, epsilon=0.8, sensitivity=1, method="permute-and-flip", rng=g)
        assert g.bit_generator.state == state
    assert len(b.log) == 4
    with pr.budget(epsilon=0.7) as b:  # exactly the budget fits: 3 x fl(0.7 / 3) adds up past 0.7
        dp_top_k(S, 3, epsilon=0.7, sensitivity=1, method="permute-and-flip", rng=0)
    assert len(b.log) == 3 and b.spent[0] <= 0.7


def test_auto_follows_the_smallest_scale():
    choose = lambda k, d, linf, l1, delta: topk.choose_top_k_method(
        k, d, linf, l1, epsilon=1.0, delta=delta
    )[0]
    assert choose(10, 1000, 1, None, 0.0) == "permute-and-flip"
    assert choose(10, 1000, 1, None, 1e-6) == "gumbel"
    assert choose(3, 9, 1, 2, 0.0) == "laplace"
    assert choose(1, 9, 1, 2, 0.0) == "permute-and-flip"
    with pr.use_noise("exact"):
        r = dp_top_k(S, 3, epsilon=1.0, delta=1e-6, sensitivity=1, rng=0)
        assert r.method in topk.EXACT_METHODS
    r = dp_top_k(pr.load_demo(), 3, epsilon=1.0, rng=0)
    assert r.method == "laplace" and "laplace" in r.diagnostics["why"]


def test_one_item_and_all_items():
    r = dp_top_k(np.array([4.0]), 1, epsilon=1.0, sensitivity=1, rng=0)
    assert r.items.tolist() == [0]
    for m in METHODS[1:]:
        r = dp_top_k(S, S.size, epsilon=1.0, sensitivity=1, method=m, rng=0)
        assert sorted(r.items.tolist()) == list(range(S.size))


def test_exact_race_refinement_keeps_the_law(monkeypatch):
    """The exponential mechanism's exact race decides almost every run by 64 bits per item;
    the rare undecided runs go to `decimal` with more bits. Forced (every interval widened by
    0.3), most runs are refined, and the law stays exact."""
    wide = topk._race_bounds
    monkeypatch.setattr(topk, "_race_bounds", lambda u, g: tuple(
        b + s for b, s in zip(wide(u, g), (-0.3, 0.3))))  # fmt: skip
    u, k, scale = INSTANCES[2]
    before = topk._RACE_EVENTS["refined"]
    q = fractions.Fraction(scale)
    out = topk.gumbel_top_k_exact(u.astype(np.int64), k, q, rng=np.random.default_rng(9), n=20_000)
    assert topk._RACE_EVENTS["refined"] - before > 5_000
    assert pvalue(out, exact_law("gumbel", u, k, float(q))) > ALPHA


def test_exact_race_takes_one_word_per_item_whatever_the_scores():
    "The generator's state after the race depends on the number of items and runs only"
    for z in (np.zeros(50, np.int64), np.arange(50) * 1000, np.arange(50) % 3):
        g = np.random.default_rng(4)
        topk.gumbel_top_k_exact(z, 5, fractions.Fraction(3, 2), rng=g, n=30)
        assert g.bit_generator.state == np.random.PCG64(4).advance(30 * 50).state
