"""Shared pytest configuration: the `--slow` switch and the location of the shared real data."""

import collections
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests are deterministic: the same examples on every run (a CI failure is
# reproducible, never a fluke).
settings.register_profile("privrank", derandomize=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "privrank"))

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="also run the notebook cells flagged `#| slow` (the full experiments); "
        "same as PRIVRANK_SLOW=1",
    )


def slow_enabled(config) -> bool:
    return bool(config.getoption("--slow")) or os.environ.get("PRIVRANK_SLOW", "") not in ("", "0")


@pytest.fixture(scope="session")
def run_slow(request) -> bool:
    return slow_enabled(request.config)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared real-data folder (../shared/data or $PRIVRANK_SHARED_DATA); skips the test when
    absent."""
    cand = [os.environ.get("PRIVRANK_SHARED_DATA"), ROOT.parent / "shared" / "data"]
    for c in cand:
        if c and Path(c).is_dir():
            return Path(c)
    pytest.skip(
        "real data folder not found: set PRIVRANK_SHARED_DATA or place shared/data beside "
        "the checkout"
    )


HOSTILE = collections.Counter()  # hostile cases tried per function, over the workers too


def pytest_sessionfinish(session):
    """Collect the hostile-input counts of this process (tests/test_hostile.py's COUNTS); a
    pytest-xdist worker hands them to the controller, which prints the total"""
    counts = getattr(sys.modules.get("test_hostile"), "COUNTS", None) or {}
    HOSTILE.update(counts)
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["hostile_counts"] = dict(counts)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    "pytest-xdist: a worker's hostile-input counts"
    HOSTILE.update(getattr(node, "workeroutput", {}).get("hostile_counts", {}))


def pytest_terminal_summary(terminalreporter, config):
    """At the end of a session that ran hostile-input tests (tests/test_hostile*.py), print how
    many cases they tried, per function (with -q too)"""
    if HOSTILE and not hasattr(config, "workeroutput"):
        terminalreporter.write_line(
            f"hostile cases tried per function ({sum(HOSTILE.values())} in all, {len(HOSTILE)} "
            f"functions): {dict(sorted(HOSTILE.items()))}"
        )


# the slowest tests start first, so that two workers end together; the docs builds and the
# Dask cluster are shared by their tests on one worker (pytest -n auto --dist loadgroup)
FIRST = ("11_which_method", "08_audit", "12_scale", "05_kemeny", "06_private_fw", "06a_completion")
GROUPS = {"test_docs.py": "docs", "test_scale.py": "scale"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if (group := GROUPS.get(item.path.name)) is not None:
            item.add_marker(pytest.mark.xdist_group(group))

    def rank(item):
        stem = item.callspec.id if hasattr(item, "callspec") else ""
        if item.path.name == "test_notebooks.py" and stem in FIRST:
            return FIRST.index(stem)
        return len(FIRST) + (item.path.name not in ("test_notebooks.py", *GROUPS))

    items.sort(key=rank)  # stable: the order within a rank is the collection order


def stable_id(val) -> str:
    """A test id that is the same in every process: repr(val), or its type's name where the repr
    holds a memory address (`object()`, a function), so that pytest-xdist workers agree"""
    r = repr(val)
    return type(val).__name__ if " at 0x" in r else r


def pytest_make_parametrize_id(config, val, argname):
    "pytest's own ids, made stable where they would hold a memory address (`stable_id`)"
    return type(val).__name__ if " at 0x" in repr(val) else None


@pytest.fixture(scope="module")
def client():
    "A dask.distributed cluster of two worker processes, one per test module that asks for it"
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c
