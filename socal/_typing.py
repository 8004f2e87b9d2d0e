"""Type aliases of the public signatures (annotations only; nothing here runs at import beyond numpy.typing)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Callable, Literal, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ArrayLike", "NDArray", "Seed", "Counts", "Degree", "Alpha", "Ridge", "Chunks", "FloatArray"]

Seed = Union[np.random.Generator, int, None]
"""Randomness: a Generator, a seed, or None (a fixed seed in every socal function: ``socal._validation.check_rng``)."""
Counts = Union[tuple[ArrayLike, ArrayLike], ArrayLike]
"""Per-item (positives, trials): a pair of arrays (or an (n, 2) array where scikit-learn slices the rows)."""
Degree = Union[int, Sequence[int], Literal["paper"], None]
Ridge = Union[float, Sequence[float], None]  # the relative ridge, or a grid of them
Alpha = Ridge  # its former name (socal.estimators: alpha renamed ridge)
Chunks = Union[Iterable[Any], Callable[[], Iterable[Any]]]
FloatArray = NDArray[np.float64]
