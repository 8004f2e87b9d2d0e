"""socal.weights: the named registry of random streams, and the keyed draws of rows that share a key."""

import numpy as np
import pytest

from socal import weights
from socal.rowkeys import stream_salt


def _prefix_clashes(streams):
    """Pairs of names whose ids are equal or one starts the other: such names could give one salt (a name's
    replicate numbers follow its ids), so two draws would be the same numbers."""
    items = list(streams.items())
    return [(a, b) for i, (a, x) in enumerate(items) for b, y in items[i + 1:]
            if x[:len(y)] == y[:len(x)]]


def test_the_registry_names_every_stream_once_and_no_ids_start_anothers():
    """No two streams share ids, and no stream's ids start another's; their salts for the first 200 replicates are
    all distinct.  Negative control: a stream (4,) beside (4, 0) and (4, 1) clashes."""
    assert _prefix_clashes(weights.STREAMS) == []
    salts = [int(weights.salt(name, b)) if len(ids) == 1 else int(weights.salt(name))
             for name, ids in weights.STREAMS.items() for b in range(200)]
    assert len(set(salts)) == len({(name, b if len(ids) == 1 else 0) for name, ids in weights.STREAMS.items()
                                   for b in range(200)})
    assert _prefix_clashes(dict(weights.STREAMS, planted=(4,))) == [("refit subset", "planted"),
                                                                    ("refit subset of shared keys", "planted")]


def test_salts_are_the_streams_ids_hashed_as_before():
    """The registry changed no number: each name's salt is stream_salt of the ids the modules used to write
    inline (so the same seeds give the same draws as before the registry)."""
    assert weights.salt("poisson weights", 7) == stream_salt(1, 7)
    assert weights.salt("world subset") == stream_salt(8, 0)
    assert weights.salt("perturbation", 1) == stream_salt(7, 1)
    assert weights.stream_seed(5, "gaussian right-hand sides") == [5, 3]
    assert weights.salt("poisson weights", 7) != weights.salt("label sets", 7)  # control
    with pytest.raises(KeyError):
        weights.salt("no such stream")


def test_shared_item_keys_are_distinct_per_item_and_keyed_by_content():
    """A key shared by c rows stands for c items (key, j): c distinct item keys, the same whatever the order of
    the keys given; another key's items are others.  ``shared_rows`` finds exactly the rows of shared keys."""
    keys = np.array([11, 29], dtype=np.uint64)
    items, starts = weights.shared_item_keys(keys, [3, 2])
    assert starts.tolist() == [0, 3] and len(set(items.tolist())) == 5
    again, _ = weights.shared_item_keys(keys[::-1], [2, 3])
    assert sorted(again.tolist()) == sorted(items.tolist())
    found = weights.shared_rows(np.array([5, 11, 7, 29], dtype=np.uint64), (keys, np.array([3, 2])))
    assert found[0].tolist() == [False, True, False, True] and found[1].tolist() == [3, 2]
    assert weights.shared_rows(np.array([5, 7], dtype=np.uint64), (keys, np.array([3, 2]))) is None
