"""Issue 35, item 2: a timing test that can fail. Single exact draws, timed one at a time in
shuffled batches (`benchmarks/bench_exact_timing.py`), grouped by their size: the median time of
discrete Laplace draws beyond 6 scales against those within 2 scales must be within 10%. Slow
(40,000 timed draws; run with --slow). Today's CKS sampler fails it (1.75x measured): the test is
marked xfail(strict=True) until the constant-time sampler lands, so that it then starts to pass
and the mark must go."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_exact_timing import timed_draws  # noqa: E402

from privrank import core  # noqa: E402


@pytest.mark.xfail(strict=True, reason="issue 35: the CKS sampler's time grows with |z| (1.75x)")
def test_discrete_laplace_time_does_not_tell_the_noise(run_slow):
    if not run_slow:
        pytest.skip("slow: 40,000 timed draws; run with --slow")
    z, t = timed_draws(lambda g: core.discrete_laplace(20, 1, rng=g), 40_000, 10)
    near, far = t[z < 40], t[z >= 120]
    assert far.size >= 50
    assert abs(np.median(far) / np.median(near) - 1) <= 0.10
