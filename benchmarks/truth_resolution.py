"""Where the exact truth's quadrature stops resolving the kernel: its error estimate against its actual error.

``socal.truth.discrete_ce2`` and ``discrete_ce1`` integrate on fixed Gauss-Legendre panels and estimate their error
as the change on panels twice as wide.  For each bandwidth h and panel count, this prints the value, that estimate,
the actual error against a much finer quadrature (2,048 panels for CE2, 65,536 for CE1), and whether the estimate
bounds it, with h in panel widths (h x panels on the mean axis).  Rows below ``socal.truth.MIN_KERNEL_PANELS``
(0.1) are computed with the check switched off, to show why they are refused.  Populations: the toy population
(6 atoms) and 40 continuous atoms, calibrated (the reference ``socal.evaluate`` reads against).

    python benchmarks/truth_resolution.py
"""

from __future__ import annotations

import numpy as np

import socal
from socal import truth


def _quadrature(kind, h, atoms, panels):
    """(value, error estimate) of the public quadrature, with the resolution check off for the refused rows."""
    m, v, w, e1, e2 = atoms
    limit, truth.MIN_KERNEL_PANELS = truth.MIN_KERNEL_PANELS, 0.0
    try:
        got = (truth.discrete_ce1(h, m, w, e1, panels=panels) if kind == "ce1"
               else truth.discrete_ce2(h, m, v, w, e1, e2, panels=panels))
    finally:
        truth.MIN_KERNEL_PANELS = limit
    return got.value, got.error


def main():
    pop = socal.synthetic.toy_population()
    e1, e2 = pop.eta_orig
    rng = np.random.default_rng(0)
    m = rng.uniform(0.05, 0.95, 40)
    v = rng.uniform(0, 0.8, 40) * m * (1 - m)
    populations = {"toy": (pop.means, pop.vars, pop.weights, e1, e2),
                   "40 calibrated atoms": (m, v, np.full(40, 1 / 40), m, m**2 + v)}
    fine_panels = {"ce1": 2**16, "ce2": 2048}
    print(f"{'population':<20} {'kind':<4} {'h':>7} {'panels':>6} {'h x panels':>10} {'value':>9} {'estimate':>9} "
          f"{'actual':>9}  bounds?")
    for name, atoms in populations.items():
        for kind, panel_list in (("ce1", (256, 1024, 2048)), ("ce2", (128, 256, 512, 1024))):
            for h in (3e-3, 1e-3, 3e-4, 1e-4, 3e-5):
                ref, ref_err = _quadrature(kind, h, atoms, fine_panels[kind])
                for panels in panel_list:
                    value, est = _quadrature(kind, h, atoms, panels)
                    actual = abs(value - ref)
                    ratio = h * panels
                    mark = "" if ratio >= truth.MIN_KERNEL_PANELS else "  (refused)"
                    print(f"{name:<20} {kind:<4} {h:>7.0e} {panels:>6} {ratio:>10.3g} {value:>9.5f} {est:>9.1e} "
                          f"{actual:>9.1e}  {'yes' if actual <= est + ref_err else 'NO'}{mark}", flush=True)


if __name__ == "__main__":
    main()
