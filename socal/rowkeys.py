"""Random numbers keyed by row content: the same row gets the same number in any chunk, any order, any process.

A row's key is a seeded hash (splitmix64's finaliser, a bijection of uint64 with full avalanche) of the float bits
of its scores and its labels, each value rounded to 27 significant bits first (:func:`_bits`), so that a score that
another machine computes a few units in the last place apart keeps its key and its draws.  Fold assignment
(:class:`socal.SufficientStats`) reads a uniform from it, and so does every random number of the bootstrap
(:mod:`socal.bootstrap`: the redrawn labels and the item weights, one stream per pass and replicate), so the
statistics, the fit, the estimate, the interval and the bound do not depend on how the rows are ordered or chunked,
in memory, from files or from dask partitions.  The perturbation (:func:`socal.perturb`), the plots' bootstrap bands
and the baselines' hold-out split read keyed uniforms too, with the rows of one content told apart in memory by
:func:`distinct_keys`.  Identical rows (and rows whose scores agree to the rounding) share their key, so the
estimators count them (:class:`KeyCensus`) and draw their folds and their bootstrap weights as the separate items
they are (:meth:`socal.SufficientStats.add_targets`, :class:`socal.refits.RefitPass`), each evaluated at its own
exact scores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

__all__ = ["mix64", "mix64_inplace", "exact_hash", "row_hash", "row_uniform", "row_keys", "stream_salt",
           "keyed_uniforms", "to_unit_interval", "distinct_keys", "item_keys", "KeyCensus", "CensusPass", "CENSUS_CAP",
           "RowsFingerprint", "text_columns", "KEY_BITS", "valid_key_bits"]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_OCCURRENCE_SALT = np.uint64(0xD1B54A32D192ED03)  # names the occurrence stream of distinct_keys


def mix64(x):
    """splitmix64's finaliser: a bijection of uint64 with full avalanche (wrapping arithmetic).  ``x`` is not
    modified: the first step makes a new array and the rest work in it (two temporaries fewer per call)."""
    x = x ^ (x >> np.uint64(30))
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


def mix64_inplace(x, scratch, last=True):
    """:func:`mix64` of the uint64 array ``x`` written into ``x``, with ``scratch`` (an array of its shape and
    dtype) for the shifts: no allocation, the same bits.  Returns ``x``.  With ``last=False`` the last step,
    x ^= x >> 31, is left out: it changes only the low 33 bits, so the top 31 are already mix64's (a caller that reads
    only those saves a pass, and takes the step itself where it needs the rest)."""
    for shift, mult in ((30, _M1), (27, _M2), (31, None))[: 3 if last else 2]:
        np.right_shift(x, np.uint64(shift), out=scratch)
        x ^= scratch
        if mult is not None:
            x *= mult
    return x


def text_columns(x):
    """(n, 2c) float64 columns that stand for an (n,) or (n, c) array of strings (item ids, say) in a row's key:
    each string's UTF-8 bytes and length hashed to 64 bits, split into two 32-bit halves (exact in float64; a key
    reads 27 significant bits of each, :func:`_bits`, so two strings share a key with a chance of 2^-54 per pair, and
    are then told apart as the rows of one content are).  A
    string's columns depend on the string alone, so equal strings give equal columns in any order and any chunk, as
    numbers do; codes made by numbering the strings (pandas.factorize) would depend on the order they came in."""
    s = np.asarray(x)
    if s.dtype.kind == "O":
        s = s.astype(str)
    # surrogatepass: a lone surrogate (a str from bytes decoded with surrogateescape) still has bytes of its own
    b = np.ascontiguousarray(np.char.encode(s, "utf-8", "surrogatepass") if s.dtype.kind == "U" else s)
    flat = b.reshape(-1)
    width = flat.dtype.itemsize
    u8 = flat.view(np.uint8).reshape(flat.size, width)
    length = np.char.str_len(flat)
    with np.errstate(over="ignore"):
        h = mix64(length.astype(np.uint64) ^ np.uint64(0x9E3779B97F4A7C15))
        for j in range(width):  # only a string's own bytes: the array's width (its longest string) must not enter
            h = np.where(j < length, mix64(h ^ u8[:, j].astype(np.uint64)), h)
    h = h.reshape(s.shape[0], -1)
    return np.concatenate([(h >> np.uint64(32)).astype(np.float64), (h & np.uint64(0xFFFFFFFF)).astype(np.float64)],
                          axis=1)


def row_hash(mean, var, zs, salt):
    """A seeded uint64 hash per row of its content (mean, var and target bits): the key of :func:`row_uniform`."""
    with np.errstate(over="ignore"):
        h = mix64(_bits(mean) ^ np.uint64(salt))
        if var is not None:
            h = mix64(h ^ _bits(var))
        for r in range(zs.shape[1]):
            h = mix64(h ^ _bits(zs[:, r]))
    return h


def row_uniform(mean, var, zs, salt):
    """A uniform U in [0, 1) per row from a seeded hash of its content (mean, var and target bits).

    The same row gets the same U in any chunk, any order, any process.
    """
    return to_unit_interval(row_hash(mean, var, zs, salt))


KEY_BITS = 26  # mantissa bits a key reads: values are rounded to 27 significant bits (2^-27 relative) first
_HALF = np.uint64(1 << (52 - KEY_BITS - 1))
_MASK = ~np.uint64((1 << (52 - KEY_BITS)) - 1)


def _bits(x):
    """The IEEE bits of float64 values rounded to nearest at KEY_BITS mantissa bits, as uint64: the bits a key reads.

    Why rounded: a value computed on another machine (a perturbed score, a recalibrated moment, a population's
    sample) can differ in its last bits (numpy picks its SIMD loops by CPU, OpenBLAS its kernels by CPU and thread
    count), and a key of the exact bits would then be another key, with other folds and other bootstrap draws: the
    numbers would move by their Monte Carlo error instead of by round-off.  Rounded, a value that moves by a few
    units in the last place keeps its key unless it crosses a rounding boundary, a chance of about 2^-26 per ulp
    moved.  Float32 values (24 significant bits) are kept exactly, so they are never merged.  Values closer than
    about 2^-27 relative share their bits here: the estimators treat rows that share a key as separate items of one
    content, and evaluate each row at its own exact scores (:func:`exact_hash`)."""
    b = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
    with np.errstate(over="ignore"):
        return (b + _HALF) & _MASK


def valid_key_bits(bits):
    """Whether a saved record of the keys' rule (``key_bits``, ``fit_key_bits``) is well-formed: None (saved while
    keys read exact bits) or an int in [0, 52], the mantissa bits a float64 has."""
    return bits is None or (isinstance(bits, int) and not isinstance(bits, bool) and 0 <= bits <= 52)


def exact_hash(*columns):
    """A uint64 hash of each row's exact bits (no rounding) over the given float64 columns ((n,) or (n, c) arrays,
    None skipped): what tells the rows that share a key (:func:`_bits` rounds) apart by their exact content."""
    h = None
    with np.errstate(over="ignore"):
        for col in columns:
            if col is None:
                continue
            col = np.asarray(col, dtype=np.float64)
            for c in (col[:, None] if col.ndim == 1 else col).T:
                b = np.ascontiguousarray(c).view(np.uint64)
                h = mix64(b ^ _OCCURRENCE_SALT) if h is None else mix64(h ^ b)
    return h


def row_keys(m, v, a, k, seed):
    """A uint64 key per row from its content: the bits of (m, v, a, k), hashed with ``seed``."""
    with np.errstate(over="ignore"):
        h = mix64(_bits(m) ^ mix64(np.uint64(seed & 0xFFFFFFFFFFFFFFFF)))
        if v is not None:
            h = mix64(h ^ _bits(v))
        h = mix64(h ^ _bits(a))
        return mix64(h ^ _bits(k))


def stream_salt(*ids):
    """A uint64 naming one stream of numbers (a pass and a replicate, say), from small non-negative ints."""
    h = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        for i in ids:
            h = mix64(h ^ np.uint64(i))
    return h


def to_unit_interval(h):
    """uint64 hashes -> floats uniform in [0, 1) (the top 53 bits)."""
    return (h >> np.uint64(11)).astype(np.float64) * 2.0**-53


def keyed_uniforms(keys, salts):
    """Uniforms in [0, 1) of shape ``keys.shape + salts.shape``: one per (row, stream), from the row's key and the
    stream's salt alone, so any chunking or order of the rows gives each row the same numbers."""
    keys, salts = np.asarray(keys, dtype=np.uint64), np.asarray(salts, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return to_unit_interval(mix64(keys.reshape(keys.shape + (1,) * salts.ndim) ^ salts))


def distinct_keys(keys, exact=None):
    """The rows' keys, told apart within each content: the first row carrying a key keeps it, and its j-th repeat
    (j = 1, 2, ..., counted in the order of ``exact``, the rows' :func:`exact_hash`, then in input order) gets
    mix64(key ^ mix64(j ^ salt)); so rows of a key of their own are unchanged.

    Why the numbers keyed by the result do not depend on the row order: rows that share a key and their exact bits
    have the same content, so they are interchangeable, and which of them is the j-th changes nothing in the
    multiset of (content, key) pairs, which is what every number drawn from the keys is a function of; rows that
    share a key but differ in their last bits (a key reads values rounded, :func:`_bits`) are ranked by those bits,
    whatever their order.  For rows in memory (the occurrence count needs them all); chunked sources count their
    keys with a :class:`KeyCensus` instead."""
    keys = np.asarray(keys, dtype=np.uint64)
    out = keys.copy()
    ranked = np.sort(keys)  # a plain sort finds the repeated keys (a stable argsort of every row costs 7 times more)
    repeated = ranked[1:] == ranked[:-1]
    if not repeated.any():
        return out
    many = ranked[1:][repeated]
    many = many[np.r_[True, many[1:] != many[:-1]]]  # the keys that two or more rows carry, sorted and distinct
    pos = np.searchsorted(many, keys)
    rows = np.flatnonzero(many[np.minimum(pos, many.size - 1)] == keys)
    group = pos[rows]  # which repeated key each of these rows carries
    if exact is None:  # input order within each key: a stable sort of the group codes (a radix sort of int16)
        order = np.argsort(group.astype(np.uint16) if many.size <= 2**16 else group, kind="stable")
    else:  # by exact bits within each key, then input order (lexsort is stable)
        order = np.lexsort((np.asarray(exact, dtype=np.uint64)[rows], group))
    ranked_group = group[order]
    first = np.r_[True, ranked_group[1:] != ranked_group[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(rows.size), 0))
    occurrence = np.empty(rows.size, dtype=np.uint64)
    occurrence[order] = (np.arange(rows.size) - start).astype(np.uint64)
    again = occurrence > 0
    sub = keys[rows[again]]
    with np.errstate(over="ignore"):
        out[rows[again]] = mix64(sub ^ mix64(occurrence[again] ^ _OCCURRENCE_SALT))
    return out


def item_keys(m, v, a, k, rng):
    """In-memory rows' keys (:func:`row_keys`, hashed with a seed drawn from the Generator ``rng``) told apart within
    each content (:func:`distinct_keys`): what the plots' bands and the baselines' split draw from."""
    return distinct_keys(row_keys(m, v, a, k, int(rng.integers(0, 2**63 - 1))), exact_hash(m, v, a, k))


CENSUS_CAP = 2**22  # distinct keys a KeyCensus holds (64 MB); beyond, identical rows share their fold and weights


@dataclass
class KeyCensus:
    """How many rows carry each key (a row key, :func:`row_keys`, or a fold hash, :func:`row_hash`), mergeable: the
    sorted distinct keys and their counts, or ``overflow`` once the rows hold more than :data:`CENSUS_CAP` distinct
    keys.

    Rows of the same content (scores and labels) have the same key, so keyed draws alone cannot tell them apart: a
    predictor with few distinct scores (a constant, a histogram, rounded probabilities) has a few keys for many
    items.  The bootstrap's refit pass reads the census to resample such items as the separate items they are
    (:class:`socal.refits.RefitPass`), and the statistics pass to spread them over the folds
    (:class:`socal.SufficientStats`).  The census is a function of the rows as a multiset, so any order or chunking
    gives the same one; so does the overflow, since a chunk or a partial union of chunks holds more distinct keys
    than the cap only if the whole does."""

    keys: np.ndarray  # uint64, sorted, distinct
    counts: np.ndarray | None  # int64, rows per key; None: one row each (the common case, kept without the array)
    overflow: bool = False
    rows: int = 0  # the rows counted, overflow or not: a later pass checks that it read as many

    @classmethod
    def of(cls, keys, whole=False):
        """The census of one chunk's keys; with ``whole`` (the chunk is every row), of its repeated keys alone: it
        is final (not merged), and holds no array of the rows' size."""
        keys = np.sort(np.asarray(keys, dtype=np.uint64))
        if keys.size < 2 or not (keys[1:] == keys[:-1]).any():
            census = cls(np.empty(0, np.uint64), None) if whole else cls._capped(keys, None)
        else:
            census = cls._counted(keys, np.ones(keys.size, dtype=np.int64))
            if whole and not census.overflow:
                many = census.counts > 1
                census = cls(census.keys[many], census.counts[many])
        census.rows = int(keys.size)
        return census

    @classmethod
    def _counted(cls, keys, counts):
        """The census of sorted ``keys`` with repeats, each carrying ``counts`` rows."""
        first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        return cls._capped(keys[first], np.add.reduceat(counts, first))

    @classmethod
    def overflowed(cls, rows=0):
        """The census of ``rows`` rows with more than :data:`CENSUS_CAP` distinct keys: no counts kept."""
        return cls(np.empty(0, np.uint64), None, True, int(rows))

    @classmethod
    def _capped(cls, keys, counts):
        return cls.overflowed() if keys.size > CENSUS_CAP else cls(keys, counts)

    def _counts(self):
        return np.ones(self.keys.size, dtype=np.int64) if self.counts is None else self.counts

    def merge(self, other):
        """The census of both chunks' keys (exact, associative)."""
        rows = self.rows + other.rows
        if self.overflow or other.overflow:
            return KeyCensus.overflowed(rows)
        keys = np.concatenate([self.keys, other.keys])
        if keys.size == 0:
            return KeyCensus(keys, None, False, rows)
        order = np.argsort(keys, kind="stable")
        out = KeyCensus._counted(keys[order], np.concatenate([self._counts(), other._counts()])[order])
        out.rows = rows
        return out

    def duplicated(self):
        """(keys, counts) of the keys that more than one row carries, sorted (both empty after an overflow)."""
        if self.counts is None:
            return np.empty(0, np.uint64), np.empty(0, np.int64)
        many = self.counts > 1
        return self.keys[many], self.counts[many]


class CensusPass:
    """A pass that counts its rows' keys (:meth:`keys`, given by a subclass) into a :class:`KeyCensus`.

    A source whose one chunk is every row sets ``whole`` (the census then keeps its repeated keys alone).  Once a
    chunk's census overflows the cap, the merged one will too, so the later chunks that this pass object reads (a
    stream's, in order) skip theirs."""

    def __init__(self):
        self.whole, self._overflowed = False, False

    def keys(self, m, v, a, k):  # pragma: no cover - every subclass defines it
        """The keys of a chunk's rows, whose census this pass counts (each subclass says which)."""
        raise NotImplementedError

    def census(self, keys, rows):
        """The census of one chunk's ``rows`` rows, whose ``keys`` (a callable giving them) are called for only when
        they are counted."""
        if self._overflowed:
            return KeyCensus.overflowed(rows)
        out = KeyCensus.of(keys(), self.whole)
        self._overflowed = out.overflow
        return out

    def __call__(self, index, m, v, a, k):
        return self.census(lambda: self.keys(m, v, a, k), m.shape[0])


_FINGERPRINT = re.compile(r"^([0-9a-f]{1,16}):([0-9a-f]{16}):([0-9a-f]{16})$")
SKETCH_SIZE = 256  # the smallest distinct keys a fingerprint keeps (a bottom-k sketch: 4 kB of hexadecimal saved)


def _bottom(keys, size=SKETCH_SIZE):
    """The ``size`` smallest distinct uint64 keys, ascending, as a tuple of ints.  The ``take`` smallest keys (a
    partition, linear) hold every distinct value up to the largest of them, so when ``size`` of those are distinct
    they are the answer; repeats among the smallest keys widen ``take``.  Linear in the keys, where sorting them all
    would cost a sort of every fit's rows."""
    keys = np.asarray(keys, dtype=np.uint64).ravel()
    take = 4 * size
    while keys.size > take:
        low = np.unique(np.partition(keys, take - 1)[:take])
        if low.size >= size:
            return tuple(int(x) for x in low[:size])
        take *= 4
    return tuple(int(x) for x in np.unique(keys)[:size])


def fingerprint_pass(index, m, v, a, k):
    """A pass of :mod:`socal.sources` (any source: chunks, dask partitions) whose merged result is the rows'
    :class:`RowsFingerprint`: order-free, so any chunking gives the fingerprint of the rows as one array."""
    return RowsFingerprint.of(m, v, a, k)


@dataclass(frozen=True)
class RowsFingerprint:
    """An order-free fingerprint of a multiset of rows: their count, and the wrapping sum and the xor of the rows'
    keys (:func:`row_keys` of the mean and the labels, seed 0), and a bottom-k sketch of the keys.

    Two sets of rows with equal fingerprints are the same rows, whatever their order or chunking (for different
    rows, equal sums and xors of 64-bit hashes are a chance of about 2^-128).  The recalibrators record the
    fingerprint of the rows they were fitted on, so that :func:`socal.evaluate_recalibrated` can say when it is
    given those very rows: there the test and CE2 are in-sample, and biased towards calibration.  The scores'
    variance is left out, since a first-order map is fitted on the means alone.

    A partial overlap is estimated from the sketch, the SKETCH_SIZE smallest distinct keys (:meth:`match`): the
    keys are hashes, so the evaluation rows whose key is at most the sketch's largest are a uniform sample of them,
    and for each of those the sketch holds every recorded key in that range, so whether it was recorded is known
    exactly.  The share of the sample found is unbiased for the share of the rows whose content (mean and labels)
    was recorded; a sketch holding fewer than SKETCH_SIZE keys holds them all, and the share is exact.  The sketch
    takes no part in equality (maps saved without one compare by count, sum and xor)."""

    n: int = 0
    total: int = 0  # the keys' sum mod 2^64
    xor: int = 0
    sketch: tuple = field(default=(), compare=False)  # the SKETCH_SIZE smallest distinct keys, ascending

    @classmethod
    def of(cls, m, v, a, k):
        """The fingerprint of validated rows (``v`` is read by neither: see the class)."""
        keys = row_keys(m, None, a, k, 0)
        return cls(*cls._summary(keys), _bottom(keys))

    @staticmethod
    def _summary(keys):
        return int(keys.size), int(np.add.reduce(keys, dtype=np.uint64)), int(np.bitwise_xor.reduce(keys))

    def add(self, other):
        """The fingerprint of both sets of rows together."""
        return RowsFingerprint(self.n + other.n, (self.total + other.total) % 2**64, self.xor ^ other.xor,
                               _bottom(np.array(self.sketch + other.sketch, dtype=np.uint64)))

    merge = add  # as the passes of socal.sources merge their chunks' results

    def match(self, m, a, k):
        """(same, overlap) for validated rows, their keys hashed once: whether they are the recorded rows (equal
        count, sum and xor: equality of fingerprints), and when not, the estimated share of them recorded (see
        :meth:`_overlap`; None when they are the recorded rows)."""
        keys = row_keys(m, None, a, k, 0)
        if self._summary(keys) == (self.n, self.total, self.xor):
            return True, None
        return False, self._overlap(keys)

    def _overlap(self, keys):
        """(share, sampled): the estimated share of the rows with these keys whose content is among the recorded
        rows, and how many rows the estimate read (see the class); None without a sketch (a map saved before
        sketches) or when no row falls in the sketch's range."""
        if not self.sketch:
            return None
        recorded = np.array(self.sketch, dtype=np.uint64)
        sample = keys if len(self.sketch) < SKETCH_SIZE else keys[keys <= recorded[-1]]
        if sample.size == 0:
            return None
        return float(np.isin(sample, recorded).mean()), int(sample.size)

    def to_hex(self):
        """The fingerprint as a hex string (what a saved map records)."""
        return f"{self.n:x}:{self.total:016x}:{self.xor:016x}"

    def sketch_hex(self):
        """The sketch as one hexadecimal string, 16 digits a key (what ``to_dict`` saves as 'fit_sketch')."""
        return "".join(f"{x:016x}" for x in self.sketch)

    @classmethod
    def from_hex(cls, text, where, sketch=None):
        """What :meth:`to_hex` (and :meth:`sketch_hex`, optional) wrote, or None for None (a map saved without a
        fingerprint); anything else is a ValueError naming ``where``."""
        if text is None:
            if sketch is not None:
                raise ValueError(f"The field 'fit_sketch' of {where} must be null when 'fit_rows' is. Got a sketch "
                                 f"instead.")
            return None
        match = _FINGERPRINT.match(text) if isinstance(text, str) else None
        if match is None:
            raise ValueError(f"The field 'fit_rows' of {where} must be null or 'count:sum:xor' in hexadecimal (16 "
                             f"digits each for the sum and the xor). Got {text!r} instead.")
        keys = ()
        if sketch is not None:
            ok = (isinstance(sketch, str) and len(sketch) % 16 == 0 and len(sketch) <= 16 * SKETCH_SIZE
                  and re.fullmatch(r"[0-9a-f]*", sketch) is not None)
            keys = tuple(int(sketch[i:i + 16], 16) for i in range(0, len(sketch), 16)) if ok else ()
            if not ok or list(keys) != sorted(set(keys)):
                raise ValueError(f"The field 'fit_sketch' of {where} must be null or up to {SKETCH_SIZE} distinct "
                                 f"keys in ascending order, 16 hexadecimal digits each. Got {str(sketch)[:40]!r} "
                                 f"instead.")
        return cls(*(int(g, 16) for g in match.groups()), keys)
