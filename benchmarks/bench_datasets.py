"""Time privrank's CSV readers against the floor of reading the same file, and print the ratios.

    python benchmarks/bench_datasets.py [--quick] [--k 5]

- A pairwise CSV of 1e6 comparisons (1e5 with --quick), `user,winner,loser`, 200 team names
  that need quoting ("Team 7, the 0th"), written by `csv.writer`: `read_pairwise_csv` (the csv
  module, labels coded as they are read) against the floor `csv.reader` over the same file (every
  row parsed, nothing kept) and against `pandas.read_csv` (C parser) if pandas is installed.
- A ratings CSV of 1e6 rows `user,joke,rating` (Jester-like): quote-free, so `read_jester` takes its
  vectorised path (numpy's C parser, tested equal to the csv-module path), and the same rows with a
  quoted header, which sends it through the csv module; each against the same floors.
- The peak resident memory of each reader (in a fresh process, on the same files) per byte of
  file text, against the budget `CSV_PARSE_FACTOR` that the readers check before parsing.
Absolute times on shared machines are noisy: best of k (default 5).
"""

import collections
import csv
import gc
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from privrank import datasets

try:
    import pandas as pd
except ImportError:  # pandas is a peer here, not a dependency
    pd = None


def best_of(f, k):
    t = np.inf
    for _ in range(k):
        gc.collect()
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def write_pairwise(path, n, rng):
    names = [f"Team {q}, the {q % 7}th" for q in range(200)]
    u, i = rng.integers(0, n // 20, n), rng.integers(0, 200, n)
    j = (i + 1 + rng.integers(0, 199, n)) % 200
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["user", "winner", "loser"])
        w.writerows(zip(u.tolist(), [names[q] for q in i], [names[q] for q in j]))


def write_ratings(path, n, rng, quoted_header=False):
    users, per = n // 50, 50  # 50 distinct jokes per user: no (user, joke) repeats
    u = np.repeat(np.arange(1, users + 1), per)
    jokes = np.argsort(rng.random((users, 100)), axis=1)[:, :per].ravel() + 1
    r = np.round(rng.uniform(-10, 10, n), 2)
    with open(path, "w", newline="", encoding="utf-8") as f:
        f.write('"user","joke","rating"\n' if quoted_header else "user,joke,rating\n")
        f.writelines(
            f"{a},{b},{c:.2f}\n" for a, b, c in zip(u.tolist(), jokes.tolist(), r.tolist())
        )


def floor_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        collections.deque(csv.reader(f), maxlen=0)


def peak_per_byte(reader, path):
    """Peak resident memory of one read in a fresh process, beyond what it held before (Linux:
    the peak is reset through /proc/self/clear_refs), per byte of the file"""
    code = (
        "import sys; from privrank import datasets\n"
        "kib = lambda key: int(next(l for l in open('/proc/self/status') if l.startswith(key))"
        ".split()[1])\n"
        "open('/proc/self/clear_refs', 'w').write('5'); base = kib('VmRSS')\n"
        f"datasets.{reader}(sys.argv[1]); print(kib('VmHWM') - base)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    return int(out.stdout) * 1024 / path.stat().st_size


def row(name, t, floor, pandas_t):
    ratio = f"{t / floor:5.2f}x csv.reader"
    ratio += f", {t / pandas_t:5.2f}x pandas.read_csv" if pandas_t else ""
    print(f"{name:<44} {t:7.3f} s   {ratio}")


def main(quick=False, k=5):
    n, rng = (100_000 if quick else 1_000_000), np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        files = {
            "pairwise": tmp / "pairs.csv",
            "ratings": tmp / "ratings.csv",
            "ratings_quoted": tmp / "ratings_q.csv",
        }
        write_pairwise(files["pairwise"], n, rng)
        write_ratings(files["ratings"], n, rng)
        write_ratings(files["ratings_quoted"], n, rng, quoted_header=True)
        readers = {
            "pairwise": (datasets.read_pairwise_csv, "read_pairwise_csv (quoted names)"),
            "ratings": (datasets.read_jester, "read_jester (quote-free: vectorised path)"),
            "ratings_quoted": (datasets.read_jester, "read_jester (quoted header: csv module)"),
        }
        print(f"{n:,} rows per file, best of {k}")
        for key, path in files.items():
            read, name = readers[key]
            t = best_of(lambda: read(path), k)
            floor = best_of(lambda: floor_csv(path), k)
            pandas_t = best_of(lambda: pd.read_csv(path), k) if pd is not None else None
            print(f"  {key}: {path.stat().st_size / 1e6:.1f} MB")
            row(name, t, floor, pandas_t)
        print(
            f"peak memory per byte of text (budget CSV_PARSE_FACTOR = {datasets.CSV_PARSE_FACTOR}):"
        )
        for key, path in files.items():
            name = readers[key][0].__name__
            print(f"  {readers[key][1]:<44} {peak_per_byte(name, path):5.1f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(quick="--quick" in args, k=int(args[args.index("--k") + 1]) if "--k" in args else 5)
