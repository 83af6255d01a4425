"""The privacy ledger (issue 31, first part; nbs/00b_ledger.ipynb): a budget's composed total
against Google's `dp_accounting`, the properties of composition, the refusal before a budget is
exceeded, nesting, thread- and task-locality, and the zCDP fallback without `dp_accounting`."""

import asyncio
import math
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import privrank as pr
from privrank import ledger
from privrank.ledger import Budget, BudgetExceeded, Event, budget, charge, compose

dp_accounting = pytest.importorskip("dp_accounting")  # the dev extra installs it
DELTA = 1e-6


def pld_accountant(events, count, relation=None):
    acc = dp_accounting.pld.PLDAccountant(
        relation or dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    )
    acc.compose(events, count)
    return acc


# -- the done-when numbers of issue 31 ---------------------------------------------------------


def test_ten_laplace_releases_match_dp_accounting_within_one_percent():
    ref = pld_accountant(dp_accounting.LaplaceDpEvent(noise_multiplier=2.0), 10).get_epsilon(DELTA)
    with budget(epsilon=10.0, delta=DELTA) as b:
        for _ in range(10):
            charge(Event("borda", ("laplace", 0.5)))
    eps, delta = b.spent
    assert abs(eps / ref - 1) < 0.01 and delta == DELTA, (eps, ref)
    assert eps < 5.0  # tighter than basic composition


def test_hundred_gaussian_releases_match_dp_accounting_within_one_percent():
    ref = pld_accountant(dp_accounting.GaussianDpEvent(noise_multiplier=5.0), 100).get_epsilon(
        DELTA
    )
    with budget(epsilon=20.0, delta=DELTA) as b:
        for _ in range(100):
            charge(Event("mc", ("gaussian", 5.0), privacy_unit="user"))
    eps, delta = b.spent
    assert abs(eps / ref - 1) < 0.01 and delta == DELTA, (eps, ref)


@pytest.mark.parametrize("k", [10, 100, 1000])
def test_long_sequences_of_each_kind_match_dp_accounting(k):
    "Issue 31: within 1% on sequences of 10 to 1,000 releases of each kind"
    lap = pld_accountant(dp_accounting.LaplaceDpEvent(noise_multiplier=10.0), k)
    gau = pld_accountant(dp_accounting.GaussianDpEvent(noise_multiplier=20.0), k)
    rr_event = dp_accounting.RandomizedResponseDpEvent(
        noise_parameter=2 / (1 + math.exp(0.1)), num_buckets=2
    )
    rr = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    for _ in range(k):  # one at a time: dp_accounting 0.6.0 ignores `count` for this event
        rr.compose(rr_event)
    for event, acc in (
        (Event("borda", ("laplace", 0.1)), lap),
        (Event("kemeny", ("gaussian", 20.0)), gau),
        (Event("btl", ("rr", 0.1), privacy_unit="comparison"), rr),
    ):
        eps = compose([event] * k, delta=DELTA)[0]
        ref = acc.get_epsilon(DELTA)
        assert eps <= ref * 1.01 and (eps >= ref * 0.99 or eps == 0.1 * k), (event.kind, eps, ref)


@pytest.mark.parametrize("k", [10, 100, 1000])
def test_zcdp_and_exponential_sequences_match_dp_accountings_rdp(k):
    """The kinds the PLD accountant has no event for, against `RdpAccountant`'s `ZCDpEvent`: the
    exact path's discrete Gaussian at (1, 1e-6), and the exponential mechanism at 0.1"""
    orders = [1 + x / 100 for x in range(1, 100)] + list(range(2, 2000))
    rho = _rho(1.0, 1e-6)
    for event, r in (
        (Event("borda", ("zcdp", rho, 1.0, 1e-6)), rho),
        (Event("top_k", ("exponential", 0.1)), 0.1**2 / 8),
    ):
        acc = dp_accounting.rdp.RdpAccountant(orders=orders)
        acc.compose(dp_accounting.ZCDpEvent(r), k)
        ref = acc.get_epsilon(DELTA)
        eps = compose([event] * k, delta=DELTA)[0]
        assert eps <= ref * 1.0000001 and eps >= ref * 0.99, (event.kind, eps, ref)


def test_the_eleventh_release_is_refused_before_anything_is_recorded():
    with budget(epsilon=6.0, delta=DELTA, name="outer") as outer:
        with budget(epsilon=5.0, delta=DELTA, name="the votes") as b:
            for _ in range(10):
                charge(Event("borda", ("laplace", 0.5)))
            before = (b.log, b.spent, outer.log, outer.spent)
            with pytest.raises(BudgetExceeded, match="would bring the votes to epsilon") as err:
                charge(Event("borda", ("laplace", 0.5)))
            assert (b.log, b.spent, outer.log, outer.spent) == before
            assert err.value.budget is b and err.value.total[0] > 5.0
            assert isinstance(err.value, ValueError)
    assert len(outer.log) == 10


# -- composition: properties ---------------------------------------------------------------


def _rho(e, d):  # the rho of the exact path's discrete Gaussian at (e, d)
    return 0.5 / pr.core.zcdp_sigma(epsilon=e, delta=d) ** 2


EVENTS = st.one_of(
    st.builds(lambda e: Event("borda", ("laplace", e)), st.floats(0.01, 2.0)),
    st.builds(lambda e: Event("btl", ("rr", e), privacy_unit="comparison"), st.floats(0.01, 2.0)),
    st.builds(lambda e, d: Event("tree", ("pure", e, d)),
              st.floats(0.01, 2.0), st.sampled_from([0.0, 1e-9, 1e-8])),
    st.builds(lambda e, d: Event("kemeny", ("gaussian", e, d)),
              st.floats(0.05, 2.0), st.sampled_from([1e-9, 1e-8, 1e-7])),
    st.builds(lambda e: Event("top_k", ("exponential", e)), st.floats(0.01, 2.0)),
    st.builds(lambda e, d: Event("borda", ("zcdp", _rho(e, d), e, d)),
              st.floats(0.05, 2.0), st.sampled_from([1e-9, 1e-8, 1e-7])),
)  # fmt: skip
SEQUENCES = st.lists(EVENTS, min_size=1, max_size=8)


@settings(max_examples=30)
@given(SEQUENCES, st.sampled_from([1e-6, 1e-5, 1e-3]))
def test_never_above_basic_composition(events, delta):
    e_basic, d_basic = ledger.basic_composition(events)
    eps, d = compose(events, delta=delta)
    assert eps <= e_basic
    assert d <= max(delta, d_basic)


@settings(max_examples=30)
@given(EVENTS, st.sampled_from([1e-7, 1e-6, 1e-3]))
def test_one_release_is_its_own_value(event, delta):
    "One release: its own (epsilon, delta), or its own privacy profile at the budget's delta"
    eps, d = compose([event], delta=delta)
    if event.delta > delta:  # its delta is above the budget's: reported as it is (it cannot fit)
        assert (eps, d) == (event.epsilon, event.delta)
    elif (eps, d) != (event.epsilon, event.delta):  # the mechanism's own epsilon at `delta`
        own = {
            "laplace": lambda: pld_accountant(dp_accounting.LaplaceDpEvent(1 / event.epsilon), 1),
            "gaussian": lambda: pld_accountant(
                dp_accounting.GaussianDpEvent(event.noise_multiplier), 1
            ),
        }.get(event.kind)
        assert d == delta and eps < event.epsilon - ledger.TIE, (eps, d, event)
        if own is not None:  # to the PLD's grid
            assert abs(eps - own().get_epsilon(delta)) <= ledger.PLD_DISCRETIZATION
        if event.kind == "gaussian":  # exactly: the Gaussian's delta at eps is `delta`
            got = pr.core.gaussian_delta(epsilon=eps, sigma=event.noise_multiplier)
            assert got == pytest.approx(delta, rel=1e-6)


@settings(max_examples=20)
@given(SEQUENCES, st.randoms(use_true_random=False))
def test_composition_is_order_independent(events, rnd):
    shuffled = rnd.sample(events, len(events))
    assert compose(events, delta=1e-6) == compose(shuffled, delta=1e-6)


@settings(max_examples=20)
@given(SEQUENCES)
def test_composition_is_monotone(events):
    "Each release adds: delta never falls, epsilon never falls by more than the PLD's resolution"
    totals = [compose(events[:k], delta=1e-6) for k in range(len(events) + 1)]
    for (e0, d0), (e1, d1) in zip(totals, totals[1:]):
        assert e1 >= e0 - ledger.TIE and d1 >= d0, totals


def test_tighter_than_basic_composition_and_zcdp_where_it_should_be():
    lap = [Event("borda", ("laplace", 0.1))] * 100
    eps = compose(lap, delta=1e-6)[0]
    assert eps < 0.5 * 10.0 and eps <= ledger.zcdp_accountant_epsilon(lap, delta=1e-6)


def test_the_exponential_mechanism_is_charged_its_bounded_range_zcdp():
    "rho = epsilon^2 / 8 (Cesar and Rogers), a quarter of a generic pure release's epsilon^2 / 2"
    em, rr = [Event("top_k", ("exponential", 0.1))] * 200, [Event("pf", ("rr", 0.1))] * 200
    assert ledger.zcdp_rho(em[0]) == pytest.approx(0.1**2 / 8, rel=1e-15)
    z_em, z_rr = (ledger.zcdp_accountant_epsilon(s, delta=1e-6) for s in (em, rr))
    assert z_em < 0.55 * z_rr  # sqrt(1/4) of the rho term's square root, plus rho
    assert compose(em, delta=1e-6)[0] <= min(compose(rr, delta=1e-6)[0], z_em) + 1e-12
    assert compose(em, delta=0.0) == pytest.approx((20.0, 0.0))  # pure: basic composition


def test_a_zcdp_release_composes_by_its_rho():
    "The exact path's discrete Gaussian: k releases at rho each compose to k rho"
    rho = 0.5 / pr.core.zcdp_sigma(epsilon=1.0, delta=1e-6) ** 2
    ev = Event("borda", ("zcdp", rho, 1.0, 1e-6))
    for k in (1, 10, 100):
        eps, d = compose([ev] * k, delta=1e-5)
        assert d <= 1e-5 and eps <= k * 1.0
        assert eps <= ledger.zcdp_epsilon(k * rho, delta=1e-5) + 1e-12
    assert compose([ev] * 100, delta=1e-5)[0] < 13.0  # basic: 100
    with pytest.raises(ValueError, match="does not give"):
        Event("borda", ("zcdp", 4 * rho, 1.0, 1e-6))


# -- the fallback without dp_accounting -----------------------------------------------------


@settings(max_examples=20)
@given(SEQUENCES, st.sampled_from([1e-6, 1e-3]))
def test_fallback_is_between_the_pld_and_basic_composition(events, delta):
    with_pld = compose(events, delta=delta)
    pld = ledger.pld_epsilon(events, delta=delta)
    keep = ledger._pld_module
    ledger._pld_module = lambda: None
    try:
        assert ledger.pld_epsilon(events, delta=delta) is None
        without = compose(events, delta=delta)
    finally:
        ledger._pld_module = keep
    e_basic, _ = ledger.basic_composition(events)
    assert with_pld[0] <= without[0] + 1e-12 and without[0] <= e_basic
    if not any(ev.kind in ("zcdp", "exponential") for ev in events):  # those: zCDP is their own
        assert without[0] >= min(pld, e_basic) - ledger.PLD_DISCRETIZATION  # to the PLD's grid


def test_fallback_on_the_done_when_sequences(monkeypatch):
    lap = [Event("borda", ("laplace", 0.5))] * 10
    gau = [Event("mc", ("gaussian", 5.0), privacy_unit="user")] * 100
    pld = [compose(s, delta=DELTA)[0] for s in (lap, gau)]
    monkeypatch.setattr(ledger, "_pld_module", lambda: None)
    fallback = [compose(s, delta=DELTA)[0] for s in (lap, gau)]
    assert pld[0] <= fallback[0] <= 5.0
    assert pld[1] <= fallback[1] < pld[1] * 1.1  # zCDP is within 10% on Gaussians
    with budget(epsilon=5.0, delta=DELTA) as b:  # the budget works without dp_accounting too
        for _ in range(10):
            charge(Event("borda", ("laplace", 0.5)))
        with pytest.raises(BudgetExceeded):
            charge(Event("borda", ("laplace", 0.01)))
    assert b.spent == (5.0, 0.0)


# -- budgets: nesting, threads, tasks ---------------------------------------------------------


def test_nested_budgets_charge_every_enclosing_budget():
    with budget(epsilon=3.0) as outer:
        charge(Event("borda", ("laplace", 1.0)))
        with budget(epsilon=1.5, name="inner") as inner:
            charge(Event("footrule", ("laplace", 1.0)))
            with pytest.raises(BudgetExceeded, match="inner"):
                charge(Event("kemeny", ("laplace", 1.0)))
        with pytest.raises(BudgetExceeded, match="budget\\(epsilon=3, delta=0\\)"):
            charge(Event("kemeny", ("laplace", 1.5)))
        charge(Event("kemeny", ("laplace", 1.0)))
    assert outer.spent == (3.0, 0.0) and inner.spent == (1.0, 0.0)
    assert [e.mechanism for e in outer.log] == ["borda", "footrule", "kemeny"]
    assert [e.mechanism for e in inner.log] == ["footrule"]
    charge(Event("borda", ("laplace", 9.0)))  # outside every block: nothing to charge
    assert len(outer.log) == 3


def test_budgets_are_thread_local():
    spent, gate = {}, threading.Barrier(2)

    def work(name, epsilon, n):
        with budget(epsilon=epsilon) as b:
            gate.wait()  # both threads inside their blocks at once
            for _ in range(n):
                charge(Event(name, ("laplace", 0.25)))
        spent[name] = (b.spent, len(b.log))

    with budget(epsilon=0.1) as here:  # not seen by the threads
        threads = [
            threading.Thread(target=work, args=("a", 1.0, 4)),
            threading.Thread(target=work, args=("b", 3.0, 8)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert spent == {"a": ((1.0, 0.0), 4), "b": ((2.0, 0.0), 8)}
    assert here.log == []


def test_a_shared_budget_admits_exactly_what_fits_across_threads():
    b = Budget(epsilon=5.0)
    refused = []

    def work():
        with ledger.use_budget(b):
            for _ in range(10):
                try:
                    charge(Event("borda", ("laplace", 0.5)))
                except BudgetExceeded:
                    refused.append(1)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(b.log) == 10 and len(refused) == 50 and b.spent == (5.0, 0.0)


def test_budgets_are_task_local():
    async def task(epsilon, n):
        with budget(epsilon=epsilon) as b:
            for _ in range(n):
                charge(Event("borda", ("laplace", 0.25)))
                await asyncio.sleep(0)
        return b.spent

    async def main():
        return await asyncio.gather(task(1.0, 3), task(2.0, 6))

    assert asyncio.run(main()) == [(0.75, 0.0), (1.5, 0.0)]


def test_a_pure_budget_refuses_a_gaussian_release():
    with budget(epsilon=100.0) as b:
        with pytest.raises(BudgetExceeded, match="delta"):
            charge(Event("kemeny", ("gaussian", 1.0, 1e-9)))
    assert b.log == []


def test_remaining_is_what_a_pure_release_can_still_spend():
    with budget(epsilon=3.0, delta=DELTA) as b:
        for _ in range(7):
            charge(Event("borda", ("laplace", 0.4)))
        left = b.remaining
        assert 0 < left < 3.0 - 0.4 * 6
        charge(Event("borda", ("laplace", left * 0.999)))  # at most `remaining` always fits


# -- validation and the namespace -------------------------------------------------------------


def test_the_releases_of_one_call_are_charged_all_or_none():
    "A list of events (one call's releases, e.g. k peeling steps) is one atomic charge"
    steps = [Event("top_k", ("exponential", 0.25))] * 4
    with budget(epsilon=1.5) as b:
        assert charge(steps) is steps and len(b.log) == 4 and b.spent == (1.0, 0.0)
        with pytest.raises(BudgetExceeded, match="and 3 more release"):
            charge(steps)  # 2.0 > 1.5: none of the four is charged
        assert len(b.log) == 4
    with pytest.raises(ValueError, match="at least one"):
        with budget(epsilon=1.0):
            charge([])
    with pytest.raises(TypeError, match="`event`"):
        charge([Event("x", ("rr", 1.0)), ("rr", 1.0)])


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="`epsilon` must be positive"):
        Budget(epsilon=-1.0)
    with pytest.raises(ValueError, match="0 <= delta < 1"):
        with budget(epsilon=1.0, delta=2.0):
            pass
    with pytest.raises(TypeError, match="`event`"):
        charge(("laplace", 1.0))
    with pytest.raises(ValueError, match="`privacy`"):
        Event("borda", ("gumbel", 1.0))
    with pytest.raises(ValueError, match="`privacy`"):
        Event("borda", ("zcdp", 0.1))
    with pytest.raises(ValueError, match="does not give"):
        Event("kemeny", ("gaussian", 0.5, 1.0, 1e-6))
    with pytest.raises(TypeError, match="`budget`"):
        with ledger.use_budget("3.0"):
            pass


def test_the_namespace():
    assert pr.budget is budget and pr.Budget is Budget and pr.BudgetExceeded is BudgetExceeded
    # accounted tuning (issue 31, item 4) is public in the module, not (yet) in `pr`
    assert set(ledger.__all__) == {
        "budget",
        "Budget",
        "BudgetExceeded",
        "repeat_and_select",
        "Selection",
    }
    assert not hasattr(pr, "repeat_and_select") and not hasattr(pr, "Selection")


def test_a_budget_that_only_measures_records_and_never_refuses():
    meter = ledger.Budget(epsilon=1.0, delta=1e-5, refuses=False)
    with ledger.use_budget(meter), ledger.budget(epsilon=2.0) as inner:
        for _ in range(3):
            ledger.charge(ledger.Event("borda", ("laplace", 0.5)))
        with pytest.raises(ledger.BudgetExceeded):  # the inner budget still refuses
            ledger.charge(ledger.Event("borda", ("laplace", 0.6)))
    assert len(meter.log) == len(inner.log) == 3  # the refused release is in neither
    assert meter.spent[0] > meter.epsilon  # measured past its epsilon, never refused
