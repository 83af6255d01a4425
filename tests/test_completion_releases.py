"""Every Gaussian release inside `complete()` tested end to end (issue 34, item 4, first part): the
releases are intercepted where they are drawn (`completion.gaussian_release`), each one's realised
noise is compared with the sigma the ledger records for its step, and the check is shown to fail
when the noise drawn is half the recorded one. Covered: the default estimator (the private
subspace: mean square, item sums, item weights, Gram matrix, validation scores) and private ALS
(its rounds too), on the fast path. Not yet: Frank-Wolfe, PGD and cleansing (their releases are
drawn in `privrank.mc`) and the private quantiles (Laplace on a binary tree)."""

import math

import numpy as np
import pytest

import privrank.completion as C
from privrank import mc

RATINGS = mc.synthetic_rank_one(3000, 120, rng=0)[0]


def run(monkeypatch, estimator, shrink=1.0):
    """(the outermost releases as (noise / recorded sigma, l2, z, sigma), the ledger) of one
    `complete` run; `shrink` < 1 draws that fraction of the noise while recording the full sigma
    (a miscalibrated release the check must catch)"""
    real, out, depth = C.gaussian_release, [], [0]

    def spy(x, **kw):
        depth[0] += 1
        try:
            if shrink != 1.0 and depth[0] == 1:  # the noise of a z shrunk, the sigma of z
                y, s = real(x, **{**kw, "z": kw["z"] * shrink})
                s = s / shrink
            else:
                y, s = real(x, **kw)
        finally:
            depth[0] -= 1
        if depth[0] == 0 and s > 0:
            noise = np.asarray(y, float) - np.asarray(x, float)
            if kw.get("symmetric"):  # one draw per upper-triangle entry
                iu = np.triu_indices(noise.shape[-1])
                noise = noise[..., iu[0], iu[1]]
            out.append((noise.ravel() / s, kw["l2"], kw["z"], s))
        return y, s

    monkeypatch.setattr(C, "gaussian_release", spy)
    res = C.complete(
        RATINGS, epsilon=1.0, delta=1e-6, rng=5, rating_range=(-1, 1), estimator=estimator
    )
    return out, res.diagnostics["ledger"]


def calibrated(releases):
    """Whether the pooled standardised noise has variance 1: its mean square over K draws lies
    within 6 standard errors sqrt(2 / K) of 1 (a false alarm rarer than 1e-8)"""
    u = np.concatenate([r[0] for r in releases])
    return abs(np.mean(u * u) - 1) < 6 * math.sqrt(2 / u.size), u.size


@pytest.mark.parametrize("estimator", ["subspace", "als"])
def test_every_release_draws_the_noise_its_ledger_records(monkeypatch, estimator):
    releases, ledger = run(monkeypatch, estimator)
    gaussian = [e for e in ledger if e.get("noise_multiplier") is not None]
    # every release's sigma is z times its l2 sensitivity (the fast path's calibration)
    for _, l2, z, s in releases:
        assert s == pytest.approx(z * l2, rel=1e-12)
    # the ledger's sigmas are those of the releases drawn: one entry per release of the
    # subspace's steps, and each ALS round's entry records its two releases' multiplier
    drawn = {round(s, 9) for *_, s in releases}
    for e in gaussian:
        if e["step"].startswith("ALS round"):  # two releases (A, b) at this multiplier
            assert sum(math.isclose(z, e["noise_multiplier"]) for _, _, z, _ in releases) >= 2
        else:
            assert round(e["sigma"], 9) in drawn, e
            assert e["sigma"] == pytest.approx(e["noise_multiplier"] * e["l2_sensitivity"])
    n_subspace = 4  # mean square, item sums, item weights, Gram matrix (the choice: not Gaussian)
    assert len(releases) == n_subspace + (4 if estimator == "als" else 0)  # ALS: 2 rounds x 2
    ok, k = calibrated(releases)
    assert ok and k > 5000, k  # the Gram matrix alone has 120 x 121 / 2 draws


@pytest.mark.parametrize("estimator", ["subspace", "als"])
def test_the_check_fails_when_the_noise_is_half_the_recorded_one(monkeypatch, estimator):
    releases, _ = run(monkeypatch, estimator, shrink=0.5)
    ok, _ = calibrated(releases)
    assert not ok
    # and each large release on its own: the Gram matrix's standardised noise has variance 1/4
    big = max(releases, key=lambda r: r[0].size)[0]
    assert np.mean(big * big) == pytest.approx(0.25, rel=0.1)
