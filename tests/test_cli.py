"""The `privrank` command as a user runs it: a separate process, its stdout, stderr and exit status.
Hypothesis throws random argument lists and malformed files at it: every failure is one line on stderr
and exit status 2, never a traceback."""
import json
import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from privrank import cli, datasets

EXE = shutil.which("privrank") or os.path.join(os.path.dirname(sys.executable), "privrank")
DEMO = str(datasets.demo_path())


def run_exe(*args):
    p = subprocess.run([EXE, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def run_inproc(argv):
    import io
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def assert_one_line_error(code, out, err):
    assert code == 2, (code, out, err)
    assert out == "", out
    assert err.count("\n") == 1 and err.startswith("privrank: error:"), err
    assert "Traceback" not in err


def test_console_script_demo():
    code, out, err = run_exe("demo", "--seed", "0")
    assert code == 0, err
    assert "borda" in out and "central" in out and "local" in out and "Kendall" in out


def test_console_script_error_is_one_line():
    assert_one_line_error(*run_exe("aggregate", DEMO, "--method", "borda", "--epsilon", "-1"))
    assert_one_line_error(*run_exe("aggregate", "/nonexistent/file.soc", "--method", "borda"))
    assert_one_line_error(*run_exe("--no-such-flag"))


def test_sushi_borda_json(shared_data):
    f = shared_data / "preflib-sushi" / "00014-00000001.soc.gz"
    code, out, err = run_exe("aggregate", str(f), "--method", "borda", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert sorted(d["order"]) == list(range(1, 11)) and d["n_voters"] == 5000 and d["n_items"] == 10
    for key in ("order", "method", "epsilon", "delta", "model", "n_voters", "n_items", "seconds"):
        assert key in d


def test_private_json_records_what_was_spent():
    d = json.loads(run_inproc(["aggregate", DEMO, "--method", "borda", "--epsilon", "0.5", "--delta", "1e-6",
                               "--model", "local", "--seed", "1", "--json"])[1])
    assert (d["epsilon"], d["delta"], d["model"], d["privacy_unit"]) == (0.5, 1e-6, "local", "voter")


tokens = st.sampled_from(["demo", "aggregate", DEMO, "--method", "borda", "footrule", "btl", "kemeny", "frobnicate", "complete", "--rank-bound", "--iterations", "--row-norm", "--solver", "oja", "--epsilon", "--delta",
                          "--model", "central", "local", "global", "--seed", "--json", "0", "-1", "1e-6", "1",
                          "nan", "inf", "-inf", "x", "", "/nonexistent.soc", "--help-me"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(tokens, max_size=9))
def test_random_arguments(argv):
    code, out, err = run_inproc(argv)
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert out == "" and err.count("\n") == 1 and err.startswith("privrank: error:"), (argv, err)
        assert "unexpected error" not in err, (argv, err)
    else:
        assert err == "" and out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300), st.sampled_from([".soc", ".toi", ".soi", ".toc", ".soc.gz"]))
def test_malformed_files(tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("bad") / f"f{suffix}"
    path.write_bytes(b"# NUMBER ALTERNATIVES: 3\n# NUMBER VOTERS: 2\n" + data)
    code, out, err = run_inproc(["aggregate", str(path), "--method", "borda", "--json"])
    if code == 0:   # the random bytes happened to complete a valid file: then the output is a whole result
        assert sorted(json.loads(out)["order"]) == [1, 2, 3]
    else:
        assert_one_line_error(code, out, err)
        assert "unexpected error" not in err, err
