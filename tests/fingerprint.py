"""Which floating-point platform the committed outputs were made on, and whether this is it.

socal's random numbers are keyed by each row's values (``socal.rowkeys``), so that arrays, any row order, any
chunking and dask partitions give the same numbers.  Inputs that are themselves computed (perturbed scores,
recalibrated scores, a population's samples) can differ in their last bits between machines: OpenBLAS picks its
kernels by CPU and thread count (the same product can round differently in a block's tail), and numpy dispatches
its SIMD loops by CPU.  Until the keys read values rounded to 27 significant bits, a last-bit difference in a row
changed its key, so its CV fold and bootstrap draws were other draws: the estimate, interval and Monte Carlo numbers
then moved by their Monte Carlo error, not by round-off (on this project's two build machines, a README interval end
by 0.0016 and a notebook's by 0.0012; on a third, a notebook's estimate by 0.0070, where the other draws flipped
Lepski's choice of degree).  With rounded keys a row keeps its key unless its value crosses a rounding boundary (a
chance of about 2^-26 per ulp moved), so another machine should print the same digits; the tests still allow for
the rare row that does, and for a computation that differs by more than its last bits.

So the tests that compare with committed outputs (the README's printout, the notebooks, the audit's baseline) are
exact on the platform that made them and compare to a Monte Carlo tolerance elsewhere.  The platform is named by
:func:`fingerprint`: a hash of numpy's and OpenBLAS's results on fixed inputs (products of several shapes at the
thread count in use, a Cholesky factor, sums, and the transcendental functions the perturbation and the samplers
use), independent of socal's code, so that no change to socal can make its own outputs look like another
platform's.  :data:`RECORDED` is the fingerprint of the platform the committed outputs come from
(``tests/platform_fingerprint.txt``; rewrite it with ``python -m tests.fingerprint --write`` when regenerating them).
A notebook re-executed on another platform than the rest carries its own in its metadata
(``python -m tests.fingerprint --stamp notebooks/NAME.ipynb``, :func:`notebook_platform`).
"""

from __future__ import annotations

import hashlib
import pathlib
import sys

import numpy as np

FILE = pathlib.Path(__file__).with_name("platform_fingerprint.txt")


def fingerprint():
    """A short hash of this platform's floating-point results on fixed inputs (numpy and its BLAS only)."""
    rng = np.random.default_rng(20261127)
    h = hashlib.sha256()
    for (a, b, c) in [(7, 13, 5), (37, 53, 29), (91, 169, 1000), (402, 169, 806), (90, 45, 333), (2025, 402, 61)]:
        x, y = rng.standard_normal((a, b)), rng.standard_normal((b, c))
        h.update((x @ y).tobytes())
        h.update((x @ y[:, :1]).tobytes())
    s = rng.standard_normal((60, 60))
    h.update(np.linalg.cholesky(s @ s.T + 60 * np.eye(60)).tobytes())
    u = rng.random(10_001)
    for f in (np.exp, np.log, np.sin, np.cos, np.tan, np.arctan, np.cosh, np.tanh, np.log1p, np.expm1):
        h.update(f(u).tobytes())
    h.update(np.sum(u).tobytes())
    h.update(np.add.reduce(rng.standard_normal((300, 77)), axis=0).tobytes())
    return h.hexdigest()[:16]


RECORDED = FILE.read_text().split()[0] if FILE.exists() else None
SAME_PLATFORM = RECORDED == fingerprint()
NOTEBOOK_KEY = "socal_platform"  # a notebook's metadata entry naming the platform its outputs were made on


def notebook_platform(nb):
    """The platform a notebook's committed outputs were made on: its own stamp (``--stamp``, written when one
    notebook is re-executed on another platform than the rest), else :data:`RECORDED`."""
    return nb.metadata.get(NOTEBOOK_KEY, RECORDED)


if __name__ == "__main__":
    if "--write" in sys.argv:
        FILE.write_text(fingerprint() + "\n")
    if "--stamp" in sys.argv:  # python -m tests.fingerprint --stamp notebooks/01_rate.ipynb [...]: after executing them
        import nbformat

        for path in sys.argv[sys.argv.index("--stamp") + 1:]:
            nb = nbformat.read(path, as_version=4)
            nb.metadata[NOTEBOOK_KEY] = fingerprint()
            nbformat.write(nb, path)
            print(path, "stamped", fingerprint())
    print(fingerprint(), "recorded:", RECORDED, "same" if SAME_PLATFORM else "other")
