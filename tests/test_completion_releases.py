"""Every release inside `complete()` tested end to end (issue 34, item 4), for every estimator.

`complete` runs many times (fixed seeds) on small synthetic ratings, 1,000 users x 40 items: big
enough for the subspace's Gram release (`_visible`) and for a choice among ten candidates. Every
release is intercepted where its noise is added, and its realised noise (the release minus its
statistic) is kept:

- the Gaussian releases of 06a, `completion.gaussian_release`: the mean square rating, the item
  sums and weights, the Gram matrix, each ALS round's A and b, Frank-Wolfe's and PGD's private
  nuclear-norm bound;
- those of 06, `mc.noisy_gram` and `mc._noisy`: Frank-Wolfe's steps (the Gram release, then the
  streaming Oja vector and eigenvalue), PGD's Gram releases, cleansing's four releases;
- the private quantiles (the rating bound, the row norm L, cleansing's clamp):
  `completion.range_count_tree`, 03's tree, its Laplace noise on every noised node;
- the candidate choice: `completion.select_runs` (permute-and-flip), and the Exponential noise it
  draws, `topk.sample_exponential`.

Every noise sampler of the package is watched as well: a draw outside an intercepted release
fails (a release this file would not see). Each release is matched to its ledger entry, in order;
the entry must record the proof's sensitivity and the noise drawn (sigma = z x l2 and the
release's sigma; the tree's epsilon, its scale 2d / epsilon; the choice's epsilon, its
Exponential scale 2 x 1 / epsilon), and the realised noise, divided by the ledger's scale and
pooled per ledger step over the runs, must have the law's moment within 6 standard errors: mean
square 1 (Gaussian, variance 2 / K), mean square 2 (Laplace: u^2 has variance 20), mean 1
(Exponential, variance 1). The runs again with every release miscalibrated (half the Gaussian
sigma or Laplace scale drawn under the full recorded one; the choice drawn at twice the recorded
epsilon) must fail that check, every step on its own.

False failures: each check pools K >= 200 draws; the exact tail beyond 6 SE is 1.4e-7 for the
chi-square of 200 draws (the two steps of few draws, pooled over their estimators), below 2e-8
from 800 draws on, about 4e-9 for the Exponential mean (a Gamma) on the choice's 2,200, and for
the Laplace's u^2 (E^2 with E ~ Exp(1): skewed and heavy-tailed) about 5e-9 on its 2,440 or more
(an Edgeworth estimate; a single draw that large is rarer than 1e-12): about 5e-7 for the file's
42 checks together (36 Gaussian: 4.7e-7 summed exactly), and the seeds are fixed. The file runs
in ~15 s on 2 idle cores (single-threaded BLAS); far longer when another job holds the cores, as
OpenBLAS's threads then wait."""

import functools
import math
import sys
from dataclasses import dataclass, field

import numpy as np
import pytest

import privrank.completion as C
import privrank.core as core
import privrank.topk as topk
from privrank import mc
from privrank.tree import tree_depth

SMALL = mc.synthetic_rank_one(1000, 40, rng=0)[0]
EPS, DELTA = 1.0, 1e-6
# runs per estimator: the subspace's mean square (one draw a run, pooled with ALS's) and the
# nuclear-norm bound (two a run, Frank-Wolfe's and PGD's) need about 200 draws to see half the
# noise at 6 SE; every other step draws 40 or more a run
RUNS = {"subspace": 200, "als": 20, "frank-wolfe": 50, "pgd": 50, "cleansing": 20}
ESTIMATORS = list(RUNS)
SQ2 = math.sqrt(2)
SAMPLERS = (  # every primitive noise draw of the package (those `audit.scaled_noise` scales too)
    (core, ("sample_gaussian", "sample_laplace", "exact_noise", "summed_noise")),
    (
        topk,
        (
            "sample_exponential",
            "sample_gumbel",
            "sample_em",
            "exact_exp_coins",
            "gumbel_top_k_exact",
        ),
    ),
)


@dataclass
class Run:
    "What one `complete` run released, as intercepted, and its ledger"

    gauss: list = field(default_factory=list)  # (noise, sigma drawn under, l2, z) in order
    trees: list = field(default_factory=list)  # (epsilon, n_items, scale, noise of noised nodes)
    choices: list = field(default_factory=list)  # (epsilon, k, method, candidates, [(scale, x)])
    stray: list = field(default_factory=list)  # noise drawn outside every intercepted release
    ledger: list = field(default_factory=list)
    params: dict = field(default_factory=dict)


def _intercept(mp, run, bad):
    """Install the spies of one run on `mp`; `bad`: each release miscalibrated (half the Gaussian
    sigma or Laplace scale drawn, the full one recorded; the choice run at twice its epsilon)"""
    depth, in_choice = [0], [False]
    half = 0.5 if bad else 1.0

    def inside(f):
        def g(*a, **kw):
            depth[0] += 1
            try:
                return f(*a, **kw)
            finally:
                depth[0] -= 1

        return g

    real_gr = C.gaussian_release

    @inside
    def gaussian_release(x, **kw):
        if depth[0] > 1:  # a symmetric release's own call on its upper triangle
            return real_gr(x, **kw)
        y, s = real_gr(x, **{**kw, "z": kw["z"] * half})
        s = s / half
        if s > 0:
            noise = np.asarray(y, float) - np.asarray(x, float)
            if kw.get("symmetric"):  # one draw per upper-triangle entry
                iu = np.triu_indices(noise.shape[-1])
                noise = noise[..., iu[0], iu[1]]
            run.gauss.append((noise.ravel(), s, kw["l2"], kw["z"]))
        return y, s

    real_ng, real_noisy = mc.noisy_gram, mc._noisy

    @inside
    def noisy_gram(G, sigma, *, rng, mode, grid):
        W = real_ng(G, sigma * half, rng=rng, mode=mode, grid=grid)
        assert mode == "fast"
        iu = np.triu_indices(G.shape[0])
        run.gauss.append(((W - G)[iu], sigma, None, None))
        return W

    @inside
    def noisy(x, sigma, *, rng, mode, grid):
        y = real_noisy(x, sigma * half, rng=rng, mode=mode, grid=grid)
        assert mode == "fast"
        run.gauss.append((np.ravel(y - x), sigma, None, None))
        return y

    real_tree = C.range_count_tree

    @inside
    def range_count_tree(x, n_items, *, epsilon, delta=0.0, rng=None):
        t = real_tree(x, n_items, epsilon=epsilon / half, delta=delta, rng=rng)
        d = tree_depth(n_items)  # levels 0..d-1 are noised, the root (n) is exact
        h, noise = np.bincount(x, minlength=2**d), []
        for lv in range(d):
            c = h.reshape(-1, 2**lv).sum(1)
            live = np.arange(c.size) * 2**lv < n_items
            noise.append(t.levels[lv][live] - c[live])
        run.trees.append((epsilon, n_items, t.noise_scale, np.concatenate(noise)))
        return t

    real_sel = C.select_runs

    @inside
    def select_runs(scores, k, method, *, epsilon, rng, n=None):
        run.choices.append((epsilon, k, method, len(scores), []))
        in_choice[0] = True
        try:
            return real_sel(scores, k, method, epsilon=epsilon / half, rng=rng, n=n)
        finally:
            in_choice[0] = False

    for mod, name, f in (
        (C, "gaussian_release", gaussian_release),
        (mc, "noisy_gram", noisy_gram),
        (mc, "_noisy", noisy),
        (C, "range_count_tree", range_count_tree),
        (C, "select_runs", select_runs),
    ):
        mp.setattr(mod, name, f)

    def watched(name, f):
        def g(*a, **kw):
            if depth[0] == 0:
                run.stray.append(name)
            x = f(*a, **kw)
            if name == "sample_exponential" and in_choice[0]:
                run.choices[-1][4].append((a[0], np.array(x)))
            return x

        return g

    mods = [m for k, m in list(sys.modules.items()) if k == "privrank" or k.startswith("privrank.")]
    for src, names in SAMPLERS:
        for name in names:
            f = getattr(src, name)
            w = watched(name, f)
            for m in mods:
                if getattr(m, name, None) is f:
                    mp.setattr(m, name, w)


def runs(estimator, bad=False):
    """The intercepted runs of `complete(estimator=...)` on SMALL with private bounds; the seeds
    of each estimator its own (runs pooled over estimators are independent)"""
    return _runs(estimator, bool(bad))


@functools.cache
def _runs(estimator, bad):
    out, first = [], 1000 * ESTIMATORS.index(estimator)
    for seed in range(first, first + RUNS[estimator]):
        run = Run()
        with pytest.MonkeyPatch.context() as mp:
            _intercept(mp, run, bad)
            res = C.complete(
                SMALL,
                epsilon=EPS,
                delta=DELTA,
                rng=seed,
                estimator=estimator,
                rating_range="private",
            )
        run.ledger, run.params = res.diagnostics["ledger"], res.params
        out.append(run)
    return out


def n_releases(step):
    """How many releases a Gaussian ledger entry records: a private ALS round two (A and b),
    Frank-Wolfe's steps after the first two (streaming Oja: the vector and the eigenvalue, one
    block); every other one"""
    if step.startswith("ALS round"):
        return 2
    if step.startswith("frank-wolfe step"):
        return 1 if int(step.split()[-1]) == 1 else 2
    return 1


def proof_l2(step, params):
    "The l2 sensitivity of a Gaussian ledger step, from its proof (06a, 06)"
    if step.startswith("frank-wolfe step"):  # 06, Result 2, in the data's units
        return 4 * SQ2 * params["row_norm"] ** 2
    if step.startswith("pgd step"):  # 06, Result 6: whole rows of norm L_Z
        return SQ2 * params["row_norm"] ** 2
    if step.startswith("cleansing step"):  # 06, Result 7, clamp B
        B = params["row_norm"]
        return (2 * B, SQ2, SQ2 * B * B, SQ2)[int(step.split()[-1]) - 1]
    return {
        "mean square rating": 1.0,  # 06a, Result 1
        "item sums": 2.0,
        "item weights": SQ2,
        "item Gram matrix": SQ2,  # 06a, Result 2
        "nuclear norm k": SQ2,  # 06a: top eigenvalue / sqrt 2 and ratings / xi, 1 each
    }[step]


def matched(run):
    "[(Gaussian ledger entry, the releases drawn for it)] of one run, in order"
    out, i = [], 0
    for e in (e for e in run.ledger if e["mechanism"] == "gaussian"):
        k = n_releases(e["step"])
        out.append((e, run.gauss[i : i + k]))
        i += k
    assert i == len(run.gauss) and all(len(r) for _, r in out), [e["step"] for e, _ in out]
    return out


def gaussian_draws(estimator, bad=False):
    """{ledger step: the realised noise of its releases over the runs, divided by the ledger's
    sigma (in the release's units: Frank-Wolfe releases in units of L^2)}"""
    pool = {}
    for run in runs(estimator, bad):
        for e, rel in matched(run):
            if e["step"].startswith("ALS round"):
                (a, *_), (b, *_) = rel
                pool.setdefault(e["step"] + " (A)", []).append(a / e["sigma"])
                pool.setdefault(e["step"] + " (b)", []).append(b / e["sigma_b"])
                continue
            unit = run.params["row_norm"] ** 2 if e["step"].startswith("frank-wolfe") else 1.0
            for noise, *_ in rel:
                pool.setdefault(e["step"], []).append(noise * unit / e["sigma"])
    return {k: np.concatenate(v) for k, v in pool.items()}


def within(u, moment, sd):
    "Whether the mean of the K draws u lies within 6 standard errors sd / sqrt(K) of `moment`"
    return abs(np.mean(u) - moment) < 6 * sd / math.sqrt(u.size)


def gaussian_ok(u):  # u: noise / sigma; u^2 has mean 1, variance 2
    return within(u * u, 1.0, SQ2)


def laplace_ok(u):  # u: noise / b; u^2 has mean 2, variance E u^4 - 4 = 24 - 4 = 20
    return within(u * u, 2.0, math.sqrt(20))


def exponential_ok(u):  # u: noise / scale; mean 1, variance 1
    return within(u, 1.0, 1.0)


STEPS = {  # the ledger's Gaussian steps of each estimator (each checked on its own)
    "subspace": ["mean square rating", "item sums", "item weights", "item Gram matrix"],
    "als": ["mean square rating", "item sums", "item weights", "item Gram matrix"]
    + [f"ALS round {t} ({x})" for t in (1, 2) for x in "Ab"],
    "frank-wolfe": ["nuclear norm k"] + [f"frank-wolfe step {t}" for t in range(1, 11)],
    "pgd": ["nuclear norm k"] + [f"pgd step {t}" for t in range(1, 11)],
    "cleansing": [f"cleansing step {t}" for t in range(1, 5)],
}
QUANTILE = {  # the ledger step of each estimator's private quantile
    "subspace": "rating bound",
    "als": "rating bound",
    "frank-wolfe": "row norm L (0.9-quantile)",
    "pgd": "row norm L (0.9-quantile)",
    "cleansing": "clamp B (0.95-quantile / 2)",
}


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_every_noise_draw_is_an_intercepted_release_with_its_ledger_entry(estimator):
    for run in runs(estimator):
        assert not run.stray, run.stray  # no noise drawn where this file does not look
        steps = [e["step"] for e in run.ledger]
        gaussian = [s for s in steps if s in STEPS[estimator] or s.startswith("ALS round")]
        assert [e["step"] for e, _ in matched(run)] == gaussian
        assert steps.count(QUANTILE[estimator]) == len(run.trees) == 1
        assert steps.count("candidate choice") == len(run.choices)
        assert len(steps) == len(matched(run)) + len(run.trees) + len(run.choices)
    if estimator in ("subspace", "als"):  # a choice among several candidates, in every run
        assert all(len(r.choices) == 1 for r in runs(estimator))


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_each_gaussian_entry_records_the_proofs_sensitivity_and_the_sigma_drawn(estimator):
    for run in runs(estimator):
        for e, rel in matched(run):
            z, s = e["noise_multiplier"], e["sigma"]
            if e["step"].startswith("ALS round"):  # 06a, Result 4: the pair is one mechanism of z
                (_, sA, lA, zA), (_, sb, lb, zb) = rel
                assert (lA, lb) == (SQ2, 2.0) and sA == pytest.approx(s)
                assert sb == pytest.approx(e["sigma_b"])
                assert zA == pytest.approx(SQ2 * z) and zb == pytest.approx(SQ2 * z)
                assert (lA / sA) ** 2 + (lb / sb) ** 2 == pytest.approx(1 / z**2)
                continue
            assert e["l2_sensitivity"] == pytest.approx(proof_l2(e["step"], run.params)), e
            assert s == pytest.approx(z * e["l2_sensitivity"], rel=1e-12), e
            unit = run.params["row_norm"] ** 2 if e["step"].startswith("frank-wolfe") else 1.0
            for _, sr, l2, zr in rel:
                assert sr * unit == pytest.approx(s, rel=1e-12), e  # the sigma drawn under
                if l2 is not None:  # 06a's releases: the l2 and z they were called with
                    assert (l2, zr) == pytest.approx((e["l2_sensitivity"], z)), e


def test_als_round_entries_record_sigma_as_z_times_l2():
    "The pair (A, b sigma_A / sigma_b), released at sigma_A, has l2 2 (Result 4): sigma = 2 z"
    for run in runs("als")[:1]:
        for e in run.ledger:
            if e["step"].startswith("ALS round"):
                assert e["sigma"] == pytest.approx(e["noise_multiplier"] * e["l2_sensitivity"])


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_the_realised_gaussian_noise_has_the_ledgers_sigma_and_half_of_it_fails(estimator):
    good, bad = gaussian_draws(estimator), gaussian_draws(estimator, bad=True)
    assert sorted(good) == sorted(bad) == sorted(STEPS[estimator])
    for step in STEPS[estimator]:
        u, h = good[step], bad[step]
        if u.size < 200:  # a step of few draws a run: pooled over estimators below
            assert estimator in SHARED[step], (step, u.size)
            continue
        assert gaussian_ok(u), (step, u.size, np.mean(u * u))
        assert not gaussian_ok(h), (step, h.size, np.mean(h * h))  # each step on its own
        assert np.mean(h * h) == pytest.approx(0.25, abs=6 * SQ2 / 4 / math.sqrt(h.size))


SHARED = {  # the steps of few draws a run, and the estimators that release them by the same code
    "mean square rating": ("subspace", "als"),  # one draw a run: 220 in all
    "nuclear norm k": ("frank-wolfe", "pgd"),  # two a run: 200 in all
}


@pytest.mark.parametrize("step", SHARED)
def test_the_steps_of_few_draws_pooled_over_their_estimators(step):
    u, h = (
        np.concatenate([gaussian_draws(e, bad)[step] for e in SHARED[step]])
        for bad in (False, True)
    )
    assert u.size >= 200 and gaussian_ok(u), (u.size, np.mean(u * u))
    assert not gaussian_ok(h), np.mean(h * h)


def tree_draws(estimator, bad=False):
    """The private quantiles' realised Laplace noise over the runs, divided by the scale the
    ledger's epsilon gives the tree: b = 2d / epsilon (l1 sensitivity 2d: one value replaced
    leaves one node and enters one at each of the d noised levels; the root count is public)"""
    u = []
    for run in runs(estimator, bad):
        (e,) = [e for e in run.ledger if e["mechanism"] == "laplace (binary tree)"]
        ((eps, m, scale, noise),) = run.trees
        assert e["step"] == QUANTILE[estimator] and e["delta"] == 0.0
        assert eps == e["epsilon"] and m == C.QUANTILE_GRID[2]  # called at the ledger's epsilon
        b = 2 * tree_depth(m) / e["epsilon"]
        assert (scale == pytest.approx(b, rel=1e-12)) != bad  # the tree's own scale, b
        u.append(noise / b)
    return np.concatenate(u)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_the_private_quantiles_laplace_noise_has_the_ledgers_scale_and_half_of_it_fails(
    estimator,
):
    u, h = tree_draws(estimator), tree_draws(estimator, bad=True)
    assert u.size == RUNS[estimator] * (61 + 31 + 16 + 8 + 4 + 2)  # the live nodes, 6 levels
    assert laplace_ok(u), np.mean(u * u)
    assert not laplace_ok(h), np.mean(h * h)
    assert np.mean(h * h) == pytest.approx(0.5, abs=6 * math.sqrt(20) / 4 / math.sqrt(h.size))


def choice_draws(bad=False):
    """The candidate choice's Exponential noise over the subspace's and ALS's runs, divided by
    the scale the ledger gives permute-and-flip: 2 x l_inf / epsilon"""
    u = []
    for run in runs("subspace", bad) + runs("als", bad):
        (e,) = [e for e in run.ledger if e["step"] == "candidate choice"]
        ((eps, k, method, d, draws),) = run.choices
        assert (e["mechanism"], method, k) == ("permute-and-flip", "permute-and-flip", 1)
        assert eps == e["epsilon"] and e["delta"] == 0.0 and d == e["candidates"] > 1
        assert e["linf_sensitivity"] == 1.0  # each candidate's score sum: users' errors in [0, 1]
        assert e["epsilon"] == pytest.approx(C.SELECT_SHARE * EPS)
        b = 2 * e["linf_sensitivity"] / e["epsilon"]
        ((scale, x),) = draws  # one step (k = 1): one draw per candidate
        assert x.shape == (d,) and (scale == pytest.approx(b, rel=1e-12)) != bad
        u.append(x / b)
    return np.concatenate(u)


def test_the_candidate_choice_draws_the_ledgers_exponential_noise_and_twice_epsilon_fails():
    u, h = choice_draws(), choice_draws(bad=True)
    assert u.size >= 2000, u.size
    assert exponential_ok(u), np.mean(u)
    assert not exponential_ok(h), np.mean(h)
    assert np.mean(h) == pytest.approx(0.5, abs=6 * 0.5 / math.sqrt(h.size))


def test_validation_scores_are_exact_sums_in_any_order():
    """The choice's l_inf sensitivity 1 holds for the numbers computed: each validator's score is
    a multiple of 2^-20 in [0, 1], so the sums are exact, the same in any order of the users"""
    R = mc.split_ratings(mc.synthetic_rank_one(400, 30, per_user=10, rng=2)[0], rng=3).train
    rows = C._rows(R)
    ho = C._holdout(
        R, rows, C.keyed_uniforms(9, C.HOLDOUT_COINS, rows.astype(np.uint64), R.indices)
    )
    F = np.random.default_rng(4).normal(size=(30, 1 + max(C.RANKS)))  # popularity, factors
    cand = C._candidates(30, "auto", "auto")
    E = C._validation(R, rows, R.data, np.zeros(30), F, cand, ho)
    assert np.array_equal(E * C.SCORE_GRID, np.round(E * C.SCORE_GRID))  # whole grid units
    perm = np.random.default_rng(5).permutation(R.shape[0])
    Rp = R[perm]
    hop = np.concatenate([ho[R.indptr[i] : R.indptr[i + 1]] for i in perm])
    Ep = C._validation(Rp, C._rows(Rp), Rp.data, np.zeros(30), F, cand, hop)
    assert np.array_equal(E, Ep)  # bit for bit
