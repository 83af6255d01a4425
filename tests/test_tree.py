"""Property tests for privrank.tree: the noiseless modified tree reproduces the exact position
costs, the noise matches its calibration (and half of it would be detected), and bad input
gets a clear error."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privrank import core, tree
from privrank.core import analytic_gaussian_sigma

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def profiles(draw, max_n=30, max_m=40):
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(1, max_m))
    return np.argsort(np.random.default_rng(draw(st.integers(0, 2**32 - 1))).random((n, m)), axis=1)


@SETTINGS
@given(profiles())
def test_noiseless_reconstruction_is_exact(R):
    n, m = R.shape
    brute = np.abs(R[:, :, None] - np.arange(m)).mean(0)
    assert np.abs(tree.exact_position_costs(R) - brute).max() < 1e-12 * max(m, 1)
    nodes = tree.tree_node_values(tree.position_histograms(R), n)
    assert np.abs(tree.reconstruct_costs(nodes, m) - brute).max() < 1e-12 * max(m, 1)


@SETTINGS
@given(st.integers(1, 300), st.integers(1, 50), st.integers(0, 2**32 - 1))
def test_single_tree_reconstruction(n, m, seed):
    x = np.random.default_rng(seed).integers(0, m, n)
    H = np.bincount(x, minlength=m)[None]
    brute = np.abs(x[:, None] - np.arange(m)).mean(0)
    assert (
        np.abs(tree.reconstruct_costs(tree.tree_node_values(H, n), m)[0] - brute).max() < 1e-12 * m
    )


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_central_noise_calibration(delta):
    """Mean |noise| (Laplace) or sd (Gaussian) of the released node values, per level, equals the
    calibration derived from the sensitivities within 5 standard errors; half of it would not."""
    R = np.argsort(np.random.default_rng(0).random((30, 12)), axis=1)
    n, m = R.shape
    clean = tree.tree_node_values(tree.position_histograms(R), n)
    l1, l2 = tree.tree_sensitivity(m, scope="ranking")
    rel = [tree.private_position_costs(R, epsilon=0.5, delta=delta, rng=s) for s in range(150)]
    for l in range(tree.tree_depth(m)):
        z = np.concatenate(
            [
                np.concatenate(
                    [
                        r.diagnostics["released_nodes"][l][0] - clean[l][0],
                        r.diagnostics["released_nodes"][l][1] - clean[l][1],
                    ],
                    axis=None,
                )
                for r in rel
            ]
        )
        scale = rel[0].noise_scale[l]
        if delta == 0:
            est, se = np.abs(z).mean(), scale / np.sqrt(z.size)
        else:
            est, se = z.std(), scale / np.sqrt(2 * z.size)
        assert abs(est - scale) < 5 * se and abs(est / 2 - scale) > 5 * se
    # the calibration itself spends exactly the budget
    if delta == 0:
        assert np.isclose(((l1 / n) / rel[0].noise_scale).sum(), 0.5)
    else:
        mu = np.sqrt((((l2 / n) / rel[0].noise_scale) ** 2).sum())
        assert np.isclose(mu, 1 / analytic_gaussian_sigma(epsilon=0.5, delta=delta))


def test_local_noise_calibration():
    res = tree.private_position_costs(
        np.argsort(np.random.default_rng(1).random((40, 8)), axis=1),
        epsilon=1.0,
        model="local",
        rng=0,
    )
    l1, _ = tree.tree_sensitivity(8, scope="value")
    assert np.isclose((l1 / res.noise_scale).sum(), 1.0)
    reps = tree.local_reports(np.full(3000, 5), 8, res.noise_law, res.noise_scale, rng=1)
    clean = tree.local_reports(
        np.full(3000, 5), 8, res.noise_law, np.zeros_like(res.noise_scale), rng=1
    )
    for l, ((v, u), (v0, u0)) in enumerate(zip(reps, clean)):
        z = np.concatenate([(v - v0).ravel(), (u - u0).ravel()])
        assert abs(np.abs(z).mean() - res.noise_scale[l]) < 5 * res.noise_scale[l] / np.sqrt(z.size)
    assert res.diagnostics["group_sizes"].sum() == 40 and res.diagnostics["group_sizes"].min() == 5


@pytest.mark.parametrize(
    "kw, exc, msg",
    [
        (dict(epsilon=0), ValueError, "`epsilon` must be positive"),
        (dict(epsilon=-1), ValueError, "`epsilon` must be positive"),
        (dict(epsilon=1, delta=1.0), ValueError, "0 <= delta < 1"),
        (dict(epsilon=1, delta=-1e-3), ValueError, "0 <= delta < 1"),
        (dict(epsilon=1, model="global"), ValueError, "`model` must be"),
        (dict(epsilon=1, kappa=0), ValueError, "`kappa` must be"),
        (dict(epsilon="1"), TypeError, "`epsilon` must be a real number"),
    ],
)
def test_bad_parameters(kw, exc, msg):
    R = np.argsort(np.random.default_rng(0).random((10, 4)), axis=1)
    with pytest.raises(exc, match=msg):
        tree.private_position_costs(R, **kw)


@pytest.mark.parametrize(
    "ranks, msg",
    [
        ([[0, 0, 1]], "not a permutation"),
        ([[0, 1, 3]], "not a permutation"),
        (np.zeros((0, 3), int), "at least one voter"),
        ([0, 1, 2], "2-D"),
    ],
)
def test_bad_ranks(ranks, msg):
    with pytest.raises(ValueError, match=msg):
        tree.private_position_costs(ranks, epsilon=1.0)
    with pytest.raises(ValueError, match=msg):
        tree.exact_position_costs(ranks)


def test_local_needs_one_voter_per_group():
    with pytest.raises(ValueError, match="needs n >= m"):
        tree.private_position_costs(
            np.argsort(np.random.default_rng(0).random((3, 5)), axis=1), epsilon=1.0, model="local"
        )


@pytest.mark.parametrize("kappa", [1e-300, 1e300, 1e-3, 1e3])
def test_extreme_kappa_answers_without_nan(kappa):
    """Level shares are normalised in log space: any kappa > 0 gives finite costs (or a refusal
    naming `kappa` if a share is 0)"""
    g, b = tree.private_apxmed([0, 1, 3], 4, epsilon=1.0, kappa=kappa, rng=0)
    assert np.isfinite(g).all() and np.isfinite(b)
    pc = tree.private_position_costs(
        np.array([[0, 1, 2, 3], [3, 2, 1, 0]]), epsilon=1.0, kappa=kappa, rng=0
    )
    assert np.isfinite(pc.gamma).all() and np.isfinite(pc.error_bound)
    with pytest.raises(ValueError, match="`kappa`"):
        tree.private_apxmed([0, 1], 2**12, epsilon=1.0, kappa=1e-300, rng=0)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: tree.private_apxmed([0], 4, epsilon=[1.0, 2.0], rng=0), "`epsilon`"),
        (lambda: tree.range_count_tree([0], 4, epsilon=[1.0, 2.0], rng=0), "`epsilon`"),
        (
            lambda: tree.private_position_costs(np.array([[0, 1]]), epsilon=[1.0, 2.0], rng=0),
            "`epsilon`",
        ),
        (lambda: tree.private_apxmed([0, 1, 2, 3], 4, epsilon=1e-320, rng=0), "`epsilon`"),
        (lambda: tree.range_count_tree([0, 1], 4, epsilon=1e-320, rng=0), "`epsilon`"),
        (lambda: tree.range_count_tree([0, 1], 10**12, epsilon=1.0, rng=0), "`n_items`"),
        (lambda: tree.private_apxmed([0, 1], 10**12, epsilon=1.0, rng=0), "`n_items`"),
        (
            lambda: tree.private_position_costs(np.arange(10**6)[None], epsilon=1.0, rng=0),
            "`ranks`",
        ),
        (lambda: tree.exact_position_costs(np.arange(10**6)[None]), "`ranks`"),
    ],
)
def test_refusals_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --------------------------------------------------------------------------------------------------
# exact noise (issue 11): integer counts + integer noise over n; one lattice for neighbours;
# the fast path unchanged


def offsets(X, s):
    """Per column of X (rows = releases): the one offset of the values modulo s, as a fraction of s,
    or NaN where there are several"""
    r = np.mod(X, s) / s
    r = np.where(r > 1 - 1e-7, 0.0, r)
    return np.where(np.ptp(r, axis=0) < 1e-7, r[0], np.nan)


def lattice_agrees(X0, X1, denom, k=4000):
    """For s = 1/denom and each power of two 2^-40..2^20: wherever each side sits at one offset
    modulo s, the offsets agree (k random columns)"""
    cols = np.random.default_rng(0).permutation(X0.shape[1])[:k]
    X0, X1 = X0[:, cols], X1[:, cols]
    for s in [1 / denom] + [2.0**k for k in range(-40, 21)]:
        o0, o1 = offsets(X0, s), offsets(X1, s)
        gap = np.abs(o0 - o1)[~np.isnan(o0) & ~np.isnan(o1)]
        if (np.minimum(gap, 1 - gap) > 1e-6).any():
            return False
    return True


def on_lattice(X, denom):
    return np.allclose(X * denom, np.round(X * denom), rtol=0, atol=1e-6)


def grid_release(counts, law, scale, denom, rng):
    """The former exact path (a copy, to keep the test failing-first): grid noise k g on counts /
    denom, g = 2^(floor(log2 scale) - 10)"""
    g = 2.0 ** (math.floor(math.log2(scale)) - 10)
    k = (
        core.discrete_laplace(math.ceil(scale / g), np.shape(counts), rng=rng)
        if law == "laplace"
        else core.discrete_gaussian(math.ceil((scale / g) ** 2), np.shape(counts), rng=rng)
    )
    return np.asarray(counts) / denom + k * g


def _flat(nodes):
    return np.concatenate([a.ravel() for vu in nodes for a in vu])


def _neighbours(m, n=150):
    R0 = np.argsort(np.random.default_rng(m).random((n, m)), axis=1)
    R0[0] = np.arange(m)
    R1 = R0.copy()
    R1[0] = m - 1 - R0[0]
    return R0, R1


@pytest.mark.parametrize("m", [9, 100])
@pytest.mark.parametrize("eps", [1.0, 1e-3])
@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_central_exact_release_is_on_one_lattice(m, eps, delta):
    R0, R1 = _neighbours(m)
    n = len(R0)
    g = np.random.default_rng([m, int(1 / eps), int(delta > 0)])
    with core.use_noise("exact"):
        res = [
            [tree.private_position_costs(R, epsilon=eps, delta=delta, rng=g) for _ in range(6)]
            for R in (R0, R1)
        ]
    assert all(r.noise == "exact" and r.diagnostics["denom"] == n for side in res for r in side)
    X0, X1 = (np.stack([_flat(r.diagnostics["released_nodes"]) for r in side]) for side in res)
    assert on_lattice(X0, n) and on_lattice(X1, n) and lattice_agrees(X0, X1, n)
    pc = res[0][0]  # the former grid rule on the same counts and scales: two lattices
    O0, O1 = (
        np.stack(
            [
                _flat(
                    [
                        tuple(grid_release(a, pc.noise_law, pc.noise_scale[l], n, g) for a in vu)
                        for l, vu in enumerate(tree.tree_node_counts(tree.position_histograms(R)))
                    ]
                )
                for _ in range(6)
            ]
        )
        for R in (R0, R1)
    )
    assert not lattice_agrees(O0, O1, n)


@pytest.mark.parametrize("m", [9, 100])
def test_apxmed_local_and_range_exact_releases_are_on_one_lattice(m):
    n, g = 150, np.random.default_rng(m)
    x0 = np.random.default_rng(1).integers(0, m, n)
    x0[0] = 0
    x1 = x0.copy()
    x1[0] = m - 1
    with core.use_noise("exact"):
        A = [
            np.stack(
                [
                    _flat(
                        tree.private_apxmed(x, m, epsilon=1.0, rng=g).diagnostics["released_nodes"]
                    )
                    for _ in range(6)
                ]
            )
            for x in (x0, x1)
        ]
        T = [
            np.stack(
                [
                    np.concatenate(tree.range_count_tree(x, m, epsilon=1e-3, rng=g).levels)
                    for _ in range(24)
                ]
            )
            for x in (x0, x1)
        ]
        pc = tree.private_position_costs(
            np.tile(_neighbours(m)[0], (2, 1)), epsilon=1.0, model="local", rng=g
        )
    law, sc = tree.level_noise_scales(
        *tree.tree_sensitivity(m, scope="value"), epsilon=1e-3, delta=0.0
    )
    L = [
        np.stack(
            [
                _flat(tree.local_reports(np.array([x]), m, law, sc, rng=g, noise="exact"))
                for _ in range(24)
            ]
        )
        for x in (0, m - 1)
    ]
    assert on_lattice(A[0], n) and on_lattice(A[1], n) and lattice_agrees(A[0], A[1], n)
    for X0, X1 in (T, L):
        assert on_lattice(X0, 1) and on_lattice(X1, 1) and lattice_agrees(X0, X1, 1)
    assert pc.noise == "exact" and all(
        on_lattice(a, 1) for vu in pc.diagnostics["group_report_sums"] for a in vu
    )
    # the former grid rule at the same large scale: integer counts keep their residue modulo g > 1
    O = [
        np.stack(
            [
                _flat(
                    [
                        tuple(grid_release(c, law, sc[l], 1, g) for c in vu)
                        for l, vu in enumerate(
                            tree.local_reports(np.array([x]), m, law, np.zeros_like(sc), rng=0)
                        )
                    ]
                )
                for _ in range(24)
            ]
        )
        for x in (0, m - 1)
    ]
    assert not lattice_agrees(O[0], O[1], 1)


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_fast_path_is_the_former_release_bit_for_bit(delta):
    """counts / n + float noise: the same values and the same random stream as node values +
    sample_noise"""
    R = np.argsort(np.random.default_rng(5).random((30, 11)), axis=1)
    n, m = R.shape
    pc = tree.private_position_costs(R, epsilon=0.8, delta=delta, rng=3)
    g = np.random.default_rng(3)
    old = [
        tuple(a + core.sample_noise(pc.noise_law, pc.noise_scale[l], a.shape, rng=g) for a in vu)
        for l, vu in enumerate(tree.tree_node_values(tree.position_histograms(R), n))
    ]
    assert (
        np.array_equal(_flat(pc.diagnostics["released_nodes"]), _flat(old)) and pc.noise == "fast"
    )
    x = R[:, 0]
    a = tree.private_apxmed(x, m, epsilon=0.8, delta=delta, rng=4)
    g = np.random.default_rng(4)
    old = [
        tuple(v + core.sample_noise(a.noise_law, a.noise_scale[l], v.shape, rng=g) for v in vu)
        for l, vu in enumerate(tree.tree_node_values(np.bincount(x, minlength=m)[None], n))
    ]
    assert np.array_equal(a.gamma, tree.reconstruct_costs(old, m)[0])
    t = tree.range_count_tree(x, m, epsilon=0.8, delta=delta, rng=5)
    g = np.random.default_rng(5)
    h = np.bincount(x, minlength=16).astype(float)
    for l, c in enumerate(t.levels[:-1]):
        want = h.reshape(-1, 2**l).sum(1)
        live = np.arange(want.size) * 2**l < m
        want[live] += core.sample_noise(t.noise_law, t.noise_scale, int(live.sum()), rng=g)
        assert np.array_equal(c, want)
    rep = tree.local_reports(x, m, pc.noise_law, np.ones(4), rng=np.random.default_rng(6))
    g = np.random.default_rng(6)
    for l, (v, u) in enumerate(rep):
        nv, nu = (core.sample_noise(pc.noise_law, 1.0, v.shape, rng=g) for _ in range(2))
        nv[np.arange(n), x >> l] += x % 2**l
        nu[np.arange(n), x >> l] += 2.0**l
        assert np.array_equal(v, nv) and np.array_equal(u, nu)


def test_local_reports_draw_fresh_noise_for_an_int_seed():
    """An int seed is one stream for the whole report (it once restarted per array: v and u carried
    the same noise)"""
    rep = tree.local_reports(np.array([3, 5]), 8, "laplace", np.ones(3), rng=9)
    assert not np.allclose(rep[0][1] - rep[0][0], np.eye(8)[[3, 5]])


def test_exact_gaussian_is_zcdp_calibrated():
    R = np.argsort(np.random.default_rng(2).random((20, 6)), axis=1)
    fast = tree.private_position_costs(R, epsilon=1.0, delta=1e-6, rng=0)
    with core.use_noise("exact"):
        exact = tree.private_position_costs(R, epsilon=1.0, delta=1e-6, rng=0)
    ratio = core.zcdp_sigma(epsilon=1.0, delta=1e-6) / core.analytic_gaussian_sigma(
        epsilon=1.0, delta=1e-6
    )
    assert np.allclose(exact.noise_scale, fast.noise_scale * ratio, rtol=1e-9)
    l2 = exact.diagnostics["sensitivity_l2"]  # rho-zCDP over the levels adds up to the target
    rho = (((l2 / exact.noise_scale) ** 2) / 2).sum()
    assert math.isclose(rho, 1 / (2 * core.zcdp_sigma(epsilon=1.0, delta=1e-6) ** 2), rel_tol=1e-9)


def _exact_local(R):
    "The exact path's local model, which still draws every voter's report"
    with core.use_noise("exact"):
        return tree.private_position_costs(R, epsilon=1.0, model="local")


def test_memory_is_estimated_before_allocating():
    with pytest.raises(
        ValueError,
        match=r"`n_items`: the tree over m = 1,000,000,000 positions .* would need about 48 GiB",
    ):
        tree.range_count_tree([0, 5], 10**9, epsilon=1.0)
    core.set_memory_limit(1 << 20)
    try:
        R = np.argsort(np.random.default_rng(0).random((2000, 20)), axis=1)
        for call in (
            lambda: _exact_local(R),
            lambda: tree.position_histograms(np.arange(400)[None]),
            lambda: tree.exact_position_costs(np.arange(400)[None]),
        ):
            with pytest.raises(
                ValueError,
                match=r"`ranks`: .* would need about .* over privrank's memory limit of 1 MiB",
            ):
                call()
        with pytest.raises(ValueError, match="`x`: the reports"):
            tree.local_reports(np.zeros(20_000, int), 8, "laplace", np.ones(3), rng=0)
    finally:
        core.set_memory_limit(None)


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: tree.tree_depth(0), ValueError, "`n_items`"),
        (
            lambda: tree.range_counts(tree.range_count_tree([0, 1], 13, epsilon=1.0, rng=0), 0, 99),
            ValueError,
            "`hi`",
        ),
        (lambda: tree.range_counts([1.0], 0, 1), TypeError, "`tree`"),
        (lambda: tree.costs_from_histograms([[1.0, np.nan]], 2), TypeError, "`H`"),
        (
            lambda: tree.reconstruct_costs([(np.full((1, 4), np.nan), np.zeros((1, 4)))] * 2, 4),
            ValueError,
            "`nodes`",
        ),
        (
            lambda: tree.aggregate_local_reports(
                tree.local_reports([0, 1], 4, "laplace", np.ones(2), rng=0), [0, 0], 4
            ),
            ValueError,
            "`groups`",
        ),
        (lambda: tree.local_reports([0, 1], 4, "fast", np.ones(2), rng=0), ValueError, "`law`"),
        (
            lambda: tree.level_noise_scales([1.0, np.nan], [1.0, 1.0], epsilon=1.0, delta=0.0),
            ValueError,
            "`l1`",
        ),
        (lambda: tree.level_shares(3, "0.5"), TypeError, "`kappa`"),
        (lambda: tree.assign_groups(3, 5, rng=0), ValueError, "`n_groups`"),
    ],
)
def test_public_helpers_validate(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("m", [1, 3, 30, 100, 300])
def test_rank_histograms_over_blocks_equal_one_bincount(m):
    "The blocked histograms equal the one-bincount definition, for every dtype and block boundary"
    rng = np.random.default_rng(m)
    for n in (1, tree._hist_rows(m) - 1, tree._hist_rows(m), 2 * tree._hist_rows(m) + 3):
        R = np.argsort(rng.random((n, m)), axis=1)
        H = np.bincount((R + np.arange(m) * m).ravel(), minlength=m * m).reshape(m, m)
        for dtype in INT_DTYPES:
            if m > np.iinfo(dtype).max + 1:
                continue
            got = tree.position_histograms(R.astype(dtype))
            assert got.dtype == np.int64 and np.array_equal(got, H), (n, dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_position_costs_identical_for_every_dtype(dtype):
    "Exact and private position costs (both models, both laws, both noise paths) ignore the dtype"
    R = np.argsort(np.random.default_rng(4).random((3000, 20)), axis=1)
    Rd = R.astype(dtype)
    assert np.array_equal(tree.exact_position_costs(Rd), tree.exact_position_costs(R))
    for noise in ("fast", "exact"):
        with core.use_noise(noise):
            for model in ("central", "local"):
                for delta in (0.0, 1e-6):
                    a = tree.private_position_costs(
                        Rd, epsilon=1.0, delta=delta, model=model, rng=3
                    )
                    b = tree.private_position_costs(R, epsilon=1.0, delta=delta, model=model, rng=3)
                    assert np.array_equal(a.gamma, b.gamma), (noise, model, delta)


@pytest.mark.parametrize("law", ["laplace", "gaussian"])
def test_summed_local_noise_has_the_law_of_the_summed_reports(law):
    """The fast local path's one-step group noise against the sum of the voters' own report noise
    (k = 2 voters a group: far from Gaussian); KS at level 1e-6, and a Gaussian of the same
    variance is rejected (the test has power)"""
    from scipy import stats

    k, reps, g = 2, 100_000, np.random.default_rng(21)
    rep = tree.local_reports(np.zeros(k * reps, int), 8, law, np.array([1.0, 2.0, 0.5]), rng=g)
    for level, scale in enumerate([1.0, 2.0, 0.5]):
        for part in (0, 1):
            summed = rep[level][part][:, -1].reshape(reps, k).sum(1)  # an empty node
            direct = core.summed_noise(law, scale, k, (reps, 1), rng=g)[:, 0]
            assert stats.ks_2samp(summed, direct).pvalue > 1e-6, (level, part)
    if law == "laplace":
        gauss = g.normal(0, np.sqrt(2 * k), reps)
        assert stats.ks_2samp(direct * 2, gauss).pvalue < 1e-6


def test_fast_local_group_sums_are_the_exact_counts_plus_noise():
    "Noiseless, the fast local path's group sums equal the summed one-value trees of the reports"
    R = np.argsort(np.random.default_rng(2).random((500, 9)), axis=1)
    groups = tree.assign_groups(500, 9, rng=1)
    x = R[np.arange(500), groups]
    zero = np.zeros(tree.tree_depth(9))
    sizes = np.bincount(groups, minlength=9)
    C = np.bincount(groups * 9 + x, minlength=81).reshape(9, 9)
    fast = tree._summed_reports(C, sizes, "laplace", zero, np.random.default_rng(0))
    slow, sizes2 = tree._group_sums(tree.local_reports(x, 9, "laplace", zero, rng=0), groups, 9)
    assert np.array_equal(sizes, sizes2)
    for (a, b), (c, d) in zip(fast, slow):
        assert np.array_equal(a, c) and np.array_equal(b, d)
