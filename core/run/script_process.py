"""A user's script in a child process, seen from the parent: start it, stream its output, read
its events as they come, end it and everything it started.

The child (core.measure.script_child) runs in a session of its own, so the whole process tree
(DataLoader workers, inductor's compile workers, anything the script spawned) is one process
group that the runner ends at once: on a cancel (Ctrl+C, the app's Cancel) it gets SIGINT first,
as a terminal would send (the script sees KeyboardInterrupt and its events are written), and
SIGKILL after STOP_GRACE_S; on the timeout the same. Its stdout and stderr are streamed to
`on_output` as they come (unbuffered) and their last OUTPUT_KEPT bytes kept for the report.
While it runs, the machine's other CPU use is read every SAMPLE_S (the timing's grade).
No Qt; `run_script` blocks the calling thread, `cancel` may come from any thread.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from typing import Callable

from core import PROJECT_ROOT
from core.run.sampling import ProcessSampler
from core.vocab.script_job import ScriptEvents, ScriptJob

OUTPUT_KEPT = 256 * 1024  # of each of stdout and stderr, the last bytes kept in the report
EVENTS_MAX_BYTES = 128 * 2**20  # events read back from one run (parsed, ~10x in memory); past that counted as unread
STOP_GRACE_S = 5.0  # after SIGINT, the time the script gets to stop before SIGKILL
SAMPLE_S = 0.5
POLL_S = 0.1

OutputCallback = Callable[[str, str], None]  # (stream "stdout" or "stderr", text)
EventCallback = Callable[[dict], None]


class _Tail:
    """A pipe read to its end on a thread of its own: each chunk to `on_output`, the last
    OUTPUT_KEPT bytes kept."""

    def __init__(self, pipe, stream: str, on_output: OutputCallback | None):
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self._pipe, self._stream, self._on_output = pipe, stream, on_output
        self.thread = threading.Thread(target=self._read, name=f"script-{stream}", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        fd = self._pipe.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.chunks.append(chunk)
            self.size += len(chunk)
            while self.size - len(self.chunks[0]) >= OUTPUT_KEPT:
                self.size -= len(self.chunks.popleft())
            if self._on_output is not None:
                try:
                    self._on_output(self._stream, chunk.decode("utf-8", "replace"))
                except Exception:  # noqa: BLE001 - a listener's error must not stop the reading
                    pass
        self._pipe.close()

    def text(self) -> str:
        data = b"".join(self.chunks)[-OUTPUT_KEPT:]
        return data.decode("utf-8", "replace")


class _EventReader:
    """The events file read as it grows: complete lines only."""

    def __init__(self, path: str, on_event: EventCallback | None):
        self.path, self.on_event = path, on_event
        self.offset = 0
        self.rest = b""
        self.events: list[dict] = []
        self.unreadable = 0

    def read(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return
        try:
            os.lseek(fd, self.offset, os.SEEK_SET)
            while self.offset < EVENTS_MAX_BYTES:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                self.offset += len(chunk)
                self._lines(chunk)
            else:
                if os.fstat(fd).st_size > self.offset:
                    self.unreadable += 1  # past the limit: counted once, the rest is not read
                    self.offset = os.fstat(fd).st_size
        finally:
            os.close(fd)

    def _lines(self, chunk: bytes) -> None:
        data = self.rest + chunk
        *lines, self.rest = data.split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError:
                self.unreadable += 1
                continue
            if not isinstance(event, dict) or not isinstance(event.get("t"), str):
                self.unreadable += 1
                continue
            self.events.append(event)
            if self.on_event is not None:
                try:
                    self.on_event(event)
                except Exception:  # noqa: BLE001
                    pass


class ScriptRunner:
    """Runs one ScriptJob at a time (`run`), cancellable from any thread (`cancel`)."""

    def __init__(self, on_output: OutputCallback | None = None, on_event: EventCallback | None = None):
        self.on_output, self.on_event = on_output, on_event
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def run(self, job: ScriptJob) -> ScriptEvents:
        """Run the script to its end, its timeout or a cancel; what it reported."""
        folder = tempfile.mkdtemp(prefix="compile-profiler-script-")  # 0700, ours alone
        try:
            return self._run(job, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _run(self, job: ScriptJob, folder: str) -> ScriptEvents:
        import dataclasses

        events_path = os.path.join(folder, "events.jsonl")
        job = dataclasses.replace(job, events_path=events_path)
        job_path = os.path.join(folder, "job.json")
        with open(job_path, "x", encoding="utf-8") as fh:
            fh.write(job.to_json())
        out = ScriptEvents()
        if self._cancel.is_set():
            out.ended = "cancelled"
            return out
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (PROJECT_ROOT, env.get("PYTHONPATH", "")) if p)
        env["PYTHONUNBUFFERED"] = "1"  # the script's output streams as it is printed
        for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_WORLD_SIZE", "1")):
            env[key] = value  # one rank: a distributed launch is limited to this process
        started = time.monotonic()
        # -P: the cwd is not put first on sys.path (a `core` package there is the script's, not ours)
        proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "core.measure.script_child", job_path],
            cwd=job.cwd or None,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        tails = [_Tail(proc.stdout, "stdout", self.on_output), _Tail(proc.stderr, "stderr", self.on_output)]
        reader = _EventReader(events_path, self.on_event)
        try:
            sampler = ProcessSampler(proc.pid)
        except Exception:  # noqa: BLE001 - it ended already
            sampler = None
        known: dict[int, object] = {}
        next_sample = started + SAMPLE_S
        try:
            while proc.poll() is None:
                time.sleep(POLL_S)
                reader.read()
                now = time.monotonic()
                if sampler is not None and now >= next_sample:
                    next_sample = now + SAMPLE_S
                    self._sample(sampler, out, known)
                if self._cancel.is_set() and not out.ended:
                    out.ended = "cancelled"
                    self._stop(proc)
                elif now - started > job.timeout_s and not out.ended:
                    out.ended = "timeout"
                    self._stop(proc)
        finally:
            if proc.poll() is None:  # the parent itself is going (an exception): leave nothing behind
                self._kill(proc)
            self._end_tree(proc, known)
        out.wall_s = time.monotonic() - started
        for tail in tails:
            tail.thread.join(timeout=5.0)
        reader.read()
        out.exit_code = proc.returncode
        out.events = reader.events
        out.unreadable = reader.unreadable
        out.stdout_tail, out.stderr_tail = tails[0].text(), tails[1].text()
        return out

    @staticmethod
    def _sample(sampler: ProcessSampler, out: ScriptEvents, known: dict) -> None:
        reading = sampler.sample("script")
        for p in sampler.known_processes():
            known.setdefault(p.pid, p)
        if reading is None or reading.machine_cpu_percent is None:
            return
        out.others_cores.append(round(max(0.0, reading.machine_cpu_percent - reading.cpu_percent) / 100.0, 3))

    def _stop(self, proc: subprocess.Popen) -> None:
        """SIGINT to the script's process group (as Ctrl+C in a terminal), SIGKILL after the grace."""
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except OSError:
            return
        try:
            proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            self._kill(proc)

    @staticmethod
    def _kill(proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            proc.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            pass

    @staticmethod
    def _end_tree(proc: subprocess.Popen, known: dict) -> None:
        """Whatever the script started and left behind: its process group, and the processes
        seen in its tree that moved to another group (a daemon that called setsid)."""
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        for p in known.values():
            if p.pid == proc.pid:
                continue
            try:
                p.kill()
            except Exception:  # noqa: BLE001 - gone already
                pass


class ScriptProfile:
    """A script profiled: its run as written, then (`baseline`) its eager run, each a ScriptRunner,
    `repeat` pairs in all, alternating (compiled, eager, compiled, eager...: a drift of the machine
    reaches both sides). The eager run follows unless the compiled one was cancelled, timed out or
    compiled nothing (a script that raised is compared up to its error); no further pair after a
    failed run. `on_run(side)` is told as each run starts ("compiled", "eager"), `on_event(side, event)` each event,
    `on_output(side, stream, text)` the script's output. `cancel` from any thread."""

    def __init__(
        self, job: ScriptJob, baseline: bool = True, on_output=None, on_event=None, on_run=None, repeat: int = 1
    ):
        self.job, self.baseline, self.repeat = job, baseline, max(1, int(repeat))
        self.on_output, self.on_event, self.on_run = on_output, on_event, on_run
        self._runner: ScriptRunner | None = None
        self._cancelled = threading.Event()
        self._lock = threading.Lock()

    def cancel(self) -> None:
        with self._lock:
            self._cancelled.set()
            if self._runner is not None:
                self._runner.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def _run_side(self, side: str):
        import dataclasses

        from core.analysis.script_runs import fold_run
        from core.vocab.script_job import STANCE_COMPILED, STANCE_EAGER

        stance = STANCE_EAGER if side == "eager" else STANCE_COMPILED
        runner = ScriptRunner(
            on_output=None if self.on_output is None else (lambda stream, text: self.on_output(side, stream, text)),
            on_event=None if self.on_event is None else (lambda event: self.on_event(side, event)),
        )
        with self._lock:
            self._runner = runner
            if self._cancelled.is_set():
                runner.cancel()
        if self.on_run is not None:
            self.on_run(side)
        return fold_run(runner.run(dataclasses.replace(self.job, stance=stance)), stance)

    def run(self):
        """The runs, compared (core.analysis.script_results.ScriptResult)."""
        from core.analysis.script_results import result_from_runs

        job = self.job
        pairs = []
        for _ in range(self.repeat if self.baseline else 1):
            compiled = self._run_side("compiled")
            eager = None
            # a script that raised still gets its baseline: what it measured until then is compared
            if self.baseline and not self.cancelled and not compiled.ended and compiled.entries:
                eager = self._run_side("eager")
            pairs.append((compiled, eager))
            if eager is None or not self._goes_on(compiled) or not self._goes_on(eager):
                break
        (compiled, eager), more = pairs[0], pairs[1:]
        return result_from_runs(job.target, job.args, job.module, job.cwd, job.overrides, compiled, eager, more)

    def _goes_on(self, run) -> bool:
        """Whether another pair may follow one with `run` in it (--repeat): not after a cancel, a
        timeout, an error or a run that compiled nothing."""
        return not self.cancelled and not run.ended and bool(run.entries) and run.exit_code == 0
