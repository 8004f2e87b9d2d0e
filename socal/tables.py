"""Results as tables: ``frame()`` returns a pandas DataFrame where pandas is installed, and otherwise a dict of
columns (name -> list), which ``pandas.DataFrame(d)`` or ``polars.DataFrame(d)`` take as they are.  ``html_table``
renders either for ``_repr_html_`` (Jupyter) and for the shareable report (:mod:`socal.report`)."""

from __future__ import annotations

import html
import math
from typing import Any

__all__ = ["table", "html_table", "Tabular"]


def table(rows):
    """A list of dicts (one per row, the same keys) as a pandas DataFrame, or a dict of columns without pandas."""
    cols = {}
    for r in rows:
        for key in r:
            cols.setdefault(key, [])
    for r in rows:
        for key in cols:
            cols[key].append(r.get(key))
    try:
        import pandas as pd
    except ImportError:
        return cols
    return pd.DataFrame(cols)


def _cell(x):
    if isinstance(x, float):
        if math.isnan(x):
            return ""
        return f"{x:.4g}"
    return html.escape(str(x))


def _columns(frame):
    if isinstance(frame, dict):
        return list(frame), [list(v) for v in frame.values()]
    return [str(c) for c in frame.columns], [frame[c].tolist() for c in frame.columns]


def html_table(frame, caption=None):
    """An HTML table of a ``frame()`` (DataFrame or dict of columns), numbers to 4 significant digits."""
    names, cols = _columns(frame)
    n = len(cols[0]) if cols else 0
    head = "".join(f"<th>{html.escape(c)}</th>" for c in names)
    body = "".join("<tr>" + "".join(f"<td>{_cell(col[i])}</td>" for col in cols) + "</tr>" for i in range(n))
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f'<table class="socal">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


class Tabular:
    """Mixin for result classes: ``frame()`` from ``_rows()``, and ``_repr_html_`` (the summary above the table)."""

    def _rows(self):  # pragma: no cover - each result defines its rows
        raise NotImplementedError

    def frame(self) -> Any:
        """The result as a table (module notes: a pandas DataFrame, or a dict of columns without pandas)."""
        return table(self._rows())

    def _repr_html_(self) -> str:
        text = html.escape(self.summary()).replace("\n", "<br>")
        return f"<div class=\"socal-result\"><p>{text}</p>{html_table(self.frame())}</div>"
