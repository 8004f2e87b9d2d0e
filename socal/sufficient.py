"""Mergeable sufficient statistics of the tensor-Chebyshev fit: the one pass over the data.

Every quantity the fit and the cross-validation need is a sum over rows (module docstring of
:mod:`socal.chebyshev`): per fold f, the mixed moments

.. math::  M^{(f)}_{pq} = \\sum_{i \\in f} T_p(u_i) T_q(w_i), \\qquad p, q \\le 2L,

the response-weighted moments :math:`Z^{(f)}_{r,ab} = \\sum_{i\\in f} z_{ir} T_a(u_i) T_b(w_i)` (a, b <= L), the sums
of squared responses and the row counts, for a degree cap L.  Every degree up to L reads a leading block of them.
Sums add, so statistics of chunks, files or dask partitions :meth:`~SufficientStats.merge` exactly (up to float
summation order) and associatively, whatever the chunking.

Fold assignment does not depend on how the data are split into chunks or in what order they come: each row's fold is
a seeded hash (splitmix64) of its content, the float bits of (mean, var) and of its regression targets, mapped to a
uniform U in [0, 1); K-fold puts the row in fold floor(K U), a hold-out split of fraction p in fold 1 when U < p.
Identical rows share a fold (a duplicated row never leaks from training to validation).

The second pass that the CE average needs (the absolute deviations at a fitted map, not linear in the data) is
:class:`socal.deviations.DeviationStats`.
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import warnings
import zipfile
from typing import Any

import numpy as np

from .files import atomic_write
from ._typing import ArrayLike, Counts, Seed
from ._validation import check_float, check_int, check_rng
from .sources import check_rows, is_empty_chunk
from .snapshots import targets
from .chebyshev import TensorBasis, grouped_moments, to_unit
from .degrees import DEFAULT_FOLDS, DEFAULT_MAX_DEGREE, MAX_DEGREE
from .weights import salt
from .rowkeys import (KEY_BITS, KeyCensus, exact_hash, keyed_uniforms, row_hash, to_unit_interval,
                      valid_key_bits)

__all__ = ["SufficientStats", "target_classes", "response_moments", "FORMAT_VERSION"]

FORMAT_VERSION = 1
_MAX_CLASSES = 64  # target values grouped as classes up to this many; beyond, weighted moments


def target_classes(a, k, R):
    """Group items by their (positives, trials) so the targets take one value per class.

    Returns (cls, vals): cls[i] the class of item i, vals[c] the R target values of class c (z1, z2 or z1 only).
    """
    a_int, k_int = a.astype(np.int64), k.astype(np.int64)
    if k_int.size and np.all(k_int == k_int[0]) and k_int[0] < 4096:  # one small k: the class is the count itself
        kk = int(k_int[0])
        cls = a_int
        z1, z2 = targets(np.arange(kk + 1, dtype=float), np.full(kk + 1, float(kk)))
    else:  # unique (positives, trials) pairs; no packed key, so no overflow whatever the counts
        uniq, cls = np.unique(np.column_stack([a_int, k_int]), axis=0, return_inverse=True)
        z1, z2 = targets(uniq[:, 0].astype(float), uniq[:, 1].astype(float))
    vals = np.column_stack([z1, z2])[:, :R]
    return cls.ravel(), vals


def response_moments(u, w, Z, deg_u, deg_w, *, floats=2**22, angles=None):
    """W[j, p, q] = sum_i Z[i, j] T_p(u_i) T_q(w_i) for every response column j of Z, shape (J, deg_u+1, deg_w+1).

    A few columns (J <= 8): one NUFFT where it pays, otherwise per chunk of rows and column the product
    (T_u diag(Z_j)) T_w' of the two axes' Chebyshev tables, which never forms the d x chunk tensor features (the
    same flops without the table's memory traffic).  Many columns (the bootstrap's B label sets): one product
    Z' Phi' per chunk with the tensor-feature table Phi (:func:`socal.chebyshev.tensor_features`), whose size is
    kept near ``floats``.  ``angles``: a :class:`socal.chebyshev.ScoreAngles` of the same rows, which the NUFFT reads
    instead of computing them again.
    """
    from .chebyshev import cheb_rows, tensor_features, use_nufft

    n, J = Z.shape
    if J <= 8 and use_nufft(n, (deg_u + 1) * (deg_w + 1), True, weighted=True, one_dim=deg_w == 0):  # one NUFFT
        from . import nufft

        return nufft.weighted_moments(u, w, Z, deg_u, deg_w, angles=angles)
    if J <= 8:
        W = np.zeros((J, deg_u + 1, deg_w + 1))
        chunk = max(64, floats // (4 * (deg_u + deg_w + 2)))
        for start in range(0, n, chunk):
            sl = slice(start, start + chunk)
            Tu, Tw = cheb_rows(u[sl], deg_u), cheb_rows(w[sl], deg_w).T
            for j in range(J):
                W[j] += (Tu * Z[sl, j]) @ Tw
        return W
    d = (deg_u + 1) * (deg_w + 1)
    chunk = max(64, floats // d)
    W = np.zeros((J, d))
    for start in range(0, n, chunk):
        sl = slice(start, start + chunk)
        W += Z[sl].T @ tensor_features(u[sl], w[sl], deg_u, deg_w).T
    return W.reshape(J, deg_u + 1, deg_w + 1)


class SufficientStats:
    """Per-fold moments of a tensor-Chebyshev fit up to a degree cap: update, merge, save, load.

    Parameters
    ----------
    max_degree : int
        Degree cap L per axis (0 to :data:`socal.degrees.MAX_DEGREE`, 200).  Fits of any degree <= L are read from
        the statistics; memory is O(folds L^2) whatever the number of rows (at L = 44 and 5 folds: 0.4 MB).
    ndim : {2, 1}
        2: statistics of the regressions of both targets on (mean, var) (for :func:`socal.ce2`,
        :class:`socal.SecondOrderPlatt`); 1: of a/k on the mean only (for :func:`socal.ce1`; labels may then have
        k >= 1 columns).
    folds : int
        K of K-fold cross-validation (2..100).
    holdout : float, optional
        Instead of K folds, one hold-out split of this fraction (fold 1 validates).
    rng : numpy.random.Generator or int, optional
        Seeds the fold hash (None: a fixed salt of 0, so fold assignment is deterministic by default).  Statistics
        can be merged only when they were built with the same seed.
    responses : {None, 1, 2}
        Regression targets: 2 (the default in 2-D) both a/k and a(a-1)/(k(k-1)), labels with k >= 2; 1 (the
        default in 1-D) a/k only, labels with k >= 1 (first-order fits).  1-D with 2 responses is the second-order
        recalibrator of the mean alone.

    Attributes
    ----------
    M : ndarray, shape (F, 2L+1, 2L_w+1)
        Mixed moments per fold (L_w = L in 2-D, 0 in 1-D).
    Z : ndarray, shape (F, R, L+1, L_w+1)
        Response-weighted moments per fold (R = 2 in 2-D: targets a/k and a(a-1)/(k(k-1)); R = 1 in 1-D).
    zz : ndarray, shape (F, R)
        Sums of squared responses.
    count : ndarray, shape (F,)
        Rows per fold.
    key_bits : int or None
        The rule of the row keys the folds were drawn by (:data:`socal.rowkeys.KEY_BITS`, the mantissa bits a key
        reads); None for statistics loaded from a file saved while keys read exact bits.  Such statistics fit as
        saved, but rows cannot be added to them nor they merged with others (a ValueError): the folds would mix two
        rules, and no fresh build of the same rows would give those numbers.

    Examples
    --------
    >>> import numpy as np, socal
    >>> pop = socal.synthetic.toy_population()
    >>> m, v, y = pop.sample(4000, h=1/16, rng=0)
    >>> a = socal.SufficientStats(max_degree=8, rng=0).update(m[:2500], v[:2500], y[:2500])
    >>> b = socal.SufficientStats(max_degree=8, rng=0).update(m[2500:], v[2500:], y[2500:])
    >>> whole = socal.SufficientStats(max_degree=8, rng=0).update(m, v, y)
    >>> bool(np.allclose((a + b).M, whole.M, rtol=1e-12, atol=1e-9)), (a + b).n
    (True, 4000)
    """

    def __init__(self, *, max_degree: int = DEFAULT_MAX_DEGREE, ndim: int = 2, folds: int = DEFAULT_FOLDS,
                 holdout: float | None = None, rng: Seed = None, responses: int | None = None) -> None:
        func = "SufficientStats"
        self.max_degree = check_int(max_degree, "max_degree", func, 0, MAX_DEGREE)
        if isinstance(ndim, bool) or ndim not in (1, 2):
            raise ValueError(f"The 'ndim' parameter of {func} must be 1 or 2. Got {ndim!r} instead.")
        self.ndim = int(ndim)
        if responses is None:
            responses = 2 if self.ndim == 2 else 1
        if isinstance(responses, bool) or responses not in (1, 2):
            raise ValueError(f"The 'responses' parameter of {func} must be None, 1 or 2. Got {responses!r} instead.")
        self.n_responses = int(responses)
        self.holdout = check_float(holdout, "holdout", func, 0.0, 1.0, lo_open=True, hi_open=True, allow_none=True)
        if self.holdout is not None and not isinstance(folds, bool) and folds != 5:
            raise ValueError(f"The 'folds' parameter of {func} ({folds!r}) would be ignored with "
                             f"holdout={self.holdout!r}: one hold-out split replaces the K folds; pass one of them.")
        self.folds = 2 if self.holdout is not None else check_int(folds, "folds", func, 2, 100)
        self.salt = 0 if rng is None else int(check_rng(rng, "SufficientStats").integers(0, 2**63 - 1, dtype=np.int64))
        self.key_bits = KEY_BITS  # the keys' rule the rows' folds were drawn by (None: read from a file without it)
        self._zero()

    def _zero(self):
        L, Lw, F, R = self.max_degree, self.deg_w, self.folds, self.n_responses
        self.M = np.zeros((F, 2 * L + 1, 2 * Lw + 1))
        self.Z = np.zeros((F, R, L + 1, Lw + 1))
        self.zz = np.zeros((F, R))
        self.count = np.zeros(F)

    # -- layout ----------------------------------------------------------------------------------------------------
    @property
    def deg_w(self):
        return self.max_degree if self.ndim == 2 else 0

    @property
    def basis(self):
        return TensorBasis(self.max_degree, self.ndim)

    @property
    def n(self):
        """Rows seen."""
        return int(round(float(self.count.sum())))

    @property
    def splits(self):
        """The folds that validate in turn (all K for K-fold; fold 1 for a hold-out split)."""
        return (1,) if self.holdout is not None else tuple(range(self.folds))

    def _config(self):
        return {"max_degree": self.max_degree, "ndim": self.ndim, "folds": self.folds, "holdout": self.holdout,
                "salt": self.salt, "n_responses": self.n_responses, "key_bits": self.key_bits}

    def __setstate__(self, state):
        """Unpickling: statistics pickled before the keys' rule was recorded (no ``key_bits``) were built with
        exact-bit keys, and are marked so, as :meth:`load` marks such a file (with the same warning)."""
        self.__dict__.update(state)
        if "key_bits" not in state:
            self.key_bits = None
            warnings.warn(self._key_rule_message("they fit as pickled, but rows cannot be added to them"),
                          UserWarning, stacklevel=2)

    def copy(self) -> SufficientStats:
        """An independent copy (the arrays are copied)."""
        out = object.__new__(type(self))
        out.__dict__.update(self._config())
        out.M, out.Z, out.zz, out.count = self.M.copy(), self.Z.copy(), self.zz.copy(), self.count.copy()
        return out

    def empty_like(self) -> SufficientStats:
        """Statistics with the same cap, folds and seed and no rows (for another chunk or worker)."""
        out = self.copy()
        out._zero()
        return out

    # -- the pass over the data ------------------------------------------------------------------------------------
    def update(self, mean: ArrayLike, var: ArrayLike | None = None, labels: ArrayLike | None = None, *,
               counts: Counts | None = None) -> SufficientStats:
        """Add a chunk: scores ``mean`` (and ``var`` in 2-D), labels (n, k) 0/1 or ``counts=(positives, trials)``.

        Returns ``self``.  The same validation as :func:`socal.ce2` (or :func:`socal.ce1` in 1-D).  A chunk added
        on its own cannot see the other chunks' rows, so rows of one content (the same scores and labels) share a
        fold here, where :func:`socal.ce2` on arrays, chunks or dask partitions spreads them over the folds as
        separate items (:meth:`add_targets`); the two agree when no two rows are alike (perturbed scores).
        """
        func = "SufficientStats.update"
        if self.ndim == 1 and var is not None:
            raise ValueError(f"The 'var' parameter of {func} must be None for 1-D statistics (ndim=1). "
                             f"Got an array instead.")
        if is_empty_chunk(mean, var, labels, counts):  # adds nothing, as in ce2's chunks (socal.sources)
            return self
        return self.add_validated(*check_rows(func, self.ndim, mean, var, labels, counts, self.n_responses))

    def add_validated(self, m: np.ndarray, v: np.ndarray | None, a: np.ndarray, k: np.ndarray,
                      fold: np.ndarray | None = None, repeats: tuple | str | None = None) -> SufficientStats:
        """Add rows already validated (:func:`socal.sources.check_rows`): scores (m, v or None), positives ``a`` and
        trials ``k`` as floats; ``fold`` overrides the hash; ``repeats`` as in :meth:`add_targets`."""
        z1, z2 = targets(a, k)
        zs = np.column_stack([z1, z2])[:, : self.n_responses]
        return self.add_targets(m, v, zs, fold=fold, classes=target_classes(a, k, self.n_responses), repeats=repeats)

    def fold_hash(self, mean: np.ndarray, var: np.ndarray | None, zs: np.ndarray) -> np.ndarray:
        """The uint64 content hash each row's fold is read from (validated float arrays; ``zs`` the targets)."""
        return row_hash(mean, var, zs, self.salt)

    def fold_of(self, mean: np.ndarray, var: np.ndarray | None, zs: np.ndarray,
                hashes: np.ndarray | None = None) -> np.ndarray:
        """The fold of each row (validated float arrays; ``zs`` the (n, R) targets; ``hashes`` its
        :meth:`fold_hash` when already computed)."""
        U = to_unit_interval(self.fold_hash(mean, var, zs) if hashes is None else hashes)
        if self.holdout is not None:
            return (U < self.holdout).astype(np.intp)
        return np.minimum((U * self.folds).astype(np.intp), self.folds - 1)

    def _fold_counts(self, keys, c):
        """(keys, F) fold counts of the c items of each repeated content: Multinomial(c; the folds' shares), drawn
        as sequential binomials by inverse CDF from the key's own uniforms (stream 'fold counts', fold), so that the
        same key gets the same counts in any chunk."""
        from scipy import stats

        F = self.folds
        share = np.full(F, 1.0 / F) if self.holdout is None else np.array([1.0 - self.holdout, self.holdout])
        out = np.zeros((keys.size, F))
        left, rest = c.astype(float), 1.0
        for f in range(F - 1):
            p = min(share[f] / rest, 1.0) if rest > 0 else 1.0
            draw = stats.binom.ppf(keyed_uniforms(keys, salt("fold counts", f)), left, p)
            out[:, f] = np.clip(draw, 0.0, left)
            left = left - out[:, f]
            rest -= share[f]
        out[:, F - 1] = left
        return out

    def _add_repeats(self, m, v, zs, hashes, counts):
        """Rows whose content ``counts`` rows carry in all (``hashes`` their fold hashes): each content's c items are
        spread over the folds as c rows of their own would be (:meth:`_fold_counts`), and this chunk's rows of it
        carry their share, 1/c each, of every fold's count, so the chunks' statistics add up to the whole's.

        Rows share a hash when their scores agree to the hash's rounding (:func:`socal.rowkeys._bits`), not only when
        they are identical: each row is evaluated at its own exact scores, the identical ones once per group."""
        keys, key_of = np.unique(hashes, return_inverse=True)
        _, first, here = np.unique(exact_hash(m, v, zs), return_index=True, return_counts=True)
        c = counts[first].astype(float)  # the items of each exact group's key
        per_key = np.zeros(keys.size)
        per_key[key_of[first]] = c
        W = self._fold_counts(keys, per_key)[key_of[first]] * (here / c)[:, None]  # (exact groups, F)
        u, w = to_unit(m[first], None if v is None else v[first])
        z = zs[first]
        L, Lw, F, R = self.max_degree, self.deg_w, self.folds, self.n_responses
        self.M += response_moments(u, w, W, 2 * L, 2 * Lw)
        cols = (W[:, :, None] * z[:, None, :]).reshape(first.size, F * R)  # column f R + r: W_f z_r
        self.Z += response_moments(u, w, cols, L, Lw).reshape(F, R, L + 1, Lw + 1)
        self.zz += W.T @ (z * z)
        self.count += W.sum(axis=0)

    def add_targets(self, m: np.ndarray, v: np.ndarray | None, zs: np.ndarray, *, fold: np.ndarray | None = None,
                    classes: tuple[np.ndarray, np.ndarray] | None = None,
                    repeats: tuple | str | None = None) -> SufficientStats:
        """Accumulate validated rows with their (n, R) regression targets ``zs``; ``fold`` overrides the hash (a fixed
        validation split), ``classes`` = (class per row, target values per class) groups equal targets.

        ``repeats``: the fold hashes that more than one row of the whole data carries and their counts (a
        :class:`socal.rowkeys.KeyCensus`'s ``duplicated()``), or 'here' when these rows are the whole data.  Rows
        of one content then are spread over the folds as separate items (:meth:`_add_repeats`) instead of all
        following their one hash into one fold; without it (a chunk added on its own, :meth:`update`) they share a
        fold."""
        if m.shape[0] == 0:
            return self
        if self.key_bits != KEY_BITS:
            raise ValueError(self._key_rule_message("rows cannot be added to them"))
        hashes = None
        if fold is None and repeats is not None:
            hashes = self.fold_hash(m, v, zs)
            if isinstance(repeats, str):
                if repeats != "here":
                    raise ValueError(f"The 'repeats' parameter of SufficientStats.add_targets must be 'here', a pair "
                                     f"(keys, counts) or None. Got {repeats!r} instead.")
                repeats = KeyCensus.of(hashes, whole=True).duplicated()
            keys, counts = repeats
            if keys.size:
                at = np.minimum(np.searchsorted(keys, hashes), keys.size - 1)
                many = keys[at] == hashes
                if many.any():
                    self._add_repeats(m[many], None if v is None else v[many], zs[many], hashes[many],
                                      counts[at[many]])
                    one = ~many
                    m, v, zs, hashes = m[one], None if v is None else v[one], zs[one], hashes[one]
                    if classes is not None:
                        classes = (classes[0][one], classes[1])
                    if m.shape[0] == 0:
                        return self
        u, w = to_unit(m, v)
        fold = self.fold_of(m, v, zs, hashes) if fold is None else np.asarray(fold, dtype=np.intp)
        L, Lw, F = self.max_degree, self.deg_w, self.folds
        if classes is None:
            vals, cls = np.unique(zs, axis=0, return_inverse=True)
            cls = cls.ravel()
        else:
            cls, vals = classes
        if len(vals) <= _MAX_CLASSES:
            C = len(vals)
            Mg = grouped_moments(u, w, fold * C + cls, F * C, 2 * L, 2 * Lw).reshape(F, C, 2 * L + 1, 2 * Lw + 1)
            self.M += Mg.sum(axis=1)
            self.Z += np.einsum("cr,fcpq->frpq", vals, Mg[:, :, : L + 1, : Lw + 1])
            self.zz += np.einsum("cr,fc->fr", vals**2, Mg[:, :, 0, 0])
        else:
            self.M += grouped_moments(u, w, fold, F, 2 * L, 2 * Lw)
            for f in range(F):
                sel = fold == f
                self.Z[f] += response_moments(u[sel], w[sel], zs[sel], L, Lw)
                self.zz[f] += (zs[sel] ** 2).sum(axis=0)
        self.count += np.bincount(fold, minlength=F)[:F]
        return self

    # -- merging ---------------------------------------------------------------------------------------------------
    def _key_rule_message(self, what):
        rule = ("their values' exact bits (no key_bits in the file)" if self.key_bits is None
                else f"{self.key_bits} mantissa bits (key_bits={self.key_bits})")
        return (f"These SufficientStats were saved while rows' keys read {rule}, and this socal's keys read "
                f"{KEY_BITS} mantissa bits: their rows' folds were drawn by another rule than today's, so {what} "
                f"(the folds would mix two rules, and no fresh build of the same rows gives those numbers).  Fit "
                f"from them as they are, or rebuild them from the data.")

    def _check_compatible(self, other):
        if not isinstance(other, SufficientStats):
            raise TypeError(f"Only SufficientStats can be merged with SufficientStats. Got {type(other).__name__}.")
        for stats in (self, other):
            if stats.key_bits != KEY_BITS:
                raise ValueError(stats._key_rule_message("they cannot be merged with others"))
        mine, theirs = self._config(), other._config()
        if mine != theirs:
            diff = ", ".join(f"{k}: {mine[k]!r} vs {theirs[k]!r}" for k in mine if mine[k] != theirs[k])
            raise ValueError(f"SufficientStats built with different settings cannot be merged ({diff}); build them "
                             f"with the same max_degree, ndim, folds/holdout and rng seed.")

    def merge(self, other: SufficientStats) -> SufficientStats:
        """Exact, associative merge: a new object holding the statistics of both (of two objects: the statistics
        merged with themselves would count their rows twice, and are refused)."""
        self._check_compatible(other)
        if other is self:
            raise ValueError("SufficientStats merged with themselves would count every row twice; merge statistics "
                             "of different chunks.")
        out = self.copy()
        out.M += other.M
        out.Z += other.Z
        out.zz += other.zz
        out.count += other.count
        return out

    __add__ = merge

    def __radd__(self, other):
        """``0 + stats``: the start of Python's ``sum(parts)``, so that the parts of a stream add up with ``sum``."""
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self.copy()
        return NotImplemented

    def view(self, ndim: int | None = None, responses: int | None = None) -> SufficientStats:
        """The statistics of a smaller problem read off these: 1-D from 2-D (T_0(w) = 1, so the 1-D moments are the
        q = 0 column) and/or the first response only (a/k, for first-order fits)."""
        ndim = self.ndim if ndim is None else ndim
        responses = self.n_responses if responses is None else responses
        if ndim > self.ndim or responses > self.n_responses:
            raise ValueError(f"SufficientStats with ndim={self.ndim}, responses={self.n_responses} cannot give "
                             f"ndim={ndim}, responses={responses}; build them with the larger setting.")
        out = self.copy()
        out.ndim, out.n_responses = ndim, responses
        lw = self.deg_w if ndim == 2 else 0
        out.M = self.M[:, :, : 2 * lw + 1].copy()
        out.Z = self.Z[:, :responses, :, : lw + 1].copy()
        out.zz = self.zz[:, :responses].copy()
        return out

    def truncate(self, degree: int) -> SufficientStats:
        """The statistics of a smaller cap (leading blocks)."""
        degree = check_int(degree, "degree", "SufficientStats.truncate", 0, self.max_degree)
        out = self.copy()
        out.max_degree = degree
        lw = degree if self.ndim == 2 else 0
        out.M = self.M[:, : 2 * degree + 1, : 2 * lw + 1].copy()
        out.Z = self.Z[:, :, : degree + 1, : lw + 1].copy()
        return out

    # -- persistence -----------------------------------------------------------------------------------------------
    def save(self, file: Any) -> None:
        """Write to ``file`` (a path or a binary file object) as an ``.npz`` with a JSON header; no pickling.

        A path is written as given, so that :meth:`load` reads it back by the same name (``numpy.savez`` would
        append '.npz' to a path that lacks it), and atomically (:func:`socal.files.atomic_write`): a process killed
        mid-save leaves the previous file, never a torn one.
        """
        header = json.dumps({"format": "socal.SufficientStats", "version": FORMAT_VERSION, **self._config()})
        arrays = dict(header=np.array(header), M=self.M, Z=self.Z, zz=self.zz, count=self.count)
        if isinstance(file, (str, os.PathLike)):
            with atomic_write(file, "wb") as f:
                np.savez(f, **arrays)
        else:
            np.savez(file, **arrays)

    @classmethod
    def load(cls, file: Any) -> SufficientStats:
        """Read what :meth:`save` wrote; every field is checked (keys, types, shapes, finiteness, version)."""
        name = str(file) if isinstance(file, (str, pathlib.Path)) else "the file object"
        try:
            with np.load(file, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            # a system error says what it is (no such file, a folder, no permission); anything else is not an .npz
            # archive (numpy's own message would suggest loading it as a pickle, which must never be done here)
            why = str(exc) if isinstance(exc, OSError) and exc.errno is not None else "not an .npz archive, or a cut one"
            raise ValueError(f"{name} is not a SufficientStats file written by SufficientStats.save ({why}).") from None
        for key in ("header", "M", "Z", "zz", "count"):
            if key not in arrays:
                raise ValueError(f"{name}: field {key!r} is missing (not a SufficientStats file, or a cut one).")
        try:
            head = json.loads(str(arrays["header"]))
        except json.JSONDecodeError:
            raise ValueError(f"{name}: field 'header' is not valid JSON.") from None
        if not isinstance(head, dict) or head.get("format") != "socal.SufficientStats":
            raise ValueError(f"{name}: field 'header' does not describe socal.SufficientStats.")
        if head.get("version") != FORMAT_VERSION:
            raise ValueError(f"{name}: field 'version' is {head.get('version')!r}; this socal reads version "
                             f"{FORMAT_VERSION}.")
        for key, typ in (("max_degree", int), ("ndim", int), ("folds", int), ("salt", int), ("n_responses", int)):
            if not isinstance(head.get(key), typ) or isinstance(head.get(key), bool):
                raise ValueError(f"{name}: field {key!r} must be an int. Got {head.get(key)!r} instead.")
        hold = head.get("holdout")
        if hold is not None and not isinstance(hold, float):
            raise ValueError(f"{name}: field 'holdout' must be a float or null. Got {hold!r} instead.")
        try:
            out = cls(max_degree=head["max_degree"], ndim=head["ndim"], folds=head["folds"] if hold is None else 5,
                      holdout=hold, responses=head["n_responses"])
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        if not 0 <= head["salt"] < 2**63:
            raise ValueError(f"{name}: field 'salt' must be in [0, 2^63). Got {head['salt']!r} instead.")
        out.salt = head["salt"]
        bits = head.get("key_bits")  # absent in files saved while keys read exact bits
        if not valid_key_bits(bits):
            raise ValueError(f"{name}: field 'key_bits' must be an int in [0, 52] or null. Got {bits!r} instead.")
        out.key_bits = bits
        if bits != KEY_BITS:
            warnings.warn(f"{name}: {out._key_rule_message('they fit as saved, but rows cannot be added to them')}",
                          UserWarning, stacklevel=2)
        for key in ("M", "Z", "zz", "count"):
            arr = arrays[key]
            want = getattr(out, key).shape
            if arr.dtype != np.float64 or arr.shape != want:
                raise ValueError(f"{name}: field {key!r} must be a float64 array of shape {want}. Got {arr.dtype} "
                                 f"{arr.shape} instead.")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name}: field {key!r} holds non-finite values.")
            setattr(out, key, arr.copy())
        if np.any(out.count < 0) or np.any(out.count != np.round(out.count)):
            raise ValueError(f"{name}: field 'count' must hold whole numbers >= 0.")
        return out

    def to_bytes(self) -> bytes:
        """What :meth:`save` writes, as bytes (to send the statistics of a chunk to another process)."""
        buf = io.BytesIO()
        self.save(buf)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> SufficientStats:
        """The statistics :meth:`to_bytes` wrote, checked as :meth:`load` checks a file."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"The 'data' parameter of SufficientStats.from_bytes must be bytes (the output of "
                            f"to_bytes). Got {type(data).__name__} instead.")
        return cls.load(io.BytesIO(data))

    def __repr__(self):
        scheme = f"holdout={self.holdout}" if self.holdout is not None else f"folds={self.folds}"
        return f"SufficientStats(max_degree={self.max_degree}, ndim={self.ndim}, {scheme}, n={self.n})"
