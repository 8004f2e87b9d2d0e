"""The API reference builds from the numpydoc docstrings with warnings as errors, and lists the whole public API."""

import pathlib
import re

import pytest

import socal

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


def test_api_reference_lists_every_public_name():
    api = (DOCS / "api.rst").read_text()
    listed = set(re.findall(r"^   ([\w.]+)$", api, flags=re.M))
    modules = {"synthetic", "truth", "plot"}  # documented member by member
    missing = [name for name in socal.__all__ if name not in listed and name not in modules]
    assert not missing, f"public names missing from docs/api.rst: {missing}"
    for name in listed:  # and nothing listed that does not exist
        obj = socal
        for part in name.split("."):
            obj = getattr(obj, part) if hasattr(obj, part) else __import__(f"socal.{part}", fromlist=["x"])
        assert obj is not None


def test_docs_build_with_warnings_as_errors(tmp_path, capsys):
    pytest.importorskip("sphinx", reason="the API reference needs the docs extra (sphinx, numpydoc)")
    pytest.importorskip("numpydoc", reason="the API reference needs the docs extra (sphinx, numpydoc)")
    from sphinx.cmd.build import build_main

    status = build_main(["-W", "--keep-going", "-b", "html", "-d", str(tmp_path / "doctrees"), str(DOCS),
                         str(tmp_path / "html")])
    log = capsys.readouterr()
    assert status == 0, log.out + log.err
    pages = {p.name for p in (tmp_path / "html" / "generated").glob("*.html")}
    assert {"socal.evaluate.html", "socal.SecondOrderPlatt.html", "socal.plot.reliability.html"} <= pages
    text = (tmp_path / "html" / "generated" / "socal.evaluate.html").read_text()
    assert "calibrated reference" in text or "reference" in text
