"""Work-around for PySide6 6.12.0 on CPython 3.11: its void methods return None without
taking a reference, so every call (setText, QTimer.start, ...) lowers None's reference
count by one. After ~60,000 such calls CPython aborts with "none_dealloc: deallocating
None"; True and False leak the same way on some paths ("bool_dealloc"). (CPython 3.12+ makes None immortal, so the bug is invisible there; PySide6 6.11.3
does not have it. Measured here: 1,000 QLabel.setText calls → refcount(None) − 1,000.)

`install()` probes for the bug and, only if present, starts a daemon thread that keeps
the counts of None, True and False far from zero by holding extra references in a list. That costs 8 bytes per
leaked reference, far better than a crash. Any thread may call `install`; it is idempotent.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

LOW, HIGH = 300_000, 600_000
_bank: list = []
_installed = False


def none_refcount_leaks() -> bool:
    """True when a void PySide6 call drops a reference to None."""
    if sys.version_info >= (3, 12):
        return False  # None is immortal
    from PySide6.QtCore import QObject

    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(100):
        probe.setObjectName("probe")
    return before - sys.getrefcount(None) >= 90


SINGLETONS = (None, True, False)


def _top_up() -> None:
    for obj in SINGLETONS:
        count = sys.getrefcount(obj)
        if count < LOW:
            _bank.extend([obj] * (HIGH - count))


def _guard() -> None:
    while True:
        _top_up()
        time.sleep(0.01)


def install() -> bool:
    """Start the guard when this PySide6 needs it; True if it runs."""
    global _installed
    if _installed:
        return True
    if not none_refcount_leaks():
        return False
    _installed = True
    _top_up()
    threading.Thread(target=_guard, name="none-refcount-guard", daemon=True).start()
    return True


def import_modules(names) -> None:
    """Import each of `names` ahead of its use; one that fails is left to fail where it is used,
    with its own message. Here, at the bottom of gui and without Qt, because gui.app imports the
    engine with it before PySide6 (gui.app.ENGINE_MODULES) and the charts builder pyqtgraph."""
    import importlib

    for name in names:
        try:
            importlib.import_module(name)
        except Exception:
            pass


GIL_SWITCH_INTERVAL_S = 0.001
"""How long a thread of the app's process may hold the GIL while another waits for it. Python's
default, 5 ms, is paid at every hand-over: the GUI thread gives the GIL up at each of its own
waits (a Qt call, a file read), the busy thread takes it, and the GUI thread waits up to 5 ms to
get it back, several times a turn. With the charts builder's thread importing pyqtgraph, that
was the launch's worst heartbeat gaps: 21-43 ms with ~1 ms of GUI CPU in them."""


def hand_gil_back_soon() -> None:
    """Set the process's GIL switch interval to `GIL_SWITCH_INTERVAL_S`, unless it is already
    shorter. Process-wide, as `sys.setswitchinterval` is; a thread that keeps the GIL in one C
    call still keeps it to the call's end. Any thread; idempotent."""
    if sys.getswitchinterval() > GIL_SWITCH_INTERVAL_S:
        sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)


_collector = None


class GarbageCollector:
    """Automatic collection off; a GUI-thread timer collects each generation past its threshold
    (pyqtgraph's GarbageCollector, the pattern it recommends for this, written out here: importing
    pyqtgraph for it cost the launch ~0.3 s before the window could show)."""

    def __init__(self, interval_s: float = 0.5):
        import gc

        from PySide6.QtCore import QTimer

        self.threshold = gc.get_threshold()
        self._held = False  # the launch's imports going on elsewhere (`imports_held`): no collection
        self._held_once = False
        self._lock = threading.Lock()
        gc.disable()
        self.timer = QTimer()
        self.timer.timeout.connect(self.check)
        self.timer.start(int(interval_s * 1000))

    def check(self) -> None:
        import gc

        if self._held:
            return
        counts = gc.get_count()
        for generation in range(3):
            if counts[generation] <= self.threshold[generation]:
                break
            gc.collect(generation)

    @contextmanager
    def imports_held(self):
        """The first time only, in the process: no collection while the body runs (the launch's
        imports on the charts builder's thread), then everything alive frozen (`gc.freeze`: never
        walked again). Those imports made ~70,000 objects, nearly all of them modules, classes
        and functions kept for good (37 of them garbage, measured); the collector's timer came
        during them and one young-generation collection held the GUI thread ~25 ms.
        Any thread; later calls are plain (their modules are imported by then)."""
        import gc

        with self._lock:
            first, self._held_once = not self._held_once, True
            self._held = self._held or first
        try:
            yield
        finally:
            if first:
                gc.freeze()
                self._held = False


_frozen = False


def freeze_long_lived() -> bool:
    """Once per process, where `GarbageCollector` collects: move every object alive now to
    the collector's permanent generation (`gc.freeze`), so that no later full collection walks
    them again. The window calls it once its launch is done: a full collection of the app then
    took ~44 ms of the GUI thread (112k objects, nearly all modules, classes and widgets that
    live as long as the process) and set the worst heartbeat stall at a run's end; after the
    freeze it takes under 1 ms. True if it froze now."""
    global _frozen
    if _frozen or _collector is None:
        return False
    import gc

    _frozen = True
    gc.freeze()
    return True


def collect_garbage_on_gui_thread():
    """Python's cyclic garbage collector runs in whichever thread happens to allocate. Run in a
    background thread (the torch info loader importing torch, the run worker unpickling events),
    it destroyed Qt objects of the GUI thread (a closed window's) and deadlocked in shiboken's
    GIL handling: GUI test runs hung in QObject::~QObject called from gc_collect_main in the
    torch info loader's thread. So automatic collection is off in the app, and `GarbageCollector`
    collects on a GUI-thread timer instead. Call on the GUI thread once a QApplication exists;
    idempotent."""
    global _collector
    if _collector is None:
        _collector = GarbageCollector(interval_s=0.5)
    return _collector
