"""Cost of the float-safe noise path: time of `sample_laplace` / `sample_gaussian` with set_noise("exact")
(exact discrete samplers of Canonne, Kamath, Steinke 2020 on a dyadic grid) against the default fast path.
Usage: python benchmarks/bench_noise.py [N]"""
import sys, time
from privrank.core import sample_laplace, sample_gaussian, set_noise


def timed(f, mode, n):
    set_noise(mode)
    try:
        t = time.perf_counter(); f(1.0, n, rng=0); return time.perf_counter() - t
    finally:
        set_noise("fast")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    for name, f in [("laplace", sample_laplace), ("gaussian", sample_gaussian)]:
        fast, exact = timed(f, "fast", n), timed(f, "exact", n)
        print(f"{name:9s} N={n}: fast {fast * 1e3:8.1f} ms  exact {exact * 1e3:8.1f} ms  ratio {exact / fast:6.1f}x")
