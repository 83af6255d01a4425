"""The `privrank` command as a user runs it: a separate process, its stdout, stderr and exit status.
Hypothesis throws random argument lists and malformed files at it: every failure is one line on
stderr
and exit status 2, never a traceback."""

import json
import math
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import privrank as pr
from privrank import btl, cli, core, datasets

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
    d = json.loads(
        run_inproc(
            [
                "aggregate",
                DEMO,
                "--method",
                "borda",
                "--epsilon",
                "0.5",
                "--delta",
                "1e-6",
                "--model",
                "local",
                "--seed",
                "1",
                "--json",
            ]
        )[1]
    )
    assert (d["epsilon"], d["delta"], d["model"], d["privacy_unit"]) == (
        0.5,
        1e-6,
        "local",
        "voter",
    )


tokens = st.sampled_from(
    [
        "demo",
        "aggregate",
        DEMO,
        "--method",
        "borda",
        "footrule",
        "btl",
        "kemeny",
        "frobnicate",
        "complete",
        "--nuclear-norm",
        "--iterations",
        "--row-norm",
        "--solver",
        "oja",
        "--epsilon",
        "--delta",
        "--model",
        "central",
        "local",
        "global",
        "--seed",
        "--json",
        "0",
        "-1",
        "1e-6",
        "1",
        "nan",
        "inf",
        "-inf",
        "x",
        "",
        "/nonexistent.soc",
        "--help-me",
        "--noise",
        "fast",
        "exact",
        "Exact",
        "--items",
        "--evaluate",
        "--test-fraction",
        "1e308",
        "5e-324",
        "0.5",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(tokens, max_size=9))
def test_random_arguments(argv):
    code, out, err = run_inproc(argv)
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert out == "" and err.count("\n") == 1 and err.startswith("privrank: error:"), (
            argv,
            err,
        )
        assert "unexpected error" not in err, (argv, err)
    else:
        assert err == "" and out
        if "--json" in argv:
            strict_json(out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300), st.sampled_from([".soc", ".toi", ".soi", ".toc", ".soc.gz"]))
def test_malformed_files(tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("bad") / f"f{suffix}"
    path.write_bytes(b"# NUMBER ALTERNATIVES: 3\n# NUMBER VOTERS: 2\n" + data)
    code, out, err = run_inproc(["aggregate", str(path), "--method", "borda", "--json"])
    if (
        code == 0
    ):  # the random bytes happened to complete a valid file: then the output is a whole result
        assert sorted(json.loads(out)["order"]) == [1, 2, 3]
    else:
        assert_one_line_error(code, out, err)
        assert "unexpected error" not in err, err


# ------------------------------------------------------------------------------------------
# issue 11: what the command reports and how it meets the shell


def strict_json(text):
    "json.loads that refuses NaN / Infinity tokens, as strict parsers do"

    def bad(token):
        raise ValueError(f"non-finite token {token} in the JSON")

    return json.loads(text, parse_constant=bad)


def test_btl_epsilon_is_per_voter(monkeypatch):
    """--epsilon E for btl is E per voter: each of her 36 comparisons goes to randomized
    response at E/36 (rounded down)"""
    seen = {}
    real = btl.fit_btl_counts

    def spy(counts, **kw):
        seen["counts"], seen["epsilon"] = np.asarray(counts), np.asarray(kw["epsilon"])
        return real(counts, **kw)

    monkeypatch.setattr(btl, "fit_btl_counts", spy)
    d = strict_json(
        run_inproc(
            [
                "aggregate",
                DEMO,
                "--method",
                "btl",
                "--model",
                "local",
                "--epsilon",
                "0.7",
                "--seed",
                "1",
                "--json",
            ]
        )[1]
    )
    assert (d["epsilon"], d["privacy_unit"], d["model"], d["private"], d["composition"]) == (
        0.7,
        "voter",
        "local",
        True,
        "basic",
    )
    # one epsilon group: every voter's 36 comparisons, each released at 0.7 / 36 rounded down
    assert seen["counts"].shape[0] == 1 and seen["counts"].sum() == 146 * 36
    assert np.all(seen["epsilon"] == np.nextafter(0.7 / 36, 0))


def test_btl_per_user_split_on_comparisons_file(tmp_path):
    """In a comparisons file each user's budget is split over her own comparisons: 1 and 3
    comparisons -> E and E/3"""
    f = tmp_path / "p.csv"
    f.write_text("user,winner,loser\na,x,y\nb,x,y\nb,y,z\nb,x,z\n")
    d = strict_json(
        run_inproc(
            [
                "aggregate",
                str(f),
                "--method",
                "btl",
                "--model",
                "local",
                "--epsilon",
                "0.9",
                "--seed",
                "0",
                "--json",
            ]
        )[1]
    )
    assert d["privacy_unit"] == "user" and d["comparisons_per_user"] == {"min": 1, "max": 3}
    assert d["epsilon_per_comparison"] == {
        "min": float(np.nextafter(0.3, 0)),
        "max": float(np.nextafter(0.9, 0)),
    }


def test_demo_uses_the_same_meaning():
    d = strict_json(run_inproc(["demo", "--epsilon", "0.7", "--seed", "0", "--json"])[1])
    private = [r for r in d["results"] if r["private"]]
    assert {r["epsilon"] for r in private} == {0.7} and {r["privacy_unit"] for r in private} == {
        "voter"
    }
    b = next(r for r in private if r["method"] == "btl" and r["model"] == "local")
    assert b["epsilon_per_comparison"]["max"] == float(np.nextafter(0.7 / 36, 0))


@pytest.mark.parametrize("model", ["local", "central"])
def test_demo_model_is_honoured(model):
    d = strict_json(run_inproc(["demo", "--model", model, "--seed", "0", "--json"])[1])
    assert {r["model"] for r in d["results"]} == {"none", model} and d["model"] == model
    methods = {r["method"] for r in d["results"] if r["private"]}
    assert methods == (
        {"borda", "footrule", "auto", "btl"}
        if model == "local"
        else {"borda", "footrule", "kemeny", "auto", "btl"}
    )
    code, out, err = run_inproc(["demo", "--model", model, "--seed", "0"])
    assert code == 0 and f"{model} model only" in out.splitlines()[0]


def test_dp_btl_aggregate_refuses_what_it_cannot_honour():
    pairs = cli._method_input(cli.METHODS["btl"], cli.load_profile(DEMO))
    for kw, name in [
        (dict(delta=1e-6, model="local"), "`delta`"),
        (dict(model="joint"), "`model`"),
        (dict(model=3), "`model`"),
    ]:
        with pytest.raises(ValueError, match=name):
            cli.METHODS["btl"].private(pairs, epsilon=1.0, **kw)
    assert not cli.METHODS["btl"].private(pairs, epsilon=math.inf).private  # as every method


def test_infinite_epsilon_prints_as_not_private():
    """A Consensus whose epsilon is inf (even if its model says otherwise) is formatted as not
    private, no TypeError"""
    prof = cli.load_profile(DEMO)
    for model in ("central", "none"):
        res = core.Consensus(
            order=np.arange(9),
            method="borda",
            epsilon=math.inf,
            delta=0.0,
            model=model,
            n_voters=146,
        )
        d = cli._result_dict(res, prof, 0.0)
        assert (d["private"], d["epsilon"], d["model"], d["noise"]) == (False, None, "none", "none")
        assert cli._format_result(d, prof.title).splitlines()[0].endswith(": not private")
        strict_json(cli._json(d))


def test_noise_option_and_environment(monkeypatch):
    d = strict_json(
        run_inproc(
            [
                "aggregate",
                DEMO,
                "--method",
                "borda",
                "--epsilon",
                "1",
                "--noise",
                "exact",
                "--seed",
                "0",
                "--json",
            ]
        )[1]
    )
    assert (d["noise"], d["private"]) == ("exact", True)
    assert (
        strict_json(
            run_inproc(["aggregate", DEMO, "--method", "borda", "--epsilon", "1", "--json"])[1]
        )["noise"]
        == "fast"
    )
    assert (
        strict_json(run_inproc(["aggregate", DEMO, "--method", "borda", "--json"])[1])["noise"]
        == "none"
    )
    assert strict_json(
        run_inproc(
            ["aggregate", DEMO, "--method", "btl", "--model", "local", "--epsilon", "1", "--json"]
        )[1]
    )["noise"] in ("fast", "exact")
    assert core.noise_mode() == "fast"  # --noise did not leak out of the run
    monkeypatch.setenv("PRIVRANK_NOISE", "exact")
    assert (
        strict_json(
            run_inproc(["aggregate", DEMO, "--method", "borda", "--epsilon", "1", "--json"])[1]
        )["noise"]
        == "exact"
    )
    for bad in ("Exact", "exakt", " fast"):
        monkeypatch.setenv("PRIVRANK_NOISE", bad)
        for argv in (
            ["aggregate", DEMO, "--method", "borda"],
            ["aggregate", DEMO, "--method", "borda", "--epsilon", "1"],
            ["demo"],
        ):
            code, out, err = run_inproc(argv)
            assert_one_line_error(code, out, err)
            assert "PRIVRANK_NOISE must be one of 'fast', 'exact'" in err


def test_invalid_noise_environment_exits_2_as_a_process():
    p = subprocess.run(
        [EXE, "aggregate", DEMO, "--method", "borda"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PRIVRANK_NOISE": "exakt"},
    )
    assert_one_line_error(p.returncode, p.stdout, p.stderr)


def test_huge_epsilon_gives_strict_json():
    'agh2003.soc --method btl --epsilon 1e308 --json printed "epsilon_per_user": Infinity'
    code, out, err = run_inproc(
        [
            "aggregate",
            DEMO,
            "--method",
            "btl",
            "--model",
            "local",
            "--epsilon",
            "1e308",
            "--seed",
            "0",
            "--json",
        ]
    )
    assert code == 0, err
    d = strict_json(out)
    assert d["epsilon"] == 1e308 and math.isfinite(d["epsilon_per_comparison"]["max"])


def test_json_never_holds_non_finite_tokens():
    out = cli._json(dict(a=math.inf, b=[1.0, -math.inf, math.nan], c=np.float64("nan"), d=1.5))
    assert strict_json(out) == dict(
        a=None, b=[1.0, None, None], c=None, d=1.5, non_finite=["a", "b[1]", "b[2]", "c"]
    )


def test_pairwise_labels_are_strings(tmp_path):
    "'01' and '1' are two items in every file, whatever the other rows hold"
    for other in ("u,2,3", "u,x,y", "v,1,2"):
        f = tmp_path / "p.csv"
        f.write_text(f"user,winner,loser\nu,01,1\n{other}\n")
        d = strict_json(run_inproc(["aggregate", str(f), "--method", "btl", "--json"])[1])
        assert {"01", "1"} <= set(d["order"]) and all(isinstance(x, str) for x in d["order"])


def test_text_output_escapes_control_characters(tmp_path):
    f = tmp_path / "e\x1bvil.soc"
    f.write_text(
        "# NUMBER ALTERNATIVES: 2\n# NUMBER VOTERS: 1\n# TITLE: \x1b]0;owned\x07\n# "
        "ALTERNATIVE NAME 1: a\x1b[31mred\n"
        "# ALTERNATIVE NAME 2: b\u202eevil\u2028x\n1: 1,2\n"
    )
    code, out, err = run_inproc(["aggregate", str(f), "--method", "borda"])
    assert code == 0 and all(line.isprintable() for line in out.splitlines()), out
    assert "a\\x1b[31mred" in out and "\\u202e" in out and "\\u2028" in out
    d = json.loads(run_inproc(["aggregate", str(f), "--method", "borda", "--json"])[1])
    assert d["names"][0] == "a\x1b[31mred"  # the JSON keeps the name (escaped on the wire)
    bad = tmp_path / "x\x1b[2J.soc"
    bad.write_text("garbage\n")
    code, out, err = run_inproc(["aggregate", str(bad), "--method", "borda"])
    assert code == 2 and "\x1b" not in err and "\\x1b[2J" in err


# ------------------------------------------------------------------ complete: what it prints


def jester_file(tmp_path, n_users=300, n_jokes=50, per_user=10, seed=0):
    rng = np.random.default_rng(seed)
    rows = [
        (u, j + 1, round(float(rng.uniform(-10, 10)), 2))
        for u in range(n_users)
        for j in rng.choice(n_jokes, per_user, replace=False)
    ]
    f = tmp_path / "jester.csv"
    f.write_text("user,joke,rating\n" + "".join(f"{u},{j},{v}\n" for u, j, v in rows))
    return f


def test_complete_prints_no_evaluation_without_evaluate(tmp_path):
    f = jester_file(tmp_path)
    code, out, err = run_inproc(
        ["complete", str(f), "--epsilon", "1", "--delta", "1e-6", "--seed", "0", "--json"]
    )
    assert code == 0, err
    d = strict_json(out)
    assert (
        d["evaluation"] is None
        and "test_rmse" not in out
        and "baseline" not in out
        and "n_test" not in out
    )
    assert (d["users"], d["items"], d["items_from"]) == (
        300,
        100,
        "Jester dataset 1 (100 jokes)",
    )  # the universe, not the 50 rated
    assert (d["epsilon"], d["delta"], d["model"], d["private"], d["noise"]) == (
        1.0,
        1e-6,
        "joint",
        True,
        "fast",
    )
    text = run_inproc(["complete", str(f), "--epsilon", "1", "--delta", "1e-6", "--seed", "0"])[1]
    assert "RMSE" not in text.splitlines()[0] + text.splitlines()[1] and "pass --evaluate" in text


def test_complete_evaluation_is_labelled_non_private(tmp_path):
    f = jester_file(tmp_path)
    d = strict_json(
        run_inproc(
            [
                "complete",
                str(f),
                "--epsilon",
                "1",
                "--delta",
                "1e-6",
                "--seed",
                "0",
                "--evaluate",
                "--test-fraction",
                "0.2",
                "--json",
            ]
        )[1]
    )
    e = d["evaluation"]
    assert (
        e["private"] is False
        and "not covered by epsilon" in e["note"]
        and math.isfinite(e["test_rmse"])
        and e["n_test"] > 0
    )
    text = run_inproc(
        [
            "complete",
            str(f),
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
            "--seed",
            "0",
            "--evaluate",
            "--test-fraction",
            "0.2",
        ]
    )[1]
    assert "non-private evaluation" in text
    assert_one_line_error(
        *run_inproc(
            ["complete", str(f), "--epsilon", "1", "--delta", "1e-6", "--test-fraction", "0.2"]
        )
    )


def test_complete_output_does_not_depend_on_which_obscure_item_was_rated(tmp_path):
    """Two files that differ in one user's rating of an item nobody else rated print the same
    item count (and record)"""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    base = jester_file(tmp_path, n_jokes=50).read_text()
    (a / "j.csv").write_text(
        base + "0,77,5.0\n"
    )  # user 0 also rated joke 77, which nobody else rated
    (b / "j.csv").write_text(base + "0,51,5.0\n")
    outs = [
        strict_json(
            run_inproc(
                [
                    "complete",
                    str(p / "j.csv"),
                    "--epsilon",
                    "1",
                    "--delta",
                    "1e-6",
                    "--seed",
                    "0",
                    "--json",
                ]
            )[1]
        )
        for p in (a, b)
    ]
    for d in outs:
        d.pop("noise_multiplier")
        d.pop("file")
        # the reason quotes a released statistic of the run (the item effects' signal), which
        # moves with the data; the rest of the record must not
        assert d.pop("reason").startswith(pr.completion.DEFAULT_REASON)
    assert outs[0] == outs[1] and outs[0]["items"] == 100


def _rank_one_csv(path, m=3_000, n=50, per_user=20, scale=5.0):
    "A ratings CSV of a planted rank-one taste, scale * u_i v_j; returns the COO ratings"
    R = pr.mc.synthetic_rank_one(m, n, per_user=per_user, rng=0)[0].tocoo()
    y = np.round(scale * R.data, 4)
    path.write_text("user,item,rating\n" + "".join(
        f"{u},{i + 1},{r}\n" for u, i, r in zip(R.row, R.col, y)))  # fmt: skip
    return R.row, R.col, y


def test_output_holds_the_release_and_per_user_output_the_users_rows(tmp_path):
    "issue 29 item 6: --output is what may go to everyone; the users' rows only on request"
    f = tmp_path / "r.csv"
    user, item, y = _rank_one_csv(f)
    argv = ["complete", str(f), "--epsilon", "2", "--delta", "1e-6", "--items", "50",
            "--rating-range=-5,5", "--seed", "1", "--json"]  # fmt: skip
    code, out, err = run_inproc([*argv, "--output", str(tmp_path / "out.npz")])
    assert code == 0 and err == "", err
    d = json.loads(out)
    with np.load(tmp_path / "out.npz") as z:
        assert sorted(z.files) == ["accountant", "delta", "epsilon", "estimator", "factors",
                                   "item_ids", "ledger", "model", "n_items", "noise", "params",
                                   "privacy_unit", "release", "shape"]  # fmt: skip
        assert not any(3_000 in z[k].shape for k in z.files)  # no array with a row per user
        assert (float(z["epsilon"]), float(z["delta"]), str(z["model"])) == (2.0, 1e-6, "joint")
        assert json.loads(str(z["ledger"])) == d["ledger"]  # the record printed, as strict JSON
        assert json.loads(str(z["params"])) == d["params"]
        assert z["shape"].tolist() == [3_000, 50] and z["item_ids"].tolist() == list(range(1, 51))
        factors = z["factors"]
    code, out, err = run_inproc([*argv, "--per-user-output", str(tmp_path / "users.npz")])
    assert code == 0 and err.count("\n") == 1, err
    assert err.startswith("privrank: warning: users.npz holds every user's own coefficients")
    assert json.loads(out)["per_user_output"] == "users.npz"
    with np.load(tmp_path / "users.npz") as z:
        assert "NOT differentially private" in str(z["per_user_output"])
        coef, mean, ids = z["coef"], z["user_mean"], z["user_ids"]
        assert np.array_equal(z["factors"], factors)  # the same seed, the same release
    k = np.searchsorted(ids, user)
    rebuilt = np.einsum("ij,ji->i", coef[k], factors[:, item]) + mean[k]
    item_means = (np.bincount(item, y) / np.bincount(item))[item]  # the best of any file
    rmse = lambda p: float(np.sqrt(np.mean((p - y) ** 2)))  # without a user's own data
    assert rmse(rebuilt) < 0.5 * rmse(item_means), (rmse(rebuilt), rmse(item_means), y.std())
    help_text = run_inproc(["complete", "--help"])[1]
    assert "NOT differentially private" in " ".join(help_text.split())


def test_complete_small_defects_of_issue_29(tmp_path):
    f = tmp_path / "r.csv"
    _rank_one_csv(f, m=300, n=20, per_user=5)
    argv = ["complete", str(f), "--epsilon", "1", "--delta", "1e-6", "--items", "20",
            "--rating-range=-5,5"]  # fmt: skip
    code, out, err = run_inproc([*argv, "--max-per-user", "-1"])
    assert_one_line_error(code, out, err)
    assert "--max-per-user must be an integer >= 1" in err and "--seed" not in err
    code, out, err = run_inproc([*argv, "--method", "frank-wolfe", "--solver", ""])
    assert_one_line_error(code, out, err)
    assert "`--solver` must be one of" in err and "got ''" in err
    code, out, err = run_inproc(["aggregate", DEMO, "--method", "borda", "--epsilon", "1",
                                 "--delta=-0", "--json"])  # fmt: skip
    assert code == 0 and '"delta": 0.0' in out and "-0" not in out.split('"delta"')[1][:6], out
    text = run_inproc(["aggregate", DEMO, "--method", "borda", "--epsilon", "1", "--delta=-0"])[1]
    assert "delta = 0 " in text and "delta = -0" not in text, text
    name = '"' + "x" * (200 << 10) + '"'  # a 200 KiB quoted name in a comparisons file
    (tmp_path / "g.csv").write_text(f"winner,loser\n{name},b\nb,c\n")
    code, out, err = run_inproc(["aggregate", str(tmp_path / "g.csv"), "--json"])
    assert code == 0 and err == "", err[:300]
    assert sorted(map(len, json.loads(out)["names"])) == [1, 1, 200 << 10]


def test_complete_universe_rules(tmp_path):
    u = tmp_path / "u.data"
    u.write_text("".join(f"{k % 7 + 1}\t{k % 11 + 1}\t{k % 5 + 1}\t88125{k}\n" for k in range(60)))
    code, out, err = run_inproc(["complete", str(u), "--epsilon", "1", "--delta", "1e-6"])
    assert_one_line_error(code, out, err)
    assert "pass --items N" in err
    d = strict_json(
        run_inproc(
            [
                "complete",
                str(u),
                "--epsilon",
                "1",
                "--delta",
                "1e-6",
                "--items",
                "20",
                "--seed",
                "0",
                "--json",
            ]
        )[1]
    )
    assert (d["items"], d["items_from"]) == (20, "--items")
    code, out, err = run_inproc(
        ["complete", str(u), "--epsilon", "1", "--delta", "1e-6", "--items", "10"]
    )
    assert_one_line_error(code, out, err)
    assert "item 11 is outside the item universe 1..10 (`--items`)" in err
    (tmp_path / "u.info").write_text("7 users\n30 items\n60 ratings\n")
    d = strict_json(
        run_inproc(
            ["complete", str(u), "--epsilon", "1", "--delta", "1e-6", "--seed", "0", "--json"]
        )[1]
    )
    assert d["items"] == 30 and "catalogue" in d["items_from"]


def test_complete_movielens_universe_from_catalogue(shared_data):
    d = strict_json(
        run_inproc(
            [
                "complete",
                str(shared_data / "movielens-100k" / "u.data.gz"),
                "--epsilon",
                "1",
                "--delta",
                "1e-6",
                "--seed",
                "0",
                "--json",
            ]
        )[1]
    )
    assert (d["users"], d["items"]) == (943, 1682) and d["evaluation"] is None
    assert d["rating_range"] == [1.0, 5.0] and d["estimator"] == "private-subspace"


@pytest.mark.parametrize("eps", ["1e6", "1e16", "1e300"])
def test_complete_huge_epsilon_answers_or_names_the_parameter(tmp_path, eps):
    f = jester_file(tmp_path)
    code, out, err = run_inproc(
        ["complete", str(f), "--epsilon", eps, "--delta", "1e-6", "--seed", "0", "--json"]
    )
    assert code in (0, 2) and "unexpected" not in err
    if code == 2:
        assert_one_line_error(code, out, err)
        assert "`epsilon`" in err or "`delta`" in err, err
    else:
        assert strict_json(out)["epsilon"] == float(eps)


def test_complete_huge_epsilon_is_one_line():
    """Whatever the library does at epsilon = 1e6 .. 1e300, the command answers a result or
    one line with exit status 2"""
    import tempfile

    with tempfile.TemporaryDirectory() as t:
        f = jester_file(Path(t))
        for eps in ("1e6", "1e16", "1e300"):
            code, out, err = run_inproc(
                ["complete", str(f), "--epsilon", eps, "--delta", "1e-6", "--seed", "0"]
            )
            assert code == 0 or (
                code == 2 and out == "" and err.count("\n") == 1 and "unexpected" not in err
            ), (code, err)


# ------------------------------------------------------------------ the reproducers of item 5


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--epsilon", "1e-300"],
        ["aggregate", DEMO, "--method", "kemeny", "--epsilon", "1e-16"],
    ],
    ids=["demo-1e-300", "kemeny-1e-16"],
)
def test_tiny_epsilon_reproducers(argv):
    code, out, err = run_inproc(argv)
    assert "unexpected error" not in err, err
    assert code == 0 or (code == 2 and out == "" and err.count("\n") == 1)


def test_tiny_epsilon_demo_without_kemeny():
    "The same demo, local rows only (no Kemeny): a result or one line"
    code, out, err = run_inproc(["demo", "--model", "local", "--epsilon", "1e-300", "--seed", "0"])
    assert code == 0 or (code == 2 and err.count("\n") == 1), err
    assert "unexpected" not in err


# ------------------------------------------------------------------ the shell: stdout closed,
# full, a pipe, Ctrl-C


def test_closed_stdout_fails_with_a_message():
    p = subprocess.run(
        ["sh", "-c", f'"{EXE}" aggregate "{DEMO}" --method borda --json >&-'],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        p.returncode == 2
        and p.stderr.startswith("privrank: error: standard output is closed")
        and p.stderr.count("\n") == 1
    ), p


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_disk_fails_with_a_message():
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [EXE, "aggregate", DEMO, "--method", "borda", "--json"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert (
        p.returncode == 2
        and p.stderr
        == "privrank: error: cannot write the result to standard output: [Errno 28] No "
        "space left on device\n"
    )


def test_broken_pipe_exits_quietly():
    """The reader is gone before privrank writes: exit 141 (as a tool killed by SIGPIPE),
    nothing on stderr"""
    p = subprocess.Popen(
        [EXE, "aggregate", DEMO, "--method", "borda", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    p.stdout.close()
    code, err = p.wait(timeout=120), p.stderr.read().decode()
    p.stderr.close()
    assert code == 141 and err == "", (code, err)
    p = subprocess.run(
        ["sh", "-c", f'"{EXE}" demo --json | head -c 10'],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        p.returncode == 0
        and len(p.stdout) == 10
        and "Broken pipe" not in p.stderr
        and "Traceback" not in p.stderr
    )


@pytest.mark.parametrize(
    "sig, rc, line",
    [
        (signal.SIGINT, 130, "privrank: interrupted\n"),
        (signal.SIGTERM, 143, "privrank: terminated\n"),
    ],
)
def test_an_interrupt_prints_one_line(sig, rc, line):
    """SIGINT or SIGTERM (issue 29) while a command runs (here: a file read that hangs): one line,
    the clean exit of Ctrl-C (130; 143 for SIGTERM), no traceback"""
    code = (
        "import sys, time; from privrank import cli, datasets\n"
        "def hang(*a, **k):\n    print('ready', flush=True); time.sleep(60)\n"
        "datasets.read_preflib = hang\n"
        "sys.exit(cli.main(['aggregate', 'x.soc', '--method', 'borda']))\n"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert p.stdout.readline() == "ready\n"
    p.send_signal(sig)
    got = p.wait(timeout=60)
    err = p.stderr.read()
    p.stdout.close()
    p.stderr.close()
    assert got == rc and err == line, (got, err)


def test_the_sigterm_handler_is_put_back():
    before = signal.getsignal(signal.SIGTERM)
    assert run_inproc(["aggregate", DEMO, "--method", "borda"])[0] == 0
    assert signal.getsignal(signal.SIGTERM) is before  # put back after the command


def test_sigterm_removes_the_spill_folder(tmp_path):
    "`privrank complete FILE.parquet --spill DIR`, stopped by SIGTERM mid-run: DIR is left empty"
    import time

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    g = np.random.default_rng(0)
    n, per = 150_000, 20  # 3 million ratings: seconds of work, in partitions of 2^22 ratings
    items = np.argsort(g.random((n, 50)), axis=1)[:, :per].ravel() + 1
    table = pa.table({"user": np.repeat(np.arange(n), per), "item": items,
                      "rating": g.integers(1, 6, n * per).astype(float)})  # fmt: skip
    pq.write_table(table, tmp_path / "r.parquet", row_group_size=1 << 19)
    spill = tmp_path / "spill"
    spill.mkdir()
    p = subprocess.Popen(
        [EXE, "complete", str(tmp_path / "r.parquet"), "--epsilon", "1", "--delta", "1e-6",
         "--items", "50", "--rating-range", "1,5", "--spill", str(spill)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while p.poll() is None and time.monotonic() < deadline:  # until the users' rows are on disk
        if any(f.is_file() for f in spill.rglob("*")):
            break
        time.sleep(0.02)
    assert p.poll() is None, "the run ended before its spill files appeared"
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 143 and out == "", (p.returncode, err)
    assert err.splitlines()[-1] == "privrank: terminated", err
    assert list(spill.iterdir()) == []  # every user's prepared rows removed


# ---------------------------------------------------------------- standard CSV (issue 13, item 1)
CSV_NAME = st.text(st.sampled_from('ab ,"\n\r;é寿Z\u202e-'), min_size=1, max_size=6).filter(
    lambda s: s.strip()
)


def write_csv(path, header, rows):
    "Write `rows` under `header` with csv.writer (quotes what needs it; CRLF line ends)"
    import csv

    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


@settings(
    deadline=None, max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from("abc"), CSV_NAME, CSV_NAME).filter(lambda r: r[1] != r[2]),
        min_size=1,
        max_size=10,
    )
)
def test_quoted_names_print_as_they_are(tmp_path, rows):
    """Names written by csv.writer (commas, quotes, line breaks, spaces, UTF-8) come out of the
    command as they are: JSON strings equal to the names, text lines with the names escaped
    only where not printable, no quotes added"""
    f = write_csv(tmp_path / "q.csv", ["user", "winner", "loser"], rows)
    names = {x for _, w, l in rows for x in (w, l)}
    code, out, err = run_inproc(["aggregate", str(f), "--method", "btl", "--json"])
    d = strict_json(out)
    assert code == 0 and err == "" and set(d["order"]) == set(d["names"]) == names
    code, text, err = run_inproc(["aggregate", str(f), "--method", "btl"])
    lines = text.splitlines()[1 : 1 + len(d["order"])]
    assert text.splitlines()[-1].startswith(f"lambda = {d['diagnostics']['lam']:g} (mle")
    assert code == 0 and all(line.isprintable() for line in text.splitlines())
    want = [
        f"{k + 1:>3}. {cli.printable(n)} (id {cli.printable(n)})" for k, n in enumerate(d["order"])
    ]
    assert lines == want


def test_quoted_csv_errors_name_file_and_line(tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text('user,winner,loser\r\n1,"a\r\nb",c\r\n2,"d",e,f\r\n', encoding="utf-8")
    code, out, err = run_inproc(["aggregate", str(f), "--method", "btl"])
    assert_one_line_error(code, out, err)
    assert f"{f} line 4: expected 3 fields (as in the header); got 4" in err
    f.write_text('user,winner,loser\n1,"a,b\n', encoding="utf-8")
    code, out, err = run_inproc(["aggregate", str(f), "--method", "btl"])
    assert_one_line_error(code, out, err)
    assert f"{f} line 2: not a valid CSV line (unexpected end of data)" in err


def test_file_without_user_column_is_one_unit_per_comparison(tmp_path):
    rows = [("x, 1", "y"), ("y", "z"), ("z", "x, 1"), ("x, 1", "z")]
    f = write_csv(
        tmp_path / "games.csv", ["winner", "loser", "venue"], [r + ("home",) for r in rows]
    )
    code, text, err = run_inproc(["aggregate", str(f), "--method", "btl"])
    assert code == 2 and "column 'venue' is not read" in err  # not ignored
    code, text, err = run_inproc(
        ["aggregate", str(f), "--method", "btl", "--ignore-columns", "Venue"]
    )
    assert code == 0 and err == "", err
    assert "btl consensus of 4 comparisons over 3 candidates" in text
    assert "note: the file has no user column: each comparison is its own privacy unit" in text
    d = strict_json(
        run_inproc(
            [
                "aggregate",
                str(f),
                "--method",
                "btl",
                "--epsilon",
                "1",
                "--seed",
                "0",
                "--json",
                "--ignore-columns",
                "venue",
            ]
        )[1]
    )
    assert d["privacy_unit"] == "comparison" and d["epsilon"] == 1.0  # each its own unit
    assert d["model"] == "central" and d["diagnostics"]["comparisons_per_unit_max"] == 1
    assert set(d["order"]) == {"x, 1", "y", "z"}


def test_chameleons_aggregate_as_they_are(shared_data):
    "The R package's CSV, quoted names and extra columns named as not read, through the command"
    f = shared_data / "bradleyterry2-chameleons" / "chameleons_contests.csv.gz"
    if not f.is_file():
        pytest.skip("no bradleyterry2-chameleons in the shared data folder")
    code, out, err = run_exe("aggregate", str(f), "--method", "btl", "--json")
    assert code == 2 and "column 'contest' is not read" in err
    extra = "contest,winner_prev.wins.1,winner_prev.wins.2,winner_prev.wins.all,"
    extra += "loser_prev.wins.1,loser_prev.wins.2,loser_prev.wins.all"
    ig = ("--ignore-columns", extra)
    code, out, err = run_exe("aggregate", str(f), "--method", "btl", "--json", *ig)
    assert code == 0, err
    d = json.loads(out)
    c = datasets.read_pairwise_csv(f, ignore=extra.split(","))
    assert (d["n_items"], d["n_voters"]) == (35, 106) and sorted(d["order"]) == c.item_ids.tolist()
    assert all(n.startswith("C") and '"' not in n for n in d["order"])
    res = btl.btl_aggregate(c)
    assert d["order"] == c.item_ids[res.order].tolist()
    code, text, err = run_exe("aggregate", str(f), "--method", "btl", *ig)
    assert code == 0 and "  1. " + d["order"][0] + " (id " + d["order"][0] + ")" in text


def _games(tmp_path, rows, name="games.csv"):
    return write_csv(tmp_path / name, ["user", "winner", "loser"], rows)


def test_lam_default_is_the_mle_and_says_so(tmp_path):
    "--lam: 'mle' by default (lambda 0 on a strongly connected win graph), the rule printed"
    cycle = [("u1", "a", "b"), ("u1", "b", "c"), ("u2", "c", "a"), ("u2", "a", "c")]
    f = _games(tmp_path, cycle)
    d = strict_json(run_inproc(["aggregate", str(f), "--method", "btl", "--json"])[1])
    assert d["diagnostics"]["lam"] == 0.0 and d["diagnostics"]["lam_rule"] == "mle"
    code, text, err = run_inproc(["aggregate", str(f), "--method", "btl"])
    assert code == 0 and "lambda = 0 (mle: the win graph is strongly connected" in text
    # a never-beaten item: no MLE, the stated ridge, said in the output
    f2 = _games(tmp_path, [("u1", "a", "b"), ("u1", "b", "c"), ("u2", "a", "c")], "chain.csv")
    code, text, err = run_inproc(["aggregate", str(f2), "--method", "btl"])
    assert code == 0 and f"lambda = {btl.LAM_MLE_RIDGE:g} (mle-ridge: the win graph has 3" in text
    assert text.index("a (id a)") < text.index("b (id b)") < text.index("c (id c)")


@pytest.mark.parametrize("lam", ["0.5", "r3", "0"])
def test_lam_is_passed_through(tmp_path, lam):
    cycle = [("u1", "a", "b"), ("u1", "b", "c"), ("u2", "c", "a"), ("u2", "a", "c")]
    f = _games(tmp_path, cycle)
    d = strict_json(run_inproc(["aggregate", str(f), "--method", "btl", "--lam", lam, "--json"])[1])
    c = datasets.read_pairwise_csv(f)
    fit = btl.fit_btl(
        c.winner, c.loser, c.outcome, n_items=3, lam=lam if lam == "r3" else float(lam)
    )
    assert d["diagnostics"]["lam"] == fit.lam
    assert d["diagnostics"]["lam_rule"] == ("r3" if lam == "r3" else "given")
    if lam == "0":  # debiased outcomes: lambda = 0 is refused (see test_lam_refusals_are_one_line)
        return
    d = strict_json(
        run_inproc(
            [
                "aggregate",
                str(f),
                "--method",
                "btl",
                "--model",
                "local",
                "--lam",
                lam,
                "--epsilon",
                "2",
                "--seed",
                "1",
                "--json",
            ]
        )[1]
    )
    assert d["private"] and d["diagnostics"]["lam_rule"] == ("r3" if lam == "r3" else "given")


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--lam", "-1"], "--lam must be 'mle', 'private', 'r3' or a finite number >= 0"),
        (["--lam", "nan"], "--lam must be 'mle', 'private', 'r3' or a finite number >= 0"),
        (["--lam", "auto"], "--lam must be 'mle', 'private', 'r3' or a finite number >= 0"),
        (["--lam", "0"], "strongly connected components"),
        (
            ["--lam", "0", "--epsilon", "2", "--model", "local"],
            "`lam`=0 needs every pair's mean outcome in [0, 1]",
        ),
    ],
)
def test_lam_refusals_are_one_line(tmp_path, extra, needle):
    f = _games(tmp_path, [("u1", "a", "b"), ("u1", "b", "c"), ("u2", "a", "c")])
    code, out, err = run_inproc(["aggregate", str(f), "--method", "btl", *extra])
    assert_one_line_error(code, out, err)
    assert needle in err


def test_lam_applies_to_btl_only():
    code, out, err = run_inproc(["aggregate", DEMO, "--method", "borda", "--lam", "1"])
    assert_one_line_error(code, out, err)
    assert "--lam applies to --method btl only" in err


def test_auto_is_the_default_and_says_what_it_picked(tmp_path):
    """`aggregate FILE` without --method runs auto: the budget goes to one method, named with its
    reason; on a comparisons file auto runs btl"""
    code, out, err = run_inproc(["aggregate", DEMO, "--epsilon", "1", "--seed", "3"])
    assert code == 0 and err == ""
    head, picked = out.splitlines()[:2]
    assert head.startswith("auto consensus of 146 voters") and "epsilon = 1, delta = 0" in head
    assert picked.startswith("picked borda: central model (n = 146, m = 9, epsilon = 1)")
    d = strict_json(
        run_inproc(
            ["aggregate", DEMO, "--epsilon", "10", "--delta", "1e-6", "--seed", "3", "--json"]
        )[1]
    )
    same = pr.dp_aggregate(cli.load_profile(DEMO).ranks, epsilon=10.0, delta=1e-6, rng=3)
    assert d["method"] == "auto" and d["picked"] == same.method
    assert d["reason"] == same.diagnostics["auto_reason"] and d["delta"] == same.delta
    ids = np.asarray(cli.load_profile(DEMO).item_ids)[same.order].tolist()
    assert d["order"] == ids  # the same seed: the same release as the API's
    f = tmp_path / "p.csv"
    f.write_text("user,winner,loser\na,x,y\nb,x,y\nb,y,z\nb,x,z\n")
    d = strict_json(run_inproc(["aggregate", str(f), "--epsilon", "1", "--seed", "0", "--json"])[1])
    assert d["picked"] == "btl" and d["model"] == "central" and "comparisons" in d["reason"]
    d = strict_json(run_inproc(["aggregate", DEMO, "--json"])[1])
    assert not d["private"] and d["picked"] == "kemeny_exact"


PARTIAL = (
    "# TITLE: club\n# DATA TYPE: toi\n# NUMBER ALTERNATIVES: 5\n# NUMBER VOTERS: 60\n"
    "30: 2,{1,5}\n20: 1,2\n10: {3,4},2\n"
)


def test_aggregate_takes_partial_and_tied_ballots_without_conversion(tmp_path):
    "Issue 32, item 5: the command's answer is the library's on the Preferences, as they are"
    f = tmp_path / "club.toi"
    f.write_text(PARTIAL)
    prefs = pr.read_preflib(f)
    ids = np.asarray(prefs.item_ids)
    calls = {
        "borda": pr.borda_aggregate(prefs),
        "kemeny": pr.kemeny_aggregate(prefs),
        "btl": pr.btl_aggregate(btl.ranks_to_comparisons(prefs)),
    }
    for method, ref in calls.items():
        d = json.loads(run_inproc(["aggregate", str(f), "--method", method, "--json"])[1])
        assert d["order"] == ids[ref.order].tolist(), method
        assert "conversion" not in d, method
    d = json.loads(
        run_inproc(
            ["aggregate", str(f), "--method", "borda", "--epsilon", "1", "--seed", "4", "--json"]
        )[1]
    )
    ref = pr.dp_borda_aggregate(prefs, epsilon=1.0, rng=4)
    assert d["order"] == ids[ref.order].tolist()


def test_top_k_answers_from_ballots_and_from_scores(tmp_path):
    f = tmp_path / "club.toi"
    f.write_text(PARTIAL)
    prefs = pr.read_preflib(f)
    for statistic in ("first", "borda"):
        argv = ["top-k", str(f), "--k", "2", "--epsilon", "1", "--seed", "3", "--json"]
        d = json.loads(run_inproc(argv + ["--statistic", statistic])[1])
        ref = pr.dp_top_k(prefs, 2, epsilon=1.0, statistic=statistic, rng=3)
        assert d["items"] == np.asarray(prefs.item_ids)[ref.items].tolist()
        assert (d["method"], d["epsilon"], d["privacy_unit"]) == (ref.method, 1.0, "voter")
    s = tmp_path / "scores.csv"
    s.write_text("item,score\na,1\nb,9\nc,5\n")
    argv = ["top-k", str(s), "--k", "2", "--epsilon", "2", "--sensitivity", "1", "--seed", "1"]
    d = json.loads(run_inproc(argv + ["--json"])[1])
    ref = pr.dp_top_k(np.array([1.0, 9.0, 5.0]), 2, epsilon=2.0, sensitivity=1, rng=1)
    assert d["names"] == [("a", "b", "c")[i] for i in ref.items]
    code, out, err = run_inproc(argv[:-4] + ["--seed", "1"])  # no --sensitivity
    assert code == 2 and "--sensitivity" in err and err.count("\n") == 1


def test_plackett_luce_runs_on_partial_ballots_and_says_what_is_public(tmp_path):
    f = tmp_path / "club.soi"
    f.write_text(
        "# TITLE: club\n# DATA TYPE: soi\n# NUMBER ALTERNATIVES: 4\n# NUMBER VOTERS: 50\n"
        "20: 2,1,3\n15: 1,2\n10: 3,4,1\n5: 4,2\n"
    )
    prefs = pr.read_preflib(f)
    ids = np.asarray(prefs.item_ids)
    d = json.loads(run_inproc(["aggregate", str(f), "--method", "plackett-luce", "--json"])[1])
    assert d["order"] == ids[pr.plackett_luce_aggregate(prefs).order].tolist()
    argv = ["aggregate", str(f), "--method", "plackett-luce", "--epsilon", "3", "--seed", "2"]
    d = json.loads(run_inproc(argv + ["--json"])[1])
    pairs = pr.ranks_to_comparisons(prefs, unranked="absent")
    ref = pr.dp_btl_aggregate(pairs, epsilon=3.0, rng=2, model="local")
    assert d["order"] == ids[ref.order].tolist() and d["model"] == "local"
    assert d["comparisons_per_voter"] == dict(min=1, max=3)  # 1 to 3 pairs of ranked items
    assert "which items each voter ranked" in d["diagnostics"]["public"]
    assert "note: public: which items" in run_inproc(argv)[1]
    toi = tmp_path / "club.toi"
    toi.write_text(PARTIAL)
    code, out, err = run_inproc(["aggregate", str(toi), "--method", "plackett-luce"])
    assert code == 2 and "ranks strictly" in err


def test_plackett_luce_on_a_parquet_file_says_to_use_btl_and_top_k_reads_it(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    R = np.array([np.random.default_rng(i).permutation(4) for i in range(30)])
    f = tmp_path / "r.parquet"
    pq.write_table(pa.table({f"c{i}": R[:, i] for i in range(4)}), f)
    for extra in ([], ["--epsilon", "1"]):
        code, out, err = run_inproc(["aggregate", str(f), "--method", "plackett-luce", *extra])
        assert_one_line_error(code, out, err)
        assert "--method btl" in err
    d = json.loads(
        run_inproc(["top-k", str(f), "--k", "2", "--epsilon", "1", "--seed", "0", "--json"])[1]
    )
    ref = pr.dp_top_k(R, 2, epsilon=1.0, rng=0)
    assert d["names"] == [f"c{i}" for i in ref.items]
