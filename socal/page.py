"""A report to share: one self-contained HTML page with the verdict, the tables, the figures (embedded as PNG data,
so the file opens anywhere, offline) and the command and package versions that reproduce it.

``socal evaluate FILE ... --report report.html`` writes it; in Python, :func:`write_report` takes what
:func:`socal.evaluate` or :func:`socal.multiclass.evaluate_multiclass` returned (and, optionally, the held-out
evaluation of recalibrated scores: :func:`socal.evaluate_recalibrated`).  The figures need matplotlib (the ``plot``
extra).  The page carries a two-line script that counts the figures the browser decoded and writes the count
into the page ("figures: 2 of 2 shown"), so a reader, or a headless browser in a test, sees at once whether one
failed to load.
"""

from __future__ import annotations

import base64
import html
import io
import os
import platform
import sys

from .tables import html_table

__all__ = ["write_report", "report_html"]

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #1b1b1b; line-height: 1.45; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.8em;
     border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.verdict { font-size: 1.1em; padding: 0.8em 1em; border-left: 6px solid #888; background: #f6f6f6; }
.verdict.reject { border-color: #c0392b; background: #fbeeee; } .verdict.pass { border-color: #27ae60;
     background: #eef8f1; }
pre { background: #f8f8f8; padding: 0.8em; overflow-x: auto; font-size: 0.85em; white-space: pre-wrap; }
table.socal { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0; }
table.socal th, table.socal td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; }
table.socal th { background: #eee; } table.socal caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 0.85em; color: #555; } .meta { font-size: 0.85em; color: #444; }
"""

_SCRIPT = """
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.querySelectorAll("figure img"));
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  var el = document.getElementById("figure-status");
  el.textContent = "figures: " + ok + " of " + imgs.length + " shown";
  document.body.setAttribute("data-figures", ok + "/" + imgs.length);
});
"""


def _versions():
    out = {"python": platform.python_version()}
    for name in ("socal", "numpy", "scipy", "matplotlib", "pandas"):
        try:
            mod = __import__(name)
            out[name] = getattr(mod, "__version__", "?")
        except ImportError:
            pass
    if "socal" in out and out["socal"] == "?":
        from importlib.metadata import PackageNotFoundError, version

        try:
            out["socal"] = version("socal")
        except PackageNotFoundError:
            pass
    return out


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _figure(fig, caption):
    return (f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{_png(fig)}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def _verdict_class(pvalue, alpha=0.05):
    return "reject" if pvalue <= alpha else "pass"


def _binary_sections(ev, labels, counts, rng):
    from .plot import evaluation_figure

    parts = [f'<p class="verdict {_verdict_class(ev.test.pvalue)}">{html.escape(_headline(ev))}</p>',
             "<h2>The test and the size of the error</h2>", f"<pre>{html.escape(ev.summary(full_test=True))}</pre>",
             html_table(ev.frame(), caption="Test, CE2 and CE1 against the calibrated reference"),
             html_table(ev.test.frame(), caption="The test's parts and its regions (what the votes say there)")]
    figs = []
    if labels is not None or counts is not None:
        fig = evaluation_figure(ev.mean, ev.var, labels, counts=counts, h=ev.h, rng=rng)
        figs.append(_figure(fig, "Reliability of the means and of the variances before (red) and after (blue) "
                                 "second-order Platt scaling, fitted on half the items and drawn on the other half; "
                                 "below: where the residuals of the perturbed scores lie."))
    return parts, figs


def _headline(ev):
    """The verdict in one sentence: the test's decision, then the size of the error against the reference."""
    t = ev.test
    from .testing import fmt_p

    if hasattr(ev, "classes") and hasattr(ev.test, "holm"):  # multiclass
        p = t.pvalue
        word = "rejected" if p <= 0.05 else "not rejected"
        return (f"Second-order calibration {word} at level 0.05 (the smallest adjusted p-value of the trace, top-label "
                f"and class-wise parts: {fmt_p(p)}; {t.C} classes, n = {t.n:,}).")
    word = "rejected" if t.pvalue <= 0.05 else "not rejected"
    size = {"above reference": "the perturbed CE2 is above what a calibrated predictor would show",
            "above reference, not confirmed": "the perturbed CE2's interval lies above the reference, but the test "
                                              "does not confirm an error at 0.05",
            "within reference": "the perturbed CE2 is within what a calibrated predictor would show",
            "below reference": "the perturbed CE2 is below the calibrated reference",
            "not estimated": "CE2 was not estimated (see the text below)"}[ev.verdict]
    return f"Second-order calibration {word} at level 0.05 ({fmt_p(t.pvalue)}, n = {ev.n:,}); {size}."


def _multiclass_sections(ev, labels, counts, rng, scores=None, recalibrated_scores=None):
    from .plot import covariance_figure, multiclass_figure

    parts = [f'<p class="verdict {_verdict_class(ev.test.pvalue)}">{html.escape(_headline(ev))}</p>',
             "<h2>The tests and the size of the error, class by class</h2>", f"<pre>{html.escape(ev.summary())}</pre>",
             html_table(ev.frame(), caption="Each class (one against the rest) and the top label"),
             html_table(ev.test.frame([str(x) for x in ev.names]), caption="The multiclass test's parts")]
    figs = []
    if labels is not None or counts is not None:
        mean, cov = (None, None) if scores is None else scores
        fig = multiclass_figure(ev, labels, counts=counts, rng=rng, mean=mean, cov=cov)
        figs.append(_figure(fig, "Per class: the votes' frequency against the predicted mean (one against the rest); "
                                 "then each class's CE2 against its calibrated reference" +
                                 ("" if scores is None else "; last: the covariance's trace against the votes' "
                                  "squared distances") + "."))
        if scores is not None:
            fig = covariance_figure(*scores, labels, counts=counts, names=list(ev.names),
                                    recalibrated=recalibrated_scores)
            figs.append(_figure(fig, "The covariance seen from the votes: the reported tr Sigma, then each class's "
                                     "variance Sigma_cc, against the votes' squared distances (every pair of an "
                                     "item's votes), in quantile bins on log axes; a calibrated predictor lies on "
                                     "the dashed diagonal" + ("; raw and recalibrated scores on the same items"
                                                              if recalibrated_scores is not None else "") + "."))
    return parts, figs


def report_html(evaluation, labels=None, *, counts=None, recalibrated=None, title=None, command=None, rng=0,
                scores=None, recalibrated_scores=None) -> str:
    """The page as a string (:func:`write_report` writes it).  ``labels``/``counts``: the votes the evaluation read
    (needed for the figures; without them the page has the text and tables only).  ``recalibrated``: the held-out
    evaluation of recalibrated scores (:class:`socal.RecalibratedEvaluation`, or a multiclass evaluation of the
    recalibrated scores), shown as an "after" section.  ``command``: how the result was made (the CLI passes its
    command line; default: this Python process's command line).  ``scores``: a multiclass evaluation's raw (mean,
    cov), for the covariance's trace panel and the per-class variance panels (:func:`socal.plot.covariance_figure`);
    ``recalibrated_scores``: the recalibrated (mean, cov) of the same items, drawn beside them (before/after)."""
    from ._evaluate import Evaluation, RecalibratedEvaluation
    from .multiclass import MulticlassEvaluation

    if recalibrated_scores is not None and (scores is None or not isinstance(evaluation, MulticlassEvaluation)):
        raise ValueError("The 'recalibrated_scores' parameter of report_html draws beside the raw 'scores' of a "
                         "multiclass evaluation: pass 'scores' too.")
    if isinstance(evaluation, MulticlassEvaluation):
        parts, figs = _multiclass_sections(evaluation, labels, counts, rng, scores, recalibrated_scores)
        kind = f"{evaluation.test.C} classes"
    elif isinstance(evaluation, Evaluation):
        parts, figs = _binary_sections(evaluation, labels, counts, rng)
        kind = "binary"
    else:
        raise ValueError(f"The 'evaluation' parameter of report_html must be what socal.evaluate or "
                         f"socal.multiclass.evaluate_multiclass returned. Got {type(evaluation).__name__} instead.")
    after = []
    if recalibrated is not None:
        if isinstance(recalibrated, RecalibratedEvaluation):
            after = ["<h2>After recalibration (held-out items)</h2>",
                     f"<pre>{html.escape(recalibrated.summary())}</pre>",
                     html_table(recalibrated.frame(), caption="The recalibrated scores' test and CE2")]
        elif isinstance(recalibrated, MulticlassEvaluation):
            after = ["<h2>After recalibration (held-out items)</h2>",
                     f'<p class="verdict {_verdict_class(recalibrated.test.pvalue)}">'
                     f"{html.escape(_headline(recalibrated))}</p>", f"<pre>{html.escape(recalibrated.summary())}</pre>",
                     html_table(recalibrated.frame(), caption="Each class after recalibration")]
        else:
            raise ValueError(f"The 'recalibrated' parameter of report_html must be a RecalibratedEvaluation or a "
                             f"MulticlassEvaluation. Got {type(recalibrated).__name__} instead.")
    command = command if command is not None else " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:])
    versions = ", ".join(f"{k} {v}" for k, v in _versions().items())
    title = title or f"socal: second-order calibration report ({kind})"
    fig_html = "".join(figs) if figs else "<p>(no figures: pass the votes, and install matplotlib)</p>"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{_STYLE}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>"
            f'<p class="meta" id="figure-status">figures: {len(figs)} embedded</p>'
            + "".join(parts) + "<h2>Figures</h2>" + fig_html + "".join(after)
            + "<h2>Reproduce</h2>"
            f"<p class=\"meta\">Made by:</p><pre>{html.escape(command)}</pre>"
            f"<p class=\"meta\">Versions: {html.escape(versions)}.  The same data, seed and versions give the same "
            f"numbers.</p>"
            f"<script>{_SCRIPT}</script></body></html>\n")


def write_report(path, evaluation, labels=None, *, counts=None, recalibrated=None, title=None, command=None,
                 rng=0, scores=None, recalibrated_scores=None):
    """Write the self-contained HTML report of ``evaluation`` to ``path`` (parameters: :func:`report_html`).  The
    file is written whole or not at all (a temporary file renamed into place).  Returns the path."""
    from .files import write_text_atomic

    text = report_html(evaluation, labels, counts=counts, recalibrated=recalibrated, title=title, command=command,
                       rng=rng, scores=scores, recalibrated_scores=recalibrated_scores)
    write_text_atomic(path, text)
    return path
