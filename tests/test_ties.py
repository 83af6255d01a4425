"""Ties (issue 33, item 3, first part): a private release's ties are broken uniformly at random
from the release's own generator (post-processing), not by a fixed rule that favours some
candidates. Private Borda on the exact path, where integer noise ties often."""

import numpy as np
import pytest

import privrank as pr
from privrank.core import private_order

CYCLE = np.array([[0, 1, 2], [1, 2, 0], [2, 0, 1]])  # a Condorcet cycle: a three-way Borda tie
RUNS = 3000


def first_places(model):
    "How often each candidate is first over RUNS seeds, and the releases' noisy scores"
    with pr.use_noise("exact"):
        res = [pr.dp_borda_aggregate(CYCLE, epsilon=1.0, model=model, rng=s) for s in range(RUNS)]
    return np.bincount([r.order[0] for r in res], minlength=3) / RUNS, [r.scores for r in res]


@pytest.mark.parametrize("model", ["central", "local"])
def test_exact_borda_on_a_three_way_tie_puts_each_first_a_third_of_the_time(model):
    freq, scores = first_places(model)
    se = np.sqrt(1 / 3 * 2 / 3 / RUNS)
    assert np.abs(freq - 1 / 3).max() < 3 * se, freq
    if model == "central":  # ties are frequent here (one small integer noise per candidate):
        # the rule it replaces, the lower index first among the released ties, fails the check
        old = np.bincount([np.argsort(-s, kind="stable")[0] for s in scores], minlength=3) / RUNS
        assert np.abs(old - 1 / 3).max() > 3 * se, old


def test_the_tie_break_is_post_processing_reproducible_and_keeps_the_order_of_the_scores():
    rng = np.random.default_rng(0)
    for _ in range(200):
        s = rng.integers(0, 4, rng.integers(1, 9))
        a = private_order(s, np.random.default_rng(5))
        assert np.array_equal(a, private_order(s, np.random.default_rng(5)))  # seeded
        assert sorted(a) == list(range(s.size)) and (np.diff(s[a]) <= 0).all()  # by score
    # relabelling the candidates relabels the law: each of a tie's orders equally likely
    counts = {}
    for seed in range(6000):
        o = tuple(private_order(np.array([1, 1, 1]), np.random.default_rng(seed)))
        counts[o] = counts.get(o, 0) + 1
    assert len(counts) == 6 and max(counts.values()) < 1000 + 4 * np.sqrt(1000 * 5 / 6)
    assert min(counts.values()) > 1000 - 4 * np.sqrt(1000 * 5 / 6)
