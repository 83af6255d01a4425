"""Privacy audits of every privrank mechanism (privrank.audit).

Each audit is a Clopper–Pearson threshold test at confidence 1 - 1e-7 (alpha = 1e-7: a correctly
calibrated
mechanism fails with probability below 1e-7, so the false-failure probability of this file is well
below 1e-6),
with fixed seeds. Each fast test checks both directions: at the calibrated noise the audited lower
bound stays
at or below the claimed epsilon, and with the noise halved (`scaled_noise(0.5)`) it exceeds it.
The rows that need many runs are `slow` (run with --slow or PRIVRANK_SLOW=1)."""

import numpy as np
import pytest

from privrank import rr
from privrank.audit import (
    audit_epsilon,
    clopper_pearson,
    exact_epsilon,
    run_audit,
    scaled_noise,
    standard_audits,
)
from privrank.core import analytic_gaussian_sigma, sample_gaussian, sample_laplace, use_noise

ALPHA = 1e-7


def _both(a, seed):
    ok = run_audit(a, rng=[seed, 0])
    with scaled_noise(0.5):
        bad = run_audit(a, rng=[seed, 1])
    return ok, bad


def test_clopper_pearson_coverage_is_exact():
    from scipy import stats

    lo, hi = clopper_pearson(30, 100, 1e-3)
    assert (
        abs(stats.binom.sf(29, 100, lo) - 1e-3) < 1e-9
        and abs(stats.binom.cdf(30, 100, hi) - 1e-3) < 1e-9
    )


@pytest.mark.parametrize("e", [0.5, 1.0, 3.0])
def test_rr_exact_audit(e):
    p0 = rr.rr_output_probability([0, 1], [0, 0], epsilon=e)
    p1 = rr.rr_output_probability([0, 1], [1, 1], epsilon=e)
    assert abs(exact_epsilon(p0, p1, delta=0) - e) < 1e-9


def test_rr_sampled_audit_and_miscalibration(monkeypatch):
    mech = lambda y, rng, n: rr.randomized_response(np.full(n, y), epsilon=1.0, rng=rng)
    ok = audit_epsilon(
        mech, 0, 1, delta=0, n_runs=100_000, statistic="histogram", batch=True, alpha=ALPHA, rng=1
    )
    assert ok.epsilon_lower <= 1.0 and ok.epsilon_lower > 0.85
    flip = rr._flip
    monkeypatch.setattr(
        rr, "_flip", lambda y, e, rng, mode=None: flip(y, 2 * np.asarray(e, float), rng, mode)
    )  # flips as for 2 epsilon
    bad = audit_epsilon(
        mech, 0, 1, delta=0, n_runs=100_000, statistic="histogram", batch=True, alpha=ALPHA, rng=2
    )
    assert bad.epsilon_lower > 1.0


@pytest.mark.parametrize("law", ["laplace", "gaussian"])
def test_noise_primitives(law):
    e, d = (1.0, 0.0) if law == "laplace" else (2.0, 1e-3)
    s = 1 / e if law == "laplace" else analytic_gaussian_sigma(epsilon=e, delta=d, sensitivity=1.0)
    draw = sample_laplace if law == "laplace" else sample_gaussian
    mech = lambda x, rng, n: x + draw(s, n, rng=rng)
    kw = dict(
        delta=d,
        n_runs=200_000,
        statistic="laplace" if law == "laplace" else "projection",
        batch=True,
        alpha=ALPHA,
    )
    assert audit_epsilon(mech, 0.0, 1.0, rng=3, **kw).epsilon_lower <= e
    with scaled_noise(0.5):
        assert (
            audit_epsilon(
                lambda x, rng, n: (
                    x
                    + __import__("privrank.core", fromlist=["x"]).__dict__[draw.__name__](
                        s, n, rng=rng
                    )
                ),
                0.0,
                1.0,
                rng=4,
                **kw,
            ).epsilon_lower
            > e
        )


# the rows drawn by a replay-checked batch path: cheap enough to run in full every time
BATCH = [i for i, a in enumerate(standard_audits()) if a.batch and a.name != "randomized response"]


@pytest.mark.parametrize("i", BATCH)
def test_batch_mechanism_audits(i):
    a = standard_audits()[i]
    ok, bad = _both(a, 100 + i)
    assert ok.epsilon_lower <= a.epsilon, (a.name, ok)
    assert (bad.epsilon_lower > a.epsilon) == a.detect, (a.name, bad)


def test_composed_sequences_hold_the_ledgers_total_and_catch_a_halved_ledger(monkeypatch):
    """08's composed audits (issue 31, item 5): the audited epsilon of a sequence is at most the
    ledger's total, and a ledger that undercounts by half is caught"""
    from privrank import audit, ledger

    comp = audit.composed_audits()
    assert [len(a.sequence) for a in comp] == [5, 2]
    assert comp[0].epsilon == pytest.approx(1.0)  # five Laplace releases at 0.2, delta 0
    assert comp[1].epsilon < 1.0  # the PLD of Laplace 0.5 and a Gaussian (0.5, 1e-3)
    true = compose = ledger.compose
    monkeypatch.setattr(ledger, "compose", lambda ev, **kw: (compose(ev, **kw)[0] / 2, 0.0))
    halved = audit.composed_audits()
    monkeypatch.setattr(ledger, "compose", true)
    for i, (a, h) in enumerate(zip(comp, halved)):
        assert h.epsilon == pytest.approx(a.epsilon / 2)
        ok = run_audit(a, rng=[200, i])
        assert ok.epsilon_lower <= a.epsilon, (a.name, ok)
        assert ok.violates(epsilon=h.epsilon), (a.name, ok)  # the halved ledger is caught


def test_batch_paths_replay_the_mechanisms():
    for a in standard_audits():
        if a.replay is not None:
            with use_noise(a.noise):
                a.replay(a.d0)
                a.replay(a.d1)
                with scaled_noise(0.5):
                    a.replay(a.d1)


def test_replay_check_catches_a_different_calibration():
    from privrank.audit import _replayer

    real = lambda x, rng: x + sample_laplace(1.0, 3, rng=rng)
    wrong = lambda x, rng, n: x + sample_laplace(0.5, (n, 3), rng=rng)
    _replayer(lambda x, rng, n: x + sample_laplace(1.0, (n, 3), rng=rng), real)(0.0)
    with pytest.raises(AssertionError):
        _replayer(wrong, real)(0.0)


def test_frank_wolfe_first_step_sensitivity_is_sqrt2_L2():
    """Result 2's 4 sqrt(2) L^2 assumes rows of A of norm 2L; at the first step (A = -R, norm L)
    the sensitivity is
    sqrt(2) L^2: noise x1/4 (calibrated to it) still passes, x1/8 is detected."""
    first = next(
        a for a in standard_audits() if a.name.startswith("private Frank") and not a.detect
    )
    with scaled_noise(0.25):
        assert run_audit(first, rng=41).epsilon_lower <= first.epsilon
    with scaled_noise(0.125):
        assert run_audit(first, rng=42).epsilon_lower > first.epsilon


@pytest.mark.parametrize("i", range(len(standard_audits())))
def test_all_mechanism_audits(i, run_slow):
    if not run_slow:
        pytest.skip("slow: several minutes in all; run with --slow")
    a = standard_audits()[i]
    ok, bad = _both(a, 1000 + i)
    assert ok.epsilon_lower <= a.epsilon, (a.name, ok)
    assert (bad.epsilon_lower > a.epsilon) == a.detect, (a.name, bad)
