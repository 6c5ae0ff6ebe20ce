"""core.vocab.samples.SampleStore: each process's calls of a side, kept until a sample is added."""

from __future__ import annotations

import numpy as np
import pytest

from core.vocab.records import LatencySample
from core.vocab.samples import SampleStore


def test_by_process_is_kept_until_a_sample_is_added_and_cannot_be_changed_in_place():
    store = SampleStore(
        [LatencySample("eager", i, float(i), process=i % 2) for i in range(6)]
        + [LatencySample("eager", 9, 99.0, warmup=True)]
    )
    first = store.by_process("eager")
    assert {p: list(v) for p, v in first.items()} == {0: [0.0, 2.0, 4.0], 1: [1.0, 3.0, 5.0]}
    again = store.by_process("eager")
    assert again is not first and again[0] is first[0]  # the same arrays, a dict of its own
    again.pop(0)
    assert set(store.by_process("eager")) == {0, 1}  # a caller's dict changes nothing kept
    with pytest.raises(ValueError):
        first[0][0] = 7.0
    store.extend([LatencySample("eager", 6, 6.0, process=0)])
    assert list(store.by_process("eager")[0]) == [0.0, 2.0, 4.0, 6.0]
    assert store.by_process("compiled") == {}
    assert np.array_equal(store.by_process("eager")[1], [1.0, 3.0, 5.0])
