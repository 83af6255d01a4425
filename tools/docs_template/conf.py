"""Sphinx configuration of the documentation site, used by `tools/build_docs.py`, which passes
`project` and `html_title` and renders the notebooks nbdev processed (see its docstring). Everything
the pages load is served by the site itself: no CDN, no web font."""

project = "privrank"
html_title = project

extensions = ["myst_nb"]  # myst-nb brings myst-parser
root_doc = "index"
exclude_patterns = ["**.ipynb_checkpoints", "jupyter_execute"]

# notebooks: never executed here (their saved outputs, plus the show_doc outputs nbdev produced)
nb_execution_mode = "off"
nb_render_markdown_format = "myst"  # show_doc and other markdown outputs: math, tables as in cells
nb_output_stderr = "warn"  # a stderr output in a notebook is a warning, which fails the build
nb_merge_streams = True
nb_ipywidgets_js = {}  # no widget loader from a CDN
myst_enable_extensions = ["dollarmath", "amsmath", "attrs_block"]
myst_dmath_double_inline = True
myst_all_links_external = True  # nbdev's links (`page.html#name`) stay as they are

# MathJax 2.7, copied into _static/mathjax/ by build_docs.py
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {
    "tex2jax": {"processClass": "math", "ignoreClass": "tex2jax_ignore|mathjax_ignore|document"},
    "HTML-CSS": {"availableFonts": [], "webFont": "STIX-Web", "imageFont": None},
    "messageStyle": "none",
    "menuSettings": {"assistiveMML": False},
    "fast-preview": {"disabled": True},
}

html_theme = "pydata_sphinx_theme"
html_static_path = ["_static"]
html_css_files = ["privrank.css"]
html_show_sourcelink = False  # source links of show_doc point to _modules/ instead
html_copy_source = False
html_show_sphinx = False
html_last_updated_fmt = None
templates_path = ["_templates"]
html_sidebars = {
    "**": ["site-pages.html"]
}  # every page on the left; the page's contents on the right
html_theme_options = {
    "navbar_align": "left",
    "navbar_center": [],  # the pages are in the left sidebar (their titles are long)
    "navbar_end": ["search-button-field", "theme-switcher"],
    "navbar_persistent": [],
    "secondary_sidebar_items": ["page-toc"],
    "show_toc_level": 2,
    "show_prev_next": True,
    "navigation_with_keys": False,
    "use_edit_page_button": False,
    "icon_links": [],
    "footer_start": [],
    "footer_end": [],
    "pygments_light_style": "default",
    "pygments_dark_style": "monokai",
}
