"""Every notebook under nbs/ is a test: run it with nbdev's own runner, honouring `tst_flags`.

`pytest` skips the cells flagged with the flags in `[tool.nbdev] tst_flags` ("notest slow");
`pytest --slow` (or PRIVRANK_SLOW=1) runs the `#| slow` cells as well.
"""

import io
import sys

import pytest
from conftest import ROOT, slow_enabled
from nbdev.config import get_config
from nbdev.test import test_nb as run_nb  # renamed so that pytest does not collect it

NBS = ROOT / "nbs"
NOTEBOOKS = sorted(p for p in NBS.glob("*.ipynb") if not p.name.startswith(("_", ".")))


def skip_flags(config):
    flags = get_config(NBS).tst_flags
    flags = flags.split() if isinstance(flags, str) else list(flags)
    return [f for f in flags if not (f == "slow" and slow_enabled(config))]


def test_there_are_notebooks():
    assert {"00_core.ipynb", "index.ipynb"} <= {p.name for p in NOTEBOOKS}


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook(nb, request, monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "__stderr__", err)  # nbdev's runner writes the cell's traceback there
    ok, seconds = run_nb(nb, skip_flags=skip_flags(request.config), basepath=str(ROOT))
    if not ok:
        pytest.fail(
            f"notebook {nb.name} failed after {seconds:.1f}s:\n{err.getvalue()}", pytrace=False
        )
