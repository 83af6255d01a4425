#!/usr/bin/env python
"""Build the offline documentation site from the notebooks in `nbs/`, without Quarto and without network.

    python tools/build_docs.py                   # site -> _docs/ (every nbs/*.ipynb a page)
    python tools/build_docs.py --out DIR         # site -> DIR
    python tools/build_docs.py --readme          # regenerate README.md from nbs/index.ipynb (no site)
    python tools/build_docs.py --check-readme    # exit 1 if README.md is not what --readme would write
    options: --root DIR (project root), --nbs DIR (notebooks), --jobs N (worker processes; 0 = in process)

How it works: each notebook goes through nbdev's own docs processing (`nbdev.processors.FilterDefaults`,
the processors `nbdev-proc-nbs`/`nbdev-docs` run before handing over to Quarto: frontmatter from the
`# Title` / `> description` cell, hidden and exported cells dropped, `show_doc` cells inserted after exported
definitions and executed, links added). Only the cells nbdev executes for that (imports, exported cells,
`show_doc` calls) run; every other output is the one saved in the notebook. The processed notebook is
then rendered with nbconvert's `basic` HTML template inside a small page of our own (sidebar, previous /
next links), with PNG outputs embedded as data URIs and MathJax 2.7 copied from the `jupyter-server-mathjax`
package into `<out>/mathjax/`. Nothing is written into `nbs/` and no `_proc/` folder is created: the
processing happens in memory, in spawned worker processes (one notebook at a time each).
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

# jsonschema (imported by nbformat/nbconvert) builds a parser for the optional `rfc3987_syntax` package on import,
# which takes seconds; its "iri" format check is not used here, so make that optional import fail fast.
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


# ---------------------------------------------------------------------------------------------------------
# Discovery
def find_notebooks(nbs: Path) -> list[Path]:
    "Notebooks of the site, in reading order: `index.ipynb` first, then the others by file name"
    nbs_ = [p for p in nbs.glob("*.ipynb") if not p.name.startswith(("_", "."))]
    return sorted(nbs_, key=lambda p: (p.name != "index.ipynb", p.name))


# ---------------------------------------------------------------------------------------------------------
# Step 1: nbdev's processing (runs in a worker process: it executes the cells show_doc needs)
def process_notebook(nb_path: str, root: str) -> dict:
    "Run nbdev's docs processors on `nb_path` in memory; return the processed notebook as a JSON-able dict"
    os.chdir(root)  # nbdev's `get_config()` is cwd-based (as in `nbdev.quarto._pre_docs`)
    if root not in sys.path:
        sys.path.insert(0, root)  # the package imports from source even if not installed
    os.environ["IN_TEST"] = "1"  # as `nbdev.serve_drv` does while processing
    import matplotlib

    matplotlib.use("Agg")  # never open a window if a processed cell touches pyplot
    from fastcore.nbio import nb2dict, read_nb
    from nbdev.processors import FilterDefaults

    nb = read_nb(nb_path)  # sets `nb.path_`, which FrontmatterProc needs
    main_mod = sys.modules.get("__main__")
    try:
        FilterDefaults()(nb)
    finally:
        sys.modules["__main__"] = (
            main_mod  # IPython's shell swaps it; the worker needs it for the next task
        )
    return nb2dict(nb)


_EXPORTERS = {}


def build_notebook(nb_path: str, root: str, doc_url: str | None = None) -> dict:
    """Worker: nbdev's processing of `nb_path`, then (unless `doc_url` is None) the page body in HTML.
    Returns dict(nb=processed notebook, fm=frontmatter, body=HTML or None)."""
    d = process_notebook(nb_path, root)
    if doc_url is None:
        return dict(nb=d, fm=None, body=None)
    cd, fm = clean_processed(d, doc_url)
    try:
        exp = _EXPORTERS.get("html") or _EXPORTERS.setdefault("html", _exporter("html"))
        body, _ = exp.from_notebook_node(to_nbformat(cd))
    except Exception as e:
        raise BuildError(
            f"nbconvert could not render the processed notebook: {type(e).__name__}: {e}"
        ) from e
    return dict(nb=d, fm=fm, body=body)


def process_all(paths: list[Path], root: Path, jobs: int, doc_url: str | None = None) -> list[dict]:
    "`build_notebook` on each of `paths` in parallel (spawned workers, like `nbdev.serve.proc_nbs`); BuildError on failure"

    def fail(p, e):
        hint = (
            (
                "\n(while building docs nbdev runs only the imports, the exported cells and the show_doc calls; "
                "a cell that mixes an import with other code, even inside an `if`, is run too: move the import "
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
                res.append(build_notebook(str(p), str(root), doc_url))
            except Exception as e:
                fail(p, e)
        return res
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(paths)), mp_context=get_context("spawn")
    ) as ex:
        futs = [ex.submit(build_notebook, str(p), str(root), doc_url) for p in paths]
        res = []
        for p, f in zip(paths, futs):
            try:
                res.append(f.result())
            except Exception as e:
                fail(p, e)
        return res


# ---------------------------------------------------------------------------------------------------------
# Step 2: turn the processed notebook (which still carries Quarto cell options) into a plain, valid notebook
_re_opt = re.compile(r"^\s*#\|\s*([\w-]+)\s*:?\s*(.*?)\s*$")
# Quarto-only attributes after a markdown link, e.g. `[source](url){target="_blank" style="float:right"}`
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


def clean_processed(d: dict, doc_url: str = "", html: bool = True) -> tuple[dict, dict]:
    """Return (notebook dict that nbformat accepts, frontmatter dict); `doc_url` links become relative.
    `html=False` (for the README) keeps the markdown as nbdev left it, apart from Quarto-only link attributes."""
    import yaml

    d = copy.deepcopy(d)
    fm, cells = {}, []
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
                tags.add("remove_input")
            if _false(opts.get("output", "true")):
                tags.add("remove_output")
            if not src.strip() and not c.get("outputs"):
                continue
            for o in c.get("outputs", []):
                o.get("metadata", {}).pop("execution", None)
                if o.get("output_type") == "execute_result":
                    o.setdefault("execution_count", None)
                data = o.get("data", {})
                if "text/markdown" in data:
                    data["text/markdown"] = _fix_md(_src(data["text/markdown"]), doc_url, html)
        elif ct == "markdown":
            src = _fix_md(src, doc_url, html)
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


# fenced code blocks and inline code spans: left alone by `_escape_dollars`
_re_code = re.compile(
    r"(^[ \t]*(```|~~~).*?^[ \t]*\2[^\n]*$|(`+)[^`].*?\3)", re.DOTALL | re.MULTILINE
)


def _escape_dollars(s: str) -> str:
    "Markdown turns `\\$` into a bare `$` that MathJax would pair with the next one: protect it"
    out, last = [], 0
    for m in _re_code.finditer(s):
        out.append(s[last : m.start()].replace("\\$", '<span class="tex2jax_ignore">&#36;</span>'))
        out.append(m.group(0))
        last = m.end()
    out.append(s[last:].replace("\\$", '<span class="tex2jax_ignore">&#36;</span>'))
    return "".join(out)


_re_inline_math = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$")


def _table_math_pipes(s: str) -> str:
    "In table rows, `|` inside `$...$` would split the cell (and mistune then drops the whole table): use `\\vert`"

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
    return _table_math_pipes(_escape_dollars(s))


def to_nbformat(d: dict):
    import nbformat

    nb = nbformat.reads(json.dumps(d), as_version=4)
    nbformat.validate(nb)
    return nb


# ---------------------------------------------------------------------------------------------------------
# Step 3: HTML pages
def _identity(x):
    return x


def _exporter(kind: str):
    from traitlets.config import Config

    c = Config()
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_cell_tags = {"remove_cell"}
    c.TagRemovePreprocessor.remove_input_tags = {"remove_input"}
    c.TagRemovePreprocessor.remove_all_outputs_tags = {"remove_output"}
    if kind == "html":
        from nbconvert import HTMLExporter

        c.HTMLExporter.exclude_input_prompt = True
        c.HTMLExporter.exclude_output_prompt = True
        c.HTMLExporter.mathjax_url = f"mathjax/MathJax.js?config={MATHJAX_CONFIG}"  # never a CDN
        # the notebooks are this project's own, trusted content: skip bleach's sanitizing (slow, and it drops markup)
        return HTMLExporter(config=c, template_name="basic", filters={"clean_html": _identity})
    from nbconvert import MarkdownExporter

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


def _nav(pages, cur):
    items = []
    for p in pages:
        cls = ' class="active" aria-current="page"' if p["file"] == cur["file"] else ""
        items.append(f'<li><a href="{p["file"]}"{cls}>{html.escape(p["title"])}</a></li>')
    return "\n".join(items)


def _pager(pages, i):
    prv = pages[i - 1] if i > 0 else None
    nxt = pages[i + 1] if i + 1 < len(pages) else None
    a = (
        f'<a class="prev" rel="prev" href="{prv["file"]}">&larr; {html.escape(prv["title"])}</a>'
        if prv
        else "<span></span>"
    )
    b = (
        f'<a class="next" rel="next" href="{nxt["file"]}">{html.escape(nxt["title"])} &rarr;</a>'
        if nxt
        else "<span></span>"
    )
    return a + b


def _description_html(desc: str) -> str:
    if not desc:
        return ""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    return f'<div class="description">{markdown2html_mistune(str(desc))}</div>'


def render_site(items, out: Path, site_title: str):
    "items: list of (notebook path, frontmatter, body HTML); writes the pages, CSS and MathJax to `out`"
    from pygments.formatters import HtmlFormatter

    tmpl = (TEMPLATE_DIR / "page.html").read_text(encoding="utf-8")
    pages = [
        dict(src=p, file=_page_name(p, fm), title=_title(p, fm), fm=fm, body=body)
        for p, fm, body in items
    ]
    seen = {}
    for pg in pages:
        if pg["file"] in seen:
            raise BuildError(
                f"{pg['src'].name} and {seen[pg['file']].name} both map to {pg['file']}"
            )
        seen[pg["file"]] = pg["src"]
    for i, pg in enumerate(pages):
        page = (
            tmpl.replace("{{site_title}}", html.escape(site_title))
            .replace("{{page_title}}", html.escape(pg["title"]))
            .replace("{{mathjax_config}}", MATHJAX_CONFIG)
            .replace("{{nav}}", _nav(pages, pg))
            .replace("{{description}}", _description_html(pg["fm"].get("description", "")))
            .replace("{{source}}", html.escape(f"nbs/{pg['src'].name}"))
            .replace("{{pager}}", _pager(pages, i))
            .replace("{{body}}", pg["body"])
        )
        (out / pg["file"]).write_text(page, encoding="utf-8")
    css = (TEMPLATE_DIR / "site.css").read_text(encoding="utf-8")
    css += (
        "\n/* code highlighting (pygments) */\n"
        + HtmlFormatter(style="default").get_style_defs(".highlight")
        + "\n"
    )
    (out / "site.css").write_text(css, encoding="utf-8")
    (out / ".nojekyll").write_text("")
    copy_mathjax(out / "mathjax")
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


# ---------------------------------------------------------------------------------------------------------
# README
def render_readme(path: Path, d: dict, fm: dict) -> tuple[str, dict[str, bytes]]:
    "GitHub-flavoured markdown for the README from the processed index notebook, and its image files"
    # show_doc output is kept as the markdown nbdev produced; everything hidden in the notebook stays hidden
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
    head += f"<!-- WARNING: THIS FILE WAS AUTOGENERATED from nbs/{path.name} by `python tools/build_docs.py --readme`! DO NOT EDIT! -->\n\n"
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


# ---------------------------------------------------------------------------------------------------------
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
                        f"build_docs: out of date with {readme_nb.relative_to(root)}: {', '.join(bad)}\n"
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
        built = process_all(paths, root, a.jobs, doc_url)
        items = [(p, b["fm"], b["body"]) for p, b in zip(paths, built)]
        # build into a fresh temporary folder next to `out`, then swap: a failed build leaves `out` untouched
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".build_docs-", dir=out.parent))
        tmp.chmod(0o755)
        try:
            pages = render_site(items, tmp, site_title)
            if out.exists():
                shutil.rmtree(out)
            tmp.rename(out)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
        print(
            f"built {len(pages)} page(s) into {out} in {time.perf_counter() - t0:.1f}s: "
            + ", ".join(p["file"] for p in pages)
        )
        if (
            readme_nb in paths and a.out is None
        ):  # the project's own site: say if the README lags behind
            i = paths.index(readme_nb)
            text, files = render_readme(readme_nb, *clean_processed(built[i]["nb"], html=False))
            if _readme_diff(root, text, files):
                print(
                    "note: README.md is out of date with the index notebook: python tools/build_docs.py --readme"
                )
        return 0
    except BuildError as e:
        print(f"build_docs: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
