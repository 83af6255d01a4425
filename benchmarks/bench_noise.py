"""Cost of the exact noise path (privrank.core.release in exact mode: integer counts + exact
discrete Laplace /
discrete Gaussian noise, Canonne-Kamath-Steinke 2020) against two references, in one run:
  - the floor: the fast path (numpy floating-point noise, not float-safe);
  - the peer: OpenDP's exact integer samplers (make_laplace / make_gaussian on a vector of
    integers), when installed
    (`pip install '.[bench]'`).
Then whole mechanisms in exact against fast mode. Prints times and ratios.
Usage: python benchmarks/bench_noise.py [N]   (default N = 1,000,000 draws; OpenDP gets N/10 and
is scaled up)"""

import sys
import time

import numpy as np

from privrank import core, kemeny


def best(f, reps=3):
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return min(out)


def opendp_timer(law, scale, n):
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    dom = dp.vector_domain(dp.atom_domain(T=int))
    m = (
        dp.m.make_laplace(dom, dp.l1_distance(T=int), scale=scale)
        if law == "laplace"
        else dp.m.make_gaussian(dom, dp.l2_distance(T=int), scale=scale)
    )
    x = [0] * n
    return lambda: m(x)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    counts = np.zeros(n, np.int64)
    print(f"release of {n:,} integer counts (times: best of 3)")
    for law, scale in [
        ("laplace", 1.0),
        ("laplace", 1e3),
        ("gaussian", 1e3),
        ("gaussian", 2.0**20),
    ]:
        fast = best(lambda: core.release(counts, law, scale, rng=0, noise="fast"))
        exact = best(lambda: core.release(counts, law, scale, rng=0, noise="exact"))
        peer = opendp_timer(law, scale, n // 10)
        line = (
            f"  {law:8s} scale {scale:>9.4g}: fast {fast:7.3f} s, exact {exact:7.3f} s "
            f"(exact/fast {exact / fast:5.1f}x)"
        )
        if peer is not None:
            tp = best(peer, 1) * 10
            line += (
                f"; OpenDP {tp:7.3f} s (scaled from {n // 10:,}): "
                f"privrank exact is {tp / exact:5.1f}x faster"
            )
        else:
            line += "; OpenDP not installed"
        print(line)
    R = core.sample_plackett_luce(np.linspace(1, 0, 100), 10_000, rng=0)
    mechs = {
        "dp_borda_aggregate, m = 100, central Gaussian": lambda: core.dp_borda_aggregate(
            R, epsilon=1, delta=1e-6, rng=0
        ),
        "dp_borda_aggregate, m = 100, local Laplace (10,000 reports)": lambda: (
            core.dp_borda_aggregate(R, epsilon=1, model="local", rng=0)
        ),
        "noisy_margins_instance, m = 100, Gaussian": lambda: kemeny.noisy_margins_instance(
            R, epsilon=1, delta=1e-6, rng=0
        ),
        "bucketed_instance, m = 100, Laplace": lambda: kemeny.bucketed_instance(
            R[:50], epsilon=1, delta=0.0, rng=0
        ),
    }
    print("whole mechanisms (n = 10,000 voters unless said)")
    for name, f in mechs.items():
        with core.use_noise("fast"):
            fast = best(f)
        with core.use_noise("exact"):
            exact = best(f)
        print(
            f"  {name:60s}: fast {fast:7.3f} s, exact {exact:7.3f} s, exact/fast "
            f"{exact / fast:5.2f}x"
        )
