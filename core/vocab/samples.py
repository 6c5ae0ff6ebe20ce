"""Timed calls of a job, stored compactly, and the file that keeps them safe from a crash.

`SampleStore` holds a job's latency samples as numpy columns (side, iteration, warm-up flag,
latency, process) instead of one Python object per call: a million samples take 16 MB and
their statistics read straight from the arrays.

`SampleLog` is the child's side of a durable record: every timed call is appended to a file
with one `write()` (16 bytes) as soon as it is measured, outside the timed region. The page
cache keeps what was written when the process aborts, segfaults, is killed or hangs, so the
runner reads the samples that never reached it as events from this file after the job ends
(`read_sample_log`): no timed sample is lost.
"""

from __future__ import annotations

import base64
import math
import os
import struct
from typing import Iterable, Iterator

import numpy as np

from core.vocab.records import SIDES, LatencySample

_RECORD = struct.Struct("<BBHId")  # side, warm-up, process, iteration, latency_ms
RECORD_SIZE = _RECORD.size  # 16 bytes
_SIDE_CODE = {side: i for i, side in enumerate(SIDES)}
_COLUMNS = (
    ("side", np.uint8),
    ("iteration", np.uint32),
    ("warmup", np.bool_),
    ("latency_ms", np.float64),
    ("process", np.uint16),
)
_OPTIONAL = {"process"}  # columns a report may lack (written before they existed): zeros


class SampleStore:
    """A growing table of LatencySamples in numpy columns, in the order they were measured.

    Iterating yields LatencySample objects (for small consumers); figures should use
    `latencies()` and `count()`, which never build per-sample objects."""

    def __init__(self, samples: Iterable[LatencySample] = ()):
        self._n = 0
        self._cols = {name: np.empty(64, dtype=dtype) for name, dtype in _COLUMNS}
        self._by_process: dict[str, tuple[int, dict]] = {}  # side → (sample count, by_process)
        self.extend(samples)

    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def __iter__(self) -> Iterator[LatencySample]:
        side, it, wu, lat, proc = (self._cols[name][: self._n] for name, _ in _COLUMNS)
        for i in range(self._n):
            yield LatencySample(SIDES[side[i]], int(it[i]), float(lat[i]), bool(wu[i]), int(proc[i]))

    def __getitem__(self, index: int) -> LatencySample:
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(index)
        c = self._cols
        return LatencySample(
            SIDES[c["side"][index]],
            int(c["iteration"][index]),
            float(c["latency_ms"][index]),
            bool(c["warmup"][index]),
            int(c["process"][index]),
        )

    def _reserve(self, extra: int) -> None:
        need = self._n + extra
        size = len(self._cols["side"])
        if need <= size:
            return
        while size < need:
            size *= 2
        for name, dtype in _COLUMNS:
            grown = np.empty(size, dtype=dtype)
            grown[: self._n] = self._cols[name][: self._n]
            self._cols[name] = grown

    def extend(self, samples: Iterable[LatencySample]) -> None:
        samples = list(samples)
        if not samples:
            return
        self.extend_columns(
            side=np.fromiter((_SIDE_CODE[s.side] for s in samples), np.uint8, len(samples)),
            iteration=np.fromiter((s.iteration for s in samples), np.uint32, len(samples)),
            warmup=np.fromiter((s.warmup for s in samples), np.bool_, len(samples)),
            latency_ms=np.fromiter((s.latency_ms for s in samples), np.float64, len(samples)),
            process=np.fromiter((s.process for s in samples), np.uint16, len(samples)),
        )

    def extend_columns(self, side, iteration, warmup, latency_ms, process=None) -> None:
        n = len(latency_ms)
        if process is None:
            process = np.zeros(n, np.uint16)
        if not (len(side) == len(iteration) == len(warmup) == len(process) == n):
            raise ValueError("sample columns differ in length")
        self._reserve(n)
        for name, values in (
            ("side", side),
            ("iteration", iteration),
            ("warmup", warmup),
            ("latency_ms", latency_ms),
            ("process", process),
        ):
            self._cols[name][self._n : self._n + n] = values
        self._n += n

    def columns(self) -> dict[str, np.ndarray]:
        """Views of the stored columns (side as codes into events.SIDES)."""
        return {name: self._cols[name][: self._n] for name, _ in _COLUMNS}

    def _mask(self, side: str, include_warmup: bool) -> np.ndarray:
        c = self.columns()
        mask = c["side"] == _SIDE_CODE[side]
        if not include_warmup:
            mask &= ~c["warmup"]
        return mask

    def latencies(self, side: str, include_warmup: bool = False) -> np.ndarray:
        """Latencies (ms) of one side, in measured order; warm-up calls only when asked."""
        return self.columns()["latency_ms"][self._mask(side, include_warmup)]

    def select(self, side: str, warmup: bool) -> tuple[np.ndarray, np.ndarray]:
        """(iterations, latencies) of one side's warm-up or timed calls."""
        c = self.columns()
        mask = (c["side"] == _SIDE_CODE[side]) & (c["warmup"] == warmup)
        return c["iteration"][mask], c["latency_ms"][mask]

    def select_processes(self, side: str, warmup: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(iterations, latencies, processes) of one side's warm-up or timed calls."""
        c = self.columns()
        mask = (c["side"] == _SIDE_CODE[side]) & (c["warmup"] == warmup)
        return c["iteration"][mask], c["latency_ms"][mask], c["process"][mask]

    def count(self, side: str, warmup: bool = False) -> int:
        c = self.columns()
        return int(np.count_nonzero((c["side"] == _SIDE_CODE[side]) & (c["warmup"] == warmup)))

    def processes(self) -> list[int]:
        """The processes that measured timed calls, in order (just [0] for one process)."""
        c = self.columns()
        return sorted(int(p) for p in np.unique(c["process"][~c["warmup"]]))

    def by_process(self, side: str) -> dict[int, np.ndarray]:
        """Each process's timed latencies (ms) of one side, in measured order; kept until a sample
        is added (a running job's Summary row asked for them four times a refresh: ~3 of its
        15 ms at 45,000 calls a side), so the arrays are not to be changed in place."""
        kept = self._by_process.get(side)
        if kept is not None and kept[0] == self._n:
            return dict(kept[1])
        c = self.columns()
        mask = self._mask(side, False)
        procs, lat = c["process"][mask], c["latency_ms"][mask]
        split = {int(p): lat[procs == p] for p in np.unique(procs)}
        for values in split.values():
            values.flags.writeable = False
        self._by_process[side] = (self._n, split)
        return dict(split)

    # ---- serialisation: base64 of little-endian columns, ~19 bytes of JSON per sample
    def to_json(self) -> dict:
        doc = {"count": self._n, "encoding": "base64 little-endian columns"}
        for name, dtype in _COLUMNS:
            doc[name] = base64.b64encode(
                self.columns()[name].astype(np.dtype(dtype).newbyteorder("<"), copy=False).tobytes()
            ).decode("ascii")
        return doc

    @classmethod
    def from_json(cls, doc) -> "SampleStore":
        """Read `to_json`'s form, or the list of sample objects of reports before version 2.
        Raises ValueError/TypeError/KeyError naming what is wrong."""
        store = cls()
        if isinstance(doc, list):  # version 1: one object per sample
            store.extend(_version1_sample(x, f"samples[{i}]") for i, x in enumerate(doc))
            return store
        if not isinstance(doc, dict):
            raise TypeError(f"samples must be an object, not {type(doc).__name__}")
        n = doc["count"]
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"samples.count must be a whole number, not {n!r}")
        cols = {}
        for name, dtype in _COLUMNS:
            if name in _OPTIONAL and name not in doc:
                continue
            raw = base64.b64decode(doc[name], validate=True)
            values = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<"))
            if len(values) != n:
                raise ValueError(f"samples.{name} holds {len(values)} values, not {n}")
            cols[name] = values
        if n and int(cols["side"].max()) >= len(SIDES):
            raise ValueError("samples.side holds an unknown side code")
        if n and not np.all(np.isfinite(cols["latency_ms"])):
            raise ValueError("samples.latency_ms holds values that are not finite numbers")
        store.extend_columns(**cols)
        return store


def _version1_sample(x, where: str) -> LatencySample:
    """One sample object of a version-1 report, each field checked against what the columns
    hold (iteration uint32, process uint16, a finite latency): ValueError names the field."""
    if not isinstance(x, dict):
        raise ValueError(f"{where} must be an object, not {type(x).__name__}")

    def whole(key: str, high: int, default=None) -> int:
        v = x.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= high:
            raise ValueError(f"{where}.{key} must be a whole number from 0 to {high:,}, not {v!r}")
        return v

    latency = x.get("latency_ms")
    if isinstance(latency, bool) or not isinstance(latency, (int, float)) or not math.isfinite(latency):
        raise ValueError(f"{where}.latency_ms must be a finite number, not {latency!r}")
    warmup = x.get("warmup", False)
    if not isinstance(warmup, bool):
        raise ValueError(f"{where}.warmup must be true or false, not {warmup!r}")
    side = x.get("side", x.get("phase"))  # before version 2 the side was called `phase`
    if side not in SIDES:
        raise ValueError(f"{where}.side must be one of {', '.join(SIDES)}, not {side!r}")
    return LatencySample(side, whole("iteration", 2**32 - 1), float(latency), warmup, whole("process", 2**16 - 1, 0))


class SampleLog:
    """The child's append-only record of timed calls (see the module docstring)."""

    def __init__(self, path: str | None):
        # never through a link (the runner creates the file new in the user's private folder)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        self._fd = os.open(path, flags, 0o600) if path else None

    def write(self, sample: LatencySample) -> None:
        if self._fd is not None:
            os.write(
                self._fd,
                _RECORD.pack(
                    _SIDE_CODE[sample.side], sample.warmup, sample.process, sample.iteration, sample.latency_ms
                ),
            )

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read_sample_log(path: str, skip: int = 0) -> list[LatencySample]:
    """The samples in a child's sample log after the first `skip` (those already received
    as events); a record cut short by a kill is ignored."""
    try:
        with open(path, "rb") as fh:
            fh.seek(skip * RECORD_SIZE)
            data = fh.read()
    except OSError:
        return []
    whole = len(data) - len(data) % RECORD_SIZE
    return [
        LatencySample(SIDES[side], iteration, latency, bool(warmup), process)
        for side, warmup, process, iteration, latency in _RECORD.iter_unpack(data[:whole])
        if side < len(SIDES)
    ]
