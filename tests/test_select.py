"""Accounted tuning (issue 31, item 4; nbs/00b_ledger.ipynb, "Tuning over private runs"):
`ledger.repeat_and_select`, the best of K private runs (Papernot and Steinke 2022), charged once
before any run. Its cost against Google's `dp_accounting`, the pure bounds, the refusal before any
draw, the runs' declarations, bad input and reproducibility."""

import math

import numpy as np
import pytest

import privrank as pr
from privrank.core import analytic_gaussian_sigma
from privrank.ledger import (
    Event,
    Selection,
    budget,
    charge,
    repeat_and_select,
    selection_cost,
)

VOTES = pr.load_demo().ranks


def free_run(c, rng):
    "A run that releases nothing: its output carries a draw of its generator"
    return (c, int(rng.integers(1 << 30))), float(rng.random())


# -- the cost --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "z, mean, shape",
    [(1.0, 10, 1), (2.0, 10, 1), (1.0, 10, 0), (1.0, 10, 0.5), (3.0, 5, 2), (5.0, 100, 1)],
)
def test_gaussian_runs_agree_with_dp_accounting(z, mean, shape):
    "Within 1% of dp_accounting's RdpAccountant at delta 1e-6, and never more than 1% below"
    dp_accounting = pytest.importorskip("dp_accounting")
    # the runs' (epsilon, delta) whose analytic Gaussian has multiplier z: epsilon at delta 1e-6
    eps = pr.ledger.gaussian_epsilon(z, delta=1e-6)
    assert abs(analytic_gaussian_sigma(epsilon=eps, delta=1e-6) / z - 1) < 1e-6
    ours, d = selection_cost(epsilon=eps, delta=1e-6, mean=mean, shape=shape, select_delta=1e-6)
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(
        dp_accounting.dp_event.RepeatAndSelectDpEvent(dp_accounting.GaussianDpEvent(z), mean, shape)
    )
    ref = acc.get_epsilon(1e-6)
    assert d == 1e-6 and abs(ours / ref - 1) < 0.01 and ours >= 0.99 * ref, (ours, ref)


def test_poisson_gaussian_runs_are_below_dp_accounting_by_their_exact_delta_hat():
    "dp_accounting reads Theorem 6's delta-hat off the RDP curve; the exact one is smaller"
    dp_accounting = pytest.importorskip("dp_accounting")
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(
        dp_accounting.dp_event.RepeatAndSelectDpEvent(
            dp_accounting.GaussianDpEvent(1.0), 10, np.inf
        )
    )
    eps = pr.ledger.gaussian_epsilon(1.0, delta=1e-6)
    ours = selection_cost(epsilon=eps, delta=1e-6, mean=10, shape=np.inf, select_delta=1e-6)[0]
    assert 0.8 * acc.get_epsilon(1e-6) < ours < acc.get_epsilon(1e-6)


@pytest.mark.parametrize("shape, factor", [(1, 3), (0, 2), (0.5, 2.5), (2, 4)])
def test_pure_runs_cost_two_plus_shape_epsilon(shape, factor):
    for eps in (0.1, 0.5, 1.0):
        assert selection_cost(epsilon=eps, delta=0.0, mean=10, shape=shape) == (factor * eps, 0.0)


def test_pure_runs_against_dp_accountings_laplace_limit():
    "Both are Theorem 2 as lambda -> infinity: dp_accounting at delta 1e-10, orders to 1e6"
    dp_accounting = pytest.importorskip("dp_accounting")
    orders = list(dp_accounting.rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS) + [1e4, 1e5, 1e6]
    acc = dp_accounting.rdp.RdpAccountant(orders)
    acc.compose(
        dp_accounting.dp_event.RepeatAndSelectDpEvent(dp_accounting.LaplaceDpEvent(1.0), 10, 1)
    )
    assert abs(acc.get_epsilon(1e-10) / 3.0 - 1) < 1e-3


def test_pure_bounds_hold_on_the_probe_pair():
    "Randomized response with a vanishing probe output: the Poisson bound is attained"
    for mean, shape in ((10, 1), (10, 0), (10, 0.5), (2, 1), (10, np.inf)):
        e = 1.0
        p = 1 / (1 + math.exp(-e))
        cdf_x, cdf_y = np.array([p - 1e-5, p]), np.array([1 - p - 1e-5 / math.e, 1 - p])
        laws = []
        for cdf in (cdf_x, cdf_y):
            s = np.concatenate([[0.0], cdf, [1.0]])
            if math.isinf(shape):
                G = np.exp(mean * (s - 1))
            else:
                g = math.exp(-pr.ledger.tnb_t(mean, shape))
                G = (
                    np.log1p(-(1 - g) * s) / math.log(g)
                    if shape == 0
                    else ((1 - (1 - g) * s) ** -shape - 1) / (g**-shape - 1)
                )
            laws.append(np.diff(G))
        leak = float(np.abs(np.log(laws[0] / laws[1])).max())
        bound = selection_cost(epsilon=e, delta=0.0, mean=mean, shape=shape)[0]
        assert leak <= bound * (1 + 1e-9), (mean, shape, leak, bound)
        if math.isinf(shape):
            assert leak > 0.9999 * bound


# -- the selection ---------------------------------------------------------------------------


def test_one_charge_before_any_run_and_the_runs_measured_apart():
    seen = []

    def run(model, rng):
        seen.append(pr.ledger.active_budgets())
        return pr.dp_borda_aggregate(VOTES, epsilon=0.5, model=model, rng=rng), float(rng.random())

    with pr.budget(epsilon=2.0) as outer:
        sel = repeat_and_select(run, ["central", "local"], epsilon=0.5, rng=0)
    assert [(ev.mechanism, ev.privacy) for ev in outer.log] == [("repeat_and_select", ("rr", 1.5))]
    assert outer.spent == (1.5, 0.0) and (sel.epsilon, sel.delta) == (1.5, 0.0)
    assert isinstance(sel, Selection) and sel.candidate in ("central", "local")
    assert seen and all(len(s) == 1 and s[0] is not outer for s in seen)
    assert all([ev.mechanism for ev in s[0].log] == ["dp_borda_aggregate"] for s in seen)
    assert not hasattr(sel, "n_runs") and not hasattr(sel, "scores")  # only the best is released


def test_refused_before_any_draw_when_it_does_not_fit():
    calls = []
    gen = np.random.default_rng(11)
    before = gen.bit_generator.state
    with budget(epsilon=1.0, name="tuning") as b:
        with pytest.raises(pr.BudgetExceeded, match="would bring tuning"):
            repeat_and_select(lambda c, rng: calls.append(c) or (c, 0.0), [1, 2],
                              epsilon=0.5, rng=gen)  # fmt: skip
    assert gen.bit_generator.state == before and calls == [] and b.log == []


def test_a_run_spending_more_than_declared_is_refused():
    def greedy(c, rng):
        charge(Event("borda", ("laplace", 0.6)))
        charge(Event("borda", ("laplace", 0.6)))
        return c, 0.0

    with pytest.raises(ValueError, match="spent more than declared by `epsilon`"):
        repeat_and_select(greedy, [0], epsilon=1.0, rng=0)
    gaussian = lambda eps: (
        lambda c, rng: (
            pr.dp_borda_aggregate(VOTES, epsilon=eps, delta=1e-6, rng=rng),
            0.0,
        )
    )
    sel = repeat_and_select(gaussian(1.0), [0], epsilon=1.0, delta=1e-6, rng=0)
    assert sel.event.privacy == ("pure", sel.epsilon, 1e-6) and sel.epsilon < 3.0
    with pytest.raises(ValueError, match="spent more than declared"):
        repeat_and_select(gaussian(1.5), [0], epsilon=1.0, delta=1e-6, rng=0)
    with pytest.raises(ValueError, match="not a Gaussian mechanism"):
        repeat_and_select(lambda c, rng: (charge(Event("x", ("laplace", 0.1))), 0.0), [0],
                          epsilon=1.0, delta=1e-6, rng=0)  # fmt: skip
    assert pr.ledger.active_budgets() == ()


def test_the_best_run_is_kept_ties_to_the_earlier():
    calls = []

    def run(c, rng):
        calls.append(c)
        return ("out", c), float(c % 3)

    sel = repeat_and_select(run, list(range(10)), epsilon=1.0, mean=20, rng=5)
    assert sel.score == max(c % 3 for c in calls)
    assert sel.candidate == next(c for c in calls if c % 3 == sel.score)
    assert sel.output == ("out", sel.candidate)


def test_reproducible_for_a_seed():
    a = repeat_and_select(free_run, ["a", "b", "c"], epsilon=1.0, rng=42)
    b = repeat_and_select(free_run, ["a", "b", "c"], epsilon=1.0, rng=42)
    c = repeat_and_select(free_run, ["a", "b", "c"], epsilon=1.0, rng=43)
    assert a == b and a.output != c.output


def test_poisson_may_make_no_run():
    sels = [repeat_and_select(free_run, [1], epsilon=1.0, mean=1, shape=np.inf, rng=s)
            for s in range(12)]  # fmt: skip
    assert any(s.output is None and s.candidate is None and s.score is None for s in sels)
    assert any(s.output is not None for s in sels)


@pytest.mark.parametrize(
    "kw, err, msg",
    [
        (dict(run=3), TypeError, "`run` must be callable"),
        (dict(candidates=[]), ValueError, "`candidates` must not be empty"),
        (dict(candidates="abc"), TypeError, "`candidates` must be a sequence"),
        (dict(candidates={1, 2}), TypeError, "`candidates` must be a sequence"),
        (dict(mean=0.5), ValueError, "`mean`"),
        (dict(mean=math.nan), ValueError, "`mean`"),
        (dict(mean=math.inf), ValueError, "`mean`"),
        (dict(shape=-0.5), ValueError, "`shape`"),
        (dict(shape=math.nan), ValueError, "`shape`"),
        (dict(epsilon=-1.0), ValueError, "`epsilon`"),
        (dict(epsilon=math.inf), ValueError, "`epsilon`"),
        (dict(delta=1.0), ValueError, "`delta`"),
        (dict(select_delta=1e-6), ValueError, "`select_delta`"),
        (dict(delta=1e-6, select_delta=0.0), ValueError, "`select_delta`"),
        (dict(privacy_unit="row"), ValueError, "`privacy_unit`"),
    ],
)
def test_bad_input_is_named_before_any_draw(kw, err, msg):
    gen = np.random.default_rng(0)
    before = gen.bit_generator.state
    args = dict(run=free_run, candidates=[1, 2], epsilon=1.0, rng=gen) | kw
    with pytest.raises(err, match=msg):
        repeat_and_select(args.pop("run"), args.pop("candidates"), **args)
    assert gen.bit_generator.state == before


@pytest.mark.parametrize(
    "bad, msg",
    [
        (lambda c, rng: 3, "`run` must return"),
        (lambda c, rng: (c, 1.0, 2.0), "`run` must return"),
        (lambda c, rng: (c, math.nan), "`run` must return a finite score"),
        (lambda c, rng: (c, math.inf), "`run` must return a finite score"),
        (lambda c, rng: (c, "high"), "`run` must return a real score"),
        (lambda c, rng: (c, True), "`run` must return a real score"),
    ],
)
def test_a_run_must_return_output_and_finite_score(bad, msg):
    with pytest.raises(ValueError, match=msg):
        repeat_and_select(bad, [0], epsilon=1.0, rng=0)
