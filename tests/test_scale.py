"""privrank.scale (issue 16): the chunked, Parquet/CSV and Dask paths give the in-memory answer.

Central releases: the same seed gives the in-memory release bit for bit, from every source and on a
`dask.distributed` cluster of two worker processes. Local releases: a seed and a partitioning give
one answer, streamed or on the cluster. Without noise, the statistics of any partition are those of
the whole profile. Bad sources are refused naming the parameter."""

import collections
import gzip
import io
import math
import threading

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import privrank as pr
from privrank import core, sources

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("distributed")

R = pr.sample_mallows(9, 4_001, 0.85, rng=7)
COLS = [f"c{q}" for q in range(9)]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("scale")
    frame = pd.DataFrame(R, columns=COLS)
    pq.write_table(pa.Table.from_pandas(frame), d / "r.parquet", row_group_size=700)
    frame.to_csv(d / "r.csv", index=False)
    with gzip.open(d / "r.csv.gz", "wt") as f:
        frame.to_csv(f, index=False)
    return d


def central(src, **kw):
    return (
        pr.dp_borda_aggregate(src, epsilon=0.3, rng=11, **kw),
        pr.dp_kemeny_aggregate(src, epsilon=0.3, delta=1e-6, regime="large_n", rng=11, **kw),
    )


BORDA = pr.dp_borda_aggregate(R, epsilon=0.3, rng=11)
KEMENY = pr.dp_kemeny_aggregate(R, epsilon=0.3, delta=1e-6, regime="large_n", rng=11)


def same(b, k):
    assert (b.scores == BORDA.scores).all() and (b.order == BORDA.order).all()
    assert (k.order == KEMENY.order).all()
    assert b.epsilon == 0.3 and k.delta == 1e-6 and b.n_voters == k.n_voters == len(R)


@pytest.mark.parametrize("name", ["r.parquet", "r.csv", "r.csv.gz"])
def test_files_give_the_in_memory_release(files, name):
    same(*central(files / name, chunk_rows=333))


def test_arrays_frames_and_dask_give_the_in_memory_release():
    same(*central(R, chunk_rows=1000))
    same(*central([R[:5], R[5:2000], R[2000:]]))
    same(
        *central(
            [
                pd.DataFrame(R[:100], columns=COLS),
                pa.table({c: R[100:, q] for q, c in enumerate(COLS)}),
            ]
        )
    )
    same(*central(da.from_array(R, chunks=(600, 4))))
    same(*central(dd.from_pandas(pd.DataFrame(R, columns=COLS), npartitions=5)))


def test_a_cluster_of_two_worker_processes_gives_the_in_memory_release(files, client):
    same(*central(files / "r.parquet", client=client))
    same(*central(files / "r.csv", client=client))
    same(*central(da.from_array(R, chunks=(500, 9)), client=client))
    # local model: the same seed gives one answer, in memory, streamed or on the workers
    for mode in ("fast", "exact"):
        with pr.use_noise(mode):
            mem = pr.dp_borda_aggregate(R, epsilon=0.3, model="local", rng=5)
            here = pr.dp_borda_aggregate(R, epsilon=0.3, model="local", rng=5, chunk_rows=500)
            there = pr.dp_borda_aggregate(
                da.from_array(R, chunks=(700, 9)), epsilon=0.3, model="local", rng=5, client=client
            )
        np.testing.assert_allclose(here.scores, mem.scores, rtol=1e-12)
        np.testing.assert_allclose(there.scores, mem.scores, rtol=1e-12)


def test_the_local_model_is_one_answer_per_seed_whatever_the_partition():
    a = pr.dp_borda_aggregate(R, epsilon=1.0, model="local", rng=3, chunk_rows=100)
    b = pr.dp_borda_aggregate(R, epsilon=1.0, model="local", rng=3, chunk_rows=77)
    c = pr.dp_borda_aggregate(R, epsilon=1.0, model="local", rng=4, chunk_rows=100)
    assert (a.scores == b.scores).all() and not (a.scores == c.scores).all()
    assert a.model == "local" and a.diagnostics["noise_law"] == "laplace"


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(0, 40), min_size=1, max_size=8),
    st.sampled_from([np.int8, np.uint8, np.int16, np.int32, np.int64]),
)
def test_statistics_of_any_partition_are_those_of_the_profile(sizes, dtype):
    prof = pr.sample_mallows(6, 41, 0.7, rng=len(sizes))
    cuts = np.minimum(np.cumsum(sizes), 41)
    parts = np.split(prof.astype(dtype), cuts)
    b = pr.borda_aggregate(parts)
    assert b.n_voters == 41 and (b.scores == core.borda_scores(prof)).all()
    for f in (pr.kemeny_aggregate, pr.footrule_aggregate):  # preference counts, histograms
        assert f(parts).diagnostics == f(prof).diagnostics


def test_bad_sources_are_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="`ranks`"):
        pr.borda_aggregate(tmp_path / "none.parquet")
    (tmp_path / "r.txt").write_text("0,1\n")
    with pytest.raises(ValueError, match="`ranks`"):
        pr.dp_borda_aggregate(tmp_path / "r.txt", epsilon=1.0)
    t = pa.table({"a": pa.array([0, None, 1]), "b": pa.array([1, 0, 0])})
    pq.write_table(t, tmp_path / "null.parquet")
    with pytest.raises(ValueError, match="`ranks`.*empty values"):
        pr.borda_aggregate(tmp_path / "null.parquet")
    with pytest.raises(TypeError, match="`ranks`"):
        pr.borda_aggregate(object())
    with pytest.raises(ValueError, match="`ranks`.*chunk 1"):
        pr.borda_aggregate([R[:3], R[:3] * 0])
    with pytest.raises(TypeError, match="`columns`"):
        list(sources.iter_chunks(R, columns="c0"))
    with pytest.raises(TypeError, match="`source`"):
        list(sources.iter_chunks(da.from_array(R)))
    with pytest.raises(ValueError, match="`epsilon`"):  # refused before any data is read
        pr.dp_kemeny_aggregate(tmp_path / "none.parquet", epsilon=-1)


def test_btl_from_a_file_on_the_cluster_is_the_streamed_answer(tmp_path, client):
    g = np.random.default_rng(1)
    n = 30_000
    i = g.integers(0, 6, n)
    j = (i + g.integers(1, 6, n)) % 6
    won = g.random(n) < pr.btl.win_probability(np.linspace(1, -1, 6), i, j)
    users = g.integers(0, 3_000, n)
    t = pa.table({"winner": np.where(won, i, j), "loser": np.where(won, j, i), "user": users})
    pq.write_table(t, tmp_path / "c.parquet", row_group_size=4_000)
    kw = dict(n_items=6, epsilon=1.5, rng=2, model="local")
    here = pr.dp_btl_aggregate(tmp_path / "c.parquet", chunk_rows=4_000, **kw)
    there = pr.dp_btl_aggregate(tmp_path / "c.parquet", client=client, **kw)
    assert (here.scores == there.scores).all()  # one seed and partition (the row groups)
    assert here.n_voters == len(np.unique(users)) and here.model == "local"
    assert here.diagnostics["n_comparisons"] == n
    per_comp = pr.dp_btl_aggregate(
        t.select(["winner", "loser"]).to_pandas().to_numpy(), privacy_unit="comparison", **kw
    )
    assert per_comp.n_voters == n and per_comp.privacy_unit == "comparison"
    # names for items and users: the same release, streamed, on the cluster and from the command
    names = np.array(["a", "b", "c", "d", "e", "f"])
    t = pa.table({"winner": names[t["winner"].to_numpy()], "loser": names[t["loser"].to_numpy()],
                  "user": [f"u{u}" for u in users]})  # fmt: skip
    pq.write_table(t, tmp_path / "named.parquet", row_group_size=4_000)
    kw = dict(epsilon=1.5, rng=2, model="local")
    named = pr.dp_btl_aggregate(tmp_path / "named.parquet", client=client, **kw)
    assert (named.scores == here.scores).all() and named.diagnostics["items"] == names.tolist()
    code, out, err = _cli("aggregate", str(tmp_path / "named.parquet"), "--epsilon", "1.5",
                          "--seed", "2", "--json")  # fmt: skip
    api = pr.dp_btl_aggregate(tmp_path / "named.parquet", epsilon=1.5, rng=2)  # the default model
    assert code == 0, err
    assert __import__("json").loads(out)["order"] == names[api.order].tolist()


def test_local_release_from_a_file_is_the_same_on_the_cluster(tmp_path, client):
    # 37 row groups: blocks of row groups per task follow the streaming path's tree of sums
    prof = pr.sample_mallows(6, 37 * 300, 0.8, rng=1)
    pq.write_table(pa.table({f"c{q}": prof[:, q] for q in range(6)}), tmp_path / "t.parquet",
                   row_group_size=300)  # fmt: skip
    kw = dict(epsilon=1.0, model="local", rng=4)
    a = pr.dp_borda_aggregate(tmp_path / "t.parquet", chunk_rows=300, **kw)
    b = pr.dp_borda_aggregate(tmp_path / "t.parquet", client=client, **kw)
    assert (a.scores == b.scores).all()
    # the local footrule: the groups drawn from the seed, each row group's reports from its own
    f = pr.dp_footrule_aggregate(tmp_path / "t.parquet", chunk_rows=300, **kw)
    g = pr.dp_footrule_aggregate(tmp_path / "t.parquet", client=client, **kw)
    fa, ga = (r.diagnostics["position_costs"] for r in (f, g))
    assert (fa.gamma == ga.gamma).all() and (f.order == g.order).all()
    assert (fa.model, fa.n_voters) == ("local", 37 * 300)
    argv = ["aggregate", str(tmp_path / "t.parquet"), "--method", "footrule", "--epsilon", "1"]
    code, out, err = _cli(*argv, "--model", "local", "--seed", "4", "--json")
    assert code == 0, err
    d = __import__("json").loads(out)
    here = pr.dp_footrule_aggregate(tmp_path / "t.parquet", **kw)
    assert d["order"] == [f"c{q}" for q in here.order] and d["model"] == "local"


# the command on Parquet files: the API's answer, here and on a local cluster
def _cli(*argv):
    import io

    from privrank import cli

    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_command_aggregates_parquet_files(files, tmp_path):
    import json

    p = str(files / "r.parquet")
    code, out, _ = _cli(
        "aggregate", p, "--method", "borda", "--epsilon", "0.3", "--seed", "11", "--json"
    )
    d = json.loads(out)
    assert code == 0 and d["order"] == [COLS[q] for q in BORDA.order] and d["n_voters"] == len(R)
    code, out, _ = _cli("aggregate", p, "--epsilon", "0.3", "--delta", "1e-6", "--seed", "11",
                        "--json", "--workers", "2")  # fmt: skip
    d = json.loads(out)
    pick = pr.choose_aggregator(len(R), 9, epsilon=0.3, delta=1e-6)
    assert code == 0 and d["picked"] == pick.method and d["epsilon"] == 0.3
    code, out, _ = _cli("aggregate", p, "--json")  # no --epsilon: the Kemeny consensus
    w = core.preference_matrix(R)
    assert json.loads(out)["order"] == [COLS[q] for q in pr.kemeny_exact(w)]
    g = np.random.default_rng(0)
    i = g.integers(0, 5, 9_000)
    j = (i + g.integers(1, 5, 9_000)) % 5
    t = pa.table({"winner": i, "loser": j, "user": g.integers(0, 300, 9_000)})
    pq.write_table(t, tmp_path / "c.parquet")
    code, out, _ = _cli("aggregate", str(tmp_path / "c.parquet"), "--epsilon", "2", "--json")
    d = json.loads(out)
    assert code == 0 and d["method"] == "auto" and d["picked"] == "btl" and d["n_voters"] == 300
    t = pa.table({"winner": i, "loser": j, "user": g.integers(0, 300, 9_000),
                  "tie": g.random(9_000) < 0.2})  # fmt: skip
    pq.write_table(t, tmp_path / "ties.parquet")
    code, out, err = _cli("aggregate", str(tmp_path / "ties.parquet"), "--epsilon", "2", "--json",
                          "--seed", "1")  # fmt: skip
    api = pr.dp_btl_aggregate(tmp_path / "ties.parquet", n_items=5, epsilon=2.0, ties=True,
                              rng=1)  # fmt: skip
    d = json.loads(out)
    assert code == 0 and d["picked"] == "btl" and d["epsilon"] == 2.0, err
    assert [str(x) for x in d["order"]] == [str(q) for q in api.order]
    code, out, err = _cli("aggregate", str(tmp_path / "c.parquet"), "--json")  # not private
    d, api = json.loads(out), pr.btl_aggregate(tmp_path / "c.parquet", n_items=5)
    assert code == 0 and d["picked"] == "btl" and not d["private"], err
    assert d["order"] == [int(q) for q in api.order]
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    for argv in (
        ["aggregate", str(tmp_path / "bad.parquet"), "--epsilon", "1"],
        ["aggregate", str(tmp_path / "c.parquet"), "--method", "kemeny", "--epsilon", "1"],
        ["aggregate", p, "--method", "btl", "--epsilon", "1"],
        ["aggregate", p, "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
        ["aggregate", DEMO_FILE, "--workers", "2"],
    ):
        code, out, err = _cli(*argv)
        assert code == 2 and out == "" and err.startswith("privrank: error:"), (argv, err)
        assert err.count("\n") == 1


DEMO_FILE = str(pr.datasets.demo_path())


def test_the_command_completes_a_parquet_file_of_ratings(tmp_path):
    import json

    g = np.random.default_rng(0)
    u = np.repeat(np.arange(2_000), 10)
    j = np.concatenate([g.choice(30, 10, replace=False) for _ in range(2_000)])
    r = g.integers(1, 6, len(u)).astype(float)
    pq.write_table(pa.table({"userId": u, "movieId": j + 1, "rating": r}), tmp_path / "r.parquet")
    argv = ["complete", str(tmp_path / "r.parquet"), "--epsilon", "1", "--delta", "1e-6"]
    code, out, err = _cli(*argv, "--items", "30")  # no scale: a Parquet file's format fixes none
    assert code == 2 and "--rating-range" in err and err.count("\n") == 1
    code, out, err = _cli(*argv, "--items", "30", "--rating-range", "1,5", "--json", "--seed", "1")
    d = json.loads(out)
    assert code == 0 and d["users"] == 2_000 and d["items"] == 30, (out, err)
    pq.write_table(pa.table({"who": u, "movieId": j + 1, "rating": r}), tmp_path / "x.parquet")
    code, out, err = _cli("complete", str(tmp_path / "x.parquet"), *argv[2:], "--items", "30",
                          "--rating-range", "1,5")  # fmt: skip
    assert code == 2 and "column 'who' is not read" in err and "--columns user=who" in err


# completion: the users' rows persisted on the workers, one map-reduce per release
def _ratings(n_users=1_500, n_items=30, per=8, seed=3):
    g = np.random.default_rng(seed)
    items = np.argsort(g.random((n_users, n_items)), axis=1)[:, :per].ravel()
    users = np.repeat(np.arange(n_users), per)
    vals = (g.normal(size=(n_users, 2)) @ g.normal(size=(2, n_items)))[users, items]
    triples = np.column_stack([users, items, vals + 0.2 * g.normal(size=len(vals))])
    return triples[g.permutation(len(vals))]


FW = dict(
    epsilon=1.0, delta=1e-6, nuclear_norm=1_500.0, n_iter=4, row_norm=8.0, rating_range="private"
)


@pytest.mark.parametrize("solver", ["oja", "exact", "oja-fresh"])
def test_completion_on_two_worker_processes_is_the_in_memory_answer(solver, client, tmp_path):
    t = _ratings()
    R = sp.csr_array((t[:, 2], (t[:, 0].astype(int), t[:, 1].astype(int))), shape=(1_500, 30))
    kw = dict(FW, estimator="frank-wolfe", solver=solver, oja_iter=3, oja_blocks=2, rng=5)
    kw |= dict(max_per_user=30, evaluate=True, test_fraction=0.05)
    mem = pr.complete(R, **kw)
    one = pr.complete(np.array_split(t, 4), **kw, n_items=30)
    path = tmp_path / "ratings.parquet"
    pq.write_table(
        pa.table({"user": t[:, 0].astype(np.int32), "item": t[:, 1], "rating": t[:, 2]}),
        path,
        row_group_size=2_000,
    )
    many = pr.complete(path, **kw, n_items=30, part_ratings=2_500)
    there = pr.complete(path, **kw, n_items=30, part_ratings=2_500, client=client)
    dask_one = pr.complete(path, **kw, n_items=30, client=client)
    # one partition: the sparse matrix's floats; on the workers: the same partitioning's floats
    assert np.array_equal(one.coef, mem.coef) and np.array_equal(one.factors, mem.factors)
    assert np.array_equal(dask_one.coef, mem.coef) and np.array_equal(dask_one.factors, mem.factors)
    assert many.diagnostics["partitions"] == 5
    assert np.array_equal(there.coef, many.coef) and np.array_equal(there.factors, many.factors)
    # five partitions: the same held-out ratings (keyed coins), the fit to rounding
    assert abs(many.evaluation["test_rmse"] - mem.evaluation["test_rmse"]) <= 1e-9
    assert many.evaluation["n_test"] == mem.evaluation["n_test"]
    # the accounting is unchanged: the same record, noise std and number of draws
    for r in (one, dask_one, there):
        assert (r.epsilon, r.delta, r.privacy_unit, r.model) == (1.0, 1e-6, "user", "joint")
        np.testing.assert_array_equal(r.sigma, mem.sigma)
        np.testing.assert_array_equal(r.noise_multiplier, mem.noise_multiplier)


def test_completion_refuses_bad_ratings_by_name():
    t = _ratings(200, 10, 3)
    fw = dict(FW, estimator="frank-wolfe", n_items=10)
    for bad, text in [
        (t[:, :2], "3 columns"),
        (t + [0, 0.5, 0], "item ids"),
        (np.vstack([t, t[:1]]), "more than once"),
        (np.where(np.arange(3) == 2, np.nan, t), "NaN"),
    ]:
        with pytest.raises((TypeError, ValueError), match="ratings"):
            pr.complete(bad, **fw)
        with pytest.raises((TypeError, ValueError), match=text):
            pr.complete(bad, **fw)


# completion in one call: prepared where the rows live, the bounds private, on the workers
@pytest.mark.parametrize(
    "how",
    [
        {},
        {"estimator": "als"},
        {"estimator": "frank-wolfe", "n_iter": 3},
        {"estimator": "pgd", "n_iter": 3, "step": 1.0},
        {"estimator": "cleansing", "rank": 2},
    ],
)
def test_complete_on_two_worker_processes_is_the_local_answer(how, client, tmp_path):
    t = _ratings(1_200, 25, 9, seed=4)
    t[:, 0] = 5 * t[:, 0] + 3  # any integer user ids
    path = tmp_path / "ratings.parquet"
    pq.write_table(
        pa.table({"user": t[:, 0].astype(np.int64), "item": t[:, 1] + 1, "rating": t[:, 2]}),
        path,
        row_group_size=1_500,
    )
    kw = dict(
        epsilon=2.0,
        delta=1e-6,
        n_items=25,
        first_item=1,
        max_per_user=6,
        rating_range="private",
        **how,
    )
    kw |= dict(evaluate=True, test_fraction=0.1, part_ratings=2_000, rng=3)
    here = pr.complete(path, **kw)
    there = pr.complete(path, **kw, client=client)
    frame = dd.from_pandas(
        pd.DataFrame(t + [0, 1, 0], columns=["user", "item", "rating"]), npartitions=3
    )
    framed = pr.complete(frame, **kw, client=client)
    for r in (there, framed):
        assert np.array_equal(r.coef, here.coef) and np.array_equal(r.factors, here.factors)
        assert (
            r.evaluation == here.evaluation
            and r.diagnostics["ledger"] == here.diagnostics["ledger"]
        )
    assert here.diagnostics["partitions"] == 6  # 10,800 ratings, 2,000 a partition
    np.testing.assert_array_equal(here.diagnostics["user_ids"], 5 * np.arange(1_200) + 3)
    assert (here.epsilon, here.delta, here.privacy_unit, here.model) == (2.0, 1e-6, "user", "joint")
    # ratings off a stated scale are clamped into it, never refused (whether one user's rating
    # is in range must not decide what is released): the fit of the clamped rows
    clamped = tmp_path / "clamped.parquet"
    pq.write_table(
        pa.table(
            {
                "user": t[:, 0].astype(np.int64),
                "item": t[:, 1] + 1,
                "rating": np.clip(t[:, 2], -1, 1),
            }
        ),
        clamped,
        row_group_size=1_500,
    )
    assert (np.abs(t[:, 2]) > 1).mean() > 0.2
    kw["rating_range"] = (-1, 1)
    off = pr.complete(path, **kw, client=client)
    on = pr.complete(clamped, **kw)
    assert np.array_equal(off.coef, on.coef) and np.array_equal(off.factors, on.factors)


def _assert_params_close(a, b, rtol=1e-9):
    "Settings equal, floats within `rtol` (relative)"
    assert a.keys() == b.keys(), (a, b)
    for k in a:
        if isinstance(a[k], float) and isinstance(b[k], float):
            assert abs(a[k] - b[k]) <= rtol * max(abs(a[k]), abs(b[k])), (k, a[k], b[k])
        else:
            assert a[k] == b[k], (k, a[k], b[k])


@pytest.mark.parametrize(
    "how",
    [
        {"estimator": "pgd", "n_iter": 4, "step": 1.0, "row_norm": 10.0, "nuclear_norm": 3e3},
        {"estimator": "cleansing", "rank": 2},
    ],
)
@pytest.mark.parametrize("noise", ["fast", "exact"])
def test_pgd_and_cleansing_over_partitions_are_the_in_memory_fit(how, noise, tmp_path):
    t = _ratings(1_500, 20, 8, seed=6)
    R = sp.csr_array((t[:, 2], (t[:, 0].astype(int), t[:, 1].astype(int))), shape=(1_500, 20))
    kw = dict(epsilon=4.0, delta=1e-6, max_per_user=8, noise=noise, rating_range="private", **how)
    # one partition: the sparse matrix's fit, bit for bit
    mem = pr.complete(R, **kw, evaluate=True, test_fraction=0.1, rng=2)
    one = pr.complete(t, **kw, n_items=20, evaluate=True, test_fraction=0.1, rng=2)
    assert np.array_equal(one.coef, mem.coef) and np.array_equal(one.factors, mem.factors)
    assert one.diagnostics["ledger"] == mem.diagnostics["ledger"]
    assert one.evaluation == mem.evaluation
    mem = pr.complete(R, **kw, rng=5)
    parts = pr.complete(t, **kw, n_items=20, part_ratings=1_000, rng=5)
    assert parts.diagnostics["partitions"] == 12
    # sums over 12 partitions in another order: the same numbers within 1e-9 (12's claim), not
    # bit for bit (BLAS kernels differ by CPU)
    assert np.allclose(parts.sigma, mem.sigma, rtol=1e-9, atol=0)
    _assert_params_close(parts.params, mem.params)
    u, i = t[:, 0].astype(int), t[:, 1].astype(int)
    fit_m, fit_p = (r.predict_entries(u, i) - r.user_mean[u] for r in (mem, parts))
    assert np.abs(fit_m).max() > 0.05  # the estimator moved off the users' means
    assert np.abs(fit_p - fit_m).max() <= 1e-9 * np.abs(fit_m).max()
    spill = tmp_path / "spill"
    spill.mkdir()
    spilled = pr.complete(t, **kw, n_items=20, part_ratings=1_000, rng=5, spill=spill)
    assert np.array_equal(spilled.coef, parts.coef) and list(spill.iterdir()) == []


def test_the_command_completes_on_workers(tmp_path):
    import json

    t = _ratings(1_000, 20, 8, seed=5)
    path = tmp_path / "r.parquet"
    pq.write_table(
        pa.table({"userId": t[:, 0].astype(np.int64) * 2, "movieId": t[:, 1].astype(np.int32) + 1,
                  "rating": t[:, 2]}), path, row_group_size=3_000,
    )  # fmt: skip
    npz = tmp_path / "f.npz"
    argv = ["complete", str(path), "--epsilon", "2", "--delta", "1e-6", "--items", "20",
            "--rating-range", "private", "--seed", "4", "--evaluate"]  # fmt: skip
    code, out, err = _cli(*argv, "--workers", "2", "--json", "--per-user-output", str(npz))
    d = json.loads(out)
    assert code == 0, err
    assert (d["users"], d["items"], d["partitions"]) == (1_000, 20, 1)
    assert d["estimator"] == "private-subspace" and d["reason"].startswith(
        pr.completion.DEFAULT_REASON
    )
    assert "The fit: predictions are each user's own mean" in d["reason"]  # from the run
    api = pr.complete(
        path, epsilon=2.0, delta=1e-6, n_items=20, first_item=1, evaluate=True, rng=4,
        columns=["userId", "movieId", "rating"], rating_range="private",
    )  # fmt: skip
    with np.load(npz) as z:
        assert np.array_equal(z["coef"], api.coef) and np.array_equal(z["factors"], api.factors)
        np.testing.assert_array_equal(z["user_ids"], 2 * np.arange(1_000))
        np.testing.assert_array_equal(z["item_ids"], np.arange(1, 21))
    assert d["evaluation"]["test_rmse"] == api.evaluation["test_rmse"]
    spill = tmp_path / "spill"
    spill.mkdir()
    code, out, err = _cli(*argv, "--spill", str(spill), "--json", "--per-user-output", str(npz))
    assert code == 0 and json.loads(out)["evaluation"]["test_rmse"] == api.evaluation["test_rmse"]
    with np.load(npz) as z:  # out of core here: the same floats
        assert np.array_equal(z["coef"], api.coef) and np.array_equal(z["factors"], api.factors)
    assert list(spill.iterdir()) == []
    csv = tmp_path / "r.csv.gz"  # the same rows as a gzipped CSV: read in blocks, the same floats
    pd.read_parquet(path).to_csv(csv, index=False)
    code, out, err = _cli(
        "complete", str(csv), *argv[2:], "--spill", str(spill), "--per-user-output", str(npz)
    )
    assert code == 0, err
    with np.load(npz) as z:
        assert np.array_equal(z["coef"], api.coef) and np.array_equal(z["factors"], api.factors)
    items_text = pa.table({"user": [1, 2], "item": ["a", "b"], "rating": [1.0, 2.0]})
    pq.write_table(items_text, tmp_path / "s.parquet")  # items must be ids (users may be text)
    for bad, text in [
        ([*argv, "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "not both"),
        (["complete", DEMO_FILE, *argv[2:], "--workers", "2"], ".parquet"),
        (["complete", str(tmp_path / "s.parquet"), *argv[2:], "--workers", "1"], "integer ids"),
        ([*argv, "--workers", "1", "--method", "frank-wolfe", "--rank", "3"], "--rank"),
        ([*argv, "--spill", str(tmp_path / "none")], "`--spill`"),
        ([*argv, "--spill", str(spill), "--workers", "1"], "not with --workers"),
    ]:
        code, out, err = _cli(*bad)
        assert code == 2 and out == "" and text in err and err.count("\n") == 1, (bad, err)


def test_named_users_on_two_worker_processes_are_one_fit(client, tmp_path):
    # text user labels: one fit, bit for bit, from the file here, on the cluster and from the
    # rows in memory in another order (each user's coins keyed by her label); the labels come
    # back in row order
    g = np.random.default_rng(5)
    who = np.repeat(np.arange(1_500), 6)
    what = np.concatenate([g.choice(25, 6, replace=False) for _ in range(1_500)])
    stars = np.clip(np.round(3 + g.normal(size=len(who))), 1, 5)
    labels = np.array([f"u{u}@example.org" for u in range(1_500)], dtype=object)
    pq.write_table(pa.table({"user": labels[who], "item": what + 1, "rating": stars}),
                   tmp_path / "named.parquet", row_group_size=2_000)  # fmt: skip
    kw = dict(epsilon=1.0, delta=1e-6, n_items=25, rating_range=(1, 5), rng=9, first_item=1,
              part_ratings=3_000, evaluate=True, test_fraction=0.1)  # fmt: skip
    here = pr.complete(tmp_path / "named.parquet", **kw)
    there = pr.complete(tmp_path / "named.parquet", client=client, **kw)
    rows = pd.DataFrame({"user": labels[who], "item": what + 1, "rating": stars})[::-1]
    again = pr.complete(rows, **kw)
    for other in (there, again):
        for a, b in zip(here.factors, other.factors):
            assert (a == b).all()
        assert here.evaluation == other.evaluation
    assert (there.diagnostics["user_ids"] == labels[np.argsort(sources.text_keys(labels))]).all()
    argv = ["complete", str(tmp_path / "named.parquet"), "--epsilon", "1", "--delta", "1e-6"]
    code, out, err = _cli(*argv, "--items", "25", "--rating-range", "1,5", "--workers", "2")
    assert code == 0 and "1500 users x 25 items" in out, err


# -- issue 29: one user is one user, on every path ------------------------------------------------
# An instrumented run records every randomized-response coin drawn by `scale`'s private BTL with
# the user label of its row as the chunk held it, and sums each true user's epsilon exactly. The
# true user is the label's value (int(label): the attack's own rule, not privrank's).
_COIN_LOCK, _LOCAL, _DRAWN = threading.Lock(), threading.local(), []
_BTL_CHUNK, _RR_FLIPS = pr.btl._btl_chunk, pr.btl.rr_flips


def _recording_chunk(x, *args):
    _LOCAL.users = sources.chunk_of(x, "", "comparisons")[2]  # the labels as read, before any key
    return _BTL_CHUNK(x, *args)


def _recording_flips(n, *, epsilon, **kw):
    with _COIN_LOCK:
        _DRAWN.append((_LOCAL.users, np.broadcast_to(epsilon, (n,)).copy()))
    return _RR_FLIPS(n, epsilon=epsilon, **kw)


@pytest.fixture
def coins(monkeypatch):
    "The coins drawn while the test runs: (labels of the chunk's rows, each row's epsilon)"
    monkeypatch.setattr(pr.btl, "_btl_chunk", _recording_chunk)
    monkeypatch.setattr(pr.btl, "rr_flips", _recording_flips)
    _DRAWN.clear()
    yield _DRAWN
    _DRAWN.clear()


def _spent_per_user(drawn):
    "Each true user's epsilon, summed exactly (math.fsum) over her coins"
    per = collections.defaultdict(list)
    for labels, eps in drawn:
        for u, e in zip(labels.tolist(), eps.tolist()):
            per[int(u)].append(e)
    return {u: math.fsum(e) for u, e in per.items()}


def _check_spent(res, drawn, true_users):
    spent = _spent_per_user(drawn)
    assert set(spent) == set(true_users), "a user without coins, or a coin without its user"
    assert res.n_voters == len(true_users), (res.n_voters, len(true_users))
    worst = max(spent.values())
    assert worst <= res.epsilon, f"a user spent {worst} > the recorded {res.epsilon}"


G29 = np.random.default_rng(29)
A29 = np.column_stack([G29.integers(0, 6, 600), G29.integers(0, 6, 600), G29.integers(0, 40, 600)])
A29 = A29[A29[:, 0] != A29[:, 1]]  # 40 users: winner, loser, user


def _typed_chunks():
    "The rows in 4 chunks whose user columns are int64, float64, uint64 and Python ints"
    kinds = [np.int64, np.float64, np.uint64, object]
    parts = np.array_split(A29, 4)
    return [
        pd.DataFrame({"winner": c[:, 0], "loser": c[:, 1], "user": c[:, 2].astype(k)})
        for c, k in zip(parts, kinds)
    ]


@pytest.mark.parametrize(
    "source",
    ["array", "typed chunks", "typed arrays", "parquet files", "uint64 parquet", "cluster"],
)
@pytest.mark.parametrize("n_items", [6, None])  # None: items read from the data, as labels
def test_one_user_is_one_user_on_every_path(source, n_items, coins, tmp_path):
    true_users = set(A29[:, 2].tolist())
    kw = dict(n_items=n_items, epsilon=1.0, rng=0, model="local")
    if source == "array":
        res = pr.dp_btl_aggregate(A29, **kw)
    elif source == "typed chunks":
        res = pr.dp_btl_aggregate(_typed_chunks(), **kw)
    elif source == "typed arrays":  # each chunk one numpy array: the float chunk is all float
        parts = np.array_split(A29, 3)
        res = pr.dp_btl_aggregate(
            [parts[0], parts[1].astype(float), parts[2].astype(np.uint64)], **kw
        )
    elif source == "parquet files":  # one file per user-column type
        files = []
        for k, (c, t) in enumerate(
            zip(np.array_split(A29, 3), [pa.int64(), pa.float64(), pa.uint32()])
        ):
            files.append(tmp_path / f"c{k}.parquet")
            pq.write_table(pa.table({"winner": c[:, 0], "loser": c[:, 1],
                                     "user": pa.array(c[:, 2]).cast(t)}), files[-1])  # fmt: skip
        res = pr.dp_btl_aggregate(files, **kw)
    elif source == "uint64 parquet":  # users uint64 beside int64 items: one file, two types
        path = tmp_path / "u.parquet"
        pq.write_table(pa.table({"winner": A29[:, 0], "loser": A29[:, 1],
                                 "user": A29[:, 2].astype(np.uint64)}), path,
                       row_group_size=100)  # fmt: skip
        res = pr.dp_btl_aggregate(path, **kw, chunk_rows=70)
    else:  # two workers (threads, so that the recording sees their coins); frames typed apart
        import dask

        typed = _typed_chunks()  # one Dask partition per chunk, each with its own user type
        frame = dd.from_delayed(
            [dask.delayed(lambda f: f)(f) for f in typed], meta=typed[0], verify_meta=False
        )
        with (
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
            ) as lc,
            distributed.Client(lc) as c,
        ):
            path = tmp_path / "u.parquet"
            pq.write_table(pa.table({"winner": A29[:, 0], "loser": A29[:, 1],
                                     "user": A29[:, 2].astype(np.uint64)}), path,
                           row_group_size=100)  # fmt: skip
            res = pr.dp_btl_aggregate(path, **kw, client=c)
            _check_spent(res, coins, true_users)
            coins.clear()
            res = pr.dp_btl_aggregate(frame, **kw, client=c)
            kinds = {str(part["user"].dtype) for part in dask.compute(*frame.to_delayed())}
            assert kinds == {"int64", "float64", "uint64", "object"}, kinds
    _check_spent(res, coins, true_users)


def test_one_user_is_one_user_through_pandas_chunked_reader(coins):
    # 64-bit hashed ids: pandas types a chunk int64 where every id is below 2^63, uint64 where one
    # is not; the same user appears in both kinds of chunk
    g = np.random.default_rng(3)
    ids = np.r_[g.integers(0, 2**62, 5), g.integers(2**63, 2**64 - 1, 5, dtype=np.uint64)]
    ids = ids.astype(np.uint64)
    users = np.r_[np.arange(5).repeat(30), g.integers(0, 10, 300)]  # chunk 0: small ids only
    win, lose = g.integers(0, 4, len(users)), g.integers(0, 4, len(users))
    keep = win != lose
    text = "winner,loser,user\n" + "".join(
        f"{a},{b},{u}\n" for a, b, u in zip(win[keep], lose[keep], ids[users[keep]])
    )
    kinds = {str(c["user"].dtype) for c in pd.read_csv(io.StringIO(text), chunksize=100)}
    assert kinds == {"int64", "uint64"}, kinds
    res = pr.dp_btl_aggregate(
        lambda: pd.read_csv(io.StringIO(text), chunksize=100),
        n_items=4,
        epsilon=1.0,
        rng=0,
        model="local",
    )
    _check_spent(res, coins, set(ids[np.unique(users[keep])].tolist()))
    with pytest.raises(TypeError, match="one-shot iterator"):  # a second pass would find nothing
        pr.dp_btl_aggregate(
            pd.read_csv(io.StringIO(text), chunksize=100), n_items=4, epsilon=1.0, model="local"
        )


def test_completion_has_one_row_per_user_whatever_the_types():
    # each row of a completion spends (epsilon, delta): one row per true user, labels by value
    t = _ratings(120, 12, 5, seed=8)
    halves = np.array_split(t, 2)
    mixed = [pd.DataFrame(halves[0], columns=["user", "item", "rating"]),
             pd.DataFrame({"user": halves[1][:, 0].astype(np.uint64),
                           "item": halves[1][:, 1].astype(np.int64),
                           "rating": halves[1][:, 2]})]  # fmt: skip
    kw = dict(epsilon=1.0, delta=1e-6, n_items=12, rating_range=(-6, 6), rng=1)
    one, two = pr.complete(t, **kw), pr.complete(mixed, **kw)
    assert one.n_users == two.n_users == 120
    assert np.array_equal(two.diagnostics["user_ids"], np.arange(120))
    assert np.array_equal(one.factors, two.factors)


def test_parquet_columns_are_matched_as_users_write_them(tmp_path):
    # issue 29: `User` was not the user column (each comparison its own unit: up to 27x the
    # epsilon per user) and `Tie` was ignored (ties counted as wins)
    import json

    g = np.random.default_rng(4)
    w, l = g.integers(0, 4, 400), g.integers(0, 4, 400)
    keep = w != l
    w, l, u, t = w[keep], l[keep], g.integers(0, 20, keep.sum()), g.random(keep.sum()) < 0.3
    path = tmp_path / "c.parquet"
    pq.write_table(pa.table({"Winner": w, "LOSER": l, "User": u, "Tie": t}), path)
    code, out, err = _cli("aggregate", str(path), "--epsilon", "1", "--seed", "0", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["privacy_unit"] == "user" and d["n_voters"] == len(np.unique(u))
    lower = tmp_path / "lower.parquet"
    pq.write_table(pa.table({"winner": w, "loser": l, "user": u, "tie": t}), lower)
    want = pr.dp_btl_aggregate(lower, n_items=4, epsilon=1.0, rng=0, ties=True)
    assert d["order"] == want.order.tolist()  # the tie column honoured: the same release
    extra = tmp_path / "extra.parquet"
    pq.write_table(pa.table({"winner": w, "loser": l, "user_id": u, "venue": u}), extra)
    code, out, err = _cli("aggregate", str(extra), "--epsilon", "1")
    assert code == 2 and "column 'venue' is not read" in err, err
    assert err.count("\n") == 1
    code, out, err = _cli("aggregate", str(extra), "--epsilon", "1", "--ignore-columns", "venue")
    assert code == 0 and json.loads(_cli(*("aggregate", str(extra), "--epsilon", "1"),
        "--ignore-columns", "venue", "--json")[1])["privacy_unit"] == "user"  # fmt: skip
    code, out, err = _cli(
        "aggregate", str(extra), "--epsilon", "1", "--ignore-columns", "user_id,venue"
    )
    again = _cli("aggregate", str(extra), "--epsilon", "1", "--ignore-columns", "user_id,venue",
                 "--json")  # fmt: skip
    assert code == 0 and json.loads(again[1])["privacy_unit"] == "comparison"
    empty = tmp_path / "empty.parquet"
    nothing = pa.array([], pa.int64())
    pq.write_table(pa.table({"winner": nothing, "loser": nothing}), empty)
    code, out, err = _cli("aggregate", str(empty), "--epsilon", "1")
    assert code == 2 and "empty.parquet holds no rows" in err
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    code, out, err = _cli("aggregate", str(broken), "--epsilon", "1")
    assert code == 2 and "broken.parquet" in err and err.count("\n") == 1, err


def test_memory_grows_with_the_data_not_with_the_largest_id(tmp_path):
    # issue 29: one user id of 400,000,000 (a 200-row file) needed 2.98 GiB and ended in a
    # MemoryError; 52M copies of one rating loaded a whole partition
    import tracemalloc

    g = np.random.default_rng(6)
    w, l = g.integers(0, 5, 200), g.integers(0, 5, 200)
    keep = w != l
    u = g.integers(0, 30, keep.sum())
    u[0] = 400_000_000
    path = tmp_path / "c.parquet"
    pq.write_table(pa.table({"winner": w[keep], "loser": l[keep], "user": u}), path)
    tracemalloc.start()
    try:
        res = pr.dp_btl_aggregate(path, n_items=5, epsilon=1.0, rng=0, model="local")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.n_voters == len(np.unique(u))
    assert peak < 64 << 20, peak  # a bincount to the largest id: 3.2 GB
    users = sources.Users.of(np.array([400_000_000, 3, 3, 7]))
    assert users.dense.nbytes == 0 and users.index().counts.tolist() == [2, 1, 1]
    rows = np.column_stack([np.zeros(50_000), np.ones(50_000), np.full(50_000, 3.0)])
    with pytest.raises(ValueError, match="has 50,000 ratings of 10 items"):
        pr.complete(rows, epsilon=1.0, delta=1e-6, n_items=10, rng=0, rating_range="private")


def test_a_cluster_without_workers_is_refused_in_bounded_time(monkeypatch):
    # issue 29: a scheduler with no workers ended in a ZeroDivisionError (aggregate) or a hang
    # (complete); now every scale function waits core.CLIENT_TIMEOUT seconds, then TimeoutError
    import time

    monkeypatch.setattr(core, "CLIENT_TIMEOUT", 1.0)
    with (
        distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as lc,
        distributed.Client(lc) as c,
    ):
        t = _ratings(50, 6, 3)
        for call in (
            lambda: pr.dp_borda_aggregate(R[:50], epsilon=1.0, client=c),
            lambda: pr.dp_footrule_aggregate(R[:50], epsilon=1.0, model="local", client=c),
            lambda: pr.complete(
                t, epsilon=1.0, delta=1e-6, n_items=6, client=c, rating_range="private"
            ),
        ):
            t0 = time.perf_counter()
            with pytest.raises(TimeoutError, match="`client` has no worker"):
                call()
            assert time.perf_counter() - t0 < 10


def test_issue_29_reproducers(coins, tmp_path):
    # a list of lists: one profile, as in memory (it was refused by scale)
    mem = pr.dp_borda_aggregate(R[:60], epsilon=1.0, rng=0)
    assert np.array_equal(pr.dp_borda_aggregate(R[:60].tolist(), epsilon=1.0, rng=0).scores,
                          mem.scores)  # fmt: skip
    # an epsilon that underflows to 0 when split over a user's comparisons: refused before coins
    rows = np.array([[0, 1, 7]] * 5 + [[1, 0, 8]])
    with pytest.raises(ValueError, match="underflows to 0"):
        pr.dp_btl_aggregate(rows, n_items=2, epsilon=1e-323, rng=0, model="local")
    assert coins == []
    # whole-number float item labels in a Parquet file: their integers (a false "user ids must be
    # integers" before)
    g = np.random.default_rng(2)
    w, l = g.integers(0, 4, 300), g.integers(0, 4, 300)
    keep = w != l
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"winner": w[keep].astype(float), "loser": l[keep].astype(float),
                             "user": g.integers(0, 30, keep.sum())}), path)  # fmt: skip
    code, out, err = _cli("aggregate", str(path), "--epsilon", "1", "--seed", "0", "--json")
    assert code == 0, err
    import json

    assert sorted(json.loads(out)["order"]) == [0, 1, 2, 3]


def test_any_integer_user_ids_on_every_path(tmp_path):
    # ids of 2^40 or -5 were refused with spill and accepted without; one float chunk of the
    # same users made 240 rows of 120 users
    t = _ratings(120, 12, 5, seed=8)
    ids = np.r_[-5, 2**40, np.arange(118) * 1_000_003]
    t[:, 0] = ids[t[:, 0].astype(int)]
    frame = pd.DataFrame({"user": t[:, 0].astype(np.int64), "item": t[:, 1].astype(np.int64),
                          "rating": t[:, 2]})  # fmt: skip
    kw = dict(epsilon=1.0, delta=1e-6, n_items=12, rating_range=(-6, 6), rng=1, chunk_rows=100)
    here = pr.complete(frame, **kw)
    spill = tmp_path / "spill"
    spill.mkdir()
    spilled = pr.complete(frame, **kw, spill=spill)
    half = len(frame) // 2
    floats = [frame[:half], frame[half:].astype({"user": np.float64})]  # ids < 2^53: exact
    mixed = pr.complete(floats, **kw)
    for r in (spilled, mixed):
        assert np.array_equal(r.factors, here.factors) and r.n_users == 120
    assert np.array_equal(here.diagnostics["user_ids"], np.sort(ids))


@pytest.mark.parametrize("text", [False, True])
def test_ids_past_2_63_beside_small_ids_and_text_are_one_user_each(text):
    big = 2**63 + 5
    chunks = [np.array([big, 3], np.uint64), np.array([3.0, 7.0]), np.array([big, 7], object)]
    if text:
        chunks.append(np.array([big, "bob", "3"], dtype=object))
    canon = [sources.canonical(c, "", "comparisons", "user labels") for c in chunks]
    users = sources.Users()
    for u in canon:
        users.iadd(sources.Users.of(u))
    index = users.index()
    assert len(index) == 3 + text and index.by_id == (not text)
    want = {big: 2 + text, 3: 2 + text, 7: 2, "bob": 1}
    got = {_label(index.labels[r]): int(index.counts[r]) for r in range(len(index))}
    assert got == {k: v for k, v in want.items() if text or k != "bob"}, got
    for c, u in zip(chunks, canon):  # each chunk's rows are its labels' users
        rows = index.rows(u, "", "comparisons")
        assert [_label(index.labels[r]) for r in rows] == [_label(x) for x in c.tolist()]


def _label(x):
    "A label by value: integers (whole floats, digit strings) as int, other text as is"
    if isinstance(x, str):
        return int(x) if x.lstrip("-").isdigit() else x
    return int(x)  # Python or numpy integers, whole floats


def test_one_user_is_one_user_on_two_worker_processes(client, tmp_path):
    # the coins cannot be watched in other processes: the count of users and the release, which
    # equal the local run's for the same partitions and seed
    import dask

    typed = _typed_chunks()
    frame = dd.from_delayed(
        [dask.delayed(lambda f: f)(f) for f in typed], meta=typed[0], verify_meta=False
    )
    kw = dict(epsilon=1.0, rng=0)
    there = pr.dp_btl_aggregate(frame, **kw, client=client)
    here = pr.dp_btl_aggregate(frame, **kw)  # Dask's local scheduler
    assert there.n_voters == here.n_voters == len(np.unique(A29[:, 2]))
    assert np.array_equal(there.scores, here.scores)
