"""The shareable report (socal.page, `socal evaluate --report`), tested as a person sees it: headless Chromium
renders the page; the test reads the rendered text for the verdict and checks that every figure was decoded (the
page's own count, written by its script after load)."""

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest

import socal

pytest.importorskip("matplotlib")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=5000"]
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs "
                                                             "it: apt-get install chromium)")


class _Text(HTMLParser):
    """The text a reader sees: everything outside <script> and <style>."""

    def __init__(self):
        super().__init__()
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self.skip -= tag in ("script", "style")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def _render(path, tmp_path, screenshot=None):
    """Chromium's DOM after load (scripts run), and its visible text."""
    args = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(args + ["--dump-dom", f"file://{path}"], capture_output=True, text=True, timeout=120).stdout
    if screenshot:
        subprocess.run(args + ["--window-size=1200,2400", f"--screenshot={screenshot}", f"file://{path}"],
                       capture_output=True, timeout=120)
    p = _Text()
    p.feed(dom)
    return dom, " ".join(" ".join(p.parts).split())


def _binary(tmp_path):
    m, v, _, y = socal.synthetic.EnsembleLikePopulation(0.01, var_factor=0.3).sample_raw(3000, rng=1)
    ev = socal.evaluate(m, v, y, n_boot=20, rng=0)
    path = tmp_path / "binary.html"
    socal.page.write_report(path, ev, y, command="python make_report.py")
    return ev, path


@needs_chromium
def test_binary_report_renders_with_its_verdict_and_every_figure(tmp_path):
    ev, path = _binary(tmp_path)
    dom, text = _render(path, tmp_path, screenshot=os.environ.get("SOCAL_SCREENSHOT_DIR") and
                        os.path.join(os.environ["SOCAL_SCREENSHOT_DIR"], "report_binary.png"))
    word = "rejected" if ev.test.pvalue <= 0.05 else "not rejected"
    assert f"Second-order calibration {word} at level 0.05" in text
    assert "figures: 1 of 1 shown" in text and 'data-figures="1/1"' in dom
    assert "python make_report.py" in text and f"numpy {np.__version__}" in text
    assert "CE1 (perturbed)" in text  # the table


@needs_chromium
def test_multiclass_report_renders_with_before_and_after(tmp_path):
    from socal.multiclass import evaluate_multiclass

    m, S, y = socal.synthetic.DirichletEnsemble(C=3).sample(2000, rng=1)
    ev = evaluate_multiclass(m, S, y, n_boot=20, h=1 / 16, names=["ent", "neu", "con"])
    after = evaluate_multiclass(m, S, y, n_boot=20, h=1 / 16, names=["ent", "neu", "con"], rng=1)
    path = tmp_path / "multiclass.html"
    fit = socal.MulticlassPlatt().fit(m, S, y)
    socal.page.write_report(path, ev, y, recalibrated=after, scores=(m, S),
                            recalibrated_scores=fit.transform(m, S, diagonal=True))
    page = path.read_text()
    assert "trace against the votes" in page  # the caption of the trace panel
    assert "variance Sigma_cc" in page and "raw and recalibrated scores on the same items" in page
    dom, text = _render(path, tmp_path, screenshot=os.environ.get("SOCAL_SCREENSHOT_DIR") and
                        os.path.join(os.environ["SOCAL_SCREENSHOT_DIR"], "report_multiclass.png"))
    assert re.search(r"Second-order calibration (not )?rejected at level 0\.05 \(the smallest adjusted p-value of "
                     r"the trace, top-label and class-wise parts: p", text)
    assert "After recalibration (held-out items)" in text
    assert "figures: 2 of 2 shown" in text
    for name in ("ent", "neu", "con", "top label"):
        assert name in text


@needs_chromium
def test_a_broken_figure_is_counted_as_not_shown(tmp_path):
    """Negative control: a figure whose data is corrupted renders as '0 of 1 shown'."""
    _, path = _binary(tmp_path)
    page = path.read_text()
    broken = re.sub(r'src="data:image/png;base64,[^"]{40}', 'src="data:image/png;base64,AAAA', page, count=1)
    bad = tmp_path / "broken.html"
    bad.write_text(broken)
    _, text = _render(bad, tmp_path)
    assert "figures: 0 of 1 shown" in text


def test_report_refuses_what_it_cannot_show(tmp_path):
    with pytest.raises(ValueError, match="'evaluation' parameter of report_html"):
        socal.page.report_html(object())
    ev, _ = _binary(tmp_path)
    with pytest.raises(ValueError, match="'recalibrated' parameter"):
        socal.page.report_html(ev, recalibrated=3)
    with pytest.raises(ValueError, match="'recalibrated_scores' parameter of report_html draws beside the raw"):
        socal.page.report_html(ev, recalibrated_scores=(np.ones((3, 2)) / 2, np.zeros((3, 2))))


def test_cli_report(tmp_path, capsys):
    from socal.cli import main

    csv = tmp_path / "demo.csv"
    assert main(["demo", "--write", str(csv), "--n", "2000"]) == 0
    out = tmp_path / "r.html"
    assert main(["evaluate", str(csv), "--mean", "mean", "--var", "var", "--labels", "y1,y2", "--n-boot", "20",
                 "--report", str(out)]) == 0
    page = out.read_text()
    assert "socal evaluate" in page and "--report" in page and page.count("data:image/png;base64,") == 1
    assert main(["evaluate", str(csv), "--mean", "mean", "--var", "var", "--labels", "y1,y2",
                 "--report", str(tmp_path / "r.png")]) != 0
    assert "give a file name ending in .html" in capsys.readouterr().err
