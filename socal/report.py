"""The report text of ``socal estimate``: one line per estimate, and the table of the degrees Lepski's rule compared."""

from __future__ import annotations

__all__ = ["estimate_line", "candidates_table"]


def estimate_line(res):
    """One estimate in one line: the value, its interval and bound (and where a lower end of 0 comes from), the
    plug-in, the two terms, the degree, ridge and n."""
    ci = "" if res.ci is None else f"  {round(res.ci.level * 100)}% CI [{res.ci.low:.4f}, {res.ci.high:.4f}]"
    if res.null_pvalue is not None and res.null_pvalue >= 1 - res.ci.level:  # where the lower end comes from
        ci += f" (reaches 0: the calibration test of {res.kind.upper()} = 0 does not reject, p = {res.null_pvalue:.2f})"
    up = "" if res.upper is None else f"  {round(res.upper.level * 100)}% upper bound {res.upper.value:.4f}"
    what = "bias-corrected" if res.debiased is not None else "plug-in"
    plug = "" if res.debiased is None else f"plug-in {res.plugin:.4f}; "
    return (f"{res.kind.upper()} = {res.estimate:.4f} ({what}){ci}{up}  ({plug}mean term {res.mean_term:.4f}, "
            f"moment term {res.moment_term:.4f}; degree {res.degree}, ridge {res.ridge:g}, n {res.n})")


def candidates_table(res):
    """The degrees Lepski's rule compared (``res.candidates``), one line each: where the union interval comes from."""
    if res.ci is None:
        return "  (no bootstrap: one degree, the plug-in)"
    level = f"{round(res.ci.level * 100)}% CI"
    lines = [f"  {'degree':>6} {'ridge':>7} {'plug-in':>8} {'bias low':>9} {'bias high':>9} {'noise SD':>9} "
             f"{'estimate':>9}   {level:<18}"]
    for c in res.candidates:
        lines.append(f"  {c.degree:>6} {c.ridge:>7g} {c.plugin:>8.4f} {c.bias_low:>9.4f} {c.bias_high:>9.4f} "
                     f"{c.noise_sd:>9.4f} {c.estimate:>9.4f}   [{c.ci.low:.4f}, {c.ci.high:.4f}]"
                     + ("   <- reported" if c.chosen else ""))
    if res.null_pvalue is not None:
        lines.append(f"  calibration test of {res.kind.upper()} = 0 on the same scores: p = {res.null_pvalue:.3g}"
                     + (f" >= {1 - res.ci.level:.2g}, so the interval reaches 0" if res.null_pvalue >= 1 - res.ci.level
                        else ""))
    return "\n".join(lines)
