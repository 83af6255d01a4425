"""Shared pytest configuration: the `--slow` switch and the location of the shared real data."""

import os
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


@pytest.fixture(scope="session", autouse=True)
def report_hostile_counts(request):
    """At the end of a session that ran hostile-input tests (tests/test_hostile*.py), print how
    many cases they tried,
    per function (shown with -q too: output capture is suspended for the line)."""
    yield
    import contextlib
    import sys

    mod = sys.modules.get("test_hostile")
    counts = getattr(mod, "COUNTS", None)
    if not counts:
        return
    line = (
        f"hostile cases tried per function ({sum(counts.values())} in all, {len(counts)} "
        f"functions): {dict(sorted(counts.items()))}"
    )
    cap = request.config.pluginmanager.getplugin("capturemanager")
    with cap.global_and_fixture_disabled() if cap is not None else contextlib.nullcontext():
        print("\n" + line)
