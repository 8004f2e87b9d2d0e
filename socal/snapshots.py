"""The law of k-snapshots: what k labels of an item say about f*, and how socal draws them.

An item with f*(x) = f gives a ~ Binomial(k, f) positives among k labels.  The all-pairs targets z1 = a/k and
z2 = a (a - 1) / (k (k - 1)) are unbiased for f* and f*^2 (:func:`targets`), the responses of every regression in
socal.  Where socal must assume a law of f* given its first two moments (the bootstrap world's f*, the calibration
test's free moments with k >= 3 labels) it takes the Beta law of :func:`beta_law`; :func:`target_covariance` is the
targets' covariance under it, and :class:`Snapshots` draws the world's label counts by inverse CDF from keyed
uniforms.
"""

from __future__ import annotations

import numpy as np

__all__ = ["targets", "beta_law", "beta_moments", "target_covariance", "target_covariances", "Snapshots",
           "TABLE_K"]

TABLE_K = 64  # rows with other k up to this many labels draw from a per-row table of their count's law


def targets(a, k):
    """Unbiased all-pairs targets: z1 = a/k estimates f*, z2 = a(a-1)/(k(k-1)) estimates f*^2 (k >= 2)."""
    z1 = a / k
    with np.errstate(invalid="ignore", divide="ignore"):
        z2 = np.where(k >= 2, a * (a - 1.0) / (k * (k - 1.0)), np.nan)
    return z1, z2


def beta_law(p1, p2):
    """The law of f* with mean p1 and second moment p2 that socal assumes where it must (the bootstrap world's f*,
    the calibration test's free moments with k >= 3 labels): (bern, point, s) with bern where the spread is the
    largest possible, p1 (1 - p1) (f* is Bernoulli(p1)), point where there is none (f* = p1), and otherwise
    Beta(p1 s, (1 - p1) s), s = p1 (1 - p1) / Var - 1 (mean and variance matched)."""
    var = np.clip(p2 - p1 * p1, 0.0, None)
    top = p1 * (1.0 - p1)
    bern = var >= top * (1 - 1e-9)
    point = (var <= 1e-12) & ~bern
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(bern | point, 1.0, top / np.where(var > 0, var, 1.0) - 1.0)
    return bern, point, s


def beta_moments(p1, p2):
    """E f^j, j = 1..4, of :func:`beta_law` (a point mass at p1 with no spread, Bernoulli(p1) at the largest spread,
    otherwise Beta): E f^(j+1) = E f^j (a + j) / (s + j), a = p1 s."""
    bern, point, s = beta_law(p1, p2)
    a = p1 * s
    mu = [p1]
    for j in range(1, 4):
        mu.append(mu[-1] * (a + j) / (s + j))
    mu2, mu3, mu4 = (np.where(point, p1 ** (j + 1), np.where(bern, p1, mu[j])) for j in (1, 2, 3))
    return p1, mu2, mu3, mu4


def target_covariance(mu1, mu2, mu3, mu4, k):
    """Var z1, Cov(z1, z2), Var z2 of the targets (:func:`targets`) when a ~ Binomial(k, f*) and E f*^j = mu_j.

    From the factorial moments E a^(j) = k^(j) E f^j: E z1^2 = (k^(2) mu2 + k mu1)/k^2; E z1 z2 = (k^(3) mu3 +
    2 k^(2) mu2)/(k k^(2)) since a a^(2) = a^(3) + 2 a^(2); E z2^2 = (k^(4) mu4 + 4 k^(3) mu3 + 2 k^(2) mu2)/k^(2)^2
    since (a^(2))^2 = a^(4) + 4 a^(3) + 2 a^(2).  For k = 2 the third and fourth moments drop out."""
    k2 = k * (k - 1.0)
    k3, k4 = k2 * (k - 2.0), k2 * (k - 2.0) * (k - 3.0)
    return ((k2 * mu2 + k * mu1) / (k * k) - mu1 * mu1, (k3 * mu3 + 2.0 * k2 * mu2) / (k * k2) - mu1 * mu2,
            (k4 * mu4 + 4.0 * k3 * mu3 + 2.0 * k2 * mu2) / (k2 * k2) - mu2 * mu2)


def target_covariances(p1, p2, k, R):
    """Per row, the covariance of the targets (z1 = a/k, z2 = a(a-1)/(k(k-1))) when a ~ Binomial(k, f*) and f* has
    the bootstrap world's law (:func:`beta_law`): columns Var z1, and for R = 2 also Cov(z1, z2),
    Var z2 (:func:`target_covariance`).  For k = 2 they depend on (p1, p2) alone, as the law of a does:
    Var z1 = (p1 + p2)/2 - p1^2, Cov = p2 (1 - p1), Var z2 = p2 (1 - p2), computed so when every row has k = 2.
    First order (R = 1): Var z1 = E z1^2 - p1^2 = p1/k + (k - 1)/k p2 - p1^2, which is p1 (1 - p1)/k when ``p2`` is
    None (f* = p1 on every item: the world of one label per item, where the spread of f* does not show) and adds
    (1 - 1/k) Var f* when items of one score differ (:func:`second_moment_fit`).  Returned as an (n, R') view of an
    (R', n) array, so each column is contiguous.
    """
    if R == 1:
        if p2 is None:
            return (p1 * (1.0 - p1) / k)[:, None]
        return np.maximum(p1 / k + (k - 1.0) / k * p2 - p1 * p1, 0.0)[:, None]
    out = np.empty((3, p1.shape[0]))
    if np.all(k == 2):
        np.subtract(0.5 * (p1 + p2), p1 * p1, out=out[0])
        np.multiply(p2, 1.0 - p1, out=out[1])
        np.multiply(p2, 1.0 - p2, out=out[2])
        return out.T
    out[0], out[1], out[2] = target_covariance(*beta_moments(p1, p2), k)
    return out.T


class Snapshots:
    """The bootstrap world's label counts a ~ Binomial(k, f*), f* with E f* = p1 and E f*^2 = p2, as a law per row
    prepared once and drawn by inverse CDF from one uniform per row (:meth:`draw`), so that keyed uniforms
    (:func:`socal.rowkeys.keyed_uniforms`) give every row the same counts in any chunk or order.

    For k = 2 the law of a depends on f* only through p1 and p2: (1 - 2 p1 + p2, 2 (p1 - p2), p2), whatever the
    spread of f*.  Other k take f* ~ Beta with those moments (a point mass when the spread is 0, Bernoulli(p1) at the
    largest spread p1 (1 - p1)), so a is Beta-binomial: its pmf is tabulated per row for k <= TABLE_K; beyond, f* is
    drawn by the inverse Beta CDF and a by the inverse Binomial CDF, from a second uniform.
    """

    def __init__(self, p1, p2, k):
        from scipy import stats

        k = np.asarray(k)
        self.n = k.shape[0]
        self.two = k == 2
        self.q0 = np.clip(1.0 - 2.0 * p1[self.two] + p2[self.two], 0.0, 1.0)
        self.q2c = 1.0 - np.clip(p2[self.two], 0.0, 1.0)
        other = np.flatnonzero(~self.two)
        k_o, p1_o = k[other].astype(np.int64), p1[other]
        bern, point, s = beta_law(p1_o, p2[other])
        alpha, beta = p1_o * s, (1.0 - p1_o) * s
        small = k_o <= TABLE_K
        # the tabulated rows: cumulative probabilities of a = 0..k, offset by the row's position (so one sorted array)
        rows = other[small]
        self.table_rows, self.table = rows, None
        if rows.size:
            kk = k_o[small]
            width = int(kk.max()) + 1
            j = np.arange(width)[None, :]
            valid = j <= kk[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                pmf = np.where(valid, stats.betabinom.pmf(j, kk[:, None], np.maximum(alpha[small], 1e-300)[:, None],
                                                           np.maximum(beta[small], 1e-300)[:, None]), 0.0)
                pmf_point = np.where(valid, stats.binom.pmf(j, kk[:, None], p1_o[small][:, None]), 0.0)
            pmf = np.where(point[small][:, None], pmf_point, pmf)
            b = bern[small]
            pmf[b] = 0.0
            pmf[b, 0] = 1.0 - p1_o[small][b]
            pmf[b, kk[b]] = p1_o[small][b]
            cdf = np.cumsum(pmf, axis=1)
            cdf /= cdf[np.arange(kk.size), kk][:, None]  # exact 1 at a = k whatever the rounding
            cdf = np.where(valid, cdf, 2.0)  # past a = k: never below a uniform
            self.width = width
            self.table = (cdf + 2.0 * np.arange(kk.size)[:, None]).ravel()  # rows' tables in disjoint ranges
        big = other[~small]
        self.big_rows = big
        if big.size:
            self.big = (k_o[~small], p1_o[~small], alpha[~small], beta[~small], bern[~small], point[~small])

    @property
    def needs_second(self):
        """Whether :meth:`draw` reads a second uniform (rows with more than TABLE_K labels)."""
        return self.big_rows.size > 0

    def draw(self, u, u2=None):
        """One draw of every row's count from uniforms ``u`` (and ``u2`` for rows with many labels)."""
        from scipy import special, stats

        a = np.empty(self.n)
        r = u[self.two]
        a[self.two] = (r >= self.q0).astype(float) + (r >= self.q2c)
        if self.table is not None:
            t = self.table_rows
            pos = np.searchsorted(self.table, u[t] + 2.0 * np.arange(t.size), side="right")
            a[t] = pos - self.width * np.arange(t.size)
        if self.big_rows.size:
            k, p1, alpha, beta, bern, point = self.big
            ub = u[self.big_rows]
            f = np.where(point, p1, 0.0)
            f = np.where(bern, (ub < p1).astype(float), f)
            mid = ~(bern | point)
            if mid.any():
                f[mid] = special.betaincinv(alpha[mid], beta[mid], ub[mid])
            a[self.big_rows] = stats.binom.ppf(u2[self.big_rows], k, f)
        return a
