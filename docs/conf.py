"""Sphinx configuration of socal's API reference (built by tests/test_docs.py with warnings as errors)."""

import socal

project = "socal"
author = "the socal developers"
release = version = socal.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.mathjax", "numpydoc", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_heading_anchors = 3  # '#fix-second-order-platt-scaling' links between the pages, as on GitHub
autosummary_generate = True
autodoc_typehints = "none"  # the signatures carry the hints; numpydoc's Parameters sections carry the prose
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
exclude_patterns = ["_build", "generated/*.rst.bak"]
html_theme = "alabaster"
html_static_path = ["_static"]
nitpicky = False
