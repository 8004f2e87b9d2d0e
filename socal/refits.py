"""The refit pass: the bootstrap's refitted maps evaluated at the rows, resampled by Poisson(1) weights.

For each row and refit b the pass sums the refit's deviation |eta_b - score| under the row's Poisson(1) weight (the
mergeable form of resampling items, for the sampling of scores in the outer average), the world's truth, and the
truth and mean plug-in of the shrunken worlds that bracket the bias from the other side (:class:`RefitPass`).  Above
``refit_rows`` rows it runs on a keyed subset of about that many rows, with weights of mean 1 and variance
(subset / n), so that the weighted mean over the subset fluctuates as the full resample's would.  Rows that share a
key are resampled as the separate items they are; one kernel (:meth:`RefitPass._block_sums`) sums both kinds.
"""

from __future__ import annotations

import numpy as np

from .chebyshev import tensor_features, to_unit
from .deviations import score_moments
from .fitting import feasible
from .rowkeys import keyed_uniforms
from .weights import PoissonWeights, SharedKeys, poisson_weights, salt, shared_item_keys, shared_rows
from .world import Sums

__all__ = ["RefitPass", "THRESHOLDS", "N_SHRINK", "REFIT_ROWS", "gaussian_bias"]

REFIT_ROWS = 5_000  # the refits are evaluated on a keyed subset of about this many rows (all rows below it)
_BLOCK_FLOATS = 2**22  # the refit pass holds B x R x (l + 1) floats per row: rows per block keep that near 32 MB


THRESHOLDS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, np.inf)  # of the shrunken worlds, in refit SDs
N_SHRINK = 50  # refits whose deviations price each shrunken world (its mean plug-in only)


def _part(buffer, shape):
    """The leading part of a flat ``buffer`` as a contiguous array of ``shape``."""
    return buffer[: int(np.prod(shape))].reshape(shape)


def _std_over_refits(e, scratch):
    """``e.std(axis=1)`` (the refits' axis of an (R, B, rows) array) computed as numpy computes it (the mean, the
    squared deviations from it, their mean, its root), with the deviations written into ``scratch``: the same bits
    without a temporary of e's size."""
    mean = np.add.reduce(e, axis=1, keepdims=True)
    np.true_divide(mean, e.shape[1], out=mean)
    dev = np.subtract(e, mean, out=scratch)
    np.multiply(dev, dev, out=dev)
    var = np.add.reduce(dev, axis=1)
    return np.sqrt(var / e.shape[1])


def gaussian_bias(x, sigma):
    """E|x + sigma Z| - |x|, Z standard normal (the folded normal's mean less |x|): the plug-in's bias at a row whose
    truth is x and whose fitted value has Gaussian noise of SD sigma (0 where sigma is 0)."""
    from scipy import special

    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sigma > 0, x / (sigma * np.sqrt(2.0)), 0.0)
        out = sigma * np.sqrt(2.0 / np.pi) * np.exp(-t * t) + x * special.erf(t) - np.abs(x)
    return np.where(sigma > 0, out, 0.0)


def _soft(g, t):
    """Soft-thresholding: sign(g) max(|g| - t, 0)."""
    return np.sign(g) * np.maximum(np.abs(g) - t, 0.0)


class RefitPass:
    """Poisson-weighted deviation sums of the B refitted maps, and the plug-in of the shrunken worlds.

    Per row i and response r, e_bir = (refit b's prediction) - (the world's truth p_ir) is the fit's noise at the
    row and sigma_ir its spread over the refits.  The world with threshold tau has truth g_tau = soft(g, tau sigma),
    g = p - score: it keeps what stands out of the noise.  Its truth sums |g_tau| and its mean plug-in sums
    |g_tau + e_b| over the first N_SHRINK refits, per tau in THRESHOLDS (all sums, so chunks merge).

    Arrays are laid out (response, refit, row), so the sums over refits add whole contiguous rows.  ``weights`` (a
    :class:`PoissonWeights`) hands out the Poisson(1) weights, drawn once per chunk and shared by the candidates'
    bootstraps where they fit its budget.

    Rows that share their key with others (``duplicates``: the keys more than one row carries and their counts,
    from a :class:`KeyCensus`) are c separate items of one content, which keyed draws alone would move together: c
    items weighted alike by one Poisson(1) weight have a total of variance c^2 instead of c, and one keyed subset
    draw keeps all c or none (docs/numbers.md, "Rows of one content").  So each key of count c stands for c items
    (key, j), j < c, drawn as the other rows are: the subset keeps kappa ~ Binomial(c, q) of them (the inverse CDF
    at the key's own uniform), each kept item has its own Poisson(1) weight, and the key's c rows share the kept
    items' count and total weight equally, 1/c each, in whatever chunks they lie (the census counts rows over all
    chunks, so the shares add up to the whole).  The rows are identical, so which of them stands for which item
    changes nothing: the sums are those of c independent items.  Rows of a key of their own are drawn as before,
    with the same numbers.
    """

    def __init__(self, calmap, betas, seed, weights=None, fraction=1.0, inner=False, duplicates=None):
        self.calmap, self.betas, self.seed = calmap, betas, seed  # betas: (d, B, R)
        self.inner = inner  # also the analytic one-step bias of every refit (:func:`gaussian_bias`)
        self.weights = weights if weights is not None else PoissonWeights(0)
        self.fraction = fraction  # the share of rows evaluated (a keyed subset), and the weights' variance
        self.duplicates = duplicates  # (keys, counts) of the keys more than one row carries, or None

    counts_own_work = True  # the source hands the progress bar to each call: it counts the rows evaluated

    def __call__(self, index, m, v, a, k, bar=None):
        calmap = self.calmap
        basis, ndim = calmap.basis, calmap.ndim
        d, B, R = self.betas.shape
        vv = v if ndim == 2 else None
        keys = self.weights.row_keys(self.seed, index, m, vv, a, k)
        q = self.fraction
        # (R B, d) in the tensor layout, response-major; the world's truth (the fitted map, projected) from the same
        # product: its coefficients as R more rows
        coef = basis.to_tensor(self.betas.transpose(0, 2, 1).reshape(d, R * B)).reshape(R * B, -1)
        coef = np.concatenate([coef, basis.to_tensor(calmap.beta)[:R].reshape(R, -1)])
        found = shared_rows(keys, self.duplicates)
        shared = None
        if found is not None:  # these rows are items of a shared content: drawn per item below, the rest as before
            many, counts = found
            shared = self._shared(m[many], None if vv is None else vv[many], a[many], k[many], keys[many], counts)
            one = ~many
            m, vv, keys = m[one], (None if vv is None else vv[one]), keys[one]
        if q < 1.0:  # a keyed subset of the rows: the same rows whatever the chunking
            keep = keyed_uniforms(keys, salt("refit subset")) < q
            m, vv, keys = m[keep], (None if vv is None else vv[keep]), keys[keep]
        draw = self.weights.get(self.seed, index, keys, B)
        buf_wts = np.empty(min(self._rows(), m.size) * B)

        def weights(sl):
            wts = draw(sl)  # (rows, B)
            if q < 1.0:  # weights of mean 1 and variance q: resampling n items, seen through q n of them
                wts = np.subtract(wts, 1.0, out=_part(buf_wts, wts.shape))
                wts *= np.sqrt(q)
                wts += 1.0
            return wts

        sums = self._block_sums(m, vv, weights, coef, bar=bar)
        if shared is not None:
            ms, vs, wts, rowf, here, idle = shared
            if bar is not None and idle:
                bar.update(idle)
            sums = sums.merge(self._block_sums(ms, vs, lambda sl: wts[sl], coef, rowf, here, bar=bar))
        return sums

    def _rows(self):
        """Rows per block: B R (l + 1) floats per row, about _BLOCK_FLOATS in all."""
        d, B, R = self.betas.shape
        return max(64, _BLOCK_FLOATS // (B * R * (self.calmap.basis.degree + 1)))

    def _shared(self, m, v, a, k, keys, counts):
        """The rows of shared keys as the kept items they stand for (see the class): the evaluated groups' scores
        (m, v), their summed Poisson weights (groups, B), the kept items each stands for, its rows here, and the rows
        of keys that kept no item."""
        B = self.betas.shape[1]
        q = self.fraction
        groups = SharedKeys(keys, counts, m, v, a, k)
        c = groups.c
        if q < 1.0:  # kappa ~ Binomial(c, q) of the key's c items are kept, from the key's own uniform
            from scipy import stats

            kept = stats.binom.ppf(keyed_uniforms(groups.keys, salt("refit subset of shared keys")), c, q)
            kept = np.maximum(kept, 0.0).astype(np.int64)
        else:
            kept = c.astype(np.int64)
        live = kept[groups.group_key] > 0
        first, here, group_key = groups.first[live], groups.here[live], groups.group_key[live]
        share = here / c[group_key]  # of its key's items, those each group's rows stand for
        wts = np.zeros((0, B))
        if first.size:
            # item j of a key: its own key, from the key and j; its Poisson(1) weights as any row's
            used = np.unique(group_key)  # the keys with kept items, sorted
            items, starts = shared_item_keys(groups.keys[used], kept[used])
            wts = poisson_weights(items, self.seed, B).astype(float)
            if q < 1.0:  # mean 1 and variance q, as the rows of a key of their own
                wts = 1.0 + (wts - 1.0) * np.sqrt(q)
            at = np.searchsorted(used, group_key)
            wts = np.add.reduceat(wts, starts, axis=0)[at] * share[:, None]  # (groups, B): the groups' shares
        rowf = share * kept[group_key]  # the kept items each group's rows stand for
        idle = int(groups.here[~live].sum())  # rows of keys with no kept item: read, not evaluated
        return m[first], None if v is None else v[first], wts, rowf, here, idle

    def _block_sums(self, m, v, weights, coef, rowf=None, seen=None, bar=None):
        """The pass's sums over rows (m, v), block by block: ``weights(sl)`` the block's Poisson weights (rows, B);
        ``rowf`` None for rows of a key of their own (each row one item), else the items each row stands for (the
        truth's and the shrunken worlds' sums weight the rows by it); ``seen`` the rows each stands for on the
        progress bar (None: one each)."""
        calmap = self.calmap
        basis = calmap.basis
        d, B, R = self.betas.shape
        nb = min(B, N_SHRINK)
        num, den = np.zeros(B), np.zeros(B)
        truth = 0.0
        shrunk_truth, shrunk_plug = np.zeros(len(THRESHOLDS)), np.zeros(len(THRESHOLDS))
        inner_num, inner_data = np.zeros(B), 0.0
        u, w = to_unit(m, v)
        rows = self._rows()
        # flat buffers for the block's arrays, reused block after block (every step below writes into them); a
        # block's arrays are their leading parts, so they are contiguous and every sum adds in numpy's usual order
        size = min(rows, m.size)
        buf_both, buf_dev = np.empty((R * B + R) * size), np.empty(R * B * size)
        buf_shrunk = np.empty(R * nb * size)
        total = ((lambda x, f: x.sum()) if rowf is None else
                 (lambda x, f: x.reshape(-1, x.shape[-1]).sum(axis=0) @ f))
        for start in range(0, m.size, rows):
            sl = slice(start, min(start + rows, m.size))
            c = sl.stop - sl.start
            f = None if rowf is None else rowf[sl]
            phi = tensor_features(u[sl], w[sl], basis.degree, basis.deg_w)
            both = np.matmul(coef, phi, out=_part(buf_both, (R * B + R, c)))
            pred = np.clip(both[:R * B], 0.0, 1.0, out=both[:R * B]).reshape(R, B, -1)
            p = feasible(both[R * B:].T, project=True).T  # (R, rows)
            score = score_moments(m[sl], None if v is None else v[sl])  # (R, rows): the CE terms' scores
            dev = np.subtract(pred, score[:, None, :], out=_part(buf_dev, (R, B, c)))
            np.abs(dev, out=dev)
            s = dev[0] if R == 1 else np.add(dev[0], dev[1], out=dev[0])  # (B, rows)
            wts = weights(sl)
            num += np.einsum("ib,bi->b", wts, s)
            den += wts.sum(axis=0)
            e = np.subtract(pred, p[:, None, :], out=pred)
            sigma = _std_over_refits(e, _part(buf_dev, (R, B, c)))
            g = p - score
            truth += total(np.abs(g), f)
            if self.inner:  # refit b's own one-step bias, each row's noise N(0, sigma^2): sum over responses
                gb = np.add(e, g[:, None, :], out=_part(buf_dev, (R, B, c)))
                beta_b = gaussian_bias(gb, sigma[:, None, :]).sum(axis=0)  # (B, rows)
                inner_num += np.einsum("ib,bi->b", wts, beta_b)
                inner_data += total(gaussian_bias(g, sigma), f)
            en = e[:, :nb, :]
            out = _part(buf_shrunk, (R, nb, c))
            for j, tau in enumerate(THRESHOLDS):
                gt = np.zeros_like(g) if np.isinf(tau) else _soft(g, tau * sigma)
                shrunk_truth[j] += total(np.abs(gt), f)
                np.add(gt[:, None, :], en, out=out)
                shrunk_plug[j] += total(np.abs(out, out=out), f) / nb
            if bar is not None:
                bar.update(c if seen is None else int(seen[sl].sum()))
        read = float(m.size) if rowf is None else float(rowf.sum())
        return Sums.of(num=num, den=den, shrunk_truth=shrunk_truth, shrunk_plugin=shrunk_plug,
                       read_truth=np.array([read, truth]), inner_num=inner_num, inner_data=np.array([inner_data]))
