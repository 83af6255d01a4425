"""Property tests for privrank.tree: the noiseless modified tree reproduces the exact position costs, the noise
matches its calibration (and half of it would be detected), and bad input gets a clear error."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from privrank import tree
from privrank.core import analytic_gaussian_sigma

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def profiles(draw, max_n=30, max_m=40):
    n = draw(st.integers(1, max_n)); m = draw(st.integers(1, max_m))
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
    assert np.abs(tree.reconstruct_costs(tree.tree_node_values(H, n), m)[0] - brute).max() < 1e-12 * m


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_central_noise_calibration(delta):
    """Mean |noise| (Laplace) or sd (Gaussian) of the released node values, per level, equals the calibration
    derived from the sensitivities within 5 standard errors; half of it would not."""
    R = np.argsort(np.random.default_rng(0).random((30, 12)), axis=1)
    n, m = R.shape
    clean = tree.tree_node_values(tree.position_histograms(R), n)
    l1, l2 = tree.tree_sensitivity(m, scope="ranking")
    rel = [tree.private_position_costs(R, epsilon=0.5, delta=delta, rng=s) for s in range(150)]
    for l in range(tree.tree_depth(m)):
        z = np.concatenate([np.concatenate([r.diagnostics["released_nodes"][l][0] - clean[l][0],
                                            r.diagnostics["released_nodes"][l][1] - clean[l][1]], axis=None) for r in rel])
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
        assert np.isclose(mu, 1 / analytic_gaussian_sigma(0.5, delta))


def test_local_noise_calibration():
    res = tree.private_position_costs(np.argsort(np.random.default_rng(1).random((40, 8)), axis=1), epsilon=1.0,
                                      model="local", rng=0)
    l1, _ = tree.tree_sensitivity(8, scope="value")
    assert np.isclose((l1 / res.noise_scale).sum(), 1.0)
    reps = tree.local_reports(np.full(3000, 5), 8, res.noise, res.noise_scale, rng=1)
    clean = tree.local_reports(np.full(3000, 5), 8, res.noise, np.zeros_like(res.noise_scale), rng=1)
    for l, ((v, u), (v0, u0)) in enumerate(zip(reps, clean)):
        z = np.concatenate([(v - v0).ravel(), (u - u0).ravel()])
        assert abs(np.abs(z).mean() - res.noise_scale[l]) < 5 * res.noise_scale[l] / np.sqrt(z.size)
    assert res.diagnostics["group_sizes"].sum() == 40 and res.diagnostics["group_sizes"].min() == 5


@pytest.mark.parametrize("kw, exc, msg", [
    (dict(epsilon=0), ValueError, "`epsilon` must be positive"),
    (dict(epsilon=-1), ValueError, "`epsilon` must be positive"),
    (dict(epsilon=1, delta=1.0), ValueError, "0 <= delta < 1"),
    (dict(epsilon=1, delta=-1e-3), ValueError, "0 <= delta < 1"),
    (dict(epsilon=1, model="global"), ValueError, "`model` must be"),
    (dict(epsilon=1, kappa=0), ValueError, "`kappa` must be"),
    (dict(epsilon="1"), TypeError, "`epsilon` must be a real number"),
])
def test_bad_parameters(kw, exc, msg):
    R = np.argsort(np.random.default_rng(0).random((10, 4)), axis=1)
    with pytest.raises(exc, match=msg):
        tree.private_position_costs(R, **kw)


@pytest.mark.parametrize("ranks, msg", [
    ([[0, 0, 1]], "not a permutation"), ([[0, 1, 3]], "not a permutation"),
    (np.zeros((0, 3), int), "at least one voter"), ([0, 1, 2], "2-D"),
])
def test_bad_ranks(ranks, msg):
    with pytest.raises(ValueError, match=msg):
        tree.private_position_costs(ranks, epsilon=1.0)
    with pytest.raises(ValueError, match=msg):
        tree.exact_position_costs(ranks)


def test_local_needs_one_voter_per_group():
    with pytest.raises(ValueError, match="needs n >= m"):
        tree.private_position_costs(np.argsort(np.random.default_rng(0).random((3, 5)), axis=1), epsilon=1.0, model="local")


@pytest.mark.parametrize("kappa", [1e-300, 1e300, 1e-3, 1e3])
def test_extreme_kappa_answers_without_nan(kappa):
    "Level shares are normalised in log space: any kappa > 0 gives finite costs (or a refusal naming `kappa` if a share is 0)"
    g, b = tree.private_apxmed([0, 1, 3], 4, epsilon=1.0, kappa=kappa, rng=0)
    assert np.isfinite(g).all() and np.isfinite(b)
    pc = tree.private_position_costs(np.array([[0, 1, 2, 3], [3, 2, 1, 0]]), epsilon=1.0, kappa=kappa, rng=0)
    assert np.isfinite(pc.gamma).all() and np.isfinite(pc.error_bound)
    with pytest.raises(ValueError, match="`kappa`"):
        tree.private_apxmed([0, 1], 2 ** 12, epsilon=1.0, kappa=1e-300, rng=0)


@pytest.mark.parametrize("call, name", [
    (lambda: tree.private_apxmed([0], 4, epsilon=[1.0, 2.0], rng=0), "`epsilon`"),
    (lambda: tree.range_count_tree([0], 4, epsilon=[1.0, 2.0], rng=0), "`epsilon`"),
    (lambda: tree.private_position_costs(np.array([[0, 1]]), epsilon=[1.0, 2.0], rng=0), "`epsilon`"),
    (lambda: tree.private_apxmed([0, 1, 2, 3], 4, epsilon=1e-320, rng=0), "`epsilon`"),
    (lambda: tree.range_count_tree([0, 1], 4, epsilon=1e-320, rng=0), "`epsilon`"),
    (lambda: tree.range_count_tree([0, 1], 10 ** 12, epsilon=1.0, rng=0), "`m`"),
    (lambda: tree.private_apxmed([0, 1], 10 ** 12, epsilon=1.0, rng=0), "`m`"),
    (lambda: tree.private_position_costs(np.arange(10 ** 6)[None], epsilon=1.0, rng=0), "`ranks`"),
    (lambda: tree.exact_position_costs(np.arange(10 ** 6)[None]), "`ranks`")])
def test_refusals_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name): call()
