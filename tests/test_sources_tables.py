"""Two more kinds of source (issue 30, item 1): PrefLib orders (a `datasets.Preferences` table or
the path of its file) as the `ranks` of every rank aggregator, with the release of its `.ranks`
for the same seed, and a scipy.sparse matrix as (row, column, value) rows, in a CSR matrix's
order, a chunk at a time."""

import gzip

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rank_entry_points import CALLS as RANK_CALLS
from scipy import sparse

import privrank as pr
from privrank import core, footrule, kemeny, tree
from privrank.datasets import read_preflib
from privrank.sources import CHUNK_ENTRIES, Source, iter_chunks

M_ITEMS = 6
# 40 distinct rankings of 6 items, each cast by 1 to 4 voters: 97 voters
ORDERS = np.argsort(np.random.default_rng(2).random((40, M_ITEMS)), axis=1)
COUNTS = np.random.default_rng(3).integers(1, 5, len(ORDERS))


def _preflib(orders, counts, kind, m=M_ITEMS):
    "The text of a PrefLib 2022 file: one line per order, items 1..m, tiers in braces"
    lines = [
        "# TITLE: test",
        f"# DATA TYPE: {kind}",
        f"# NUMBER ALTERNATIVES: {m}",
        f"# NUMBER VOTERS: {int(np.sum(counts))}",
        f"# NUMBER UNIQUE ORDERS: {len(orders)}",
    ]
    for c, o in zip(counts, orders):
        tiers = [",".join(str(q + 1) for q in t) for t in o]
        lines.append(f"{c}: " + ",".join(t if "," not in t else "{" + t + "}" for t in tiers))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("preflib")
    text = _preflib([[[q] for q in o] for o in ORDERS], COUNTS, "soc")
    (d / "election.soc").write_text(text)
    (d / "ELECTION.SOC.GZ").write_bytes(gzip.compress(text.encode()))
    # a .soi whose every order happens to be complete: strict rankings, accepted
    (d / "complete.soi").write_text(text.replace("DATA TYPE: soc", "DATA TYPE: soi"))
    # partial: the first order ranks 4 of the 6 items (3 voters)
    partial = [[[q] for q in o] for o in ORDERS]
    partial[0] = partial[0][:4]
    counts = COUNTS.copy()
    counts[0] = 3
    (d / "partial.soi").write_text(_preflib(partial, counts, "soi"))
    # ties: the second order puts its last two items in one tier (2 voters)
    tied = [[[q] for q in o] for o in ORDERS]
    tied[1] = tied[1][:4] + [[int(ORDERS[1][4]), int(ORDERS[1][5])]]
    counts = COUNTS.copy()
    counts[1] = 2
    (d / "tied.toc").write_text(_preflib(tied, counts, "toc"))
    (d / "both.toi.gz").write_bytes(
        gzip.compress(_preflib(partial[:1] + tied[1:], COUNTS, "toi").encode())
    )
    return d


CALLS = {
    **RANK_CALLS,
    "position costs, central": lambda d, **kw: tree.private_position_costs(d, **kw),
    "position costs, local": lambda d, **kw: tree.private_position_costs(d, model="local", **kw),
}


def _same(a, b, what):
    "The same release: the same values, bit for bit, and the same privacy record"
    assert core.privacy_record(a) == core.privacy_record(b), what
    assert a.n_voters == b.n_voters, what
    if hasattr(a, "gamma"):
        assert np.array_equal(a.gamma, b.gamma), what
        return
    assert np.array_equal(a.order, b.order), what
    if a.scores is not None:
        assert np.array_equal(a.scores, b.scores), what


def test_the_files_hold_what_was_written(files):
    prefs = read_preflib(files / "election.soc")
    assert prefs.n_voters == COUNTS.sum() == 97 and prefs.is_complete_strict
    expected = np.repeat(core.orders_to_ranks(ORDERS), COUNTS, axis=0)
    assert np.array_equal(prefs.ranks, expected)
    assert not read_preflib(files / "partial.soi").is_complete_strict
    assert not read_preflib(files / "tied.toc").is_complete_strict


@pytest.mark.parametrize("noise", ["fast", "exact"])
@pytest.mark.parametrize("delta", [0.0, 1e-6])
@pytest.mark.parametrize("method", list(CALLS))
def test_preflib_orders_give_the_release_of_their_ranks(files, method, delta, noise):
    call = CALLS[method]
    prefs = read_preflib(files / "election.soc")
    with pr.use_noise(noise):
        ref = call(prefs.ranks, epsilon=0.8, delta=delta, rng=7)
        assert ref.n_voters == 97
        held = {
            "Preferences": prefs,
            ".soc path (str)": str(files / "election.soc"),
            ".soc path (Path)": files / "election.soc",
            ".SOC.GZ path": files / "ELECTION.SOC.GZ",
        }
        for name, ranks in held.items():
            _same(ref, call(ranks, epsilon=0.8, delta=delta, rng=7), f"{method}: {name}")
        for rows in (1, 7, 10**6):
            got = call(prefs, epsilon=0.8, delta=delta, rng=7, chunk_rows=rows)
            _same(ref, got, f"{method}: chunks of {rows}")
        # another seed, another release: the comparison can fail
        other = call(prefs, epsilon=0.8, delta=delta, rng=8)
        values = (lambda r: r.gamma) if hasattr(ref, "gamma") else (lambda r: r.scores)
        if values(ref) is not None:
            assert not np.array_equal(values(other), values(ref))


def test_the_chunks_of_preflib_orders_are_its_ranks(files):
    prefs = read_preflib(files / "election.soc")
    for rows in (1, 7, 96, 97, None):
        src, checked = core.rank_source(prefs, None, rows, None)
        chunks = list(src.chunks())
        assert not checked and all(len(c) <= (rows or CHUNK_ENTRIES // M_ITEMS) for c in chunks)
        assert np.array_equal(np.vstack(chunks), prefs.ranks), rows


# the aggregators that take partial and tied ballots as they are (issue 32): the others refuse them
TAKE_WEAK = {
    "borda, central", "borda, local", "kemeny", "footrule, central", "footrule, local",
    "position costs, central", "position costs, local",
}  # fmt: skip


@pytest.mark.parametrize("name", ["partial.soi", "tied.toc", "both.toi.gz"])
@pytest.mark.parametrize("method", list(CALLS))
def test_partial_or_tied_orders_are_taken_or_refused_naming_ranks(files, name, method):
    n_voters = read_preflib(files / name).n_voters
    for ranks in (files / name, read_preflib(files / name)):
        if method in TAKE_WEAK:
            res = CALLS[method](ranks, epsilon=1.0, rng=0)
            assert res.n_voters == n_voters
            if hasattr(res, "gamma"):  # position costs: m x m
                assert res.gamma.shape == (M_ITEMS, M_ITEMS)
            else:
                assert sorted(res.order) == list(range(M_ITEMS))
            continue
        try:
            CALLS[method](ranks, epsilon=1.0, rng=0)
        except ValueError as e:
            msg = str(e)
            assert msg.startswith("`ranks`") and "to_ranks(tie_break=" in msg, msg
            assert "partial or tied ballots" in msg, msg
        else:  # only Kemeny's small-n release with one bucket makes no pass over positions
            assert method == "kemeny, small n", method
    # completed by the caller, knowingly: accepted
    done = read_preflib(files / name).to_ranks(tie_break="index")
    assert CALLS[method](done, epsilon=1.0, rng=0).n_voters == len(done)


def test_bad_preflib_inputs_are_refused_by_name(files, tmp_path):
    prefs = read_preflib(files / "election.soc")
    with pytest.raises(ValueError, match=r"^`ranks`: .*no such file"):
        core.dp_borda_aggregate(tmp_path / "missing.soc", epsilon=1.0)
    bad = tmp_path / "bad.toi"
    bad.write_text("# NUMBER ALTERNATIVES: 3\n# NUMBER VOTERS: 1\n1: 1,4\n")
    with pytest.raises(ValueError, match=r"^`ranks`: .*bad.toi line 3"):
        kemeny.dp_kemeny_aggregate(bad, epsilon=1.0)
    with pytest.raises(ValueError, match="`columns`"):
        core.dp_borda_aggregate(prefs, epsilon=1.0, columns=["c0"])
    with pytest.raises(TypeError, match=r"^`ranks`: .*leave `client` out"):
        footrule.dp_footrule_aggregate(files / "election.soc", epsilon=1.0, client=object())
    with pytest.raises(ValueError, match="chunk_rows"):
        core.dp_borda_aggregate(prefs, epsilon=1.0, chunk_rows=0)


def test_other_paths_still_go_to_the_source(files, tmp_path):
    "Only a PrefLib suffix is read as PrefLib: a Parquet file is read as before"
    R = read_preflib(files / "election.soc").ranks
    pq.write_table(pa.table({f"c{q}": R[:, q] for q in range(M_ITEMS)}), tmp_path / "r.parquet")
    ref = core.dp_borda_aggregate(R, epsilon=1.0, rng=1)
    _same(ref, core.dp_borda_aggregate(tmp_path / "r.parquet", epsilon=1.0, rng=1), "parquet")
    for name in ("election.txt", "election.soc.zip", "election.socx"):
        (tmp_path / name).write_text("x")
        with pytest.raises(ValueError, match=r"`ranks`: .* is not a .parquet or .csv file"):
            core.dp_borda_aggregate(tmp_path / name, epsilon=1.0)
    assert core.is_preflib("A.SoI.Gz") and core.is_preflib(files / "election.soc")
    assert not core.is_preflib("election.soc.parquet") and not core.is_preflib(3)


# ------------------------------------------------------------------------------------------
# scipy.sparse matrices


def _matrix(seed=5, shape=(200, 30), density=0.15):
    "A CSR matrix of ratings 1..5, one stored zero in every nine entries"
    gen = np.random.default_rng(seed)
    M = sparse.csr_array(gen.integers(1, 6, shape) * (gen.random(shape) < density))
    M.data[::9] = 0
    return M


def _triples(M):
    "(row, column, value) of a CSR matrix with sorted indices, in its order"
    c = M.tocoo()
    return np.column_stack([c.row, c.col, c.data]).astype(np.float64)


def _read(data, chunk_rows):
    "The chunks of `data` as a Source reads them, stacked; each chunk's length and types checked"
    chunks = list(Source(data, name="ratings", chunk_rows=chunk_rows).chunks())
    step = chunk_rows or CHUNK_ENTRIES // 3
    assert all(len(c) <= step for c in chunks)
    assert all([a.dtype.name for a in c.cols] == ["int64", "int64", "float64"] for c in chunks)
    return np.vstack([c.array() for c in chunks])


@pytest.mark.parametrize("chunk_rows", [1, 7, 10**6, None])
def test_a_sparse_matrix_is_its_triples_in_csr_order(chunk_rows):
    M = _matrix()
    assert M.has_sorted_indices and (M.data == 0).sum() > 10
    ref = _triples(M)
    assert len(ref) == M.nnz  # the stored zeros are rows
    for data in (M, sparse.csr_matrix(M), M.tocsc(), M.tocoo(), sparse.lil_array(M)):
        got = _read(data, chunk_rows)
        assert np.array_equal(got, ref), (type(data).__name__, chunk_rows)
        assert (got[:, 2] == 0).sum() == (M.data == 0).sum()
    # a COO matrix stored in another order: read by row, then column
    c = M.tocoo()
    order = np.random.default_rng(0).permutation(M.nnz)
    shuffled = sparse.coo_array((c.data[order], (c.row[order], c.col[order])), shape=M.shape)
    assert np.array_equal(_read(shuffled, chunk_rows), ref)
    # a CSR matrix whose columns are not sorted in each row: sorted
    rev = sparse.csr_array(M, copy=True)
    for r in range(3):  # reverse the first rows' entries (their columns fall)
        s, e = rev.indptr[r], rev.indptr[r + 1]
        rev.indices[s:e], rev.data[s:e] = rev.indices[s:e][::-1].copy(), rev.data[s:e][::-1].copy()
    rev.has_sorted_indices = False
    assert np.array_equal(_read(rev, chunk_rows), ref)


def test_stored_duplicates_stay_rows_in_the_order_stored():
    "Two entries stored for one (row, column) are two rows, in the order stored (a stable sort)"
    coo = sparse.coo_array(([5.0, 1.0, 2.0, 3.0], ([2, 0, 2, 0], [1, 3, 1, 0])), shape=(3, 4))
    got = np.vstack(list(iter_chunks(coo, chunk_rows=3)))
    assert np.array_equal(got, [[0, 0, 3.0], [0, 3, 1.0], [2, 1, 5.0], [2, 1, 2.0]])


def test_sparse_matrix_edge_cases():
    empty = sparse.csr_array((4, 5))
    chunks = list(Source(empty, name="ratings").chunks())
    assert len(chunks) == 1 and len(chunks[0]) == 0 and chunks[0].width == 3
    ints = sparse.csr_array(np.array([[0, 3], [2**40, 0]], dtype=np.int64))
    assert np.array_equal(np.vstack(list(iter_chunks(ints))), [[0, 1, 3], [1, 0, 2.0**40]])
    # entries far apart (most rows empty): the same triples whatever the chunks
    far = sparse.csr_array(([2.0, 0.0, 1.0], ([5, 900_000, 999_999], [1, 0, 2])), (10**6, 3))
    for rows in (1, 2, None):
        got = np.vstack(list(iter_chunks(far, chunk_rows=rows)))
        assert np.array_equal(got, [[5, 1, 2.0], [900_000, 0, 0.0], [999_999, 2, 1.0]]), rows
    boolean = sparse.csr_array(np.eye(3, dtype=bool))
    assert np.array_equal(np.vstack(list(iter_chunks(boolean)))[:, 2], [1.0, 1.0, 1.0])
    # a statistic of rating rows: the same sums as on the triples
    stat = lambda chunk, where: (len(chunk), chunk.array().sum(axis=0))
    M = _matrix()
    n, sums = Source(M, name="ratings", chunk_rows=13).reduce(stat)
    assert n == M.nnz and np.allclose(sums, _triples(M).sum(axis=0))


def test_bad_sparse_inputs_are_refused_by_name():
    M = _matrix()
    with pytest.raises(TypeError, match=r"^`ratings`: a sparse matrix must hold real numbers"):
        list(Source(M.astype(np.complex128), name="ratings").chunks())
    if hasattr(sparse, "coo_array"):
        try:
            one_d = sparse.coo_array(np.array([1.0, 0.0, 2.0]))
        except (TypeError, ValueError):  # a scipy without 1-d sparse arrays
            one_d = None
        if one_d is not None and one_d.ndim == 1:
            with pytest.raises(ValueError, match=r"^`ratings`: a sparse matrix must be 2-d"):
                list(Source(one_d, name="ratings").chunks())
    stat = lambda chunk, where: (len(chunk),)
    with pytest.raises(TypeError, match=r"^`ratings`: a scipy.sparse matrix is read here"):
        Source(M, name="ratings", client=object()).reduce(stat)
    with pytest.raises(TypeError, match=r"^`ratings`: a scipy.sparse matrix is read here"):
        Source(M, name="ratings").parts()
    with pytest.raises(TypeError, match=r"^`ratings`: a scipy.sparse matrix is read here"):
        pr.complete(M, epsilon=1.0, delta=1e-6, client=object(), rating_range="private")


def test_a_sparse_matrix_of_ratings_gives_the_release_of_its_triples():
    "private Frank-Wolfe on a matrix and on its (user, item, rating) rows: the same release"
    M = _matrix(seed=1, shape=(40, 8), density=0.5)
    M = M[np.diff(M.indptr) > 0]  # every user with a rating
    kw = dict(epsilon=1.0, delta=1e-6, nuclear_norm=1.0, n_iter=2, row_norm=1.0, rng=0,
              rating_range="private")  # fmt: skip
    kw |= dict(estimator="frank-wolfe", evaluate=True, test_fraction=0.2)
    ref = pr.complete(_triples(M), n_items=8, **kw)
    for rows in (7, None):
        got = pr.complete(M, chunk_rows=rows, **kw)
        assert core.privacy_record(got) == core.privacy_record(ref)
        assert np.array_equal(got.factors, ref.factors) and np.array_equal(got.coef, ref.coef)
