"""The offline docs site (`tools/build_docs.py`: Sphinx, myst-nb, pydata-sphinx-theme): build,
README sync, no CDN, and headless-Chromium checks: MathJax typeset the math, every image loaded,
search finds a term, every page has a contents list, no page shows a machine path or a warning,
source links stay in the site, figures share one width, long code scrolls instead of being cut off.

The browser tests drive Debian's `/usr/bin/chromium` through the Chrome DevTools Protocol over
`--remote-debugging-pipe` (stdlib only: no selenium, no playwright, no chromedriver whose version
must match). They skip when Chromium is missing (`apt-get install -y chromium`); set
PRIVRANK_CHROMIUM to use another binary.

Two sites are built into temporary folders with `--out`:
- `demo_site`: a small project made here (math with `$...$`, `$$...$$` and an escaped dollar, saved
  PNG outputs of two sizes, a long code line, an exported function with docments, hidden cells), so
  the checks always have something to check;
- `real_site`: the project's own `nbs/` (skipped while it holds no notebooks).
"""

import base64
import fcntl
import functools
import http.server
import io
import json
import os
import re
import select
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "tools" / "build_docs.py"
CHROMIUM = os.environ.get("PRIVRANK_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROME_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--mute-audio",
    "--hide-scrollbars",
    "--window-size=1400,1000",  # a desktop layout: both sidebars shown
]


def build(*args, cwd=ROOT, timeout=300):
    return subprocess.run(
        [sys.executable, str(BUILD), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# --------------------------------------------------------------------------------------------------
# A small nbdev project with notebooks that have saved outputs
def _png(w=3, h=2) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(w, h), dpi=50)
    ax.plot([1, 2, 3], [1, 4, 9])
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def make_project(root: Path, index_extra: str = "") -> Path:
    import nbformat
    from nbformat.v4 import new_code_cell as code
    from nbformat.v4 import new_markdown_cell as md
    from nbformat.v4 import new_notebook, new_output

    (root / "nbs").mkdir(parents=True)
    (root / "demo").mkdir()
    (root / "demo" / "__init__.py").write_text('__version__ = "0.0.1"\n')
    (root / "demo" / "core.py").write_text("def kendall(a, b, normalize=False): return 0\n")
    long_line = "x = " + " + ".join(f"value_{i}" for i in range(40))  # wider than any column
    (root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0.0.1"\ndescription = "demo"\n'
        "[tool.nbdev]\njupyter_hooks = false\ncustom_sidebar = false\n"
    )
    ks = {"name": "python3", "display_name": "Python 3", "language": "python"}
    png, wide = _png(), _png(9, 2)
    core = new_notebook(
        cells=[
            code("#| default_exp core"),
            md(
                "# Core pieces\n\n"
                "> Distances between rankings, with $\\varepsilon$ in the description"
            ),
            code("#| hide\nfrom nbdev.showdoc import *"),
            code("#| export\nimport math"),
            md(
                "The Kendall distance is "
                "$K(\\sigma,\\pi)=\\sum_{i<j} [\\sigma_i<\\sigma_j \\ne \\pi_i<\\pi_j]$, "
                "and a \\$5 bill is not math.\n\n"
                "$$p_\\varepsilon = \\frac{e^\\varepsilon}{1+e^\\varepsilon}$$"
            ),
            code(
                "#| export\ndef kendall(\n    a,  # first ranking\n    b,  # second ranking\n"
                "    normalize: bool = False,  # divide by the number of pairs\n) -> int:\n"
                '    "Kendall tau distance between rankings `a` and `b`, '
                'at most $\\\\binom{m}{2}$"\n    return 0'
            ),
            md("## Plots and long lines"),
            code("squares = [1, 4, 9]", outputs=[], execution_count=1),
            code(
                "fig, ax = plt.subplots()\nax.plot(squares)",
                execution_count=2,
                outputs=[
                    new_output(
                        "display_data",
                        data={"image/png": png, "text/plain": "<Figure size 150x100>"},
                    )
                ],
            ),
            code(
                '#| echo: false\nprint("only the output shows")',
                execution_count=3,
                outputs=[new_output("stream", name="stdout", text="only the output shows\n")],
            ),
            code('#| hide\nsecret = "hidden cell"'),
            code(
                long_line,
                execution_count=4,
                outputs=[new_output("stream", name="stdout", text=long_line)],
            ),
            code(
                "#| code-fold: false\nfig, ax = plt.subplots(1, 3)",
                execution_count=5,
                outputs=[new_output("display_data", data={"image/png": wide})],
            ),
        ]
    )
    index = new_notebook(
        cells=[
            code("#| hide\nfrom demo.core import *"),
            md("# demo\n\n> A demo of the offline docs"),
            md("## Install"),
            md(
                "Install with `pip install demo`; privacy loss $\\varepsilon \\ge 0$." + index_extra
            ),
            code(
                "1 + 1",
                execution_count=1,
                outputs=[new_output("execute_result", data={"text/plain": "2"}, execution_count=1)],
            ),
            code(
                "show()",
                execution_count=2,
                outputs=[new_output("display_data", data={"image/png": png})],
            ),
        ]
    )
    for nb in (core, index):
        nb.metadata.kernelspec = ks
    nbformat.write(core, root / "nbs" / "00_core.ipynb")
    nbformat.write(index, root / "nbs" / "index.ipynb")
    (root / "nbs" / "_hidden_draft.ipynb").write_text(
        nbformat.writes(new_notebook(cells=[md("# Draft")]))
    )
    return root


def _snapshot(d: Path):
    return {
        p.relative_to(d).as_posix(): (p.stat().st_mtime_ns, p.stat().st_size) for p in d.rglob("*")
    }


@pytest.fixture(scope="session")
def demo_project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("proj"))


@pytest.fixture(scope="session")
def demo_site(demo_project, tmp_path_factory):
    before = _snapshot(demo_project / "nbs")
    out = tmp_path_factory.mktemp("site") / "docs"
    t0 = time.perf_counter()
    r = build("--root", demo_project, "--out", out)
    if r.returncode:
        pytest.fail(f"building the demo site failed:\n{r.stderr[-4000:]}", pytrace=False)
    print(f"demo site built in {time.perf_counter() - t0:.1f}s: {r.stdout.strip()}")
    assert _snapshot(demo_project / "nbs") == before, "the build modified nbs/"
    assert not (demo_project / "_proc").exists() and not (demo_project / "nbs" / "_proc").exists()
    return out


def _real_notebooks():
    return [p for p in (ROOT / "nbs").glob("*.ipynb") if not p.name.startswith(("_", "."))]


@pytest.fixture(scope="session")
def real_site(tmp_path_factory):
    if not _real_notebooks():
        pytest.skip("nbs/ has no notebooks yet")
    before = _snapshot(ROOT / "nbs")
    out = tmp_path_factory.mktemp("realsite") / "docs"
    r = build("--out", out)
    if r.returncode:  # the end of stderr holds build_docs' message: notebook, cell and error
        pytest.fail(
            f"python tools/build_docs.py failed on nbs/:\n{r.stderr[-4000:]}", pytrace=False
        )
    assert _snapshot(ROOT / "nbs") == before, "the build modified nbs/"
    return out


# --------------------------------------------------------------------------------------------------
# Static checks (no browser)
def _pages(site: Path) -> list[Path]:
    "The notebook pages of a site (Sphinx adds search.html and genindex.html)"
    return [
        p for p in sorted(site.glob("*.html")) if p.name not in ("search.html", "genindex.html")
    ]


def test_pages_and_navigation(demo_site):
    names = sorted(p.name for p in _pages(demo_site))
    assert names == ["core.html", "index.html"]  # `_hidden_draft.ipynb` skipped
    assert (demo_site / "search.html").exists() and (demo_site / "searchindex.js").exists()
    idx, core = (demo_site / "index.html").read_text(), (demo_site / "core.html").read_text()
    for page in (idx, core):  # the sidebar lists the pages, by the notebooks' `# Title`
        nav = re.search(r'<nav class="bd-docs-nav[^"]*site-pages.*?</nav>', page, re.S).group(0)
        assert re.findall(r'href="([^"]+)"[^>]*>([^<]+)<', nav) in (
            [("core.html", "Core pieces")],
            [("#", "Core pieces")],
        )
    assert re.search(r'class="right-next"\s+href="core.html"', idx) and "left-prev" not in idx
    assert re.search(r'class="left-prev"\s+href="index.html"', core) and "right-next" not in core
    assert re.search(r"<h1>Core pieces", core)


def test_api_docs_and_hidden_cells(demo_site):
    core = (demo_site / "core.html").read_text()
    assert 'id="kendall"' in core, "show_doc output for the exported function is missing"
    assert "Kendall tau distance between rankings" in core and "normalize" in core
    # docments become a table of parameters, with the annotations as written
    table = re.search(r"<table.*?</table>", core[core.find('id="kendall"') :], re.S).group(0)
    for cell in ("Parameter", "Details", "first ranking", "divide by the number of pairs", "bool"):
        assert cell in table, cell
    assert "only the output shows" in core and "print(" not in core  # `echo: false`
    assert "hidden cell" not in core and "default_exp" not in core and "#|" not in core
    assert 'target="_blank"' not in core and "{target=" not in core
    assert re.search(r'<img [^>]*src="_images/[^"]+\.png"', core)
    # plotting code is folded, unless the cell says `code-fold: false`
    folded = re.findall(r'<details class="[^"]*hide above-input">.*?</details>', core, re.S)
    folded = [re.sub(r"<[^>]+>", "", f) for f in folded]  # highlighted code: text only
    assert len(folded) == 1 and "ax.plot(squares)" in folded[0], folded
    assert "plt.subplots(1, 3)" in re.sub(r"<[^>]+>", "", core)


def _no_remote_refs(site: Path):
    bad, math_pages = [], 0
    for page in sorted(site.glob("*.html")):
        s = page.read_text()
        for tag, attr, url in re.findall(
            r"<(script|link|img|iframe|source|embed|object)\b[^>]*?"
            r'\b(src|href|data)\s*=\s*["\']([^"\']*)',
            s,
            re.I,
        ):
            if re.match(r"\s*(https?:)?//", url, re.I):
                bad.append(f'{page.name}: <{tag} {attr}="{url}">')
        for url in re.findall(r'(?:@import|url\()\s*["\']?((?:https?:)?//[^"\')\s]+)', s, re.I):
            bad.append(f"{page.name}: {url}")
        for host in (
            "cdn.jsdelivr.net",
            "cdnjs.cloudflare.com",
            "unpkg.com",
            "fonts.googleapis.com",
            "cdn.mathjax.org",
            "requirejs",
            "polyfill.io",
        ):
            if host in s:
                bad.append(f"{page.name}: mentions {host}")
        if 'class="math' in s:
            math_pages += 1
            assert 'src="_static/mathjax/MathJax.js?config=' in s, (
                f"{page.name} does not load the local MathJax"
            )
    for css in site.rglob("*.css"):
        for url in re.findall(
            r'(?:@import|url\()\s*["\']?((?:https?:)?//[^"\')\s]+)', css.read_text(), re.I
        ):
            bad.append(f"{css.relative_to(site)}: {url}")
    assert not bad, "pages reference network resources:\n" + "\n".join(bad)
    assert math_pages, "no page has math"
    mj = site / "_static" / "mathjax"
    assert (mj / "MathJax.js").exists()
    assert (mj / "config" / "TeX-AMS-MML_HTMLorMML-full.js").exists()
    assert (mj / "jax" / "output" / "HTML-CSS" / "fonts" / "STIX-Web").is_dir()


def test_no_cdn_demo(demo_site):
    _no_remote_refs(demo_site)


def test_no_cdn_real(real_site):
    _no_remote_refs(real_site)


def test_source_links_real(real_site):
    "show_doc's source links lead to a highlighted copy of the module in the site, at its line"
    n = 0
    for page in _pages(real_site):
        s = page.read_text()
        assert "/blob/main/" not in s, f"{page.name} links to a repository host"
        for href in re.findall(r'<a class="source-link" href="([^"]+)"', s):
            n += 1
            assert not re.match(r"([a-z]+:|/)", href), (
                f"{page.name}: source link {href} not relative"
            )
            path, _, anchor = href.partition("#")
            target = real_site / path
            assert target.is_file(), f"{page.name}: source link {href} leads nowhere"
            assert f'id="{anchor}"' in target.read_text(), (
                f"{page.name}: no line {anchor} in {path}"
            )
    assert n > 0, "no source links at all"


def test_deterministic(demo_project, demo_site, tmp_path):
    out = tmp_path / "again"
    r = build("--root", demo_project, "--out", out, "--jobs", "0")
    assert r.returncode == 0, r.stderr
    a = {p.relative_to(demo_site): p.read_bytes() for p in demo_site.rglob("*") if p.is_file()}
    b = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert a.keys() == b.keys() and all(a[k] == b[k] for k in a), [
        str(k) for k in a if a[k] != b.get(k)
    ]


def test_failing_notebook_fails_the_build(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell as code
    from nbformat.v4 import new_markdown_cell as md
    from nbformat.v4 import new_notebook

    root = make_project(tmp_path / "p")
    nbformat.write(
        new_notebook(cells=[md("# Broken"), code('#| export\nraise ValueError("boom in export")')]),
        root / "nbs" / "01_broken.ipynb",
    )
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("old site")
    r = build("--root", root, "--out", out)
    assert r.returncode != 0
    assert "01_broken.ipynb" in r.stderr and "boom in export" in r.stderr, r.stderr
    assert (out / "keep.txt").exists(), "a failed build must leave the previous site alone"


def test_stderr_output_fails_the_build(tmp_path):
    "A notebook whose saved output went to stderr (a warning, a log line) is refused, by name"
    import nbformat
    from nbformat.v4 import new_code_cell as code
    from nbformat.v4 import new_markdown_cell as md
    from nbformat.v4 import new_notebook, new_output

    root = make_project(tmp_path / "p")
    err = new_output("stream", name="stderr", text="UserWarning: something\n")
    nbformat.write(
        new_notebook(cells=[md("# Noisy"), code("f()", execution_count=1, outputs=[err])]),
        root / "nbs" / "01_noisy.ipynb",
    )
    r = build("--root", root, "--out", tmp_path / "out")
    assert r.returncode != 0 and "01_noisy.ipynb" in r.stderr and "stderr" in r.stderr, r.stderr


def test_readme_sync(tmp_path):
    root = make_project(tmp_path / "p")
    assert build("--root", root, "--check-readme").returncode == 1  # no README yet
    r = build("--root", root, "--readme")
    assert r.returncode == 0, r.stderr
    text = (root / "README.md").read_text()
    assert text.startswith("# demo\n") and "> A demo of the offline docs" in text
    assert "from demo.core import" not in text  # hidden cell stays hidden
    assert "```python\n1 + 1\n```" in text and "$\\varepsilon \\ge 0$" in text
    imgs = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert imgs and all((root / i).is_file() for i in imgs), imgs
    r = build("--root", root, "--check-readme")
    assert r.returncode == 0, r.stderr
    nb = root / "nbs" / "index.ipynb"
    nb.write_text(nb.read_text().replace("A demo of the offline docs", "A changed description"))
    r = build("--root", root, "--check-readme")
    assert r.returncode == 1 and "README.md" in r.stderr


# --------------------------------------------------------------------------------------------------
# The API page (nbs/10_api.ipynb): `import privrank as pr` by task, each name linked to its page,
# with its docstring's first sentence, whole, pipes escaped (issue 30, item 7)
API_ROW = re.compile(r"^\| \[`pr\.(\w+)`\]\(([\w-]+)\.html#([\w-]+)\) \| (.*) \|$")


def _api_table():
    "The saved markdown of the API page's table: (task, name, page, anchor, description) rows"
    nb = json.loads((ROOT / "nbs" / "10_api.ipynb").read_text())
    md_ = [
        "".join(o["data"]["text/markdown"])
        for c in nb["cells"]
        if c["cell_type"] == "code"
        for o in c.get("outputs", [])
        if "text/markdown" in o.get("data", {})
    ]
    assert len(md_) == 1, "the API page has one table output"
    rows, task = [], None
    for line in md_[0].splitlines():
        if line.startswith("**"):
            task = line.strip("*")
        elif line.startswith("| [`pr."):
            m = API_ROW.match(line)
            assert m, f"a row that is not `| [pr.name](page.html#anchor) | description |`: {line}"
            rows.append((task, *m.groups()))
    return rows


def _page_of(module):
    "The docs page (notebook stem without its number) of the notebook that exports `module`"
    for nb in (ROOT / "nbs").glob("*.ipynb"):
        cells = json.loads(nb.read_text())["cells"]
        if any(re.match(rf"#\|\s*default_exp\s+{module}\s*$", "".join(c["source"])) for c in cells):
            return re.sub(r"^\d+[a-z]?_", "", nb.stem), nb
    raise AssertionError(f"no notebook exports {module}")


def _whole_first_sentence(desc, doc):
    "Why `desc` is not `doc`'s first sentence, whole and on one line (None if it is)"
    para = " ".join(doc.split("\n\n")[0].split())
    if not para.startswith(desc):
        return "not the start of the docstring (the saved page is stale?)"
    rest = para[len(desc) :]
    if rest and not (desc.endswith(".") and re.match(r"\s+[A-Z`(]", rest)):
        return f"cut mid-sentence before {rest[:40]!r}"
    for a, b in ("()", "[]"):
        if desc.count(a) != desc.count(b):
            return f"unbalanced {a}{b}"
    if desc.count("`") % 2:
        return "unbalanced backquotes"
    return None


def test_api_page_takes_whole_first_sentences_and_links_every_name():
    import inspect

    import privrank as pr

    rows = _api_table()
    entry = [
        n for n in pr.__all__ if not n.startswith("__") and not inspect.ismodule(getattr(pr, n))
    ]
    assert [r[1] for r in rows] == entry, "every entry point of pr, once, in pr.__all__'s order"
    tasks = [r[0] for r in rows]
    assert len(dict.fromkeys(tasks)) == 6 and tasks == sorted(tasks, key=tasks.index)
    for first, task in zip(("Aggregate", "Select", "Complete", "Read", "Account", "Audit"),
                           dict.fromkeys(tasks)):  # fmt: skip
        assert task.startswith(first), (first, task)
    bad = []
    for _, name, page, anchor, desc in rows:
        if re.search(r"(?<!\\)\|", desc):
            bad.append(f"{name}: an unescaped | in {desc!r}")
        why = _whole_first_sentence(desc.replace("\\|", "|"), inspect.getdoc(getattr(pr, name)))
        if why:
            bad.append(f"{name}: {why}: {desc!r}")
        module = getattr(pr, name).__module__.split(".")[-1]
        want, nb = _page_of(module)
        if page != want or anchor != name.lower():
            bad.append(f"{name}: links to {page}.html#{anchor}, not {want}.html#{name.lower()}")
        exported = any(  # show_doc, hence the anchor, comes with a `#| export` definition
            re.match(r"#\|\s*export\s*$", "".join(c["source"]).split("\n")[0])
            and re.search(rf"^(def|class) {name}\b", "".join(c["source"]), re.M)
            for c in json.loads(nb.read_text())["cells"]
            if c["cell_type"] == "code"
        )
        if not exported:
            bad.append(f"{name}: not defined in an `#| export` cell of {nb.name} (no docs entry)")
    assert not bad, "\n".join(bad)


def test_first_sentence_check_catches_cuts():
    doc = "Read a file (RFC 4180; e.g. a CSV). Then more.\n\nDetails."
    assert _whole_first_sentence("Read a file (RFC 4180; e.g. a CSV).", doc) is None
    assert _whole_first_sentence("Read a file (RFC 4180; e.g.", doc)  # cut at "e.g."
    assert _whole_first_sentence("Read a file (RFC 4180", doc)  # cut mid-sentence
    assert _whole_first_sentence("One line", "One line") is None  # a one-line docstring is whole


def test_api_page_links_resolve_real(real_site):
    "Every `pr.` name on the built API page links to an anchor that exists on its page"
    page = real_site / "api.html"
    assert page.is_file(), sorted(p.name for p in _pages(real_site))
    links = re.findall(r'<a class="reference external" href="([\w-]+\.html)#([\w-]+)"><code[^>]*>'
                       r'(?:<span class="pre">)?pr\.(\w+)', page.read_text())  # fmt: skip
    assert len(links) == len(_api_table()), (len(links), len(_api_table()))
    for target, anchor, name in links:
        assert (real_site / target).is_file(), f"{name}: {target} does not exist"
        assert f'id="{anchor}"' in (real_site / target).read_text(), f"{name}: no #{anchor}"


# --------------------------------------------------------------------------------------------------
# Headless Chromium over the DevTools protocol (pipe transport: fds 3 and 4 of the browser)
class Chromium:
    def __init__(self, exe=CHROMIUM, timeout=60):
        self.timeout, self.next_id, self.events = timeout, 0, []
        self.udd = tempfile.mkdtemp(prefix="privrank-chromium-")
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # move the child's ends above 10 so that the dup2 onto 3 and 4 cannot clobber them
        hi_r, hi_w = (
            fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10),
            fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10),
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)

        def child():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.log = open(os.path.join(self.udd, "chromium.log"), "wb")
        self.proc = subprocess.Popen(
            [
                exe,
                *CHROME_FLAGS,
                f"--user-data-dir={self.udd}/profile",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            close_fds=False,
            preexec_fn=child,
        )
        os.close(hi_r)
        os.close(hi_w)
        for fd in (self.to_chrome, self.from_chrome):
            os.set_inheritable(fd, False)
        self.buf = b""
        tid = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=tid, flatten=True)["sessionId"]
        for dom in ("Page", "Runtime", "Network"):
            self.send(f"{dom}.enable", session=True)

    def _read_msg(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_chrome], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.from_chrome, 1 << 16)
            if not chunk:
                self.log.flush()
                log = open(self.log.name, "rb").read().decode(errors="replace")[-2000:]
                raise RuntimeError(f"chromium exited ({self.proc.poll()}): {log}")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, session=False, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_msg(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def eval(self, expr, await_promise=True):
        r = self.send(
            "Runtime.evaluate",
            session=True,
            expression=expr,
            returnByValue=True,
            awaitPromise=await_promise,
            timeout=self.timeout * 1000,
        )
        if "exceptionDetails" in r:
            raise RuntimeError(f"JS error: {r['exceptionDetails']}")
        return r["result"].get("value")

    def goto(self, url):
        self.events.clear()
        self.send("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + self.timeout
        while self.eval("document.readyState") != "complete" or self.eval("location.href") != url:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            time.sleep(0.05)
        # MathJax 2: `isReady` once its startup (with the first typeset pass) is over; then wait for
        # its queue
        return self.eval("""new Promise(res => {
            const t0 = Date.now();
            const poll = () => {
                if (!window.MathJax || !MathJax.Hub) return res('no MathJax');
                if (MathJax.isReady) return MathJax.Hub.Queue(() => res('typeset'));
                if (Date.now() - t0 > 30000) return res('MathJax timeout');
                setTimeout(poll, 50);
            };
            poll();
        })""")

    def requests(self):
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        ]

    def failed(self):
        fail = {
            e["params"]["requestId"]: e["params"].get("errorText")
            for e in self.events
            if e.get("method") == "Network.loadingFailed"
        }
        urls = {
            e["params"]["requestId"]: e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        }
        # MathJax probes `about:blank` (its failure is expected and harmless)
        return [
            (urls.get(k, k), v) for k, v in fail.items() if not urls.get(k, "").startswith("about:")
        ]

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.to_chrome, self.from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()
        shutil.rmtree(self.udd, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"headless Chromium not found at {CHROMIUM} (apt-get install -y chromium)")
    b = Chromium()
    yield b
    b.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


@pytest.fixture(scope="module")
def serve():
    "Serve a folder on 127.0.0.1 (an ephemeral port); returns a function folder -> base URL"
    servers = []

    def start(folder):
        h = functools.partial(_Quiet, directory=str(folder))
        srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), h)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}/"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


CHECK_JS = r"""(() => {
  const main = document.querySelector('main');
  const art = document.querySelector('.bd-article') || main;
  const imgs = [...document.images].map(
    i => ({src: i.src.slice(0, 60), ok: i.complete && i.naturalWidth > 0}));
  const typeset = document.querySelectorAll(
    '.MathJax, .MathJax_Display, .MathJax_CHTML, mjx-container').length;
  const errors = document.querySelectorAll(
    '.MathJax_Error, .MathJax merror, [data-mjx-error]').length;
  const notText = 'script, code, pre, .MathJax, .MathJax_Display, .MathJax_Preview, '
    + '.MathJax_CHTML, mjx-container, .tex2jax_ignore';
  const tex = /\\\(|\\\[|\\(frac|sum|varepsilon|epsilon|sigma|mathbb|binom|ge|le|log)\b/;
  const raw = [];
  for (const el of main.querySelectorAll('p, li, td, th, h1, h2, h3, h4')) {
    const c = el.cloneNode(true);
    c.querySelectorAll(notText).forEach(n => n.remove());
    const t = c.textContent;
    if (/\$[^$]+\$/.test(t) || tex.test(t)) raw.push(t.slice(0, 200));
  }
  const jax = (window.MathJax && MathJax.Hub) ? MathJax.Hub.getAllJax().length : -1;
  // the contents list of the page (pydata-sphinx-theme's right sidebar), shown
  const tocNav = document.querySelector('#pst-page-toc-nav');
  const toc = tocNav && tocNav.getBoundingClientRect().width > 0
    ? tocNav.querySelectorAll('a[href^="#"]').length : 0;
  // what the page shows: no machine path anywhere, no warning or traceback in an output
  const text = art.textContent;
  const local = new RegExp('.{0,40}(/work/|/tmp/|/home/|/root/|site-packages|file://'
    + '|[A-Z]:\\\\Users\\\\).{0,40}', 'g');
  const paths = [...text.matchAll(local)].map(m => m[0]);
  const outs = [...art.querySelectorAll('.cell_output')].map(o => o.textContent).join('\n');
  const warning = /.{0,60}(\b\w*Warning\b|Traceback \(most recent call last\)|\bwarn\().{0,40}/g;
  const warns = [...outs.matchAll(warning)].map(m => m[0]);
  const stderr = art.querySelectorAll('.output.stderr, .stderr').length;
  // figures: one width for all; code: fits, scrolls or wraps, and never reaches past the article
  const figs = [...art.querySelectorAll('.cell_output img')].map(
    i => Math.round(i.getBoundingClientRect().width));
  const ar = art.getBoundingClientRect(), cut = [];
  for (const pre of art.querySelectorAll('pre')) {
    const r = pre.getBoundingClientRect();
    if (r.width === 0) continue;  // inside folded code
    const cs = getComputedStyle(pre);
    const fits = pre.scrollWidth <= pre.clientWidth + 1;
    const scrolls = ['auto', 'scroll'].includes(cs.overflowX);
    const wraps = /pre-wrap|break-spaces|pre-line/.test(cs.whiteSpace);
    if (!(fits || scrolls || wraps) || r.right > ar.right + 1)
      cut.push(pre.textContent.slice(0, 80));
  }
  return {imgs, typeset, errors, raw, jax, toc, paths, warns, stderr, figs, cut,
          text: main.innerText};
})()"""


def _check_page(browser, url, expect_math=True, expect_img=False):
    state = browser.goto(url)
    res = browser.eval(CHECK_JS, await_promise=False)
    origin = url.split("/", 3)[:3]
    remote = [
        u
        for u in browser.requests()
        if not (u.startswith(("data:", "about:")) or u.split("/", 3)[:3] == origin)
    ]
    assert not remote, f"{url} requested network resources: {remote}"
    assert not browser.failed(), f"{url}: failed loads {browser.failed()}"
    assert all(i["ok"] for i in res["imgs"]), f"{url}: images not loaded: {res['imgs']}"
    if expect_img:
        assert res["imgs"], f"{url}: no image on the page"
    if expect_math:
        assert state == "typeset", f"{url}: MathJax did not finish ({state})"
        assert res["jax"] > 0 and res["typeset"] > 0, f"{url}: no typeset math ({res['jax']} jax)"
    assert res["errors"] == 0, f"{url}: MathJax errors"
    assert not res["raw"], f"{url}: raw TeX left in the text: {res['raw']}"
    assert res["toc"] > 0, f"{url}: no contents list"
    assert not res["paths"], f"{url}: the page shows a machine path: {res['paths']}"
    assert not res["warns"] and not res["stderr"], f"{url}: warnings in outputs: {res['warns']}"
    assert not res["cut"], f"{url}: code cut off on the right: {res['cut']}"
    assert len(set(res["figs"])) <= 1, f"{url}: figures of different widths {res['figs']}"
    assert all(w >= 400 for w in res["figs"]), f"{url}: figures narrower than 400px {res['figs']}"
    return res


def _search(browser, base, term):
    "Titles of the pages that the site's own search lists for `term`"
    browser.goto(base + f"search.html?q={term}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        hits = browser.eval(
            "[...document.querySelectorAll('#search-results li a')].map(a => a.textContent)",
            await_promise=False,
        )
        if hits:
            return hits
        time.sleep(0.1)
    return []


@pytest.mark.browser
def test_browser_demo_site(browser, serve, demo_site):
    base = serve(demo_site)
    res = _check_page(browser, base + "core.html", expect_math=True, expect_img=True)
    assert res["jax"] >= 4  # description, inline, display, and the docstring's math
    assert "$5 bill" in res["text"]  # the escaped dollar is a dollar
    assert len(res["figs"]) == 2  # a small and a wide figure, at one width
    res = _check_page(browser, base + "index.html", expect_math=True, expect_img=True)
    assert any("Core pieces" in h for h in _search(browser, base, "Kendall"))
    # the same pages over file:// (a reader who opens _docs/index.html directly)
    _check_page(browser, (demo_site / "core.html").as_uri(), expect_math=True, expect_img=True)


@pytest.mark.browser
def test_browser_real_site(browser, serve, real_site):
    "Every page of the project's site, then its search"
    base = serve(real_site)
    widths = {}
    for page in _pages(real_site):
        body = page.read_text()
        res = _check_page(
            browser,
            base + page.name,
            expect_math='class="math' in body,
            expect_img="<img" in body[body.find('class="bd-article') :],
        )
        widths.update({page.name: w for w in res["figs"]})
    assert len(set(widths.values())) <= 1, f"figures of different widths across pages: {widths}"
    hits = _search(browser, base, "Kemeny")
    assert hits, "the search found nothing for 'Kemeny'"
