"""The timer the benchmarks share: the best of k runs of a call (shared machines are noisy, so the
minimum is the figure that repeats)."""

import math
import time


def best_of(f, k=3):
    "(best time in seconds over k calls of f(), the last call's result)"
    t, out = math.inf, None
    for _ in range(k):
        t0 = time.perf_counter()
        out = f()
        t = min(t, time.perf_counter() - t0)
    return t, out
