#!/usr/bin/env python
"""Build the offline documentation site from the notebooks in `nbs/` (Sphinx, no Quarto, offline).

    python tools/build_docs.py                 # site -> _docs/ (every nbs/*.ipynb a page)
    python tools/build_docs.py --out DIR       # site -> DIR
    python tools/build_docs.py --readme        # regenerate README.md from nbs/index.ipynb (no site)
    python tools/build_docs.py --check-readme  # exit 1 if README.md is not what --readme writes
    options: --root DIR (project root), --nbs DIR (notebooks),
             --jobs N (worker processes; 0 = in process)

How it works: each notebook goes through nbdev's own docs processing
(`nbdev.processors.FilterDefaults`, the processors `nbdev-proc-nbs`/`nbdev-docs` run before handing
over to Quarto: frontmatter from the `# Title` / `> description` cell, hidden and exported cells
dropped, `show_doc` cells inserted after exported definitions and executed, links added). Only the
cells nbdev executes for that (imports, exported cells, `show_doc` calls) run; every other output is
the one saved in the notebook. `show_doc` renders a signature with the real annotations and, when
the function has docments, a parameter table; its source link points to a highlighted copy of the
module inside the site (`_modules/`).

The processed notebooks are written to a temporary folder (never into `nbs/`) and rendered by Sphinx
with myst-nb (execution off) and pydata-sphinx-theme, configured by `tools/docs_template/conf.py`:
full-text search (`search.html`, offline through `searchindex.js`), a contents list on every page,
plotting code folded, MathJax 2.7 copied from the `jupyter-server-mathjax` package into
`<out>/_static/mathjax/`. A warning from Sphinx or myst-nb about the content fails the build.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import html
import json
import os
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

# jsonschema (imported by nbformat/nbconvert) builds a parser for the optional `rfc3987_syntax`
# package on import, which takes seconds; its "iri" format check is not used here, so make that
# optional import fail fast.
sys.modules.setdefault("rfc3987_syntax", None)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TEMPLATE_DIR = HERE / "docs_template"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full"
README_ASSETS = (
    "index_files"  # folder (next to README.md) for images in the README, as nbdev/Quarto names it
)


class BuildError(Exception):
    pass


# --------------------------------------------------------------------------------------------------
# Discovery
def find_notebooks(nbs: Path) -> list[Path]:
    "Notebooks of the site, in reading order: `index.ipynb` first, then the others by file name"
    nbs_ = [p for p in nbs.glob("*.ipynb") if not p.name.startswith(("_", "."))]
    return sorted(nbs_, key=lambda p: (p.name != "index.ipynb", p.name))


# --------------------------------------------------------------------------------------------------
# Step 1: nbdev's processing (runs in a worker process: it executes the cells show_doc needs)
def process_notebook(nb_path: str, root: str, site: bool = False) -> dict:
    """Run nbdev's docs processors on `nb_path` in memory; return the processed notebook as a
    JSON-able dict. `site`: `show_doc` renders for the site (`SiteRenderer`: parameter table,
    source link into the site)."""
    os.chdir(root)  # nbdev's `get_config()` is cwd-based (as in `nbdev.quarto._pre_docs`)
    if root not in sys.path:
        sys.path.insert(0, root)  # the package imports from source even if not installed
    os.environ["IN_TEST"] = "1"  # as `nbdev.serve_drv` does while processing
    import matplotlib

    matplotlib.use("Agg")  # never open a window if a processed cell touches pyplot
    import nbdev.showdoc
    from fastcore.nbio import nb2dict, read_nb
    from nbdev.processors import FilterDefaults

    if site:  # `show_doc(f)` with no renderer looks this name up when it runs
        nbdev.showdoc.BasicMarkdownRenderer = site_renderer()

    nb = read_nb(nb_path)  # sets `nb.path_`, which FrontmatterProc needs
    main_mod = sys.modules.get("__main__")
    try:
        FilterDefaults()(nb)
    finally:
        sys.modules["__main__"] = (
            main_mod  # IPython's shell swaps it; the worker needs it for the next task
        )
    return nb2dict(nb)


def build_notebook(nb_path: str, root: str, site: bool = False) -> dict:
    "Worker: nbdev's processing of `nb_path`; returns dict(nb=processed notebook)"
    return dict(nb=process_notebook(nb_path, root, site))


# --------------------------------------------------------------------------------------------------
# show_doc for the site
_re_src_url = re.compile(r"/blob/[^/]+/(?P<path>[^#?]+\.py)#L(?P<line>\d+)$")


def _anno(a) -> str:
    import inspect

    return a if isinstance(a, str) else inspect.formatannotation(a)


def _cell(s) -> str:
    "Text for a markdown table cell"
    return " ".join(str(s).split()).replace("|", "\\|")


def site_renderer():
    """The `show_doc` renderer of the site (a subclass of nbdev's `BasicMarkdownRenderer`): a link
    to the source inside the site, an anchor that nbdev's links (`page.html#name`) land on, the
    signature with the annotations as written (no types guessed from defaults), the docstring, and a
    table of the parameters (type, default, details) when the function has docments."""
    import inspect

    from nbdev.doclinks import NbdevLookup
    from nbdev.showdoc import BasicMarkdownRenderer

    class SiteRenderer(BasicMarkdownRenderer):
        def _sig(self):
            try:
                sig = inspect.signature(self.sym)
            except (TypeError, ValueError):
                return None
            parts, star, prev = [], False, None
            for p in sig.parameters.values():
                if prev == p.POSITIONAL_ONLY and p.kind != prev:
                    parts.append("/")
                if p.kind == p.KEYWORD_ONLY and not star:
                    parts.append("*")
                    star = True
                pre = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
                star = star or p.kind == p.VAR_POSITIONAL
                a = f": {_anno(p.annotation)}" if p.annotation is not p.empty else ""
                d = p.default
                eq = " = " if a else "="
                d = (
                    f"{eq}{d.__name__ if inspect.isclass(d) else repr(d)}"
                    if d is not p.empty
                    else ""
                )
                parts.append(f"{pre}{p.name}{a}{d}")
                prev = p.kind
            if prev == inspect.Parameter.POSITIONAL_ONLY:
                parts.append("/")
            ret = sig.return_annotation
            ret = (
                f" -> {_anno(ret)}"
                if ret is not sig.empty and not inspect.isclass(self.sym)
                else ""
            )
            one = f"{self.nm}({', '.join(parts)}){ret}"
            if len(one) <= 76 or not parts:  # about the width of the text column
                return one
            return f"{self.nm}(\n" + "".join(f"    {x},\n" for x in parts) + f"){ret}"

        def _table(self):
            "Markdown table of the parameters, or '' when none has a docment"
            from fastcore.docments import docments

            try:
                dm = docments(self.sym, full=True)
                sig = inspect.signature(self.sym)
            except Exception:
                return ""
            ps = [p for p in sig.parameters.values() if p.name != "self"]
            docs = {k: (v.get("docment") or "") for k, v in dm.items()}
            if not any(docs.get(p.name) for p in ps):
                return ""
            rows = []
            for p in ps:
                pre = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
                t = f"`{_cell(_anno(p.annotation))}`" if p.annotation is not p.empty else ""
                d = f"`{_cell(repr(p.default))}`" if p.default is not p.empty else ""
                rows.append([f"`{pre}{p.name}`", t, d, _cell(docs.get(p.name, ""))])
            ret = sig.return_annotation
            if docs.get("return") or (ret is not sig.empty and not inspect.isclass(self.sym)):
                t = f"`{_cell(_anno(ret))}`" if ret is not sig.empty else ""
                rows.append(["**Returns**", t, "", _cell(docs.get("return", ""))])
            # a column that is empty in every row (no annotations yet, no defaults) is left out
            keep = [0] + [j for j in (1, 2) if any(r[j] for r in rows)] + [3]
            hdr = [["Parameter", "Type", "Default", "Details"][j] for j in keep]
            out = ["| " + " | ".join(hdr) + " |", "|" + " --- |" * len(hdr)]
            out += ["| " + " | ".join(r[j] for j in keep) + " |" for r in rows]
            return "\n".join(out)

        def _repr_markdown_(self):
            sig = self._sig()
            if sig is None:  # no signature to show: nbdev's own rendering, with the site's header
                body = (
                    super()
                    ._repr_markdown_()
                    .split(f"{'#' * self.title_level} {self.nm}\n\n", 1)[-1]
                )
            else:
                body = f"```python\n{sig}\n```"
                if self.docs:
                    body += "\n\n" + re.sub(r"^(\s*)(.+)", r"\1*\2*", self.docs, count=1)
                tbl = self._table()
                if tbl:
                    body += "\n\n" + tbl
            head = f'<a id="{html.escape(self.nm.lower())}"></a>\n\n'
            src = NbdevLookup().code(self.fn) or ""
            if m := _re_src_url.search(src):
                mod = m.group("path")[: -len(".py")]
                href = f"_modules/{mod}.html#L-{m.group('line')}"
                head += f'<a class="source-link" href="{href}">source</a>\n\n'
            return head + f"{'#' * self.title_level} {self.nm}\n\n" + body

    return SiteRenderer


def process_all(paths: list[Path], root: Path, jobs: int, site: bool = False) -> list[dict]:
    """`build_notebook` on each of `paths` in parallel (spawned workers, like
    `nbdev.serve.proc_nbs`); BuildError on failure"""

    def fail(p, e):
        hint = (
            (
                "\n(while building docs nbdev runs only the imports, the exported cells and the "
                "show_doc calls; a cell that mixes an import with other code, even inside an `if`, "
                "is run too: move the import "
                "to an import cell)"
            )
            if "Error in notebook" in str(e) or " in cell " in str(e)
            else ""
        )
        raise BuildError(f"failed to process {p}:\n{type(e).__name__}: {e}{hint}") from e

    if jobs <= 0 or len(paths) == 1:  # in this process (`--jobs 0`: for debugging)
        res = []
        for p in paths:
            try:
                res.append(build_notebook(str(p), str(root), site))
            except Exception as e:
                fail(p, e)
        return res
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(paths)), mp_context=get_context("spawn")
    ) as ex:
        futs = [ex.submit(build_notebook, str(p), str(root), site) for p in paths]
        res = []
        for p, f in zip(paths, futs):
            try:
                res.append(f.result())
            except Exception as e:
                fail(p, e)
        return res


# --------------------------------------------------------------------------------------------------
# Step 2: turn the processed notebook (which still carries Quarto cell options) into a plain, valid
# notebook
_re_opt = re.compile(r"^\s*#\|\s*([\w-]+)\s*:?\s*(.*?)\s*$")
# Quarto-only attributes after a markdown link, e.g. `[source](url){target="_blank"
# style="float:right"}`
_re_link_attrs = re.compile(r"(\]\([^)\s]*\))\{[^}\n]*\}")
_re_fm = re.compile(r"^---\s*\n(.*?)\n---\s*$", re.DOTALL)
_CELL_KEYS = {
    "code": {"cell_type", "id", "metadata", "source", "outputs", "execution_count"},
    "markdown": {"cell_type", "id", "metadata", "source", "attachments"},
    "raw": {"cell_type", "id", "metadata", "source", "attachments"},
}


def _src(x):
    return "".join(x) if isinstance(x, list) else (x or "")


def _split_opts(src: str):
    "Split leading `#| key: value` lines (Quarto cell options left by nbdev) from the code"
    lines, opts = src.splitlines(), {}
    i = 0
    while i < len(lines) and (m := _re_opt.match(lines[i])):
        opts[m.group(1)] = m.group(2).strip("\"'")
        i += 1
    return opts, "\n".join(lines[i:]).strip("\n")


def _false(v):
    return str(v).lower() in ("false", "no", "0")


# a cell that draws with matplotlib: its code is folded on the site (`#| code-fold: false` keeps it
# open)
_re_plot = re.compile(r"(?<![\w.])(plt|fig|figs|ax|axs|axes)(\[[^\]\n]*\])*\.\w")


_re_heading = re.compile(r"(?m)^(#{1,6})[ \t]+\S")
_re_fence = re.compile(r"(?ms)^[ \t]*(```|~~~).*?^[ \t]*\1")


def clean_processed(d: dict, doc_url: str = "", html: bool = True) -> tuple[dict, dict]:
    """Return (notebook dict that nbformat accepts, frontmatter dict); `doc_url` links become
    relative. `html=False` (for the README) keeps the markdown as nbdev left it, apart from
    Quarto-only link attributes. For the site (`html=True`): `output: asis` cells (nbdev's show_doc)
    become markdown cells, so their headings are sections of the page (contents list, search);
    plotting code gets myst-nb's `hide-input`."""
    import yaml

    d = copy.deepcopy(d)
    fm, cells, level = {}, [], 1  # level: of the last heading (the page title is the `#`)
    for i, c in enumerate(d.get("cells", [])):
        ct, src = c.get("cell_type"), _src(c.get("source"))
        if ct == "raw" and i == 0 and (m := _re_fm.match(src.strip())):
            fm = yaml.safe_load(m.group(1)) or {}
            continue
        if ct == "markdown" and src.strip().startswith("<!-- WARNING: THIS FILE WAS AUTOGENERATED"):
            continue
        if c.get("has_sd"):  # show_doc cells nbdev inserted get random ids: make them deterministic
            c["id"] = "sd-" + hashlib.sha1(f"{i}:{src}".encode()).hexdigest()[:12]
        c = {
            k: v for k, v in c.items() if k in _CELL_KEYS.get(ct, ())
        }  # drops `has_sd` and the like
        md = c.setdefault("metadata", {})
        md.pop("execution", None)
        tags = set(md.get("tags", []))
        if ct == "code":
            opts, src = _split_opts(src)
            if _false(opts.get("include", "true")):
                continue
            if _false(opts.get("echo", "true")) or not src.strip():
                tags.add("remove-input")
            if _false(opts.get("output", "true")):
                tags.add("remove-output")
            if not src.strip() and not c.get("outputs"):
                continue
            for o in c.get("outputs", []):
                o.get("metadata", {}).pop("execution", None)
                if o.get("output_type") == "execute_result":
                    o.setdefault("execution_count", None)
                data = o.get("data", {})
                if "text/markdown" in data:
                    data["text/markdown"] = _fix_md(_src(data["text/markdown"]), doc_url, html)
            if html and opts.get("output") == "asis" and "remove-output" not in tags:
                mds = [
                    _src(o["data"]["text/markdown"])
                    for o in c.get("outputs", [])
                    if "text/markdown" in o.get("data", {})
                ]
                if mds and len(mds) == len(c.get("outputs", [])):
                    # a heading one level below the section it sits in (`###` right under the title:
                    # `##`)
                    h = "#" * min(3, level + 1)
                    mds = [re.sub(r"(?m)^###(?= )", h, m) for m in mds]
                    cells.append(
                        dict(
                            cell_type="markdown",
                            id=c.get("id"),
                            metadata={},
                            source="\n\n".join(mds),
                        )
                    )
                    continue
            fold = opts.get("code-fold")
            if html and "remove-input" not in tags:
                if (fold is None and _re_plot.search(src)) or (
                    fold is not None and not _false(fold)
                ):
                    tags.add("hide-input")
        elif ct == "markdown":
            src = _fix_md(src, doc_url, html)
            for m in _re_heading.finditer(_re_fence.sub("", src)):
                level = len(m.group(1))
        if tags:
            md["tags"] = sorted(tags)
        c["source"] = src
        cells.append(c)
    d["cells"] = cells
    meta = d.setdefault("metadata", {})
    meta.pop("widgets", None)
    li = meta.setdefault(
        "language_info", {}
    )  # nbconvert picks the code highlighting/fence language from here
    li.setdefault("name", (meta.get("kernelspec") or {}).get("language") or "python")
    return d, fm


_re_inline_math = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$")


def _table_math_pipes(s: str) -> str:
    "In table rows, `|` inside `$...$` would split the cell: use `\\vert`"

    def row(line):
        if not line.lstrip().startswith("|"):
            return line
        return _re_inline_math.sub(
            lambda m: "$" + re.sub(r"(?<!\\)\|", r"\\vert ", m.group(1)) + "$", line
        )

    return "\n".join(row(l) for l in s.split("\n"))


def _fix_md(s: str, doc_url: str, html: bool = True) -> str:
    s = _re_link_attrs.sub(r"\1", s)
    if not html:
        return s
    if doc_url:
        s = s.replace(doc_url, "")  # nbdev's links into our own docs: keep them on this site
    return _table_math_pipes(s)  # MyST itself keeps `\\$` a dollar


def to_nbformat(d: dict):
    import nbformat

    nb = nbformat.reads(json.dumps(d), as_version=4)
    nbformat.validate(nb)
    return nb


# --------------------------------------------------------------------------------------------------
# Step 3: the site, with Sphinx (myst-nb reads the processed notebooks; pydata-sphinx-theme)
def _exporter(kind: str = "markdown"):
    "nbconvert's markdown exporter, for the README"
    from nbconvert import MarkdownExporter
    from traitlets.config import Config

    c = Config()
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}
    c.TagRemovePreprocessor.remove_input_tags = {"remove-input"}
    c.TagRemovePreprocessor.remove_all_outputs_tags = {"remove-output"}
    c.ExtractOutputPreprocessor.enabled = True
    c.ExtractOutputPreprocessor.output_filename_template = (
        "cell-{cell_index}-output-{index}{extension}"
    )
    c.MarkdownExporter.exclude_input_prompt = True
    c.MarkdownExporter.exclude_output_prompt = True
    return MarkdownExporter(config=c)


def _page_name(path: Path, fm: dict) -> str:
    return fm.get("output-file") or (path.stem + ".html")


def _title(path: Path, fm: dict) -> str:
    return str(fm.get("title") or path.stem)


def _md_cell(cid: str, src: str) -> dict:
    return dict(cell_type="markdown", id=cid, metadata={}, source=src)


def write_sources(items, src: Path) -> list[dict]:
    """items: list of (notebook path, processed notebook dict, frontmatter). Writes one notebook per
    page into `src` (the title and description of the frontmatter as its first cell; the first
    page holds the hidden table of contents of the site). Returns the pages: dict(src, file, name,
    title)."""
    pages = [
        dict(src=p, file=_page_name(p, fm), title=_title(p, fm), fm=fm, nb=d) for p, d, fm in items
    ]
    seen = {}
    for pg in pages:
        pg["name"] = pg["file"].removesuffix(".html")
        if pg["file"] in seen:
            raise BuildError(
                f"{pg['src'].name} and {seen[pg['file']].name} both map to {pg['file']}"
            )
        if not re.fullmatch(r"[\w.-]+", pg["name"]):
            raise BuildError(f"{pg['src'].name}: page name {pg['file']!r} is not a plain file name")
        seen[pg["file"]] = pg["src"]
    for i, pg in enumerate(pages):
        nb, fm = pg["nb"], pg["fm"]
        head = f"# {pg['title']}\n"
        if fm.get("description"):
            head += f"\n{{.lead}}\n{' '.join(str(fm['description']).split())}\n"
        cells = [_md_cell("page-title", head)]
        if i == 0:
            toc = "\n".join(p["name"] for p in pages[1:])
            cells.append(
                _md_cell("site-toc", f"```{{toctree}}\n:hidden:\n:maxdepth: 1\n\n{toc}\n```")
            )
        nb = dict(nb, cells=cells + nb["cells"])
        to_nbformat(nb)  # valid, or BuildError below
        (src / f"{pg['name']}.ipynb").write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return pages


def _source_pages(root: Path, files: list[str]):
    "Sphinx `html-collect-pages` handler: a highlighted copy of each module, `_modules/<path>.html`"

    def collect(app):
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        fmt = HtmlFormatter(linenos="inline", lineanchors="L", anchorlinenos=True, wrapcode=True)
        for f in files:
            code = (root / f).read_text(encoding="utf-8")
            body = (
                f"<h1>Source of <code>{html.escape(f)}</code></h1>\n"
                f'<div class="highlight-python notranslate source-listing">'
                f"{highlight(code, PythonLexer(), fmt)}</div>"
            )
            yield f"_modules/{f.removesuffix('.py')}", dict(title=f, body=body), "page.html"

    return collect


def run_sphinx(
    src: Path, out: Path, work: Path, title: str, root: Path, modules: list[str], jobs: int
):
    "Render the notebooks in `src` into `out`; BuildError listing Sphinx's warnings, if any"
    import io

    from sphinx.application import Sphinx

    status, warning = io.StringIO(), io.StringIO()
    app = Sphinx(
        str(src),
        str(TEMPLATE_DIR),
        str(out),
        str(work / "doctrees"),
        "html",
        confoverrides={"project": title, "html_title": title},
        status=status,
        warning=warning,
        freshenv=True,
        parallel=max(jobs, 1),
    )
    app.connect("html-collect-pages", _source_pages(root, modules))
    try:
        app.build()
    except Exception as e:
        raise BuildError(f"sphinx: {type(e).__name__}: {e}\n{warning.getvalue()}") from e
    return warning.getvalue()


def render_site(items, out: Path, work: Path, title: str, root: Path, lib: str, jobs: int):
    "Write the processed notebooks to `work`, render them with Sphinx into `out`, copy MathJax"
    src = work / "src"
    src.mkdir(parents=True)
    pages = write_sources(items, src)
    modules = (
        sorted(
            p.relative_to(root).as_posix()
            for p in (root / lib).rglob("*.py")
            if p.name != "_modidx.py" and "__pycache__" not in p.parts
        )
        if lib and (root / lib).is_dir()
        else []
    )
    copy_mathjax(out / "_static" / "mathjax")
    warnings = run_sphinx(src, out, work, title, root, modules, jobs)
    if warnings.strip():
        names = {f"{pg['name']}.ipynb": f"nbs/{pg['src'].name}" for pg in pages}
        text = re.sub(r"\x1b\[[0-9;]*m", "", warnings).replace(str(src) + os.sep, "")
        for k, v in names.items():
            text = text.replace(k, v)
        raise BuildError(f"the docs generator warned about the content:\n{text.strip()}")
    for junk in (".buildinfo", ".buildinfo.bak", "objects.inv"):
        (out / junk).unlink(missing_ok=True)
    (out / ".nojekyll").write_text("")
    return pages


def copy_mathjax(dest: Path):
    "Copy the parts of MathJax 2.7 that the pages load from the `jupyter-server-mathjax` package"
    try:
        import jupyter_server_mathjax
    except ImportError as e:
        raise BuildError(
            "jupyter-server-mathjax is not installed (pip install jupyter-server-mathjax)"
        ) from e
    src = Path(jupyter_server_mathjax.__file__).parent / "static"
    if not (src / "MathJax.js").exists():
        raise BuildError(f"MathJax.js not found in {src}")

    def ignore(d, names):
        rel = Path(d).relative_to(src).as_posix()
        skip = {
            ".": {"localization"},
            "jax/output": {"SVG"},
            "extensions/a11y": {"mathmaps", "mathjax-sre.js"},
        }
        return [n for n in names if n in skip.get(rel, ())]

    shutil.copytree(src, dest, ignore=ignore)
    (dest / "localization").mkdir(exist_ok=True)
    shutil.copytree(src / "localization" / "en", dest / "localization" / "en")


# --------------------------------------------------------------------------------------------------
# README
def render_readme(path: Path, d: dict, fm: dict) -> tuple[str, dict[str, bytes]]:
    "GitHub-flavoured markdown for the README from the processed index notebook, and its images"
    # show_doc output is kept as the markdown nbdev produced; everything hidden in the notebook
    # stays hidden
    body, res = _exporter("markdown").from_notebook_node(
        to_nbformat(d), resources={"output_files_dir": README_ASSETS}
    )
    files = {
        f"{README_ASSETS}/{k}" if not k.startswith(README_ASSETS) else k: v
        for k, v in res.get("outputs", {}).items()
    }
    for k in res.get("outputs", {}):
        if not k.startswith(README_ASSETS):
            body = body.replace(f"]({k})", f"]({README_ASSETS}/{k})")
    head = f"# {_title(path, fm)}\n\n"
    cmd = "python tools/build_docs.py --readme"
    head += (
        f"<!-- WARNING: THIS FILE WAS AUTOGENERATED from nbs/{path.name} by `{cmd}`! "
        "DO NOT EDIT! -->\n\n"
    )
    if fm.get("description"):
        head += f"> {fm['description']}\n\n"
    text = head + body.strip("\n") + "\n"
    text = re.sub(
        r"(?m)^[ \t]+$", "", text
    )  # whitespace-only lines left by nbconvert's markdown template
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text, files


def _readme_diff(root: Path, text: str, files: dict) -> list[str]:
    "Paths (relative to root) of README.md and its images that differ from what would be generated"
    bad = []
    rd = root / "README.md"
    if not rd.exists() or rd.read_text(encoding="utf-8") != text:
        bad.append("README.md")
    for k, v in files.items():
        f = root / k
        if not f.exists() or f.read_bytes() != v:
            bad.append(k)
    return bad


def write_readme(root: Path, text: str, files: dict):
    (root / "README.md").write_text(text, encoding="utf-8")
    assets = root / README_ASSETS
    if assets.exists():
        shutil.rmtree(assets)
    for k, v in sorted(files.items()):
        (root / k).parent.mkdir(parents=True, exist_ok=True)
        (root / k).write_bytes(v)


# --------------------------------------------------------------------------------------------------
def _config(root: Path):
    cwd = os.getcwd()
    try:
        os.chdir(root)
        from nbdev.config import get_config

        return get_config()
    finally:
        os.chdir(cwd)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--root", type=Path, default=ROOT, help="project root (holds pyproject.toml) [%(default)s]"
    )
    ap.add_argument(
        "--nbs", type=Path, default=None, help="notebooks folder [the project's nbs_path]"
    )
    ap.add_argument(
        "--out", type=Path, default=None, help="output folder [the project's doc_path, _docs]"
    )
    ap.add_argument(
        "--readme",
        action="store_true",
        help="regenerate README.md from the index notebook (no site)",
    )
    ap.add_argument(
        "--check-readme",
        action="store_true",
        help="exit 1 if README.md differs from what --readme writes",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=min(os.cpu_count() or 1, 8),
        help="worker processes (0: in process)",
    )
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    root = a.root.resolve()
    try:
        cfg = _config(root)
        nbs = (a.nbs or Path(cfg.nbs_path)).resolve()
        out = (a.out or Path(cfg.doc_path)).resolve()
        doc_url = f"{cfg.get('doc_host', '') or ''}{cfg.get('doc_baseurl', '') or ''}".rstrip("/")
        doc_url = doc_url + "/" if doc_url else ""
        site_title = str(cfg.get("title", "") or cfg.get("lib_name", "") or root.name)
        readme_nb = nbs / Path(cfg.get("readme_nb", "index.ipynb")).name
        if a.readme or a.check_readme:
            if not readme_nb.exists():
                raise BuildError(f"{readme_nb} not found")
            (r,) = process_all([readme_nb], root, 0)
            d, fm = clean_processed(
                r["nb"], html=False
            )  # README keeps nbdev's absolute links (to the published docs)
            text, files = render_readme(readme_nb, d, fm)
            if a.check_readme:
                bad = _readme_diff(root, text, files)
                if bad:
                    print(
                        f"build_docs: out of date with {readme_nb.relative_to(root)}: "
                        f"{', '.join(bad)}\n"
                        f"  run: python tools/build_docs.py --readme",
                        file=sys.stderr,
                    )
                    return 1
                print(f"README.md is up to date with {readme_nb.relative_to(root)}")
            else:
                write_readme(root, text, files)
                print(
                    f"wrote README.md from {readme_nb.relative_to(root)}"
                    + (f" (+{len(files)} image(s) in {README_ASSETS}/)" if files else "")
                )
            return 0

        paths = find_notebooks(nbs)
        if not paths:
            raise BuildError(f"no notebooks in {nbs}")
        if out == nbs or nbs in out.parents:
            raise BuildError(f"refusing to write the site inside {nbs}")
        built = process_all(paths, root, a.jobs, site=True)
        items = [(p, *clean_processed(b["nb"], doc_url)) for p, b in zip(paths, built)]
        # build into a fresh temporary folder next to `out`, then swap: a failed build leaves `out`
        # untouched
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".build_docs-", dir=out.parent))
        tmp.chmod(0o755)
        work = Path(tempfile.mkdtemp(prefix="build_docs-"))
        try:
            lib = str(cfg.get("lib_path", "") or "")
            lib = os.path.relpath(lib, root) if os.path.isabs(lib) else lib
            # Sphinx in `tmp/site`: myst-nb writes its `jupyter_execute/` beside it, in `tmp`
            pages = render_site(items, tmp / "site", work, site_title, root, lib, a.jobs)
            if out.exists():
                shutil.rmtree(out)
            (tmp / "site").rename(out)
        finally:
            shutil.rmtree(work, ignore_errors=True)
            if tmp.exists():
                shutil.rmtree(tmp)
        print(
            f"built {len(pages)} page(s) into {out} in {time.perf_counter() - t0:.1f}s: "
            + ", ".join(p["file"] for p in pages)
        )
        i = paths.index(readme_nb) if readme_nb in paths else None
        # the project's own site: say if the README lags behind (show_doc renders differently on the
        # site)
        if (
            i is not None
            and a.out is None
            and not any(c.get("has_sd") for c in built[i]["nb"]["cells"])
        ):
            text, files = render_readme(readme_nb, *clean_processed(built[i]["nb"], html=False))
            if _readme_diff(root, text, files):
                print(
                    "note: README.md is out of date with the index notebook: "
                    "python tools/build_docs.py --readme"
                )
        return 0
    except BuildError as e:
        print(f"build_docs: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
