"""The calibration test's reference law where the chi-square is light: the votes' law under the null, per group of
rows, and the statistic's parametric bootstrap drawn from it.

Why.  The test's statistic is a quadratic form in sums of per-row residuals; it is chi-square in the limit where each
basis direction collects many votes that depart from the typical one.  With rare events (means of 1e-3 to 0.1, a few
thousand items, two labels each), a direction of the variance conditions sees only items with two positive votes, and
may expect 0.004-2.4 of them: a small Poisson count read against a chi-square, which rejected calibrated predictors up
to 30 times too often at level 0.001 (docs/calibration_test.md, "The tail").  The null fixes what a parametric
bootstrap needs: with k = 2 labels the law of the count a is (1 - 2m + mu2, 2(m - mu2), mu2) with mu2 = m^2 + var,
whatever f*'s law; with k >= 3 labels the null leaves E[f*^3] and E[f*^4] free, and f* is drawn from laws that keep
the null's two moments and put each pool's third moment at the ends of an interval from the votes (:func:`shapes`: a
Beta mixed with the two-point law at 0 or at 1), the test reading the larger p-value; ``reference='beta'`` takes the
Beta law alone (:func:`socal.snapshots.beta_law`), as the bootstrap world of CE2 does.

Groups.  Rows are grouped by (grid cell of the test, k).  A group's rows share their cell's scores up to the cell's
width (1/512 of the mean, 1/21 of a decade of the relative variance), and its count a is drawn from the law at the
group's average moments (m-bar, mu2-bar): for k = 2 that is the rows' own law averaged, for k >= 3 the shaped law at
the averages.  The group's sums (:class:`GroupSums`) are a few floats per occupied (cell, k), added across chunks, files
and dask partitions as the test's cell sums are, so the reference is the same in any row order or chunking.

Drawing.  In a replicate, the group's count of rows whose a differs from the law's mode is Binomial(n_g, 1 - p_mode);
only those rows draw their a (from the law without its mode).  The cost is the number of groups plus the number of
such rows: small exactly where the chi-square is light (rare votes), which is where the reference is used
(:func:`effective_events`).
"""

from __future__ import annotations

import numpy as np

from .snapshots import beta_law, beta_moments

__all__ = ["GroupSums", "group_laws", "effective_events", "simulate_columns", "shapes", "third_moments", "two_point"]

_KEY = np.int64(1) << 32  # a group's key: cell * _KEY + k
GROUP_COLS = ("count", "m", "mu2", "beta", "beta_m", "m2v", "z3")  # sums per (cell, k): rows, m, m^2 + var, beta,
# beta m, m^2 - var, and from the votes a(a-1)(a-2) / (k(k-1)(k-2)) (rows with k >= 3; 0 for k = 2)
SHAPE_LEVEL = 0.99  # the confidence level of the interval for a pool's third moment of f* (:func:`shapes`)


class GroupSums:
    """Per (cell, k) sums of the rows' scores, mergeable: the law the simulated reference draws from.

    ``keys`` are sorted int64 (cell * 2^32 + k); ``sums`` has one row per :data:`GROUP_COLS` and one column per key.
    Partial sums are kept as they come and consolidated (sorted, added by key) on first read, so that a pass over many
    chunks costs one sort."""

    def __init__(self):
        self._parts = []
        self._keys = np.zeros(0, np.int64)
        self._sums = np.zeros((len(GROUP_COLS), 0))

    def add(self, cell, k, cols):
        """Add rows: their grid cells, label counts and the columns of :data:`GROUP_COLS` (arrays of one length)."""
        if cell.size:
            keys = cell.astype(np.int64) * _KEY + k.astype(np.int64)
            self._parts.append((keys, np.stack([np.asarray(c, float) for c in cols])))

    def _consolidate(self):
        if not self._parts:
            return
        keys = np.concatenate([self._keys] + [p[0] for p in self._parts])
        sums = np.concatenate([self._sums] + [p[1] for p in self._parts], axis=1)
        self._parts = []
        uniq, inv = np.unique(keys, return_inverse=True)
        out = np.zeros((sums.shape[0], uniq.size))
        for j in range(sums.shape[0]):
            out[j] = np.bincount(inv, weights=sums[j], minlength=uniq.size)
        self._keys, self._sums = uniq, out

    @property
    def keys(self):
        """The groups' sorted keys (cell * 2^32 + k)."""
        self._consolidate()
        return self._keys

    @property
    def sums(self):
        """The groups' sums, one row per GROUP_COLS."""
        self._consolidate()
        return self._sums

    @property
    def cells(self):
        """Each group's grid cell."""
        return (self.keys // _KEY).astype(np.intp)

    @property
    def k(self):
        """Each group's number of labels per item."""
        return (self.keys % _KEY).astype(np.int64)

    def merged(self, other):
        """These sums and ``other``'s, added by key (a new object; neither is changed)."""
        out = GroupSums()
        out._parts = [(self.keys, self.sums), (other.keys, other.sums)]
        out._consolidate()
        return out

    def __getstate__(self):
        return {"keys": self.keys, "sums": self.sums}

    def __setstate__(self, state):
        self._parts = []
        self._keys, self._sums = state["keys"], np.asarray(state["sums"], float)
        if self._sums.shape[0] == len(GROUP_COLS) - 1:  # saved before the votes' z3 was kept: not known (NaN), so
            # the reference reads the whole bracket of the third moment (:func:`shapes`)
            self._sums = np.vstack([self._sums, np.full((1, self._sums.shape[1]), np.nan)])


def two_point(m, mu2, end):
    """The two-point law of f* with mean m and second moment mu2 and one atom at ``end`` (0 or 1): (x, q), f* = x
    with probability q, else ``end``.  With an atom at 0, x = mu2 / m and q = m^2 / mu2; with one at 1, its mirror
    image (1 - f* has an atom at 0 with mean 1 - m).  Of all laws on [0, 1] with these two moments, these two have
    the smallest (atom at 0) and the largest (atom at 1) E f*^3: E f*^3 - mu2^2 / m = E[f* (f* - mu2/m)^2] >= 0, and
    the mirror argument on 1 - f*."""
    m = np.clip(m, 0.0, 1.0)
    mu2 = np.clip(mu2, m * m, m)
    mu, nu = (m, mu2) if end == 0 else (1.0 - m, 1.0 - 2.0 * m + mu2)  # the moments of f* or of 1 - f*
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(mu > 0, np.minimum(nu / np.where(mu > 0, mu, 1.0), 1.0), 0.0)
        q = np.where(nu > 0, mu * mu / np.where(nu > 0, nu, 1.0), 1.0)
    return (x, q) if end == 0 else (1.0 - x, q)


def third_moments(m, mu2):
    """E f*^3 of the two-point law with an atom at 0, of the Beta law (:func:`socal.snapshots.beta_law`) and of the
    two-point law with an atom at 1, all with mean m and second moment mu2: the smallest, the assumed and the
    largest value the null allows."""
    at0, at1 = (q * x ** 3 + (1.0 - q) * end for end in (0.0, 1.0) for x, q in [two_point(m, mu2, int(end))])
    return at0, beta_moments(np.clip(m, 0.0, 1.0), np.clip(mu2, m * m, m))[2], at1


def shapes(groups, pool, npool, level=SHAPE_LEVEL):
    """Per group, the shapes (t_lo, t_hi) in [-1, 1] of the laws its k >= 3 rows are drawn from (:func:`_law`): the
    ends of a confidence interval, at ``level``, for the votes' third moment in each pool (``pool``, one per group).
    Shape (2, groups).

    The null fixes E f* and E f*^2 only; with k >= 3 labels the statistic's law depends on E f*^3 and E f*^4 too, and
    where f* is far from a Beta (rare events that are sometimes certain: an atom at 1) the Beta law's reference
    rejected calibrated predictors up to 8x too often (docs/calibration_test.md, "Off the Beta").  The votes identify
    E f*^3: z3 = a(a-1)(a-2) / (k(k-1)(k-2)) is unbiased for it.  Per pool, O is the votes' sum of z3 and L, B, H the
    sums of the atom-at-0, Beta and atom-at-1 laws' E f*^3 over the same rows (:func:`third_moments`, the least, the
    assumed and the largest value the null allows).  A third moment sum E O = mu maps to the shape t = (mu - B) /
    (H - B) toward the atom at 1 where mu > B and t = -(B - mu) / (B - L) toward the atom at 0 otherwise: the law that
    mixes the Beta (weight 1 - |t|) with that two-point law (weight |t|) keeps the null's two moments and has E O = mu.

    Why an interval, not O itself: where the reference is needed at all, votes are sparse, and O rests on a handful
    of items with three or more positive votes; drawn at the point estimate (a pool with no such item reads as an
    atom at 0), the reference still rejected 0.15 at level 0.05 where the true law's gave 0.06.  The interval is
    Garwood's Poisson interval for E O (a sum of independent terms in [0, 1] is no more dispersed than a Poisson
    with its mean), and the test reads the larger p-value of its two ends: a Berger-Boos p-value over the nuisance
    E f*^3 (without their gamma term; its size is measured in docs/calibration_test.md, "Off the Beta")."""
    from scipy import stats

    S = groups.sums
    n = S[0]
    m, mu2 = S[1] / np.where(n > 0, n, 1.0), S[2] / np.where(n > 0, n, 1.0)
    many = groups.k >= 3
    lo, mid, hi = (n * x * many for x in third_moments(m, mu2))
    col = lambda w: np.bincount(pool, weights=w, minlength=npool)
    O, L, B, H = col(S[6] * many), col(lo), col(mid), col(hi)
    tail = (1.0 - level) / 2.0
    Ok = np.nan_to_num(O)
    ends = np.stack([np.where(Ok > 0, stats.chi2.ppf(tail, 2.0 * np.maximum(Ok, 1e-300)) / 2.0, 0.0),
                     stats.chi2.ppf(1.0 - tail, 2.0 * (Ok + 1.0)) / 2.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(H > B, (ends - B) / np.where(H > B, H - B, 1.0), 0.0)
        down = np.where(B > L, (ends - B) / np.where(B > L, B - L, 1.0), 0.0)
    t = np.clip(np.where(ends >= B, up, down), -1.0, 1.0)
    t = np.where(np.isnan(O), np.array([[-1.0], [1.0]]), t)  # votes' z3 not kept (an older file): the whole bracket
    return t[:, pool]


def _law(m, mu2, k, t=None):
    """The pmf of a = 0..k (rows) for groups of one k with average moments (m, mu2): the null's exact law for k = 2,
    otherwise the Beta-binomial with those moments (a Binomial at no spread, two atoms {0, k} at the largest), mixed
    with weight |t| (``t``, per group; None: 0) with the two-point law's Binomial mixture, its atom at 1 where t > 0
    and at 0 where t < 0 (:func:`shapes`)."""
    from scipy import stats

    m = np.clip(m, 0.0, 1.0)
    mu2 = np.clip(mu2, m * m, m)
    if k == 2:
        p = np.stack([1.0 - 2.0 * m + mu2, 2.0 * (m - mu2), mu2], axis=1)
    else:
        bern, point, s = beta_law(m, mu2)
        j = np.arange(k + 1)[None, :]
        a, b = (m * s)[:, None], ((1.0 - m) * s)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            p = stats.betabinom.pmf(j, k, np.maximum(a, 1e-300), np.maximum(b, 1e-300))
        p = np.where(point[:, None], stats.binom.pmf(j, k, m[:, None]), p)
        p[bern] = 0.0
        p[bern, 0], p[bern, k] = 1.0 - m[bern], m[bern]
        if t is not None and np.any(t != 0):
            p = np.clip(np.nan_to_num(p, nan=0.0), 0.0, None)
            p = p / p.sum(axis=1, keepdims=True)
            for end, side in ((1, t > 0), (0, t < 0)):
                if side.any():
                    x, q = two_point(m[side], mu2[side], end)
                    two = q[:, None] * stats.binom.pmf(j, k, x[:, None])
                    two[:, k * end] += 1.0 - q  # the atom at the end: a = k (at 1) or a = 0 (at 0)
                    w = np.abs(t[side])[:, None]
                    p[side] = (1.0 - w) * p[side] + w * two
    p = np.clip(np.nan_to_num(p, nan=0.0), 0.0, None)
    return p / p.sum(axis=1, keepdims=True)


def group_laws(groups, shift=None, shape=None, var_law=None):
    """The groups' laws, by distinct k: {k: (index of the groups, pmf (G_k, k + 1), m-bar, mu2-bar, v-bar, beta-bar)}.

    ``shape`` (one t per group, or None: the Beta law): the law of rows with k >= 3 (:func:`shapes`, :func:`_law`).

    ``shift`` (one value per group, or None): draw the votes at the means m-bar + shift (clipped to [0, 1]) with the
    reported variances, f*'s law of the partial null "variances right, means as the votes' fit says" that the
    variances part is read against (:func:`socal.testing._simulated_pvalues`).  The returned scores stay the reported
    ones: the statistic of a replicate is computed from them, as the observed one is.

    ``var_law`` (one value per group, or None): draw the votes with Var f* = var_law (capped at m (1 - m)) at the
    reported means: the partial null "means right, variances as the votes say" that the means part is read against
    as well (:func:`socal.testing._simulated_pvalues`)."""
    S = groups.sums
    n = S[0]
    m, mu2 = S[1] / n, S[2] / n
    beta = S[3] / n
    v = mu2 - m * m
    if shift is None:
        m_law, mu2_law = m, mu2
    else:
        m_law = np.clip(m + shift, 0.0, 1.0)
        mu2_law = m_law * m_law + v
    if var_law is not None:
        mu2_law = m_law * m_law + np.clip(var_law, 0.0, m_law * (1.0 - m_law))
    out = {}
    ks = groups.k
    for k in np.unique(ks):
        idx = np.flatnonzero(ks == k)
        t = None if shape is None else shape[idx]
        out[int(k)] = (idx, _law(m_law[idx], mu2_law[idx], int(k), t), m[idx], mu2[idx], v[idx], beta[idx])
    return out


def _values(k, m, mu2, v, beta):
    """Per group and a = 0..k, the per-row values whose sums the statistic reads: a/k, z2 = a(a-1)/(k(k-1)), and for
    k >= 3 the decorrelated products r1 w, w^2 and u^2 at the group's average scores (shape (5, G, k + 1))."""
    a = np.arange(k + 1)[None, :] / k
    z2 = np.arange(k + 1) * (np.arange(k + 1) - 1.0) / (k * (k - 1.0))
    z2 = np.broadcast_to(z2[None, :], (m.size, k + 1))
    a = np.broadcast_to(a, (m.size, k + 1))
    r1 = a - m[:, None]
    w = z2 - mu2[:, None] - beta[:, None] * r1
    u = z2 - 2.0 * m[:, None] * a + (m * m - v)[:, None]
    return np.stack([a, z2, r1 * w, w * w, u * u])


def effective_events(groups, cell_index, P):
    """The fewest effective votes any basis direction of the mean or the variance conditions collects: for each
    column phi of the basis ``P`` (occupied cells x directions; ``cell_index`` maps each group to its row of ``P``),
    kappa_2^2 / kappa_4 of sum_i phi(S_i) r_i, with r the residual a/k - m (the mean conditions) or
    z2 - 2 m a/k (the variance conditions) and kappa_j their cumulants under the groups' laws.  A sum of Poisson
    counts with mean lam has this ratio lam; the chi-square reference is accurate when it is large (the threshold,
    :data:`socal.testing.EVENTS_MIN`, was set by measurement: docs/calibration_test.md)."""
    k2 = np.zeros((2, P.shape[0]))
    k4 = np.zeros((2, P.shape[0]))
    n = groups.sums[0]
    for k, (idx, pmf, m, mu2, v, beta) in group_laws(groups).items():
        a = np.arange(k + 1)[None, :] / k
        z2 = (np.arange(k + 1) * (np.arange(k + 1) - 1.0) / (k * (k - 1.0)))[None, :]
        for j, x in enumerate((np.broadcast_to(a, pmf.shape), z2 - 2.0 * m[:, None] * a)):
            mu = (pmf * x).sum(axis=1, keepdims=True)
            c = x - mu
            c2, c4 = (pmf * c * c).sum(axis=1), (pmf * c ** 4).sum(axis=1)
            kap4 = np.maximum(c4 - 3.0 * c2 * c2, 0.0)
            k2[j] += np.bincount(cell_index[idx], weights=n[idx] * c2, minlength=P.shape[0])
            k4[j] += np.bincount(cell_index[idx], weights=n[idx] * kap4, minlength=P.shape[0])
    P2, P4 = P * P, P ** 4
    num = (k2 @ P2) ** 2
    den = k4 @ P4
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)
    ratio = np.where((k2 @ P2) > 0, ratio, np.inf)  # a direction no vote can move: not a reference's concern
    return float(ratio.min()) if ratio.size else float("inf")


def simulate_columns(groups, laws, cell_index, n_cells, reps, rng):
    """``reps`` replicates of the label-dependent cell sums under the groups' laws: a dict of arrays (reps, n_cells)
    with 'r1' (sum a/k - m), 'r2' (k = 2 rows: z2 - mu2; k >= 3: w = z2 - mu2 - beta r1), 'u' (z2 - 2 m a/k + m^2 -
    var), 'epi_u' ((1 - 1/k) u) and, from rows with k >= 3, 'p12', 'p22', 'r1_many', 'w_many', 'u_many', 'u2_many'.

    The scores' parts of each sum are the groups' own (sums of m, mu2, beta m, m^2 - var); the parts that the votes
    set are drawn, with a row's value read at its group's average scores (module notes)."""
    S = groups.sums
    n = S[0]
    out = {name: np.zeros((reps, n_cells)) for name in ("r1", "r2", "u", "epi_u", "p12", "p22", "r1_many", "w_many",
                                                         "u_many", "u2_many")}
    offsets = np.arange(reps)[:, None] * n_cells  # replicate offsets into the flattened (reps, n_cells) sums

    def add(name, where, values):  # values (reps, G): add to the named cell sums at the flat positions ``where``
        out[name] += np.bincount(where, weights=values.ravel(), minlength=reps * n_cells).reshape(reps, n_cells)

    for k, (idx, pmf, m, mu2, v, beta) in laws.items():
        G = idx.size
        ng = np.rint(n[idx]).astype(np.int64)
        vals = _values(k, m, mu2, v, beta)  # (5, G, k + 1)
        mode = pmf.argmax(axis=1)
        rows = np.arange(G)
        p_mode = pmf[rows, mode]
        others = rng.binomial(ng[None, :], np.clip(1.0 - p_mode, 0.0, 1.0)[None, :], size=(reps, G))
        base = vals[:, rows, mode]  # (5, G): every row at the mode
        tot = base[:, None, :] * ng[None, None, :].astype(float)  # (5, reps, G)
        tot = np.broadcast_to(tot, (5, reps, G)).copy()
        count = int(others.sum())
        if count:
            # the other rows' counts, from the law without its mode: an inverse CDF over each group's table
            cond = pmf.copy()
            cond[rows, mode] = 0.0
            tot_c = cond.sum(axis=1, keepdims=True)
            cond = np.where(tot_c > 0, cond / np.where(tot_c > 0, tot_c, 1.0), 0.0)
            cdf = np.cumsum(cond, axis=1)
            cdf[:, -1] = 1.0
            width = k + 1
            table = (cdf + 2.0 * rows[:, None]).ravel()
            rep_of = np.repeat(np.arange(reps * G), others.ravel())  # (replicate, group) of each drawn row
            grp = rep_of % G
            pos = np.searchsorted(table, rng.random(count) + 2.0 * grp, side="right")
            a = np.minimum(pos - width * grp, k)
            step = (vals - vals[:, rows, mode][:, :, None]).reshape(5, G * width)  # each value less the mode's
            delta = step[:, grp * width + a]  # (5, count)
            for j in range(5):
                tot[j] += np.bincount(rep_of, weights=delta[j], minlength=reps * G).reshape(reps, G)
        A, Z, P12, P22, U2 = tot
        gcell = (offsets + cell_index[idx][None, :]).ravel()  # each (replicate, group)'s flat cell
        r1 = A - S[1, idx][None, :]
        u = Z - 2.0 * m[None, :] * A + S[5, idx][None, :]
        add("r1", gcell, r1)
        add("u", gcell, u)
        add("epi_u", gcell, (1.0 - 1.0 / k) * u)
        if k == 2:
            add("r2", gcell, Z - S[2, idx][None, :])
        else:
            w = Z - S[2, idx][None, :] - beta[None, :] * A + S[4, idx][None, :]
            add("r2", gcell, w)
            add("w_many", gcell, w)
            add("r1_many", gcell, r1)
            add("u_many", gcell, u)
            add("p12", gcell, P12)
            add("p22", gcell, P22)
            add("u2_many", gcell, U2)
    return out
