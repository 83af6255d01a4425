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
    kw = dict(epsilon=4.0, rng=11, privacy_unit="voter", n_items=6)
    with pr.use_noise(noise):
        ref = pr.dp_btl_aggregate(VOTES, epsilon=4.0, rng=11)
        assert ref.privacy_unit == "voter" and ref.n_voters == 200 and ref.noise == noise
        for name, data in comparison_sources.items():
            args = dict(epsilon=4.0, rng=11) if data is VOTES else kw  # a table knows its unit
            _same(ref, pr.dp_btl_aggregate(data, **args), f"btl: {name}")
        on_cluster = pr.dp_btl_aggregate(comparison_sources["Parquet file"], client=client, **kw)
        _same(ref, on_cluster, "btl: two workers")
        other = pr.dp_btl_aggregate(VOTES, epsilon=4.0, rng=12)
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
