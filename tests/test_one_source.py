"""One method, any source: the same call on an array, a pandas frame, a Parquet file, a list of
chunks of uneven sizes and a cluster of two worker processes gives the same order and the same
privacy record for the same seed (issue 30, "Done when", the rank aggregators)."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rank_entry_points import CALLS

import privrank as pr
from privrank import core, footrule, kemeny

distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.xdist_group("one_source")  # one cluster for the module

R = pr.sample_mallows(6, 1_008, 0.7, rng=3)  # 1,008 voters: chunks of 1, 7 and 1,000 rows
COLS = [f"c{q}" for q in range(6)]


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    d = tmp_path_factory.mktemp("one_source")
    pq.write_table(pa.table({c: R[:, q] for q, c in enumerate(COLS)}), d / "r.parquet",
                   row_group_size=100)  # fmt: skip
    return {
        "array": R,
        "pandas frame": pd.DataFrame(R, columns=COLS),
        "Parquet file": d / "r.parquet",
        "chunks of 1, 7, 1000 rows": [R[:1], R[1:8], R[8:]],
    }


def _same(a, b, what):
    assert (a.order == b.order).all(), what
    assert core.privacy_record(a) == core.privacy_record(b), what
    if a.scores is not None:
        np.testing.assert_allclose(b.scores, a.scores, rtol=1e-9, err_msg=what)


@pytest.mark.parametrize("noise", ["fast", "exact"])
@pytest.mark.parametrize("delta", [0.0, 1e-6])
@pytest.mark.parametrize("method", list(CALLS))
def test_every_source_gives_the_same_release(sources, client, method, delta, noise):
    call = CALLS[method]
    with pr.use_noise(noise):
        ref = call(R, epsilon=0.8, delta=delta, rng=7)
        assert ref.noise == noise and ref.n_voters == len(R)
        for name, data in sources.items():
            _same(ref, call(data, epsilon=0.8, delta=delta, rng=7), f"{method}: {name}")
        _same(ref, call(R, epsilon=0.8, delta=delta, rng=7, chunk_rows=13), f"{method}: 13 rows")
        on_cluster = call(sources["Parquet file"], epsilon=0.8, delta=delta, rng=7, client=client)
        _same(ref, on_cluster, f"{method}: two workers")
        # another seed, another release: the check can fail
        other = call(R, epsilon=0.8, delta=delta, rng=8)
        assert other.scores is None or not np.array_equal(other.scores, ref.scores)


def test_local_noise_is_each_voters_own_whatever_the_chunks():
    "Row r's noise is the same in any chunk: the sums of the first k voters agree"
    with pr.use_noise("exact"):
        whole = core.dp_borda_aggregate(R[:100], epsilon=1.0, model="local", rng=1)
        parts = core.dp_borda_aggregate([R[:37], R[37:100]], epsilon=1.0, model="local", rng=1)
        shorter = core.dp_borda_aggregate(R[:99], epsilon=1.0, model="local", rng=1)
    assert np.array_equal(whole.scores, parts.scores)
    # dropping the last voter removes her own noisy report only: row 99's keyed draws
    law, scale = whole.diagnostics["noise_law"], whole.diagnostics["noise_scale"]
    rows = core.Rows.of(np.random.default_rng(1)).at(99)
    with pr.use_noise("exact"):
        hers = core.release(5 - R[99:100], law, scale, rng=rows)[0]
    assert np.array_equal(whole.scores - shorter.scores, hers)
    assert not np.array_equal(hers, 5 - R[99])  # with noise


VOTES = pr.ranks_to_comparisons(R[:200])  # 200 voters' 3,000 comparisons
ROWS = np.column_stack([VOTES.winner, VOTES.loser, VOTES.user])


@pytest.fixture(scope="module")
def comparison_sources(tmp_path_factory):
    d = tmp_path_factory.mktemp("one_source_btl")
    names = ["winner", "loser", "user"]
    pq.write_table(pa.table({c: ROWS[:, q] for q, c in enumerate(names)}), d / "c.parquet",
                   row_group_size=250)  # fmt: skip
    return {
        "Comparisons table": VOTES,
        "array": ROWS,
        "pandas frame": pd.DataFrame(ROWS, columns=names),
        "Parquet file": d / "c.parquet",
        "chunks of 1, 7, 1000, 1992 rows": [ROWS[:1], ROWS[1:8], ROWS[8:1008], ROWS[1008:]],
    }


@pytest.mark.parametrize("noise", ["fast", "exact"])
def test_private_btl_gives_the_same_release_from_every_source(comparison_sources, client, noise):
    kw = dict(epsilon=4.0, rng=11, privacy_unit="voter", n_items=6, model="local")
    with pr.use_noise(noise):
        ref = pr.dp_btl_aggregate(VOTES, epsilon=4.0, rng=11, model="local")
        assert ref.privacy_unit == "voter" and ref.n_voters == 200 and ref.noise == noise
        for name, data in comparison_sources.items():
            args = (
                dict(epsilon=4.0, rng=11, model="local") if data is VOTES else kw
            )  # a table knows its unit
            _same(ref, pr.dp_btl_aggregate(data, **args), f"btl: {name}")
        on_cluster = pr.dp_btl_aggregate(comparison_sources["Parquet file"], client=client, **kw)
        _same(ref, on_cluster, "btl: two workers")
        other = pr.dp_btl_aggregate(VOTES, epsilon=4.0, rng=12, model="local")
        assert not np.array_equal(other.scores, ref.scores)


NON_PRIVATE = {
    "borda": core.borda_aggregate,
    "kemeny": kemeny.kemeny_aggregate,
    "footrule": footrule.footrule_aggregate,
}


@pytest.mark.parametrize("method", list(NON_PRIVATE))
def test_the_non_private_consensus_is_the_same_from_every_source(sources, client, method):
    f = NON_PRIVATE[method]
    ref = f(R)
    for name, data in [*sources.items(), ("13-row chunks", R)]:
        res = f(data, chunk_rows=13) if name == "13-row chunks" else f(data)
        _same(ref, res, f"{method}: {name}")
        assert res.diagnostics == ref.diagnostics
    _same(ref, f(sources["Parquet file"], client=client), f"{method}: two workers")


@pytest.mark.parametrize("model", ["central", "local"])
def test_the_measured_choice_is_the_same_from_every_source(sources, client, model):
    "dp_aggregate counts n and m (public) in a first pass, then releases from the same source"
    from privrank import auto

    ref = auto.dp_aggregate(R, epsilon=0.5, delta=1e-6, model=model, rng=5)
    for name, data in sources.items():
        res = auto.dp_aggregate(data, epsilon=0.5, delta=1e-6, model=model, rng=5)
        _same(ref, res, f"auto: {name}")
        assert res.diagnostics["auto_method"] == ref.diagnostics["auto_method"]
    on_cluster = auto.dp_aggregate(
        sources["Parquet file"], epsilon=0.5, delta=1e-6, model=model, rng=5, client=client
    )
    _same(ref, on_cluster, "auto: two workers")


# -- completion: a CSV path, a sparse matrix and a Parquet file spilled give one fit ---------------
def _ratings_sources(d):
    g = np.random.default_rng(11)
    users, per, n = 1_500, 12, 30
    who = np.repeat(np.arange(users), per)
    what = np.argsort(g.random((users, n)), axis=1)[:, :per].ravel()
    taste = g.normal(size=(users, 2)) @ g.normal(size=(2, n))
    stars = np.clip(np.rint(3 + taste[who, what] + 0.5 * g.normal(size=who.size)), 1, 5)
    from scipy import sparse

    R = sparse.csr_array((stars, (who, what)), shape=(users, n))
    rows = pd.DataFrame({"user": who, "item": what, "rating": stars}).sample(frac=1, random_state=1)
    rows.to_csv(d / "r.csv", index=False)  # another row order than the matrix's
    pq.write_table(pa.Table.from_pandas(rows, preserve_index=False), d / "r.parquet",
                   row_group_size=2_000)  # fmt: skip
    return R, n


@pytest.mark.parametrize(
    "how",
    [
        {},  # the private subspace: its rank, ridge and item effects chosen privately
        {"estimator": "als"},
        {"estimator": "frank-wolfe", "n_iter": 4},
        {"estimator": "pgd", "n_iter": 3, "step": 1.0},
        {"estimator": "cleansing"},
    ],
)
def test_complete_gives_one_fit_from_a_csv_a_sparse_matrix_and_a_spilled_parquet(how, tmp_path):
    R, n = _ratings_sources(tmp_path)
    spill = tmp_path / "spill"
    spill.mkdir()
    kw = dict(epsilon=1.0, delta=1e-6, max_per_user=8, evaluate=True, test_fraction=0.1, rng=5,
              rating_range="private")  # fmt: skip
    kw |= how
    ref = pr.complete(R, **kw)
    for name, fit in (
        ("CSV path", pr.complete(tmp_path / "r.csv", n_items=n, **kw)),
        ("Parquet, spilled", pr.complete(tmp_path / "r.parquet", n_items=n, spill=spill, **kw)),
        (
            "Parquet, spilled in 7 partitions",
            pr.complete(tmp_path / "r.parquet", n_items=n, spill=spill, part_ratings=2_000, **kw),
        ),
    ):
        assert fit.params.keys() == ref.params.keys(), name
        for k, v in ref.params.items():  # the chosen configuration
            if isinstance(v, float):
                assert abs(fit.params[k] - v) <= 1e-9 * abs(v), (name, k, v, fit.params[k])
            else:
                assert fit.params[k] == v, (name, k, v, fit.params[k])
        assert abs(fit.evaluation["test_rmse"] - ref.evaluation["test_rmse"]) <= 1e-9, name
        assert fit.evaluation["n_test"] == ref.evaluation["n_test"], name
        assert core.privacy_record(fit) == core.privacy_record(ref), name
    assert list(spill.iterdir()) == []
    # another seed holds out other ratings: the check can fail
    other = pr.complete(R, **{**kw, "rng": 6})
    assert other.evaluation["test_rmse"] != ref.evaluation["test_rmse"]


def test_use_client_runs_a_block_on_the_cluster(sources, client, tmp_path):
    # inside `use_client`, a file is read on the workers as with client=; an array stays here
    path = sources["Parquet file"]
    explicit = pr.dp_borda_aggregate(path, epsilon=0.8, rng=7, client=client)
    with pr.use_client(client):
        with distributed.get_task_stream(client) as on_workers:
            blocked = pr.dp_borda_aggregate(path, epsilon=0.8, rng=7)
        with distributed.get_task_stream(client) as none:
            here = pr.dp_borda_aggregate(R, epsilon=0.8, rng=7)  # in memory: read here
            btl = pr.dp_btl_aggregate(
                pr.ranks_to_comparisons(R[:50]), epsilon=2.0, rng=1, model="local"
            )
    assert len(on_workers.data) > 0 and len(none.data) == 0  # the workers ran the file's tasks
    _same(explicit, blocked, "use_client")
    _same(explicit, here, "an array inside use_client")
    assert btl.n_voters == 50
    R_, n = _ratings_sources(tmp_path)
    kw = dict(epsilon=1.0, delta=1e-6, n_items=n, evaluate=True, test_fraction=0.1, rng=5,
              rating_range="private")  # fmt: skip
    on = pr.complete(tmp_path / "r.parquet", client=client, **kw)
    with pr.use_client(client):
        blocked = pr.complete(tmp_path / "r.parquet", **kw)
        spill = tmp_path / "spill"
        spill.mkdir()
        spilled = pr.complete(tmp_path / "r.parquet", spill=spill, **kw)  # spill: here
    assert np.array_equal(on.factors, blocked.factors) and on.evaluation == blocked.evaluation
    assert spilled.evaluation["test_rmse"] == on.evaluation["test_rmse"]
    with pytest.raises(TypeError, match="`client`"):
        with pr.use_client("tcp://127.0.0.1:8786"):
            pass


def test_a_ratings_table_is_read_by_the_source_layer_as_its_labelled_rows():
    # a `Ratings` table (users by label) and the same (label, item, rating) rows: one release
    from privrank.datasets import Ratings

    g = np.random.default_rng(0)
    users, n = 400, 12
    who = np.repeat(np.arange(users), 5)
    what = np.concatenate([g.choice(n, 5, replace=False) for _ in range(users)])
    stars = g.integers(1, 6, who.size).astype(float)
    labels = 3 * np.arange(users) + 7
    from scipy import sparse

    table = Ratings(sparse.csr_array((stars, (who, what)), shape=(users, n)), labels, np.arange(n))
    kw = dict(
        epsilon=1.0, delta=1e-6, evaluate=True, test_fraction=0.2, rng=1, rating_range="private"
    )
    ref = pr.complete(table, **kw)
    rows = pr.complete(np.column_stack([labels[who], what, stars]), n_items=n, **kw)
    chunked = pr.complete(table, chunk_rows=100, **kw)
    assert ref.evaluation == rows.evaluation == chunked.evaluation
    assert np.array_equal(ref.factors, rows.factors)
    assert np.array_equal(ref.diagnostics["user_ids"], labels)
