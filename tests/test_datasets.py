"""Property tests for `privrank.datasets`: malformed input is refused with ValueError (never
another exception,
never a partial read), valid random files round-trip, and the real shared datasets parse to their
documented counts."""

import csv
import gzip
import hashlib
import io
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privrank import core, datasets
from privrank.core import orders_to_ranks
from privrank.datasets import (
    DEFAULT_MAX_FILE_BYTES,
    JESTER_JOKES,
    Preferences,
    data_home,
    find_data_file,
    item_universe,
    load_demo,
    max_file_bytes,
    ratings_format,
    read_jester,
    read_movielens,
    read_pairwise_csv,
    read_preflib,
    read_ratings,
    set_max_file_bytes,
    shared_data_dir,
)

# malformed-input fuzzers get N examples each, round trips N // 2 (about 10 s in all); raise N
# for a longer hunt
N = int(os.environ.get("PRIVRANK_FUZZ_EXAMPLES", "60"))
FUZZ = settings(deadline=None, max_examples=N)
ROUND_TRIP = settings(deadline=None, max_examples=max(N // 2, 10))
NAME_CHARS = st.sampled_from("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 -()_.é寿")


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("datasets")


def write(folder, name, data):
    "Write str (UTF-8) or bytes to folder/name; return the path."
    p = folder / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return p


def data_rows(text):
    """Non-blank records of a ratings or comparisons text: CSV records after a CSV header (the
    csv module's count: a quoted field may span lines), else non-blank lines (u.data)"""
    first = text.split("\n", 1)[0].removesuffix("\r")
    header = datasets._ratings_header(first) is not None or (
        "winner" in first.lower() and "loser" in first.lower()
    )
    if not header:
        return len([l for l in text.split("\n") if l.strip()])
    recs = list(csv.reader(io.StringIO(text, newline="")))[1:]
    return len([r for r in recs if r and (len(r) > 1 or r[0].strip())])


def read_or_refuse(reader, path):
    "The reader's result, or None if it raised ValueError; any other exception fails the test."
    try:
        return reader(path)
    except ValueError as e:
        assert str(path) in str(e), f"the message does not name the file: {e}"
        return None


# ---------------------------------------------------------------- generating valid PrefLib files
@st.composite
def weak_order(draw, m, strict, complete):
    "Tiers (1-based items) of a random order over 1..m."
    perm = draw(st.permutations(range(1, m + 1)))
    items = perm if complete else perm[: draw(st.integers(1, m))]
    cuts = (
        [True] * (len(items) - 1)
        if strict
        else draw(st.lists(st.booleans(), min_size=len(items) - 1, max_size=len(items) - 1))
    )
    tiers = [[items[0]]]
    for q, cut in zip(items[1:], cuts):
        if cut:
            tiers.append([q])
        else:
            tiers[-1].append(q)
    return tiers


@st.composite
def preflib_data(draw, data_types=("soc", "soi", "toc", "toi")):
    "(data_type, m, orders as 1-based tiers, counts, names) of a random valid PrefLib file."
    data_type = draw(st.sampled_from(data_types))
    m = draw(st.integers(1, 9))
    strict, complete = data_type in ("soc", "soi"), data_type in ("soc", "toc")
    orders = draw(st.lists(weak_order(m, strict, complete), min_size=1, max_size=6))
    counts = draw(st.lists(st.integers(1, 5), min_size=len(orders), max_size=len(orders)))
    names = draw(
        st.lists(
            st.text(NAME_CHARS, min_size=1, max_size=8).map(str.strip).filter(bool),
            min_size=m,
            max_size=m,
        )
    )
    return data_type, m, orders, counts, names


def preflib_text(data_type, m, orders, counts, names, title="random"):
    "A PrefLib 2022 file holding the given data."
    fmt = lambda tiers: ",".join(
        str(t[0]) if len(t) == 1 else "{" + ",".join(map(str, t)) + "}" for t in tiers
    )
    head = [
        f"# FILE NAME: x.{data_type}",
        f"# TITLE: {title}",
        f"# DATA TYPE: {data_type}",
        f"# NUMBER ALTERNATIVES: {m}",
        f"# NUMBER VOTERS: {sum(counts)}",
        f"# NUMBER UNIQUE ORDERS: {len(orders)}",
    ]
    head += [f"# ALTERNATIVE NAME {k}: {name}" for k, name in enumerate(names, 1)]
    return "\n".join(head + [f"{c}: {fmt(o)}" for c, o in zip(counts, orders)]) + "\n"


def check_same(p: Preferences, data_type, m, orders, counts, names):
    assert (p.data_type, p.n_items, p.n_orders, p.n_voters) == (
        data_type,
        m,
        len(orders),
        sum(counts),
    )
    assert [[t.tolist() for t in o] for o in p.orders] == [
        [[q - 1 for q in t] for t in o] for o in orders
    ]
    assert (
        p.counts.tolist() == counts
        and list(p.item_names) == names
        and p.item_ids.tolist() == list(range(1, m + 1))
    )


def expected_ranks(orders, counts, m):
    """Reference for to_ranks(tie_break='index'): tiers in order, sorted by index inside,
    unranked last by index."""
    rows = []
    for o, c in zip(orders, counts):
        seen = [q - 1 for t in o for q in sorted(t)]
        rows += [seen + sorted(set(range(m)) - set(seen))] * c
    return orders_to_ranks(np.array(rows))


@ROUND_TRIP
@given(preflib_data(), st.sampled_from(["plain", "gz-suffix", "gz-magic"]))
def test_preflib_round_trip(tmp, data, how):
    data_type, m, orders, counts, names = data
    text = preflib_text(*data)
    if how == "plain":
        path = write(tmp, f"rt.{data_type}", text)
    elif how == "gz-suffix":
        path = write(tmp, f"rt.{data_type}.gz", gzip.compress(text.encode()))
    else:
        path = write(tmp, f"rt-gz.{data_type}", gzip.compress(text.encode()))
    p = read_preflib(path)
    check_same(p, *data)
    assert p.is_complete_strict == all(len(o) == m for o in orders)
    ref = expected_ranks(orders, counts, m)
    np.testing.assert_array_equal(p.to_ranks(), ref)
    if p.is_complete_strict:
        np.testing.assert_array_equal(p.ranks, ref)
    else:
        with pytest.raises(ValueError, match="to_ranks"):
            p.ranks
    # random tie breaking keeps every tier in place: sorting a voter's items by rank gives
    # non-decreasing tier levels
    rr = p.to_ranks(tie_break="random", rng=0)
    level = np.full((len(ref), m), 99)
    row = 0
    for o, c in zip(orders, counts):
        for lv, t in enumerate(o):
            level[row : row + c, np.array(t) - 1] = lv
        row += c
    assert (np.diff(np.take_along_axis(level, np.argsort(rr, axis=1), axis=1), axis=1) >= 0).all()


# ---------------------------------------------------------------- malformed PrefLib input
@FUZZ
@given(
    st.binary(max_size=400),
    st.sampled_from(["soc", "soi", "toc", "toi", "soc.gz", "txt"]),
    st.booleans(),
)
def test_preflib_random_bytes(tmp, data, suffix, zipped):
    path = write(tmp, f"junk.{suffix}", gzip.compress(data) if zipped else data)
    p = read_or_refuse(read_preflib, path)
    if p is not None:
        assert p.n_voters >= 1 and p.counts.min() >= 1  # (practically never reached)


@FUZZ
@given(preflib_data(), st.lists(st.text(max_size=30), min_size=1, max_size=4))
def test_preflib_random_data_lines(tmp, data, junk):
    "A valid header followed by random text lines: refused, or read completely and consistently."
    text = preflib_text(*data)
    header = "".join(l + "\n" for l in text.splitlines() if l.startswith("#"))
    path = write(tmp, f"junk.{data[0]}", header + "\n".join(junk) + "\n")
    p = read_or_refuse(read_preflib, path)
    if p is not None:
        assert p.n_voters == sum(data[3]) and p.n_orders == len(data[2])


def data_lines(text):
    return [l for l in text.split("\n") if l.strip() and not l.startswith("#")]


@FUZZ
@given(preflib_data(("soc",)), st.data())
def test_preflib_line_edits(tmp, data, draw):
    """Random edits of a valid .soc: some must be refused; any other result must be a
    complete, consistent read."""
    text = preflib_text(*data)
    lines = text.split("\n")[:-1]
    first_data = next(i for i, l in enumerate(lines) if not l.startswith("#"))
    op = draw.draw(
        st.sampled_from(
            [
                "delete",
                "duplicate",
                "truncate",
                "replace-line",
                "insert-line",
                "edit-char",
                "swap-items",
            ]
        )
    )
    must_fail = op in ("delete", "duplicate", "truncate", "swap-items")
    if op == "delete":
        del lines[draw.draw(st.integers(first_data, len(lines) - 1))]
        edited = "\n".join(lines) + "\n"
    elif op == "duplicate":
        i = draw.draw(st.integers(first_data, len(lines) - 1))
        lines.insert(i, lines[i])
        edited = "\n".join(lines) + "\n"
    elif op == "truncate":
        edited = text[: draw.draw(st.integers(0, len(text.rstrip()) - 1))]
    elif op == "replace-line":
        lines[draw.draw(st.integers(0, len(lines) - 1))] = draw.draw(
            st.text(max_size=30).filter(lambda s: "\n" not in s)
        )
        edited = "\n".join(lines) + "\n"
    elif op == "insert-line":
        lines.insert(
            draw.draw(st.integers(0, len(lines))),
            draw.draw(st.text(max_size=30).filter(lambda s: "\n" not in s)),
        )
        edited = "\n".join(lines) + "\n"
    elif op == "edit-char":
        i = draw.draw(st.integers(0, len(text) - 1))
        edited = text[:i] + draw.draw(st.characters()) + text[i + 1 :]
    else:  # make one item appear twice in an order: always invalid for soc
        m = data[1]
        if m < 2:
            return
        i = draw.draw(st.integers(first_data, len(lines) - 1))
        count, body = lines[i].split(": ")
        items = body.split(",")
        items[1] = items[0]
        lines[i] = f"{count}: {','.join(items)}"
        edited = "\n".join(lines) + "\n"
    path = write(tmp, "edit.soc", edited.encode("utf-8", "surrogatepass"))
    p = read_or_refuse(read_preflib, path)
    if must_fail:
        assert p is None, f"{op}: accepted {edited!r}"
    if p is not None:  # accepted: it must be all of the file, as the header describes it
        declared = int(re.search(r"^#\s*NUMBER VOTERS\s*:\s*([0-9]+)", edited, re.M | re.I)[1])
        assert p.n_voters == declared and p.n_orders == len(data_lines(edited))
        assert p.is_complete_strict and p.ranks.shape == (declared, p.n_items)


@pytest.mark.parametrize(
    "edit, msg",
    [
        (
            lambda t: t.replace("# NUMBER VOTERS", "# NUMBER OF VOTERS"),
            "no '# NUMBER VOTERS: ...' header line",
        ),
        (
            lambda t: t.replace("# DATA TYPE: soc", "# DATA TYPE: toi"),
            "contradicts the file suffix '.soc'",
        ),
        (lambda t: t.rstrip("\n").rsplit("\n", 1)[0] + "\n", "is the file truncated or edited?"),
        (lambda t: t + "1: 1,2\n", "a 'soc' order must rank all 3 alternatives; this one ranks 2"),
        (lambda t: t.encode("utf-16"), "is not valid UTF-8"),
    ],
)
def test_preflib_messages(tmp, edit, msg):
    text = preflib_text("soc", 3, [[[1], [2], [3]], [[3], [2], [1]]], [2, 1], ["a", "b", "c"])
    out = edit(text)
    path = write(tmp, "msg.soc", out)
    with pytest.raises(ValueError) as e:
        read_preflib(path)
    assert str(path) in str(e.value) and msg in str(e.value)


# ---------------------------------------------------------------- pairwise CSV
labels = st.one_of(
    st.integers(-5, 30).map(str), st.sampled_from(["ann", "bob", "cy", "dee", "x1", "Z"])
)


@st.composite
def comparisons(draw):
    rows = draw(
        st.lists(
            st.tuples(labels, labels, labels, st.booleans()).filter(lambda r: r[1] != r[2]),
            min_size=1,
            max_size=20,
        )
    )
    return rows, draw(st.booleans())


def pairwise_text(rows, with_tie):
    head = "user,winner,loser,tie" if with_tie else "user,winner,loser"
    return (
        "\n".join(
            [head]
            + [f"{u},{w},{l},{int(t)}" if with_tie else f"{u},{w},{l}" for u, w, l, t in rows]
        )
        + "\n"
    )


@ROUND_TRIP
@given(comparisons())
def test_pairwise_round_trip(tmp, data):
    rows, with_tie = data
    c = read_pairwise_csv(write(tmp, "pw.csv", pairwise_text(rows, with_tie)))
    assert c.n_comparisons == len(rows)
    assert [str(x) for x in c.user_ids[c.user]] == [r[0] for r in rows]
    got = [(str(c.item_ids[w]), str(c.item_ids[l])) for w, l in zip(c.winner, c.loser)]
    assert got == [(r[1], r[2]) for r in rows]
    assert c.tie.tolist() == ([r[3] for r in rows] if with_tie else [False] * len(rows))
    assert (c.winner != c.loser).all() and list(c.item_ids) == sorted(c.item_ids)


@FUZZ
@given(comparisons(), st.data())
def test_pairwise_wrong_column_count(tmp, data, draw):
    "One line with a field too many or too few: refused, naming that line."
    rows, with_tie = data
    lines = pairwise_text(rows, with_tie).split("\n")
    i = draw.draw(st.integers(1, len(rows)))
    lines[i] = lines[i] + ",9" if draw.draw(st.booleans()) else lines[i].rsplit(",", 1)[0]
    path = write(tmp, "pwbad.csv", "\n".join(lines))
    with pytest.raises(ValueError, match=f"line {i + 1}: expected {3 + with_tie} fields"):
        read_pairwise_csv(path)


@FUZZ
@given(st.binary(max_size=300), st.booleans())
def test_csv_readers_random_bytes(tmp, data, with_header):
    """Random bytes (optionally after a valid header) never crash a reader with anything but
    ValueError."""
    for reader, head in [
        (read_pairwise_csv, b"user,winner,loser,tie\n"),
        (read_jester, b"user,joke,rating\n"),
        (read_movielens, b"userId,movieId,rating,timestamp\n"),
        (read_movielens, b""),
    ]:
        content = (head if with_header else b"") + data
        path = write(tmp, "junk.csv", content)
        r = read_or_refuse(reader, path)
        if r is not None:
            n = r.n_comparisons if reader is read_pairwise_csv else r.n_ratings
            assert n == data_rows(content.decode("utf-8-sig"))  # never a partial read


# ---------------------------------------------------------------- ratings
@st.composite
def ratings(draw, lo, hi, step):
    users = draw(st.lists(st.integers(1, 60), min_size=1, max_size=8, unique=True))
    items = draw(st.lists(st.integers(1, 60), min_size=1, max_size=8, unique=True))
    cells = draw(
        st.lists(
            st.tuples(st.sampled_from(users), st.sampled_from(items)),
            min_size=1,
            max_size=30,
            unique=True,
        )
    )
    values = draw(
        st.lists(
            st.integers(int(lo / step), int(hi / step)), min_size=len(cells), max_size=len(cells)
        )
    )
    return [(u, i, v * step) for (u, i), v in zip(cells, values)]


def dense(r):
    "{(user id, item id): rating} from a Ratings result."
    coo = r.ratings.tocoo()
    return {
        (int(r.user_ids[u]), int(r.item_ids[i])): float(v)
        for u, i, v in zip(coo.row, coo.col, coo.data)
    }


@ROUND_TRIP
@given(ratings(0.5, 5, 0.5), st.sampled_from(["u.data", "ratings.dat", "ratings.csv", "u.data.gz"]))
def test_movielens_round_trip(tmp, rows, layout):
    if layout.startswith("u.data"):
        text = "".join(f"{u}\t{i}\t{v:g}\t88125{k}\n" for k, (u, i, v) in enumerate(rows))
    elif layout == "ratings.dat":
        text = "".join(f"{u}::{i}::{v:g}::97830{k}\n" for k, (u, i, v) in enumerate(rows))
    else:
        text = "userId,movieId,rating,timestamp\n" + "".join(
            f"{u},{i},{v:g},9649{k}\n" for k, (u, i, v) in enumerate(rows)
        )
    path = write(tmp, layout, gzip.compress(text.encode()) if layout.endswith(".gz") else text)
    r = read_movielens(path)
    assert r.n_ratings == len(rows) and dense(r) == {(u, i): v for u, i, v in rows}
    assert r.ratings.shape == (len({u for u, _, _ in rows}), len({i for _, i, _ in rows}))


@ROUND_TRIP
@given(ratings(-10, 10, 0.01))
def test_jester_round_trip_keeps_zeros(tmp, rows):
    text = "user,joke,rating\n" + "".join(f"{u},{i},{v:.2f}\n" for u, i, v in rows)
    r = read_jester(write(tmp, "j.csv", text))
    assert r.n_ratings == len(rows)  # a rating of exactly 0 is an observation
    got, want = dense(r), {(u, i): round(v, 2) for u, i, v in rows}
    assert got.keys() == want.keys() and all(abs(got[k] - want[k]) < 1e-9 for k in got)


@FUZZ
@given(ratings(0.5, 5, 0.5), st.data())
def test_ratings_malformed_lines(tmp, rows, draw):
    """A bad line in a rating file: refused with its line number (wrong field count, bad
    number, duplicate, range)."""
    lines = [f"{u}\t{i}\t{v:g}\t88125" for u, i, v in rows]
    k = draw.draw(st.integers(0, len(lines) - 1))
    op = draw.draw(st.sampled_from(["extra", "missing", "word", "duplicate", "range", "nan"]))
    u, i, v = rows[k]
    lines[k] = {
        "extra": lines[k] + "\t1",
        "missing": f"{u}\t{i}\t{v:g}",
        "word": f"{u}\tmovie\t{v:g}\t1",
        "duplicate": lines[0] if k else lines[k],
        "range": f"{u}\t{i}\t7\t1",
        "nan": f"{u}\t{i}\tnan\t1",
    }[op]
    if op == "duplicate" and k == 0:
        lines.append(lines[0])
        k = len(lines) - 1
    path = write(tmp, "bad.data", "\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=f"line {k + 1}:"):
        read_movielens(path)


@FUZZ
@given(st.data())
def test_ratings_random_char_edits(tmp, draw):
    "Random character edits of a valid Jester file: refused, or every data line read."
    rows = draw.draw(ratings(-10, 10, 0.01))
    text = "user,joke,rating\n" + "".join(f"{u},{i},{v:.2f}\n" for u, i, v in rows)
    i = draw.draw(st.integers(0, len(text) - 1))
    edited = text[:i] + draw.draw(st.characters()) + text[i + 1 :]
    path = write(tmp, "jedit.csv", edited.encode("utf-8", "surrogatepass"))
    r = read_or_refuse(read_jester, path)
    if r is not None:
        assert r.n_ratings == data_rows(edited)


# ---------------------------------------------------------------- files, folders, demo
@pytest.mark.parametrize("reader", [read_preflib, read_pairwise_csv, read_movielens, read_jester])
def test_missing_file(tmp, reader):
    with pytest.raises(FileNotFoundError):
        reader(tmp / "no-such-file.soc")


def test_data_home(tmp, monkeypatch):
    monkeypatch.delenv("PRIVRANK_DATA", raising=False)
    assert data_home() == Path.home() / "privrank_data"
    monkeypatch.setenv("PRIVRANK_DATA", str(tmp))
    assert data_home() == tmp and data_home(tmp / "x") == tmp / "x"
    write(tmp, "here.soc", "x")
    assert find_data_file("here.soc") == tmp / "here.soc"
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp / "sushi.soc"))):
        find_data_file("sushi.soc")
    with pytest.raises(FileNotFoundError, match="PRIVRANK_DATA"):
        find_data_file("sushi.soc", data_home=tmp / "empty")
    with pytest.raises(TypeError, match="`data_home`"):
        data_home(1.5)


def test_load_demo_and_bundled_file():
    p = load_demo()
    assert (p.n_voters, p.n_items, p.n_orders, p.data_type) == (146, 9, 123, "soc")
    assert p.ranks.shape == (146, 9) and (np.sort(p.ranks, axis=1) == np.arange(9)).all()
    import privrank

    folder = Path(privrank.__file__).parent / "data"
    digest = hashlib.sha256((folder / "agh2003.soc").read_bytes()).hexdigest()
    assert (
        digest in (folder / "README.md").read_text()
        and "Mattei" in (folder / "README.md").read_text()
    )


def test_shared_data_dir_env(tmp, monkeypatch):
    monkeypatch.setenv("PRIVRANK_SHARED_DATA", str(tmp))
    assert shared_data_dir() == tmp
    monkeypatch.setenv("PRIVRANK_SHARED_DATA", str(tmp / "absent"))
    assert shared_data_dir() is None


# ---------------------------------------------------------------- real data (shared folder;
# skipped if absent)
def shared(sub):
    d = shared_data_dir()
    if d is None or not (d / sub).exists():
        pytest.skip(
            f"shared data {sub} not found: set $PRIVRANK_SHARED_DATA to the shared data "
            "folder (../shared/data from the repo root)"
        )
    return d / sub


def test_sushi_counts():
    soc = read_preflib(shared("preflib-sushi/00014-00000001.soc.gz"))
    assert (soc.n_voters, soc.n_items, soc.n_orders, soc.is_complete_strict) == (
        5000,
        10,
        4926,
        True,
    )
    soi = read_preflib(shared("preflib-sushi/00014-00000002.soi.gz"))
    assert (soi.n_voters, soi.n_items, soi.n_orders) == (5000, 100, 5000) and {
        len(o) for o in soi.orders
    } == {10}
    toi = read_preflib(shared("preflib-sushi/00014-00000003.toi.gz"))
    assert (toi.n_voters, toi.n_items, toi.n_orders) == (5000, 100, 5000) and {
        sum(map(len, o)) for o in toi.orders
    } == {10}
    assert toi.to_ranks(tie_break="random", rng=1).shape == (5000, 100)


def test_elections_counts():
    for name, want in {
        "00009-00000001.soc": (146, 9, 123),
        "00009-00000002.soc": (153, 7, 70),
        "00012-00000001.soc": (30, 11, 30),
    }.items():
        p = read_preflib(shared(f"preflib-elections/{name}"))
        assert (p.n_voters, p.n_items, p.n_orders) == want


def test_movielens_counts():
    r = read_movielens(shared("movielens-100k/u.data.gz"))
    assert (r.n_ratings, r.n_users, r.n_items) == (100_000, 943, 1682)
    assert np.bincount(r.ratings.data.astype(int))[1:].tolist() == [
        6110,
        11370,
        27145,
        34174,
        21201,
    ]


def test_jester_counts():
    r = read_jester(shared("jester5k/jester5k_ratings.csv.gz"))
    assert (r.n_ratings, r.n_users, r.n_items, int((r.ratings.data == 0).sum())) == (
        363_209,
        5000,
        100,
        1025,
    )


# ---------------------------------------------------------------- issue 11: caps, special
# files, memory, labels, universe


READERS = [read_preflib, read_pairwise_csv, read_movielens, read_jester, read_ratings]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__)
def test_symlink_to_endless_device_refused(tmp, reader):
    link = tmp / f"zero-{reader.__name__}.soc"
    if not link.exists():
        link.symlink_to("/dev/zero")
    with pytest.raises(
        ValueError,
        match=r"is a character device, reached through a symbolic link, not a regular file",
    ):
        reader(link)
    with pytest.raises(ValueError, match="is more than 4,096 bytes"):
        reader(link, allow_special=True, max_bytes=4096)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__)
def test_fifo_refused_without_blocking(tmp, reader):
    fifo = tmp / f"pipe-{reader.__name__}"
    if not fifo.exists():
        os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"is a FIFO \(named pipe\), not a regular file"):
        reader(fifo)  # no writer: must not block


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__)
def test_folder_refused(tmp, reader):
    with pytest.raises(IsADirectoryError, match="is a folder, not a data file"):
        reader(tmp)


def test_size_cap_plain_and_gzip(tmp, monkeypatch):
    text = preflib_text("soc", 3, [[[1], [2], [3]]], [1], ["a", "b", "c"])
    f = write(tmp, "cap.soc", text)
    assert read_preflib(f, max_bytes=len(text.encode())).n_voters == 1
    with pytest.raises(
        ValueError, match=rf"cap.soc: is more than {len(text.encode()) - 1:,} bytes"
    ):
        read_preflib(f, max_bytes=len(text.encode()) - 1)
    bomb = write(
        tmp, "bomb.csv.gz", gzip.compress(b"user,winner,loser\n" + b"1,a,b\n" * 2_000_000)
    )  # 12 MB in ~25 KB
    assert bomb.stat().st_size < 100_000
    with pytest.raises(ValueError, match="bomb.csv.gz: decompresses to more than 1,000,000 bytes"):
        read_pairwise_csv(bomb, max_bytes=1_000_000)
    monkeypatch.setenv("PRIVRANK_MAX_FILE_BYTES", "1K")
    assert max_file_bytes() == 1024
    with pytest.raises(ValueError, match="bomb.csv.gz: is more than 1,024 bytes"):
        read_pairwise_csv(bomb)  # on disk already
    monkeypatch.setenv("PRIVRANK_MAX_FILE_BYTES", "100K")
    with pytest.raises(ValueError, match="decompresses to more than 102,400 bytes"):
        read_pairwise_csv(bomb)
    monkeypatch.setenv("PRIVRANK_MAX_FILE_BYTES", "lots")
    with pytest.raises(
        ValueError, match="PRIVRANK_MAX_FILE_BYTES must be a positive number of bytes"
    ):
        read_preflib(f)
    monkeypatch.delenv("PRIVRANK_MAX_FILE_BYTES")
    try:
        set_max_file_bytes(10)
        with pytest.raises(ValueError, match="is more than 10 bytes"):
            read_preflib(f)
    finally:
        set_max_file_bytes(None)
    assert max_file_bytes() == DEFAULT_MAX_FILE_BYTES == 1 << 30


def test_parse_memory_checked_before_reading(tmp):
    f = write(tmp, "mem.csv", "user,winner,loser\n" + "1,a,b\n" * 1000)
    try:
        core.set_memory_limit(10_000)
        with pytest.raises(ValueError, match=r"mem.csv: `path`: parsing 6,018 bytes of text"):
            read_pairwise_csv(f)
    finally:
        core.set_memory_limit(None)


def test_wide_field_table_checked(tmp):
    """One absurdly wide field would make the fixed-width table of all fields of a u.data file
    huge: refused, naming its line"""
    f = write(tmp, "u.data", "1\t2\t3\t4\n" * 2000 + "1\t" + "9" * 20_000 + "\t3\t4\n")
    try:
        core.set_memory_limit(100 << 20)
        with pytest.raises(
            ValueError,
            match=r"u.data line 2001: `path`: a table of 8,004 fields as wide as the "
            r"widest \(20,000",
        ):
            read_movielens(f)
    finally:
        core.set_memory_limit(None)


def test_wide_csv_label_costs_its_length_only(tmp):
    """A CSV's labels are coded as they are read: one 20,000-character label costs its own
    length, not 20,000 x 4 bytes per field; a field beyond the csv module's default limit of
    128 KiB is read too (issue 29), and the limit of the process is left as it was"""
    f = write(
        tmp, "wide.csv", "user,winner,loser\n" + "1,a,b\n" * 2000 + "1," + "x" * 20_000 + ",b\n"
    )
    try:
        core.set_memory_limit(2 << 20)
        c = read_pairwise_csv(f)
    finally:
        core.set_memory_limit(None)
    assert (c.n_comparisons, c.n_items, len(c.item_ids[-1])) == (2001, 3, 20_000)
    limit = csv.field_size_limit()
    f = write(tmp, "wider.csv", "user,winner,loser\n1,a,b\n1," + "x" * 200_000 + ",b\n")
    assert sorted(map(len, read_pairwise_csv(f).item_ids)) == [1, 1, 200_000]
    name = '"' + "a,\n" * (70 << 10) + '"'  # 210 KiB quoted: commas and line breaks inside
    f = write(tmp, "quoted.csv", "winner,loser,user\n" + f"{name},b,1\nb,c,2\n")
    assert sorted(map(len, read_pairwise_csv(f).item_ids)) == [1, 1, 3 * (70 << 10)]
    f = write(tmp, "r.csv", "user,item,rating\n1,2,3\n" + '"' + "1" * 200_000 + '",2,3\n')
    with pytest.raises(ValueError, match=r"r.csv line 3: `user` must be an integer; got '1{80}'$"):
        read_ratings(f, n_items=5)  # a long field is shown by its first 80 characters
    assert csv.field_size_limit() == limit


def test_expansion_memory_estimated_before_allocating(tmp):
    """4 lines declaring 400,000,000 voters: reading is cheap, expanding is refused with the
    line and the estimate"""
    f = write(
        tmp,
        "bomb.soc",
        "# DATA TYPE: soc\n# NUMBER ALTERNATIVES: 2\n# NUMBER VOTERS: 400000000\n400000000: 1,2\n",
    )
    p = read_preflib(f)
    assert p.expanded_bytes() == 24 * 400_000_000 * 2
    for expand in (
        lambda: p.ranks,
        lambda: p.to_ranks(),
        lambda: p.to_ranks(tie_break="random", rng=0),
    ):
        with pytest.raises(
            ValueError,
            match=r"bomb.soc line 4 \(400,000,000 voters on this line\): `orders`: "
            r"expanding the orders to ranks "
            r"\(400,000,000 voters x 2 items\) would need about (17.9|23.8) GiB",
        ):
            expand()
    # the budget is the settable core.memory_limit(): a small one refuses a small file,
    # raising it lets it through
    try:
        small = read_preflib(
            write(
                tmp,
                "many.soc",
                "# DATA TYPE: soc\n# NUMBER ALTERNATIVES: 2\n# NUMBER VOTERS: 3000\n3000: 1,2\n",
            )
        )
        core.set_memory_limit(24 * 3000 * 2 - 1)
        with pytest.raises(ValueError, match="many.soc line 4"):
            small.ranks
        core.set_memory_limit(24 * 3000 * 2)
        assert small.ranks.shape == (3000, 2)
    finally:
        core.set_memory_limit(None)


@ROUND_TRIP
@given(st.lists(st.tuples(labels, labels, labels).filter(lambda r: r[1] != r[2]), max_size=8))
def test_label_identity_does_not_depend_on_other_rows(tmp, others):
    "'01', '1', '+1' are different items and stay so whatever the other rows hold"
    text = "user,winner,loser\nu,01,1\nu,+1,1\n" + "".join(f"{a},{b},{c}\n" for a, b, c in others)
    c = read_pairwise_csv(write(tmp, "lab.csv", text))
    assert [(c.item_ids[c.winner[k]], c.item_ids[c.loser[k]]) for k in (0, 1)] == [
        ("01", "1"),
        ("+1", "1"),
    ]
    assert c.item_ids.dtype.kind == "U" and c.user_ids.dtype.kind == "U"


def test_labels_are_csv_fields(tmp):
    """A label is the field as the csv module reads it: enclosing quotes are syntax, spaces are
    part of the field (RFC 4180), so ' "C26" ' (not quoted: it starts with a space) keeps all"""
    c = read_pairwise_csv(write(tmp, "q.csv", 'user,winner,loser\n"u1","C26",C02\n'))
    assert (c.user_ids.tolist(), c.item_ids.tolist()) == (["u1"], ["C02", "C26"])
    c = read_pairwise_csv(write(tmp, "q.csv", 'user,winner,loser\n"u1", "C26" ,C02\n'))
    assert c.item_ids.tolist() == [' "C26" ', "C02"]
    with pytest.raises(ValueError, match=r"line 2: `winner` and `loser` are the same item"):
        read_pairwise_csv(write(tmp, "q2.csv", 'user,winner,loser\n1,"a",a\n'))
    with pytest.raises(ValueError, match="line 2: `winner` is an empty label"):
        read_pairwise_csv(write(tmp, "q3.csv", 'user,winner,loser\n1,"",a\n'))
    with pytest.raises(ValueError, match="line 2: `loser` is an empty label '  '"):
        read_pairwise_csv(write(tmp, "q3.csv", "user,winner,loser\n1,a,  \n"))


@ROUND_TRIP
@given(ratings(-10, 10, 0.01), st.integers(1, 80))
def test_item_universe_argument(tmp, rows, n_items):
    text = "user,joke,rating\n" + "".join(f"{u},{i},{v:.2f}\n" for u, i, v in rows)
    f = write(tmp, "ju.csv", text)
    if max(i for _, i, _ in rows) > n_items:
        with pytest.raises(
            ValueError, match=rf"item \d+ is outside the item universe 1..{n_items} \(`n_items`\)"
        ):
            read_jester(f, n_items=n_items)
        return
    r = read_jester(f, n_items=n_items)
    assert r.ratings.shape == (
        len({u for u, _, _ in rows}),
        n_items,
    ) and r.item_ids.tolist() == list(range(1, n_items + 1))
    assert {(int(r.user_ids[u]), j + 1) for u, j in zip(*r.ratings.nonzero())} <= {
        (u, i) for u, i, _ in rows
    }
    assert r.n_ratings == len(rows)
    assert (read_ratings(f, n_items=n_items).ratings != r.ratings).nnz == 0 and ratings_format(
        f
    ) == "jester"


def test_item_universe_from_movielens_catalogues(tmp):
    for name, content, want in [
        ("u.info", b"943 users\n1682 items\n100000 ratings\n", 1682),
        ("u.item", b"1|Toy Story (1995)|x\n2|Golden\xe9ye|x\n1682|Sliding Doors|x\n", 1682),
        ("movies.dat", b"1::Toy Story (1995)::Animation\n3952::Contender::Drama\n", 3952),
        ("movies.csv", b'movieId,title,genres\n1,"Toy Story, The",A\n209171,Z,B\n', 209171),
        ("movies.csv.gz", gzip.compress(b"movieId,title,genres\n7,A,B\n"), 7),
    ]:
        d = tmp / f"cat-{name}"
        d.mkdir(exist_ok=True)
        (d / "ratings").write_text("1\t1\t5\t1\n")
        assert item_universe(d / "ratings") is None
        (d / name).write_bytes(content)
        assert item_universe(d / "ratings") == want, name
    d = tmp / "cat-bad"
    d.mkdir(exist_ok=True)
    (d / "u.info").write_text("many items\n")
    with pytest.raises(ValueError, match="expected a line 'N items'"):
        item_universe(d / "ratings")


def test_jester_and_movielens_universe_real():
    jr = read_ratings(shared("jester5k/jester5k_ratings.csv.gz"), n_items=JESTER_JOKES)
    assert (jr.n_users, jr.n_items, jr.n_ratings) == (5000, 100, 363_209)
    ml = shared("movielens-100k/u.data.gz")
    assert item_universe(ml) == 1682 and ratings_format(ml) == "movielens"
    assert read_ratings(ml, n_items=1682).ratings.shape == (943, 1682)


# ---------------------------------------------------------------- every public function
# validates its arguments ...
BAD_CALLS = [
    (lambda p: read_preflib(p, max_bytes=math.nan), TypeError, "max_bytes"),
    (lambda p: read_preflib(p, max_bytes=0), ValueError, "max_bytes"),
    (lambda p: read_preflib(p, max_bytes="10"), TypeError, "max_bytes"),
    (lambda p: read_preflib(p, allow_special="yes"), TypeError, "allow_special"),
    (lambda p: read_pairwise_csv(p, max_bytes=1.5), TypeError, "max_bytes"),
    (lambda p: read_movielens(p, n_items=math.nan), TypeError, "n_items"),
    (lambda p: read_jester(p, n_items=0), ValueError, "n_items"),
    (lambda p: read_jester(p, n_items=True), TypeError, "n_items"),
    (lambda p: read_ratings(p, n_items="100"), TypeError, "n_items"),
    (lambda p: read_ratings(p, n_items=2**40), ValueError, "n_items"),
    (lambda p: read_preflib(b"/tmp/x"), TypeError, "path"),
    (lambda p: item_universe(3), TypeError, "path"),
    (lambda p: ratings_format(None), TypeError, "path"),
    (lambda p: set_max_file_bytes(math.nan), TypeError, "nbytes"),
    (lambda p: set_max_file_bytes(0), ValueError, "nbytes"),
    (lambda p: find_data_file(3), TypeError, "name"),
    (lambda p: data_home(3.5), TypeError, "data_home"),
    (lambda p: load_demo().to_ranks(tie_break=3), TypeError, "tie_break"),
    (lambda p: load_demo().to_ranks(tie_break="x"), ValueError, "tie_break"),
    (lambda p: load_demo().to_ranks(rng="x"), TypeError, "rng"),
    (lambda p: load_demo().expanded_bytes(math.nan), TypeError, "per_entry"),
    (
        lambda p: Preferences((([0, 1],),), np.array([0]), np.arange(1, 3), ("a", "b"), "soc"),
        ValueError,
        "counts",
    ),
    (
        lambda p: Preferences((([0, 1],),), np.array([1]), np.arange(1, 3), ("a", "b"), "xyz"),
        ValueError,
        "data_type",
    ),
    (
        lambda p: datasets.Comparisons(
            np.array([0]),
            np.array([0]),
            np.array([0]),
            np.array([False]),
            np.array(["u"]),
            np.array(["a", "b"]),
        ),
        ValueError,
        "winner",
    ),
    (
        lambda p: datasets.Comparisons(
            np.array([0]),
            np.array([0]),
            np.array([5]),
            np.array([False]),
            np.array(["u"]),
            np.array(["a", "b"]),
        ),
        ValueError,
        "winner",
    ),
    (lambda p: datasets.Ratings(np.ones((2, 2)), np.arange(2), np.arange(2)), TypeError, "ratings"),
    (
        lambda p: datasets.Ratings(
            __import__("scipy").sparse.csr_array(np.full((1, 2), np.nan)),
            np.arange(1),
            np.arange(2),
        ),
        ValueError,
        "ratings",
    ),
]


@pytest.mark.parametrize("k", range(len(BAD_CALLS)))
def test_public_functions_validate(tmp, k):
    call, exc, name = BAD_CALLS[k]
    p = write(tmp, "v.soc", preflib_text("soc", 2, [[[1], [2]]], [1], ["a", "b"]))
    with pytest.raises(exc, match=f"`{name}`"):
        call(p)


# ---------------------------------------------------------------- ... and modifies none of them
def test_preferences_methods_leave_the_data_alone():
    p = load_demo()
    counts, orders = p.counts.copy(), [[t.copy() for t in o] for o in p.orders]
    p.counts.flags.writeable = False
    for o in p.orders:
        for t in o:
            t.flags.writeable = False
    p.ranks
    p.to_ranks()
    p.to_ranks(tie_break="random", rng=0)
    p.expanded_bytes()
    assert (p.counts == counts).all() and all(
        (a == b).all() for o, oo in zip(p.orders, orders) for a, b in zip(o, oo)
    )


# ---------------------------------------------------------------- standard CSV (issue 13, item 1)
# names that need quoting: commas, quotes, line breaks (LF, CR), spaces at either end, UTF-8
CSV_CHARS = st.sampled_from("ab ,\"\n\r\t;é寿Z'-")
csv_names = st.text(CSV_CHARS, min_size=1, max_size=6).filter(lambda s: s.strip())


def csv_text(header, rows, lineterminator="\r\n"):
    """The text csv.writer writes for `header` and `rows`; with LF line ends every field is
    quoted (csv.writer quotes a lone CR only when the line terminator holds one)"""
    buf = io.StringIO()
    quoting = csv.QUOTE_MINIMAL if lineterminator == "\r\n" else csv.QUOTE_ALL
    w = csv.writer(buf, lineterminator=lineterminator, quoting=quoting)
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


@ROUND_TRIP
@given(
    st.lists(
        st.tuples(csv_names, csv_names, csv_names, st.booleans()).filter(lambda r: r[1] != r[2]),
        min_size=1,
        max_size=12,
    ),
    st.permutations(["user", "winner", "loser", "tie", "contest"]),
    st.sampled_from(["\r\n", "\n"]),
    st.booleans(),
    st.booleans(),
)
def test_csv_writer_round_trip(tmp, rows, order, eol, bom, gz):
    """Whatever csv.writer writes reads back equal: quoted names, "" escapes, line breaks inside
    quotes, CRLF or LF, a BOM, gzip; columns in any order, an extra column ignored when named"""
    table = [
        dict(user=u, winner=w, loser=l, tie=int(t), contest=k)
        for k, (u, w, l, t) in enumerate(rows)
    ]
    text = ("\ufeff" if bom else "") + csv_text(order, [[r[c] for c in order] for r in table], eol)
    data = gzip.compress(text.encode()) if gz else text.encode()
    c = read_pairwise_csv(write(tmp, "rt.csv.gz" if gz else "rt.csv", data), ignore=["Contest"])
    got = [
        (c.user_ids[u], c.item_ids[w], c.item_ids[l], t)
        for u, w, l, t in zip(c.user, c.winner, c.loser, c.tie)
    ]
    assert got == [(u, w, l, t) for u, w, l, t in rows]
    assert c.privacy_unit == "user" and list(c.item_ids) == sorted(set(c.item_ids))


@ROUND_TRIP
@given(
    st.lists(
        st.tuples(csv_names, csv_names).filter(lambda r: r[0] != r[1]), min_size=1, max_size=12
    )
)
def test_csv_without_user_column_is_one_unit_per_comparison(tmp, rows):
    c = read_pairwise_csv(write(tmp, "nu.csv", csv_text(["Winner", "LOSER"], rows)))
    assert c.privacy_unit == "comparison" and c.n_users == c.n_comparisons == len(rows)
    assert c.user.tolist() == list(range(len(rows)))
    assert [(c.item_ids[w], c.item_ids[l]) for w, l in zip(c.winner, c.loser)] == rows


@FUZZ
@given(
    st.lists(
        st.tuples(csv_names, csv_names, csv_names).filter(lambda r: r[1] != r[2]),
        min_size=1,
        max_size=10,
    ),
    st.data(),
)
def test_csv_errors_name_the_physical_line(tmp, rows, draw):
    """A bad row after quoted fields with line breaks: the error names the line it is on,
    counted as an editor counts lines (LF, CR or CRLF each end one)"""
    k = draw.draw(st.integers(0, len(rows)))
    head = ["user", "winner", "loser"]
    before = csv_text(head, rows[:k], "\n")
    after = csv_text(head, rows[k:], "\n").split("\n", 1)[1]
    line = 1 + len(re.findall(r"\r\n|\r|\n", before))
    with pytest.raises(ValueError, match=f"bad.csv line {line}: expected 3 fields"):
        read_pairwise_csv(write(tmp, "bad.csv", before + "only,two\n" + after))


NUMBER_TEXT = st.one_of(
    st.integers(-3, 12).map(str),
    st.sampled_from(["1.0", " 2", "3 ", "1e0", "+4", "0.5", "-0", "2.5", "7.25"]),
    st.sampled_from(["", "x", "nan", "inf", "1_0", "0x1", "1e400", "--1"]),
)


@FUZZ
@given(
    st.lists(
        st.tuples(NUMBER_TEXT, NUMBER_TEXT, NUMBER_TEXT, NUMBER_TEXT), min_size=1, max_size=12
    ),
    st.permutations(["user", "joke", "rating", "timestamp"]),
    st.sampled_from(["\n", "\r\n"]),
    st.lists(st.sampled_from(["", "  ", "1,2", "1,2,3,4,5"]), max_size=2),
    st.integers(0, 12),
    st.sampled_from([None, 12]),
)
def test_ratings_fast_path_equals_csv_module(tmp, rows, order, eol, extra, at, n_items):
    """A quote-free numeric CSV read by numpy's C parser gives exactly what the csv module path
    gives: the same ratings and ids, or the same error (blank lines, CRLF, spaces, bad numbers,
    reordered and extra columns, short and long rows)"""
    lines = [",".join(order)] + [",".join(r) for r in rows]
    for x in extra:
        lines.insert(1 + min(at, len(lines) - 1), x)
    text = eol.join(lines) + eol
    path = Path("t.csv")

    def outcome(fast):
        try:
            r = datasets._ratings_csv(path, text, n_items, -10, 10, fast=fast)
        except ValueError as e:
            return str(e)
        return r.user_ids.tolist(), r.item_ids.tolist(), r.ratings.toarray().tolist()

    assert outcome(True) == outcome(False)


@pytest.mark.parametrize("quoted", [False, True])
def test_ratings_csv_columns_by_name(tmp, quoted):
    "Header names in any order and case, extra columns refused unless named, quoted fields numbers"
    q = (lambda s: f'"{s}"') if quoted else str
    head = ",".join(q(h) for h in ["Rating", "title", "MovieId", "USERID"])
    text = (
        head
        + "\n"
        + "\n".join(
            ",".join(q(x) for x in row)
            for row in [(4.5, "Heat (1995)", 10, 7), (0.5, "x", 20, 7), (3, "", 10, 3)]
        )
    )
    with pytest.raises(ValueError, match="column 'title' is not read"):
        read_movielens(write(tmp, "ratings.csv", text))  # never silently ignored
    r = read_movielens(write(tmp, "ratings.csv", text), ignore=["Title"])
    assert (r.user_ids.tolist(), r.item_ids.tolist()) == ([3, 7], [10, 20])
    assert r.ratings.toarray().tolist() == [[3, 0], [4.5, 0.5]]
    assert ratings_format(write(tmp, "r.csv", text)) == "movielens"
    assert read_ratings(write(tmp, "r.csv", text), ignore=["title"]).ratings.nnz == 3
    j = write(tmp, "j.csv", '"joke",user,rating\r\n5,1,-9.5\r\n7,1,10\r\n')
    assert ratings_format(j) == "jester" and read_ratings(j).ratings.toarray().tolist() == [
        [-9.5, 10]
    ]
    with pytest.raises(ValueError, match=r"line 1: no `rating` column"):
        read_jester(write(tmp, "j2.csv", "user,joke\n1,2\n"))
    with pytest.raises(ValueError, match=r"line 3: `user` must be an integer; got 'ann'"):
        read_jester(write(tmp, "j3.csv", 'user,joke,rating\n1,2,3\n"ann",2,3\n'))


# ---------------------------------------------------------------- data frames (issue 13, item 4)
def frame_makers():
    "(name, dict of lists -> table) for every table library installed, and plain dicts"
    makers = [("dict", lambda d: {k: np.asarray(v, dtype=object) for k, v in d.items()})]
    try:
        import pandas

        makers.append(("pandas", pandas.DataFrame))
    except ImportError:
        pass
    try:
        import pyarrow

        makers.append(("pyarrow", pyarrow.table))
    except ImportError:
        pass
    try:
        import polars

        makers.append(("polars", polars.DataFrame))
    except ImportError:
        pass
    return makers


FRAMES = pytest.mark.parametrize(
    "make", [m for _, m in frame_makers()], ids=[n for n, _ in frame_makers()]
)


@FRAMES
def test_comparisons_from_frame(tmp, make):
    rows = [
        ("ann", "Smith, J.", 'the "A" team', 0),
        ("bob", "Zürich", "Smith, J.", 1),
        ("ann", "Zürich", 'the "A" team', 0),
    ]
    f = write(tmp, "fr.csv", csv_text(["user", "winner", "loser", "tie"], rows))
    want = read_pairwise_csv(f)
    d = dict(
        who=[r[0] for r in rows],
        w=[r[1] for r in rows],
        l=[r[2] for r in rows],
        t=[bool(r[3]) for r in rows],
    )
    c = datasets.Comparisons.from_frame(make(d), user="who", winner="w", loser="l", tie="t")
    for k in ("user", "winner", "loser", "tie", "user_ids", "item_ids"):
        assert getattr(c, k).tolist() == getattr(want, k).tolist(), k
    c = datasets.Comparisons.from_frame(make(dict(winner=[3, 1, 2], loser=[1, 2, 3])))
    assert c.privacy_unit == "comparison" and c.item_ids.tolist() == [1, 2, 3]
    assert c.item_ids.dtype.kind == "i" and (c.winner.tolist(), c.loser.tolist()) == (
        [2, 0, 1],
        [0, 1, 2],
    )


@FRAMES
def test_ratings_from_frame(make):
    d = dict(u=["b", "a", "b"], i=[20, 10, 10], r=[0.0, 2.5, -1.0])
    r = datasets.Ratings.from_frame(make(d), user="u", item="i", rating="r")
    assert (r.user_ids.tolist(), r.item_ids.tolist()) == (["a", "b"], [10, 20])
    assert r.ratings.toarray().tolist() == [[2.5, 0], [-1.0, 0.0]] and r.n_ratings == 3
    r = datasets.Ratings.from_frame(make(d), user="u", item="i", rating="r", n_items=25)
    assert r.ratings.shape == (2, 25) and r.ratings[1, 19] == 0 and r.n_ratings == 3
    with pytest.raises(
        ValueError, match=r"`df` row 2: user b rated item 20 again \(first on row 0\)"
    ):
        datasets.Ratings.from_frame(
            make(dict(u=["b", "a", "b"], i=[20, 10, 20], r=[1.0, 2, 3])),
            user="u",
            item="i",
            rating="r",
        )
    with pytest.raises(ValueError, match=r"column 'i' row 0: item 20 is not in the item universe"):
        datasets.Ratings.from_frame(make(d), user="u", item="i", rating="r", n_items=19)


@FRAMES
@pytest.mark.parametrize("column", ["winner", "loser", "user", "tie"])
def test_from_frame_refuses_missing_values(make, column):
    "None / NaN / pandas' NA / a null: refused, naming the column and the row"
    d = dict(
        user=["a", "b", "c"],
        winner=["x", "y", "z"],
        loser=["y", "z", "x"],
        tie=[False, True, False],
    )
    d[column] = d[column][:2] + [None]
    with pytest.raises(ValueError, match=f"column '{column}' row 2: missing"):
        datasets.Comparisons.from_frame(make(d), user="user", tie="tie")


def test_from_frame_refuses_what_it_cannot_read():
    C, R = datasets.Comparisons, datasets.Ratings
    with pytest.raises(TypeError, match="`df` must be a table with named columns"):
        C.from_frame("games.csv")
    with pytest.raises(ValueError, match=r"`df` has no column 'won' \(`winner`\); its columns"):
        C.from_frame(dict(w=[1], loser=[2]), winner="won")
    with pytest.raises(ValueError, match="one length > 0"):
        C.from_frame(dict(winner=[1, 2], loser=[2]))
    with pytest.raises(ValueError, match=r"`df` row 1: `winner` and `loser` are the same item 'a'"):
        C.from_frame(dict(winner=np.array(["b", "a"]), loser=np.array(["a", "a"])))
    with pytest.raises(TypeError, match="labels must be all strings or all integers"):
        C.from_frame(dict(winner=np.array(["b", 1], dtype=object), loser=np.array(["a", "c"])))
    with pytest.raises(TypeError, match="labels must be strings or integers; got 1.5"):
        C.from_frame(dict(winner=np.array([1.5, 2]), loser=np.array([2.0, 3])))
    with pytest.raises(ValueError, match="column 'tie' row 0: must be True/False or 0/1; got 2"):
        C.from_frame(dict(winner=[1], loser=[2], tie=[2]), tie="tie")
    with pytest.raises(
        ValueError, match=r"column 'rating' row 1: must be a finite number; got inf"
    ):
        R.from_frame(dict(user=[1, 2], item=[1, 1], rating=[1.0, np.inf]))
    with pytest.raises(ValueError, match="`n_items` must be >= 1"):
        R.from_frame(dict(user=[1], item=[1], rating=[1.0]), n_items=0)


def test_from_frame_of_read_csv_equals_the_reader(tmp):
    "pandas.read_csv of a file, then from_frame, gives what read_pairwise_csv gives"
    pandas = pytest.importorskip("pandas")
    rows = [(k % 3, f"Team {k % 5}, {'x' * (k % 2)}", f'"{k % 4}" the {k % 7}') for k in range(40)]
    rows = [r for r in rows if r[1] != r[2]]
    f = write(tmp, "g.csv", "\ufeff" + csv_text(["user", "winner", "loser"], rows))
    want = read_pairwise_csv(f)
    got = datasets.Comparisons.from_frame(
        pandas.read_csv(f, dtype=str, keep_default_na=False), user="user"
    )
    for k in ("user", "winner", "loser", "tie", "user_ids", "item_ids"):
        assert getattr(got, k).tolist() == getattr(want, k).tolist(), k


# ---------------------------------------------------------------- the chameleon contests
CHAMELEONS = "bradleyterry2-chameleons/chameleons_contests.csv.gz"


def test_chameleons_read_as_they_are():
    "R's write.csv output (quoted names, a contest column and six more, named as not read)"
    d = shared_data_dir()
    if d is None or not (d / CHAMELEONS).is_file():
        pytest.skip("no shared/data/bradleyterry2-chameleons (set $PRIVRANK_SHARED_DATA)")
    with pytest.raises(ValueError, match="column 'contest' is not read"):
        read_pairwise_csv(d / CHAMELEONS)  # never silently ignored
    extra = ["contest", "winner_prev.wins.1", "winner_prev.wins.2", "winner_prev.wins.all"]
    extra += ["loser_prev.wins.1", "loser_prev.wins.2", "loser_prev.wins.all"]
    c = read_pairwise_csv(d / CHAMELEONS, ignore=extra)
    assert (c.n_comparisons, c.n_items, c.privacy_unit, int(c.tie.sum())) == (
        106,
        35,
        "comparison",
        0,
    )
    assert all(s.startswith("C") and '"' not in s for s in c.item_ids)
    text = gzip.decompress((d / CHAMELEONS).read_bytes()).decode()
    recs = list(csv.reader(io.StringIO(text)))[1:]
    assert [(c.item_ids[w], c.item_ids[l]) for w, l in zip(c.winner, c.loser)] == [
        (r[1], r[2]) for r in recs
    ]
    pandas = pytest.importorskip("pandas")
    f = datasets.Comparisons.from_frame(pandas.read_csv(d / CHAMELEONS))
    for k in ("user", "winner", "loser", "tie", "user_ids", "item_ids"):
        assert getattr(f, k).tolist() == getattr(c, k).tolist(), k
