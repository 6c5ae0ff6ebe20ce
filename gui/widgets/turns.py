"""Work the GUI thread does in pieces, one piece per turn of the event loop, in the order asked.

A job's end and the run's end came in one turn: the job's terminal event, the Summary's final
row (its bootstrap interval), then the run's end refreshing every view, 42 ms of the GUI thread
with nothing drawn and no input read in between (the GUI thread never waits). Each
is now its own piece: `one_per_turn(owner, fn)` runs `fn` in a later turn than anything asked
before it, so the timers, paints and input waiting in between come first. `owner` (a QObject)
is the piece's lifetime: a piece whose owner was deleted meanwhile is dropped. Code that needs
a piece's result at once does the piece itself (the Summary's `summary(row)` makes its owed
rows), so nothing reads a half-made state. The views' redraw timers ask for their redraws as
pieces too (`as_piece`): due together, they ran back to back in one turn. GUI thread only.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer

_pieces: deque[tuple[QObject, Callable[[], None]]] = deque()
_runner: list[QObject] = []  # the QObject the turns are posted to (lives as long as the application)
_posted: list[QObject] = []  # the runner a turn is on its way to: never two on the way (below)


def one_per_turn(owner: QObject, piece: Callable[[], None]) -> None:
    """Run `piece` in a turn of its own, after every piece asked before it (GUI thread); the
    same piece of the same owner asked again before it ran runs once."""
    if any(o is owner and p == piece for o, p in _pieces):
        return
    _pieces.append((owner, piece))
    _post()


def as_piece(owner: QObject, piece: Callable[[], None]) -> Callable[[], None]:
    """A slot that asks for `piece` in a turn of its own: for the views' redraw timers, which
    came due together (the latency chart's, the histogram's, the Summary's) and ran back to
    back in one turn, with the paint of all they changed after them."""
    return lambda: one_per_turn(owner, piece)


def piece_timer(owner: QObject, interval_ms: int, piece: Callable[[], None]) -> QTimer:
    """A single-shot timer of `owner` whose timeout asks for `piece` in a turn of its own
    (`as_piece`): the views' redraw and refresh timers."""
    timer = QTimer(owner)
    timer.setSingleShot(True)
    timer.setInterval(interval_ms)
    timer.timeout.connect(as_piece(owner, piece))
    return timer


def pending() -> int:
    """Pieces not run yet (tests)."""
    return len(_pieces)


def _post() -> None:
    # One turn on its way at a time: a piece that asked for the next one (the charts builder's)
    # had posted a second turn, and the two pieces then ran back to back.
    if _posted and shiboken6.isValid(_posted[0]):
        return
    app = QCoreApplication.instance()
    if not _runner or not shiboken6.isValid(_runner[0]) or _runner[0].parent() is not app:
        _runner[:] = [QObject(app)]
    _posted[:] = [_runner[0]]
    # A 1 ms timer, not singleShot(0) (a posted call): with a 10 ms timer beside pieces of 15 ms
    # each, chained posted calls ran two pieces between its ticks, 1 ms timers one (measured,
    # a measurement script); the paints posted meanwhile come between them too.
    QTimer.singleShot(1, _runner[0], _run_one)


def _run_one() -> None:
    _posted.clear()
    if not _pieces:
        return
    owner, piece = _pieces.popleft()
    try:
        if shiboken6.isValid(owner):
            piece()
    finally:  # a piece that raised (a bug, reported by the app's hook) does not stop the others
        if _pieces:
            _post()
