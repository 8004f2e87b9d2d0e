"""Where socal's random numbers come from: the named registry of random streams, and the Poisson(1) weights.

Every random number socal draws for the data is keyed: a uniform from a row's key (:func:`socal.rowkeys.row_keys`,
its content hashed with a seed) and a stream's salt (:func:`socal.rowkeys.stream_salt` of the stream's ids), so it
does not depend on the row's chunk or position.  Two draws that used one salt would be the same numbers, and so
perfectly correlated: :data:`STREAMS` names every stream the library draws from, and :func:`salt` is the only way
the library turns a stream into a salt.  No entry's ids start another's (``tests/test_weights.py``), so no two names
and replicate numbers give one salt.

The refit pass's Poisson(1) weights per (row, refit) (:func:`poisson_weights`, the mergeable form of resampling
items) are drawn from the stream 'poisson weights' and kept per chunk by :class:`PoissonWeights`.
"""

from __future__ import annotations

import functools
import weakref

import numpy as np

from .rowkeys import exact_hash, mix64, mix64_inplace, row_keys, stream_salt, to_unit_interval

__all__ = ["STREAMS", "salt", "stream_seed", "poisson_weights", "PoissonWeights", "shared_rows", "SharedKeys",
           "shared_item_keys"]

# name -> the stream's ids (stream_salt's first arguments; a replicate or part number may follow them)
STREAMS = {
    "label sets": (0,),  # the bootstrap world's label counts, replicate b (LabelSetsPass)
    "poisson weights": (1,),  # the refit pass's Poisson(1) weights, replicate b
    "label sets beyond the table": (2,),  # the second uniform of rows with more than TABLE_K labels, replicate b
    "gaussian right-hand sides": (3,),  # the bootstrap's Gaussian draws (a SeedSequence of the seed and this id)
    "refit subset": (4, 0),  # the rows the refits are evaluated on, above refit_rows
    "refit subset of shared keys": (4, 1),  # how many of a shared key's items that subset keeps
    "shared-key items": (5, 0),  # the item keys (key, j) of a key that c rows share
    "fold counts": (6,),  # the folds of a shared key's items (SufficientStats), part f
    "perturbation": (7,),  # the sech perturbation: part 0 the mean's draws, part 1 the variance's
    "world subset": (8, 0),  # the rows the world's covariance moments are summed over, above world_rows
    "plot split": (9, 0),  # the halves of the level-set plot
    "baseline holdout": (10, 0),  # the held-out items of the baselines
    "test reference": (11,),  # the calibration test's simulated reference (socal.reference)
    "thinned votes": (12,),  # the votes socal.datasets.thin_counts keeps, seed split into two 32-bit parts
}


def salt(name, *parts):
    """The uint64 salt of stream ``name`` of :data:`STREAMS` (and its replicate or part numbers ``parts``): the one
    place the library's streams become salts, so a new draw must take a name of its own."""
    return stream_salt(*STREAMS[name], *parts)


def stream_seed(seed, name):
    """The ``numpy.random.default_rng`` entropy of stream ``name`` under a non-negative int ``seed``: [seed, ids]."""
    return [int(seed) & (2**63 - 1), *STREAMS[name]]


_POISSON_CDF = np.cumsum([np.exp(-1.0) / np.prod(np.arange(1, j + 1, dtype=float)) for j in range(20)])


def _poisson_table(bits=16):
    """The Poisson(1) inverse CDF on each bin of [0, 1) that a hash's top ``bits`` bits name, as uint8: the weight
    where it is constant on the bin, and 255 in the few bins that hold a CDF value (there the whole uniform
    decides)."""
    edges = np.arange(2**bits) * 2.0**-bits
    low = np.searchsorted(_POISSON_CDF, edges, side="right")  # the weight at the bin's left end
    high = np.searchsorted(_POISSON_CDF, edges + 2.0**-bits, side="left")  # ... just below its right end
    return np.where(low == high, low, 255).astype(np.uint8)


_POISSON_TABLE = _poisson_table()


@functools.lru_cache(maxsize=8)
def _weight_salts(B):
    """The salts of the weights' streams (1, b), b < B (read-only: shared by every call with this B)."""
    salts = np.array([salt("poisson weights", b) for b in range(B)], dtype=np.uint64)
    salts.flags.writeable = False
    return salts


_WEIGHT_BLOCK = 2**15  # hashes per block of poisson_weights: 256 KB of uint64, which stays in cache


def poisson_weights(keys, seed, B):
    """Poisson(1) weights of shape (rows, B), uint8: row i's weight in replicate b is the inverse Poisson(1) CDF at
    its keyed uniform (stream 'poisson weights', b), so it does not depend on the row's chunk or position.  (P(w >=
    20) = 2e-19.)

    The inverse CDF is read from a table on the uniform's top 16 bits, which settles it except in the few bins that
    hold a CDF value; there (a share of about 1e-4) it is computed from the whole uniform, so the weights are those
    of ``searchsorted(cdf, u, side='right')`` exactly.  The hashes are mixed in place and read through one table
    with ``np.take``: the same numbers at a third of the cost of the plain expressions.  The mix's last step,
    x ^= x >> 31, leaves the top 31 bits as they are, so the table reads them before it, and the step is taken
    only for the uniforms the table does not settle.  Rows are hashed in blocks of about _WEIGHT_BLOCK hashes,
    whose every pass stays in cache: the same bits at a third of the time (docs/numbers.md, "Same data, same
    numbers, and the bootstrap's cost")."""
    keys = np.asarray(keys, dtype=np.uint64)
    salts = _weight_salts(B)
    out = np.empty((keys.size, B), dtype=np.uint8)
    rows = max(1, _WEIGHT_BLOCK // max(B, 1))
    size = min(rows, keys.size)
    h, scratch = np.empty((size, B), dtype=np.uint64), np.empty((size, B), dtype=np.uint64)
    top = np.empty((size, B), dtype=np.uint16)
    for start in range(0, keys.size, rows):
        c = min(rows, keys.size - start)
        hh, sc, tp, ob = h[:c], scratch[:c], top[:c], out[start:start + c]
        np.bitwise_xor(keys[start:start + c, None], salts, out=hh)
        mix64_inplace(hh, sc, last=False)  # the top 31 bits are mix64's already
        np.right_shift(hh, np.uint64(48), out=sc)
        np.copyto(tp, sc, casting="unsafe")  # < 2^16: exact
        np.take(_POISSON_TABLE, tp, out=ob)
        fix = ob == 255
        if fix.any():
            x = hh[fix]
            x ^= x >> np.uint64(31)  # the last step, where the whole uniform decides
            ob[fix] = np.searchsorted(_POISSON_CDF, to_unit_interval(x), side="right")
    return out


class PoissonWeights:
    """The refit pass's Poisson(1) weights per (row, refit) (:func:`poisson_weights`, keyed by row content), and the
    rows' keys they come from.

    The candidates of one call share a seed, so they share these weights: a chunk's (rows x B) table is computed
    once and kept while what is kept stays within ``budget`` bytes (the tables as uint8); beyond it every call
    computes its own, block by block, the same numbers.  The rows' keys (:meth:`row_keys`) are kept the same way,
    so that the first candidate's fused pass (its :class:`KeyCensus`) and every candidate's refit pass hash the
    rows once.

    What is kept is found by the chunk's position and checked against the chunk's content: the keys are reused only
    for the very arrays they were computed from (held by weak reference, so a stream's chunks are not kept alive),
    and a table only for keys equal to those it was drawn for.  A source may give its chunks in another order, or
    other rows at one position, on another pass (a callable that lists files, a shuffling loader): the position
    alone would then hand one chunk's keys and weights to another chunk's rows.
    """

    def __init__(self, budget=2**26):
        self.budget, self.kept = budget, {}

    def _room(self, nbytes):
        return nbytes <= self.budget - sum(sum(a.nbytes for a in arrays) for _, arrays in self.kept.values())

    def row_keys(self, seed, index, m, v, a, k):
        """:func:`socal.rowkeys.row_keys` of a chunk's rows (``v`` None in 1-D), kept while the budget allows."""
        key = ("keys", seed, index, m.shape[0])
        rows = (m, v, a, k)
        if key in self.kept:
            refs, (keys,) = self.kept[key]
            if all((x is None and r is None) or (r is not None and r() is x) for r, x in zip(refs, rows)):
                return keys
        keys = row_keys(m, v, a, k, seed)
        if self._room(keys.nbytes):
            keys.flags.writeable = False
            self.kept[key] = (tuple(None if x is None else weakref.ref(x) for x in rows), (keys,))
        return keys

    def get(self, seed, index, keys, B):
        """A function of a row slice giving the chunk's Poisson(1) weights (rows, B) for rows with ``keys``: from
        the kept table when it was drawn for these keys, else drawn (and kept while the budget allows)."""
        n = keys.shape[0]
        key = (seed, index, n, B)
        if key in self.kept:
            _, (drawn_for, table) = self.kept[key]
            if drawn_for is keys or np.array_equal(drawn_for, keys):
                return lambda sl: table[sl]
            del self.kept[key]
        if self._room(n * B + keys.nbytes):
            table = poisson_weights(keys, seed, B)
            self.kept[key] = (None, (keys, table))
            return lambda sl: table[sl]
        return lambda sl: poisson_weights(keys[sl], seed, B)


def shared_rows(keys, duplicates):
    """Which rows carry a key that other rows share, and each such row's key count over all chunks: (mask, counts)
    from ``duplicates`` = (sorted keys that more than one row carries, their counts), as
    :meth:`socal.rowkeys.KeyCensus.duplicated` gives them; None when no row here carries one."""
    if duplicates is None or not duplicates[0].size:
        return None
    dup_keys, dup_counts = duplicates
    at = np.minimum(np.searchsorted(dup_keys, keys), dup_keys.size - 1)
    many = dup_keys[at] == keys
    if not many.any():
        return None
    return many, dup_counts[at[many]]


class SharedKeys:
    """A chunk's rows of shared keys grouped twice: by key (``keys`` sorted, their counts ``c`` over all chunks) and,
    within a key, by exact content (a key's rows agree in their scores to the key's rounding,
    :data:`socal.rowkeys.KEY_BITS`, and each is evaluated at its own exact scores: the identical ones once per
    group).  ``first``: a row of each group, ``here``: the group's rows in this chunk, ``group_key``: its key's
    position in ``keys``, ``exact``: its exact hash.  The rows are identical within a group, so which of them stands
    for which of the key's items changes nothing: each group stands for its share ``here / c`` of the key's c
    items."""

    def __init__(self, keys, counts, m, v, a, k):
        self.keys, key_first, key_of = np.unique(keys, return_index=True, return_inverse=True)
        self.c = counts[key_first]
        self.exact, self.first, self.here = np.unique(exact_hash(m, v, a, k), return_index=True, return_counts=True)
        self.group_key = key_of[self.first]

    @property
    def share(self):
        """Of its key's items, those each group's rows stand for."""
        return self.here / self.c[self.group_key]


def shared_item_keys(keys, counts):
    """The item keys (key, j), j < count, of keys that ``counts`` items share (stream 'shared-key items'), item by
    item in the order of ``keys``, and where each key's items start."""
    counts = np.asarray(counts, dtype=np.int64)
    starts = np.cumsum(counts) - counts
    j = np.arange(int(counts.sum()), dtype=np.uint64) - np.repeat(starts, counts).astype(np.uint64)
    return mix64(mix64(np.repeat(keys, counts) ^ salt("shared-key items")) ^ j), starts
