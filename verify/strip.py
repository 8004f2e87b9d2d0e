"""The perturbed calibration functions in the complex strip: mpmath evaluation and python-flint certification.

For a score distribution with atoms s_j (weights w_j, original calibration values e_j in [0, 1]) the 1-D perturbed
calibration function is eta = N / D with (Appendix, proof of Lemma "Analyticity", Eq. (Nt), (Dt))

    N(z) = sum_j w_j e_j sech((z - s_j)/h) / Z(s_j, h),     D(z) = sum_j w_j sech((z - s_j)/h) / Z(s_j, h).

Smooth densities are handled by mpmath quadrature of the same integrals.  Claims "for every z in a region" are
certified by covering the region with complex balls and evaluating with arb/acb interval arithmetic: a box counts
only when the ball result decides (python-flint comparisons are True only when certain).
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath as mp
import numpy as np
from flint import acb, arb

from socal import SechKernel

__all__ = ["Atoms", "TEST_DISTRIBUTIONS", "eta_mp", "nd_mp", "nd_smooth_mp", "certify", "eta_acb", "d_acb",
           "d2_acb", "max_abs_eta", "sub_strip_theta"]


@dataclass(frozen=True)
class Atoms:
    """A finitely supported score distribution on [0, 1] with original calibration values."""

    name: str
    s: tuple
    w: tuple
    e: tuple

    def normalisers(self, h, lo=0.0, hi=1.0):
        return tuple(float(z) for z in SechKernel(h, lo, hi).normalizer(np.array(self.s)))


# point masses, mixtures, eta_orig taking the values 0 and 1
TEST_DISTRIBUTIONS = (
    Atoms("two atoms, eta_orig 1/0", (0.3, 0.7), (0.5, 0.5), (1.0, 0.0)),
    Atoms("close atoms, eta_orig 1/0", (0.45, 0.55), (0.5, 0.5), (1.0, 0.0)),
    Atoms("three atoms 0/1/0", (0.2, 0.5, 0.8), (1 / 3, 1 / 3, 1 / 3), (0.0, 1.0, 0.0)),
    Atoms("interval ends", (0.0, 1.0), (0.7, 0.3), (0.0, 1.0)),
    Atoms("single atom", (0.6,), (1.0,), (0.8,)),
    Atoms("five-atom mixture", (0.1, 0.3, 0.5, 0.7, 0.9), (0.1, 0.3, 0.2, 0.3, 0.1), (0.05, 0.9, 0.2, 0.7, 1.0)),
)


def nd_mp(z, atoms, h):
    """(N(z), D(z)) at a complex point, in mpmath at the current precision."""
    z, h = mp.mpc(z), mp.mpf(h)
    N = D = mp.mpc(0)
    for s, w, e, Z in zip(atoms.s, atoms.w, atoms.e, atoms.normalisers(float(h))):
        k = mp.mpf(w) * mp.sech((z - mp.mpf(s)) / h) / mp.mpf(Z)
        N += mp.mpf(e) * k
        D += k
    return N, D


def eta_mp(z, atoms, h):
    N, D = nd_mp(z, atoms, h)
    return N / D


def nd_smooth_mp(z, density, eta_orig, h, *, error=False):
    """(N(z), D(z)) for a smooth score density on [0, 1] by mpmath quadrature (Eq. (Nt), (Dt)); with ``error``,
    also mpmath's estimate of the larger quadrature error (its difference between two quadrature degrees)."""
    z, h = mp.mpc(z), mp.mpf(h)
    gd = lambda x: 2 * mp.atan(mp.exp(x)) - mp.pi / 2  # noqa: E731

    def Z(s):
        return h * (gd((1 - s) / h) - gd(-s / h))

    pts = mp.linspace(0, 1, 17)
    N, eN = mp.quad(lambda s: eta_orig(s) * density(s) / Z(s) * mp.sech((z - s) / h), pts, error=True)
    D, eD = mp.quad(lambda s: density(s) / Z(s) * mp.sech((z - s) / h), pts, error=True)
    return (N, D, max(eN, eD)) if error else (N, D)


# -- ball arithmetic ----------------------------------------------------------------------------------------------
def _box(x0, x1, y0, y1):
    return acb(arb((x0 + x1) / 2, (x1 - x0) / 2), arb((y0 + y1) / 2, (y1 - y0) / 2))


def _terms_acb(z, atoms, h):
    h_b = arb(h)
    out = []
    for s, w, e, Z in zip(atoms.s, atoms.w, atoms.e, atoms.normalisers(h)):
        out.append((arb(e), arb(w) / arb(Z) * ((z - arb(s)) / h_b).sech()))
    return out


def d_acb(z, atoms, h):
    return sum((k for _, k in _terms_acb(z, atoms, h)), acb(0))


def eta_acb(z, atoms, h):
    terms = _terms_acb(z, atoms, h)
    return sum((e * k for e, k in terms), acb(0)) / sum((k for _, k in terms), acb(0))


def d2_acb(z1, z2, atoms2, h):
    """2-D D(z1, z2) = sum_j w_j sech((z1 - m_j)/h) sech((z2 - v_j)/h) / (Z1(m_j) Z2(v_j)), in ball arithmetic."""
    h_b = arb(h)
    k1 = SechKernel(h, 0.0, 1.0)
    k2 = SechKernel(h, 0.0, 0.25)
    tot = acb(0)
    for (m, v), w in zip(atoms2["points"], atoms2["w"]):
        Z = float(k1.normalizer(m)) * float(k2.normalizer(v))
        tot += arb(w) / arb(Z) * ((z1 - arb(m)) / h_b).sech() * ((z2 - arb(v)) / h_b).sech()
    return tot


def certify(predicate, x0, x1, y0, y1, *, max_depth=14, max_boxes=200_000):
    """Cover [x0, x1] x [y0, y1] by boxes on which ``predicate(acb_box)`` is certainly True.

    Returns a dict: ``certified`` (all boxes decided True), ``boxes`` (how many were evaluated), ``undecided``
    (boxes at the depth limit where the ball result could not decide; the claim is then INCONCLUSIVE there), and
    ``tree``: the cover itself, one letter per box in the order the boxes were taken from the stack (``1`` split
    into four, ``0`` certified, ``u`` undecided at the depth limit, ``x`` not evaluated once ``max_boxes`` ran
    out), which :func:`replay_cover` walks again.
    """
    stack = [(x0, x1, y0, y1, 0)]
    boxes = undecided = 0
    first_undecided = None
    tree = []
    while stack:
        a0, a1, b0, b1, depth = stack.pop()
        boxes += 1
        if boxes > max_boxes:
            undecided += len(stack) + 1
            tree.append("x" * (len(stack) + 1))
            break
        if predicate(_box(a0, a1, b0, b1)):
            tree.append("0")
            continue
        if depth >= max_depth:
            undecided += 1
            first_undecided = first_undecided or (a0, a1, b0, b1)
            tree.append("u")
            continue
        tree.append("1")
        stack += _quarters(a0, a1, b0, b1, depth)
    return {"certified": undecided == 0, "boxes": boxes, "undecided": undecided,
            "first_undecided_box": first_undecided, "tree": "".join(tree)}


def _quarters(a0, a1, b0, b1, depth):
    am, bm = (a0 + a1) / 2, (b0 + b1) / 2
    return [(a0, am, b0, bm, depth + 1), (am, a1, b0, bm, depth + 1), (a0, am, bm, b1, depth + 1),
            (am, a1, bm, b1, depth + 1)]


# The predicates a certificate's cover can name, each built from JSON parameters alone (replay has nothing else)
def _re_sech(params):
    return lambda z: z.sech().real > 0


def _re_d1(params):
    atoms, h = Atoms("cover", tuple(params["s"]), tuple(params["w"]), tuple(params["e"])), float(params["h"])
    return lambda z: d_acb(z, atoms, h).real > 0


def _re_d2_fixed(params):
    atoms2 = {"points": tuple(tuple(p) for p in params["points"]), "w": tuple(params["w"])}
    z2, h = acb(float(params["z2"])), float(params["h"])
    return lambda z: d2_acb(z, z2, atoms2, h).real > 0


COVER_PREDICATES = {"Re sech(z) > 0": _re_sech, "Re D(z) > 0": _re_d1, "Re D(z, c) > 0": _re_d2_fixed}


def cover_data(predicate, params, region, cert):
    """A cover as a certificate row's data: the predicate's name in :data:`COVER_PREDICATES`, its JSON parameters,
    the region [x0, x1, y0, y1] and the cover's tree (:func:`certify`)."""
    if predicate not in COVER_PREDICATES:
        raise ValueError(f"unknown cover predicate {predicate!r}; known: {sorted(COVER_PREDICATES)}")
    return {"predicate": predicate, "params": params, "region": [float(r) for r in region], "tree": cert["tree"]}


def replay_cover(data):
    """Re-decide a cover from its data alone: walk its tree over the region (the boxes are the tree's, so they tile
    the region by construction), evaluate the predicate in ball arithmetic on every box the tree calls certified,
    and return True if every one is, None if the tree has undecided boxes or a box the predicate does not certify
    now (the file claims what it cannot show), and raise ValueError if the tree does not fit the region (too short,
    too long, or a letter other than 0, 1, u, x)."""
    try:
        pred = COVER_PREDICATES[data["predicate"]](data["params"])
        x0, x1, y0, y1 = (float(r) for r in data["region"])
        tree = str(data["tree"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"a cover's data is malformed ({type(exc).__name__}: {exc}); it needs a known 'predicate' "
                         f"({', '.join(sorted(COVER_PREDICATES))}), its 'params', a 'region' of 4 numbers and a "
                         "'tree'") from exc
    stack, pos, out = [(x0, x1, y0, y1, 0)], 0, True
    while stack:
        box = stack.pop()
        if pos >= len(tree):
            raise ValueError(f"a cover's tree ends with {len(stack) + 1} box(es) of the region left")
        letter = tree[pos]
        pos += 1
        if letter == "1":
            stack += _quarters(*box)
        elif letter == "0":
            if not pred(_box(*box[:4])):
                out = None
        elif letter in "ux":
            out = None
        else:
            raise ValueError(f"a cover's tree has the letter {letter!r} at {pos - 1} (0, 1, u or x expected)")
    if pos != len(tree):
        raise ValueError(f"a cover's tree has {len(tree) - pos} letter(s) beyond the region's boxes")
    return out


def max_abs_eta(atoms, h, frac, *, x_range=(-0.5, 1.5), nx=401, ny=41):
    """Largest |eta(z)| on the sub-strip |Im z| <= frac * h pi/2 (grid search, then a local refinement)."""
    y_max = frac * h * np.pi / 2
    xs, ys = np.linspace(*x_range, nx), np.linspace(-y_max, y_max, ny)
    Zg = xs[None, :] + 1j * ys[:, None]
    num = np.zeros_like(Zg)
    den = np.zeros_like(Zg)
    for s, w, e, Z in zip(atoms.s, atoms.w, atoms.e, atoms.normalisers(h)):
        k = w / Z / np.cosh((Zg - s) / h)
        num += e * k
        den += k
    vals = np.abs(num / den)
    i, j = np.unravel_index(np.argmax(vals), vals.shape)
    best_z = complex(Zg[i, j])
    # refine on a finer local grid (still inside the sub-strip)
    dx, dy = (xs[1] - xs[0]), (ys[1] - ys[0]) if ny > 1 else 0.0
    for _ in range(3):
        lx = np.linspace(best_z.real - dx, best_z.real + dx, 21)
        ly = np.clip(np.linspace(best_z.imag - dy, best_z.imag + dy, 21), -y_max, y_max)
        cand = [complex(a, b) for a in lx for b in ly]
        with mp.workdps(30):
            vals_c = [abs(eta_mp(c, atoms, h)) for c in cand]
        k = int(np.argmax(vals_c))
        best_z, dx, dy = cand[k], dx / 10, dy / 10
    with mp.workdps(30):
        best = abs(eta_mp(best_z, atoms, h))
    return float(best), best_z


def sub_strip_theta(h, frac):
    """theta = 2 rho + sqrt(4 rho^2 + 1) for the sub-strip rho = frac * h pi / 2."""
    rho = frac * h * np.pi / 2
    return 2 * rho + np.sqrt(4 * rho**2 + 1)
