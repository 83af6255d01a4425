"""Tests for privrank.mc: the RDP accountant against Google's dp-accounting, calibration round
trips,
user-side data handling, and bad input refused with an error naming the parameter."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from privrank import completion, core, mc


@settings(max_examples=30, deadline=None)
@given(z=st.floats(0.5, 200), T=st.integers(1, 100), logd=st.floats(-12, -3))
def test_rdp_matches_dp_accounting(z, T, logd):
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    acc = rdp.RdpAccountant()
    acc.compose(dpa.GaussianDpEvent(z), T)
    ours = mc.epsilon_rdp([z] * T, delta=10**logd)
    theirs = acc.get_epsilon(
        10**logd
    )  # ours also searches orders close to 1, so it may be a little lower
    assert theirs * (1 - 0.1) - 1e-6 <= ours <= theirs * (1 + 1e-4) + 1e-6
    assert (
        mc.epsilon_gdp([z] * T, delta=10**logd) <= ours + 1e-9
    )  # the exact accountant is never looser


def test_rdp_matches_dp_accounting_at_issue_scale():
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    acc = rdp.RdpAccountant()
    acc.compose(dpa.GaussianDpEvent(20.0), 20)
    assert abs(mc.epsilon_rdp([20.0] * 20, delta=1e-6) - acc.get_epsilon(1e-6)) < 1e-3


@settings(max_examples=30, deadline=None)
@given(
    eps=st.floats(0.05, 10), T=st.integers(1, 60), acc=st.sampled_from(["gdp", "rdp", "advanced"])
)
def test_calibration_round_trip(eps, T, acc):
    z = mc.noise_multiplier(epsilon=eps, delta=1e-6, n_iter=T, accountant=acc)
    assert abs(mc.ACCOUNTANTS[acc](z, delta=1e-6) - eps) < 1e-7 * max(1, eps)


def test_issue_scale():
    assert 19.5 < mc.noise_multiplier(epsilon=1, delta=1e-6, n_iter=20, accountant="rdp")[0] < 21
    assert (
        100 < mc.noise_multiplier(epsilon=1, delta=1e-6, n_iter=20, accountant="advanced")[0] < 110
    )


def test_split_is_per_user_and_vectorised():
    R = sparse.random_array((2000, 300), density=0.4, rng=0, format="csr")
    sp = mc.split_ratings(R, rng=1)
    cnt = np.diff(sp.train.indptr)
    assert cnt.max() == 80 and cnt.min() >= 1
    # each user keeps every training rating for herself (`own`), centred by their mean
    own = np.diff(sp.own.indptr)
    assert (own >= cnt).all() and own.max() > 80
    np.testing.assert_allclose(sp.own.sum(axis=1), 0, atol=1e-10)
    raw = R.tocsr()[np.arange(R.shape[0])]
    kept = sp.own + sparse.csr_array(
        (sp.user_mean[np.repeat(np.arange(2000), own)], sp.own.indices, sp.own.indptr),
        shape=R.shape,
    )
    np.testing.assert_allclose(kept.sum(axis=1) / own, sp.user_mean, rtol=1e-12)
    train, full = set(zip(*sp.train.nonzero())), set(zip(*sp.own.nonzero()))
    assert train <= full
    assert all(
        raw[i, j] == pytest.approx(sp.train[i, j] + sp.user_mean[i]) for i, j in list(train)[:200]
    )
    test = set(zip(sp.test_user, sp.test_item))
    assert not full & test and len(full) + len(test) == R.nnz


@pytest.mark.parametrize(
    "kw, msg",
    [
        (dict(epsilon=0), "`epsilon` must be positive"),
        (dict(epsilon=np.nan), "`epsilon` must not be NaN"),
        (dict(delta=0), "`delta` must be positive"),
        (dict(delta=1.5), "0 <= delta < 1"),
        (dict(row_norm=-1), "`row_norm` must be a positive"),
        (dict(nuclear_norm=0), "`nuclear_norm` must be a positive"),
        (dict(n_iter=0), "`n_iter` must be >= 1"),
        (dict(solver="power"), "`solver` must be"),
        (dict(oja_blocks=0), "`oja_blocks` must be"),
        (dict(accountant="moments"), "`accountant` must be one of"),
        (dict(schedule="cos"), "`schedule` must be"),
    ],
)
def test_bad_arguments(kw, msg):
    R = sparse.csr_array(np.eye(5) + 1)
    args = dict(epsilon=1.0, delta=1e-6, nuclear_norm=1.0, n_iter=2, row_norm=1.0) | kw
    with pytest.raises((ValueError, TypeError), match=msg.replace("(", r"\(")):
        mc.private_frank_wolfe(R, **args)


def test_bad_ratings():
    ok = dict(epsilon=1.0, delta=1e-6, nuclear_norm=1.0, n_iter=2, row_norm=1.0)
    with pytest.raises(TypeError, match="`ratings` must be a scipy.sparse"):
        mc.private_frank_wolfe(np.eye(3), **ok)
    with pytest.raises(ValueError, match="users have no ratings"):
        mc.private_frank_wolfe(sparse.csr_array(np.diag([1.0, 0, 1])), **ok)
    bad = sparse.csr_array(np.eye(3))
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        mc.private_frank_wolfe(bad, **ok)
    with pytest.raises(ValueError, match="`user_mean` must have one entry per user"):
        mc.private_frank_wolfe(sparse.csr_array(np.eye(3)), user_mean=np.zeros(2), **ok)


def test_private_beats_mean_on_synthetic_and_records_spend():
    R, u, v = mc.synthetic_rank_one(20000, 400, rng=0)
    sp = mc.split_ratings(R, rng=1)
    k = np.linalg.norm(u) * np.linalg.norm(v)
    res = mc.private_frank_wolfe(
        sp.train,
        epsilon=5.0,
        delta=1e-6,
        nuclear_norm=k,
        n_iter=10,
        row_norm=2.0,
        user_mean=sp.user_mean,
        rng=2,
    )
    base = np.sqrt(np.mean((sp.user_mean[sp.test_user] - sp.test_value) ** 2))
    assert res.rmse(sp) < 0.8 * base
    assert res.privacy_unit == "user" and res.accountant == "gdp"
    assert abs(mc.epsilon_gdp(res.noise_multiplier, delta=1e-6) - 5.0) < 1e-7


# --- baselines: private PGD and SVD after cleansing, and a scaled-down Figure 2 ---

ZERO = sparse.csr_array(
    (np.zeros(3000), (np.repeat(np.arange(300), 10), np.tile(np.arange(10), 300))), shape=(300, 10)
)


def test_pgd_noise_is_calibrated_and_half_noise_is_detected():
    """||W_t||_F^2 / sigma^2 on all-zero data has mean n^2 and variance 4n^2 - 2n; sigma from the
    accountant."""
    e, d, T, L = 0.7, 1e-6, 8, 2.0
    sig = mc.SENSITIVITY_PGD * L**2 * mc.noise_multiplier(epsilon=e, delta=d, n_iter=T)
    fro = np.concatenate(
        [
            mc.private_pgd(
                ZERO, epsilon=e, delta=d, nuclear_norm=3, n_iter=T, row_norm=L, rng=s
            ).diagnostics["frobenius"]
            ** 2
            / sig**2
            for s in range(50)
        ]
    )
    n = ZERO.shape[1]
    se = math.sqrt((4 * n * n - 2 * n) / fro.size)
    assert abs(fro.mean() - n * n) < 5 * se
    assert abs(fro.mean() / 4 - n * n) > 5 * se


def test_cleansing_noise_is_calibrated():
    e, d = 1.3, 1e-6
    sig = (
        np.array([2 * 0.5, math.sqrt(2), math.sqrt(2) * 0.25, math.sqrt(2)])
        * mc.noise_multiplier(epsilon=e, delta=d, n_iter=4)[0]
    )
    iu = np.triu_indices(10)
    z = []
    for s in range(30):
        dg = mc.private_svd_cleansing(ZERO, epsilon=e, delta=d, row_norm=0.5, rng=s).diagnostics
        z += [
            dg["item_sums"] / sig[0],
            (dg["item_weights"] - 300 / math.sqrt(10)) / sig[1],
            dg["covariance"][iu] / sig[2],
            (dg["weights"] - 30)[iu] / sig[3],
        ]
    z = np.concatenate(z)
    se = math.sqrt(2 / z.size)
    assert abs(z.var() - 1) < 5 * se and abs(z.var() / 4 - 1) > 5 * se


def test_pgd_nonprivate_limit_and_nuclear_ball():
    """With negligible noise PGD fits the rank-one matrix, and its iterate stays in the nuclear
    ball."""
    R, u, v = mc.synthetic_rank_one(3000, 60, per_user=30, rng=0)
    sp = mc.split_ratings(R, center=False, rng=1)
    k = np.linalg.norm(u) * np.linalg.norm(v)
    res = mc.private_pgd(
        sp.train, epsilon=1e4, delta=1e-6, nuclear_norm=k, n_iter=30, row_norm=5.0, rng=2
    )
    assert res.rmse(sp) < 0.02
    Y = res.coef @ res.factors
    assert np.linalg.norm(Y, "nuc") <= k * (1 + 1e-9)


@pytest.mark.parametrize(
    "kw,msg",
    [
        (dict(row_norm=0), "`row_norm` must be a positive"),
        (dict(step=0), "`step` must be in"),
        (dict(n_iter=0), "`n_iter` must be"),
        (dict(rank=0), "`rank` must be"),
    ],
)
def test_pgd_bad_arguments(kw, msg):
    R, _, _ = mc.synthetic_rank_one(50, 20, per_user=5, rng=0)
    args = dict(epsilon=1.0, delta=1e-6, nuclear_norm=1.0, n_iter=2, row_norm=1.0) | kw
    with pytest.raises(ValueError, match=msg):
        mc.private_pgd(R, **args)


def test_figure2_synthetic_scaled_down():
    """All private methods improve with epsilon; at eps = 5 they beat the floor; the measured
    ordering."""
    R, u, v = mc.synthetic_rank_one(20000, 400, rng=0)
    sp = mc.split_ratings(R, rng=1)
    k = np.linalg.norm(u) * np.linalg.norm(v)
    out = mc.rmse_against_epsilon(
        sp,
        epsilons=[0.5, 5],
        delta=1e-6,
        seeds=range(2),
        fw=dict(nuclear_norm=k, n_iter=10, row_norm=2.0),
        pgd=dict(nuclear_norm=k, n_iter=5, row_norm=5.0),
        cleansing=dict(row_norm=1.0, rank=1),
    )
    for m in ("fw", "pgd", "cleansing"):
        assert out[m].mean(1)[1] < out[m].mean(1)[0] - 0.01, m
        assert out[m].mean(1)[1] < out["user_mean"], m
    assert (
        out["svd"] < out["user_mean"] and out["nonprivate_fw"] < out["user_mean"]
    )  # zero-filled SVD is a weak ceiling
    # measured, not the paper's claim: on this rank-one matrix private PGD (our derivation) beats
    # private FW at eps = 5
    assert out["pgd"].mean(1)[1] < out["fw"].mean(1)[1]


def _shared():
    from privrank import datasets

    d = datasets.shared_data_dir()
    if d is None:
        pytest.skip("shared data folder (/work/shared/data) not found")
    return d, datasets


def test_figure2_jester_scaled_down():
    d, datasets = _shared()
    J = datasets.read_jester(d / "jester5k" / "jester5k_ratings.csv.gz").ratings.copy()
    J.data = (J.data + 10) / 4
    sp = mc.split_ratings(J, rng=21)
    k = 5.0 * math.sqrt(sp.train.shape[0])
    out = mc.rmse_against_epsilon(
        sp,
        epsilons=[5.0],
        delta=1e-6,
        seeds=range(2),
        svd_rank=2,
        fw=dict(nuclear_norm=k, n_iter=10, row_norm=5.0),
        pgd=dict(nuclear_norm=k, n_iter=5, row_norm=10.0),
        cleansing=dict(row_norm=2.5, rank=2),
    )
    assert out["svd"] < out["user_mean"]
    for m in ("fw", "pgd", "cleansing"):
        assert np.isfinite(out[m]).all() and out[m].mean() < 1.5 * out["user_mean"], m


def test_top_items_movielens():
    d, datasets = _shared()
    M = mc.top_items(datasets.read_movielens(d / "movielens-100k" / "u.data.gz").ratings, 400)
    assert M.shape[1] == 400 and (np.diff(M.indptr) > 0).all() and M.shape[0] <= 943


def test_scale_equivariance_and_extreme_row_norms():
    """Private FW runs in units of L: the same coefficients for (R, k, L) and (R c, k c, L c); no
    overflow or NaN at 1e-200"""
    R = mc.synthetic_rank_one(300, 20, per_user=8, rng=0)[0]
    f = lambda Rr, k, L, **kw: mc.private_frank_wolfe(
        Rr, epsilon=1.0, delta=1e-6, nuclear_norm=k, n_iter=4, row_norm=L, rng=1, **kw
    )
    for solver in mc.SOLVERS:
        a, b = (
            f(R, 5.0, 1.0, solver=solver),
            f(R * 2.0**-500, 5.0 * 2.0**-500, 2.0**-500, solver=solver),
        )
        np.testing.assert_allclose(b.coef * 2.0**500, a.coef, rtol=1e-9, atol=1e-12)
    tiny = f(R, 2.0, 1e-200)
    assert np.isfinite(tiny.coef).all() and np.isfinite(tiny.diagnostics["train_rmse"])
    with pytest.raises(ValueError, match="`row_norm`"):
        f(R, 2.0, 1e200)


@pytest.mark.parametrize(
    "kw, msg",
    [
        (dict(n_iter=10**12), "`n_iter` must be at most"),
        (dict(oja_iter=10**12), "`oja_iter` must be at most"),
        (dict(epsilon=[1.0, 2.0]), "`epsilon` must be a single number"),
        (dict(nuclear_norm="2"), "`nuclear_norm`"),
        (dict(accountant=[]), "`accountant` must be one of"),
        (dict(user_mean=np.full(300, np.nan)), "`user_mean` has 300 NaN"),
    ],
)
def test_hostile_arguments_named(kw, msg):
    R = mc.synthetic_rank_one(300, 20, per_user=8, rng=0)[0]
    args = {**dict(epsilon=1.0, delta=1e-6, nuclear_norm=2.0, n_iter=2, row_norm=2.0, rng=0), **kw}
    with pytest.raises((ValueError, TypeError), match=msg.replace("[", r"\[")):
        mc.private_frank_wolfe(R, **args)


def test_complete_refuses_empty_hold_out():
    R = sparse.csr_array(np.array([[1.0, 2.0], [3.0, 0.0]]))
    with pytest.raises(
        ValueError, match="`test_fraction` = 0.01 held out none of the 3 ratings of 2 users"
    ):
        completion.complete(
            R, epsilon=1.0, delta=1e-6, evaluate=True, rng=0, rating_range="private"
        )


# --- the streaming private Oja step ("oja", Results 8 and 9) ---

ZERO_STREAM = sparse.csr_array(
    (np.zeros(4000), (np.repeat(np.arange(400), 10), np.tile(np.arange(10), 400))), shape=(400, 10)
)


def test_oja_stream_noise_is_calibrated_and_half_noise_is_detected():
    """On all-zero data every streaming release is pure noise of std 4 sqrt(2) L^2 z_t (two releases
    of sensitivity 4 L^2)."""
    e, d, T, L = 1.3, 1e-6, 6, 0.7
    sig = (
        math.sqrt(2)
        * mc.SENSITIVITY_OJA_FRESH
        * L**2
        * mc.noise_multiplier(epsilon=e, delta=d, n_iter=T)
    )
    runs = [
        mc.private_frank_wolfe(
            ZERO_STREAM,
            epsilon=e,
            delta=d,
            nuclear_norm=3,
            n_iter=T,
            row_norm=L,
            solver="oja",
            oja_blocks=3,
            rng=s,
        ).diagnostics
        for s in range(80)
    ]
    lam = np.concatenate([r["eigenvalue"][1:] / sig[1:] for r in runs])
    w = (
        np.concatenate(
            [np.concatenate(r["released_sq"][1:]) / np.repeat(sig[1:], 3) ** 2 for r in runs]
        )
        / 10
    )
    se_l, se_w = math.sqrt(2 / lam.size), math.sqrt(2 / 10 / w.size)
    assert abs(lam.var() - 1) < 5 * se_l and abs(lam.var() / 4 - 1) > 5 * se_l
    assert abs(w.mean() - 1) < 5 * se_w and abs(w.mean() / 4 - 1) > 5 * se_w


def test_oja_stream_blocks_partition_rows():
    R = mc.synthetic_rank_one(1003, 30, per_user=5, rng=0)[0]
    for K in (1, 2, 7, 1003, 5000):
        blocks = mc._row_blocks(R, K)
        assert sum(b.shape[0] for b in blocks) == 1003 and len(blocks) == min(K, 1003)
        np.testing.assert_array_equal(sparse.vstack(blocks).toarray(), R.toarray())


def test_oja_stream_one_pass_equals_power_step():
    """K = 1: v = normalize(A^T A v0 + g); with K blocks the pass reads each row exactly once."""
    R = mc.synthetic_rank_one(500, 40, per_user=10, rng=0)[0]
    v0 = np.ones(40)
    v, lam, lamc, wsq = mc.top_eig_oja_stream(R, 1e-9, v0=v0, rng=np.random.default_rng(0))
    w = R.T @ (R @ v0 / np.linalg.norm(v0))
    np.testing.assert_allclose(v, w / np.linalg.norm(w), atol=1e-9)
    assert abs(lam - np.linalg.norm(R @ v) ** 2) < 1e-6 and lamc**2 >= lam and len(wsq) == 1


def test_oja_stream_matches_exact_on_synthetic():
    R, u, v = mc.synthetic_rank_one(20000, 400, rng=0)
    sp = mc.split_ratings(R, rng=1)
    k = np.linalg.norm(u) * np.linalg.norm(v)
    f = lambda meth, s: mc.private_frank_wolfe(
        sp.train,
        epsilon=1.0,
        delta=1e-6,
        nuclear_norm=k,
        n_iter=10,
        row_norm=2.0,
        solver=meth,
        user_mean=sp.user_mean,
        rng=s,
    ).rmse(sp)
    assert (
        np.mean([f("oja", s) for s in range(2)]) < np.mean([f("exact", s) for s in range(2)]) + 0.01
    )


def test_complete_reports_only_private_or_public_values():
    """`complete` returns a `Completion` with the privacy record; without `evaluate` nothing is held
    out and no number computed from raw ratings is returned; the item count is the matrix's
    declared column count; with `evaluate=True` the evaluation is a dict labelled as non-private."""
    R, _, _ = mc.synthetic_rank_one(2000, 40, per_user=10, rng=0)
    out = completion.complete(
        R,
        epsilon=1.0,
        delta=1e-6,
        estimator="frank-wolfe",
        n_iter=3,
        row_norm=2.0,
        rng=0,
        rating_range="private",
    )
    assert isinstance(out, mc.Completion) and out.evaluation is None
    rec = core.privacy_record(out)
    assert (out.n_users, out.n_items, rec["model"], rec["private"], rec["noise"]) == (
        2000,
        40,
        "joint",
        True,
        "fast",
    )
    assert rec["privacy_unit"] == "user" and out.params["n_iter"] == 3
    assert out.factors.shape == (3, 40) and np.isfinite(out.factors).all()
    assert out.diagnostics["ledger"][0]["step"] == "nuclear norm k"  # chosen privately, recorded
    assert out.params["nuclear_norm"] == out.diagnostics["ledger"][0]["value"]
    wide = sparse.csr_array(R, shape=(2000, 90))  # 50 declared items that nobody rated
    assert (
        completion.complete(wide, epsilon=1.0, delta=1e-6, rng=0, rating_range="private").n_items
        == 90
    )
    ev = completion.complete(
        R, epsilon=1.0, delta=1e-6, evaluate=True, test_fraction=0.05, rng=0, rating_range="private"
    )
    e = ev.evaluation
    assert e["private"] is False and e["note"].startswith("non-private")
    assert (
        e["n_test"] > 0
        and np.isfinite(e["test_rmse"])
        and np.isfinite(e["baseline_rmse_user_mean"])
    )
    with pytest.raises(TypeError, match="`evaluate` must be True or False"):
        completion.complete(R, epsilon=1.0, delta=1e-6, evaluate=1, rating_range="private")


# --- the exact noise path (issue 11, item 1) ---


def _snapped(l2, k):
    from privrank.core import snap_grid, snapped_sensitivity

    g = snap_grid(l2, k)
    return g, snapped_sensitivity(0.0, l2, k, g)[1]


def test_exact_stream_releases_on_lattice_and_calibrated():
    """Exact mode: the streaming eigenvalue releases are integers times their grid, and their
    variance is the one calibrated from the RDP accountant and the snapped sensitivities
    (recomputed here), within 5 SE; half the noise fails."""
    from privrank.core import use_noise

    e, d, T, L, n = 1.1, 1e-6, 6, 2.0, ZERO_STREAM.shape[1]
    z = mc.noise_multiplier(epsilon=e, delta=d, n_iter=T, accountant="rdp")
    (_, lv), (gs, ls) = _snapped(4.0, n), _snapped(4.0, 1)
    with use_noise("exact"):
        runs = [
            mc.private_frank_wolfe(
                ZERO_STREAM, epsilon=e, delta=d, nuclear_norm=3, n_iter=T, row_norm=L, rng=s
            )
            for s in range(60)
        ]
    assert {(r.noise, r.accountant) for r in runs} == {("exact", "rdp")}
    lam = np.concatenate([r.diagnostics["eigenvalue"][1:] for r in runs])
    k = lam / (gs * L * L)
    assert (k == np.round(k)).all()  # on the lattice g Z
    x = lam / np.tile(z[1:] * math.hypot(lv, ls) * L * L, 60)
    se = math.sqrt(2 / x.size)
    assert abs(x.var() - 1) < 5 * se and abs(x.var() / 4 - 1) > 5 * se


def test_exact_cleansing_releases_on_lattice():
    r = mc.private_svd_cleansing(ZERO, epsilon=1.0, delta=1e-6, noise="exact", rng=0)
    for key, g in r.diagnostics["grid"].items():
        x = np.asarray(r.diagnostics[key]) / g
        assert (x == np.round(x)).all(), key


def test_exact_mode_accounting_and_fast_path_unchanged():
    R = sparse.csr_array(np.eye(5) + 1)
    args = dict(epsilon=1.0, delta=1e-6, nuclear_norm=1.0, n_iter=2, row_norm=1.0, rng=0)
    with pytest.raises(
        ValueError, match="`accountant` = 'gdp' reads epsilon off the continuous Gaussian"
    ):
        mc.private_frank_wolfe(R, accountant="gdp", noise="exact", **args)
    fast = mc.private_frank_wolfe(R, **args)
    assert fast.noise == "fast" and fast.accountant == "gdp"
    ref = mc.private_frank_wolfe(R, accountant="gdp", noise="fast", **args)
    np.testing.assert_array_equal(fast.coef, ref.coef)
    ex = mc.private_frank_wolfe(R, noise="exact", **args)
    assert (
        ex.noise == "exact"
        and ex.accountant == "rdp"
        and abs(mc.epsilon_rdp(ex.noise_multiplier, delta=1e-6) - 1.0) < 1e-7
    )
    assert (ex.sigma > fast.sigma).all()  # RDP and the snapping cost a little more noise


def test_exact_gram_release_on_lattice_and_calibrated():
    g, l2 = _snapped(mc.SENSITIVITY_EXACT, mc.changed_entries("gram", 8))
    sigma = 3.0 * l2
    iu = np.triu_indices(8)
    W = np.array(
        [
            mc.noisy_gram(
                np.full((8, 8), 0.1234567),
                sigma,
                rng=np.random.default_rng(s),
                mode="exact",
                grid=g,
            )[iu]
            for s in range(60)
        ]
    )
    assert (W / g == np.round(W / g)).all()
    x = (W - round(0.1234567 / g) * g) / sigma
    se = math.sqrt(2 / x.size)
    assert abs(x.var() - 1) < 5 * se and abs(x.var() / 4 - 1) > 5 * se


# --- Section 5's protocol: PGD's step schedules, the tuning harness (issue 14) ---


@pytest.mark.parametrize(
    "step,want",
    [
        ("1/sqrt(t)", np.arange(1, 6) ** -0.5),
        ("1/t", 1 / np.arange(1, 6)),
        (0.5, np.full(5, 0.5)),
    ],
)
def test_pgd_step_schedule_is_the_step_used(step, want):
    R, u, v = mc.synthetic_rank_one(400, 30, per_user=10, rng=0)
    sp = mc.split_ratings(R, rng=1)
    kw = dict(nuclear_norm=5.0, row_norm=50.0, rank=3, beta=1e-3, mode="fast", grid=None)
    C1, V1, d = mc._pgd(
        sp.train, n_iter=5, step=step, sigmas=np.ones(5), rng=np.random.default_rng(0), **kw
    )
    g, C, V = np.random.default_rng(0), np.zeros((400, 0)), np.zeros((30, 0))
    for t in range(5):
        C, V, _ = mc._pgd_step(
            sp.train, mc._row_ids(sp.train), C, V, step=want[t], sigma=1.0, rng=g, **kw
        )
    np.testing.assert_allclose(C @ V.T, C1 @ V1.T, atol=1e-12)
    np.testing.assert_allclose(d["step"], want, rtol=1e-15)


@pytest.mark.parametrize("step", ["1/T", "t", 0, -0.1, 2.5, np.nan, None, [0.5]])
def test_pgd_refuses_other_steps(step):
    R, _, _ = mc.synthetic_rank_one(50, 20, per_user=5, rng=0)
    with pytest.raises(
        ValueError, match=r"`step` must be in \(0, 2\] or one of \['1/sqrt\(t\)', '1/t'\]"
    ):
        mc.private_pgd(
            R, epsilon=1.0, delta=1e-6, nuclear_norm=1.0, n_iter=2, row_norm=1.0, step=step
        )


def test_tune_holds_out_training_ratings_and_returns_the_best():
    R, u, v = mc.synthetic_rank_one(3000, 100, per_user=20, rng=0)
    sp = mc.split_ratings(R, rng=1)
    k = np.linalg.norm(u) * np.linalg.norm(v)
    grid = [dict(nuclear_norm=1.5 * k, n_iter=T, row_norm=L) for T in (2, 5) for L in (1.0, 3.0)]
    best, table = mc.tune(mc.private_frank_wolfe, sp, grid, epsilon=5.0, delta=1e-6, rng=0)
    assert [kw for kw, _ in table] == grid
    assert best == min(table, key=lambda r: r[1])[0]
    assert mc.tune(mc.private_frank_wolfe, sp, grid, epsilon=5.0, delta=1e-6, rng=0) == (
        best,
        table,
    )
    vs = mc.validation_split(sp, valid_fraction=0.1, rng=0)
    assert vs.train.nnz + len(vs.test_value) == sp.train.nnz
    assert (np.diff(vs.train.indptr) >= 1).all()


def test_frank_wolfe_rows_refuse_bad_blocks_by_name():
    R = sparse.csr_array(np.array([[1.0, 0.0], [0.0, 2.0]]))
    for kw, name in [
        (dict(n_iter=2, row_norm=0.0), "row_norm"),
        (dict(n_iter=0, row_norm=1.0), "n_iter"),
        (dict(n_iter=2, row_norm=1.0, first_user=-1), "first_user"),
        (dict(n_iter=2, row_norm=1.0, first_user=3, n_users=4), "n_users"),
    ]:
        with pytest.raises((TypeError, ValueError), match=name):
            mc.FrankWolfeRows(R, **kw)
    with pytest.raises(ValueError, match="row_norm"):  # rows held for another L are refused
        rows = mc.FrankWolfeRows(R, n_iter=2, row_norm=2.0)
        mc.private_frank_wolfe(
            rows, epsilon=1.0, delta=1e-6, nuclear_norm=1.0, n_iter=2, row_norm=1.0, rng=0
        )
