"""Type aliases of the public signatures (annotations only; nothing here runs at import beyond numpy.typing)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Callable, Literal, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ArrayLike", "NDArray", "Seed", "Counts", "Degree", "Alpha", "Chunks", "FloatArray"]

Seed = Union[np.random.Generator, int, None]
"""Randomness: a Generator, a seed, or None (fresh entropy)."""
Counts = Union[tuple[ArrayLike, ArrayLike], ArrayLike]
"""Per-item (positives, trials): a pair of arrays (or an (n, 2) array where scikit-learn slices the rows)."""
Degree = Union[int, Sequence[int], Literal["paper"], None]
Alpha = Union[float, Sequence[float], None]
Chunks = Union[Iterable[Any], Callable[[], Iterable[Any]]]
FloatArray = NDArray[np.float64]
