"""`python3 main.py run SCRIPT.py [options] [-- SCRIPT_ARGS...]` (or `run -m MODULE`): the user's
own program under the profiler. It runs twice in child processes (core.run.script_process):
as written, every torch.compile in it timed call by call, then under
`torch.compiler.set_stance("force_eager")` with the same arguments (`--no-baseline` skips it);
each compiled function is set against its own eager calls (core.analysis.script_results) and
the report folder written (core.report.script_report). The script's output streams through
as it prints; the profiler's own lines go to stderr, prefixed `run:`.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

from core.capture.compile_watch import STALL_S, stalled_text
from core.cli.output import CancelOnInterrupt
from core.cli.prologue import run_command
from core.report.safety import terminal_text
from core.vocab.limits import LIMITS, ConfigError, check_limits
from core.vocab.script_job import ScriptJob, ScriptJobError, make_script_job

HEARTBEAT_S = 15.0  # a line on stderr this often while a run goes on without other news


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="main.py run",
        description="Run your own script under the profiler: every torch.compile in it (call, decorator, "
        "Module.compile) is timed call by call, then the script runs again with the same arguments under "
        "torch.compiler.set_stance('force_eager') and each compiled function is set against its own eager calls: "
        "speedup, compile time, whether compiling paid for itself within the run, graph breaks and recompiles at "
        "the script's lines. The script's own arguments go after `--`.",
        usage="main.py run (SCRIPT.py | -m MODULE) [options] [-- SCRIPT_ARGS...]",
    )
    p.add_argument("script", nargs="?", metavar="SCRIPT.py", help="the script to run")
    p.add_argument("-m", dest="module", metavar="MODULE", help="run a module as `python -m MODULE` does")
    p.add_argument("--out", metavar="DIR", help="the report folder (default: none, the finding is printed only)")
    p.add_argument("--overwrite", action="store_true", help="replace a report this tool wrote in --out")
    p.add_argument(
        "--cwd",
        metavar="DIR",
        help="the folder the script runs in (default: the script's own folder; for -m, the current folder)",
    )
    p.add_argument("--no-baseline", action="store_true", help="run the script once, compiled; no eager run")
    rl = LIMITS["script_repeat"]
    p.add_argument(
        "--repeat",
        type=int,
        default=int(rl.default),
        metavar="N",
        help=f"run the pair (as written, then eager) N times, alternating; the speedup pools them and says "
        f"whether the runs agree (default {rl.default:g}: a fresh process can differ for its whole life)",
    )
    lim = LIMITS["script_timeout"]
    p.add_argument(
        "--timeout",
        type=float,
        default=lim.default,
        metavar="S",
        help=f"stop each run after S seconds (default {lim.default:g}); what it did until then is kept",
    )
    p.add_argument("--backend", help="use this backend for every torch.compile in the script (default: the script's)")
    p.add_argument("--mode", help="use this mode for every torch.compile in the script")
    p.add_argument("--dynamic", choices=("auto", "true", "false"), help="dynamic= for every torch.compile")
    p.add_argument("--fullgraph", action="store_true", help="fullgraph=True for every torch.compile")
    p.add_argument(
        "--inductor-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="options= for every torch.compile (repeatable; replaces the script's own options)",
    )
    p.add_argument(
        "--dynamo-config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="torch._dynamo.config set before the script starts (repeatable)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines (the script's own output still shows)")
    return p


def split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """(our options, the script's own arguments): everything after the first `--`."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return argv, []


def overrides_of(args: argparse.Namespace) -> tuple[tuple[str, object], ...]:
    """The torch.compile keyword arguments the command line sets for every compile, checked
    against the installed torch (ConfigError names a wrong one)."""
    from core.vocab.config import available_backends, available_modes, inductor_config_defaults, parse_key_values

    out: dict[str, object] = {}
    if args.backend:
        backends = available_backends()
        if args.backend not in backends:
            raise ConfigError(f"unknown backend {args.backend!r}; this torch has: {', '.join(backends)}.")
        out["backend"] = args.backend
    if args.mode:
        modes = available_modes()
        if args.mode not in modes and args.mode != "default":
            raise ConfigError(f"unknown mode {args.mode!r}; this torch has: {', '.join(modes)}.")
        out["mode"] = args.mode
    if args.dynamic:
        out["dynamic"] = {"auto": None, "true": True, "false": False}[args.dynamic]
    if args.fullgraph:
        out["fullgraph"] = True
    if args.inductor_option:
        if args.mode:
            raise ConfigError("torch.compile takes a mode or options, not both: drop --mode or --inductor-option.")
        out["options"] = dict(parse_key_values(args.inductor_option, inductor_config_defaults(), "inductor option"))
        out["mode"] = None  # the script's own mode would clash with options
    return tuple(out.items())


def make_job(args: argparse.Namespace, script_args: list[str]) -> ScriptJob:
    """The job the command line asks for (ScriptJobError / ConfigError when it cannot run)."""
    import dataclasses

    from core.vocab.config import dynamo_config_defaults, parse_key_values

    # the script first: a missing file is refused before torch is imported for the settings' checks
    check_limits(script_repeat=args.repeat)
    job = make_script_job(args.script or "", args.module or "", script_args, cwd=args.cwd or "", timeout_s=args.timeout)
    dynamo = (
        parse_key_values(args.dynamo_config, dynamo_config_defaults(), "torch._dynamo.config")
        if args.dynamo_config
        else ()
    )
    return dataclasses.replace(job, overrides=overrides_of(args), dynamo_config=dynamo)


class LiveLines:
    """The profiler's own lines while a run goes on (stderr, `run:`): each compiled function as
    it appears, each compile, the first graph break of each place, each recompile, a heartbeat."""

    def __init__(self, side: str, quiet: bool):
        self.side, self.quiet = side, quiet
        self.names: dict[int, str] = {}
        self.calls: dict[int, int] = {}
        self.places: set = set()
        self.compiles: set = set()  # the compile ids said
        self.stage: tuple[str, float] | None = None  # what the compiler does now, and since when
        self.last = time.monotonic()
        self.started = self.last
        self.lock = threading.Lock()

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"run: [{self.side}] {terminal_text(text)}", file=sys.stderr, flush=True)
            self.last = time.monotonic()

    def on_event(self, e: dict) -> None:
        kind = e.get("t")
        with self.lock:
            if kind == "entry":
                self.names[e["id"]] = f"{e['name']} ({os.path.basename(str(e.get('file', '')))}:{e.get('line')})"
                self.say(f"torch.compile: {self.names[e['id']]}")
            elif kind == "calls":
                self.calls[e["id"]] = int(e["first"]) + len(e["ms"])
            elif kind == "stage":
                self._on_stage(e)
            elif kind == "compile" and self.side == "compiled":
                self.stage = None
                secs = sum(float(f.get("compile_s") or 0) for f in e["frames"])
                self.say(
                    f"{self.names.get(e['id'], '?')} call {e['call'] + 1}: compiled {len(e['frames'])} frame(s) in {secs:.2f} s"
                )
            elif kind == "break":
                gb = e["gb"]
                place = (gb.get("reason"), gb.get("file"), gb.get("line"))
                if place not in self.places and not gb.get("frame_skipped"):
                    self.places.add(place)
                    self.say(
                        f"graph break in {self.names.get(e['id'], '?')}: {gb.get('reason')} at {os.path.basename(str(gb.get('file')))}:{gb.get('line')}"
                    )
            elif kind == "recompile":
                rc = e["rc"]
                self.say(
                    f"recompile of {rc.get('function')} ({rc.get('location')}): {'; '.join(rc.get('reasons') or ())[:200]}"
                )

    def _on_stage(self, e: dict) -> None:
        """A frame compile is said once, as it starts; its stages go to the heartbeat."""
        stage = str(e.get("stage") or "")
        if not stage:
            self.stage = None
            return
        where = f"{e.get('frame') or '?'} [{e.get('compile_id') or '?'}]"
        text = f"compiling {where}: {stage}"
        if e.get("compile_id") not in self.compiles:
            self.compiles.add(e.get("compile_id"))
            owner = self.names.get(e.get("id"), "")
            frame = str(e.get("frame") or "")
            call = f", in a call of {owner}" if owner and not frame.startswith(owner.split(" (")[0]) else ""
            self.say(f"compiling {where}{call}…")
        self.stage = (text, time.monotonic() if self.stage is None or self.stage[0] != text else self.stage[1])

    def heartbeat(self) -> None:
        with self.lock:
            if time.monotonic() - self.last < HEARTBEAT_S:
                return
            if self.stage is not None:
                text, since = self.stage
                took = time.monotonic() - since
                self.say(stalled_text(text, took) if took >= STALL_S else f"{text} ({took:.0f} s)")
                return
            calls = (
                ", ".join(f"{self.names.get(i, '?')} {n:,}" for i, n in self.calls.items()) or "no compiled call yet"
            )
            self.say(f"{time.monotonic() - self.started:.0f} s; calls: {calls}")


def _write_output(stream: str, text: str) -> None:
    out = sys.stdout if stream == "stdout" else sys.stderr
    try:
        out.write(text)
        out.flush()
    except (OSError, ValueError):
        pass


def main(argv: list[str]) -> int:
    own, script_args = split_argv(argv)
    return run_command(own, build_parser(), lambda args, _: _run(args, script_args))


def _run(args: argparse.Namespace, script_args: list[str]) -> int:
    from core.analysis.script_results import summary_lines
    from core.report.files import OutputFolder, ReportError

    try:
        job = make_job(args, script_args)
    except (ScriptJobError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    folder = None
    if args.out:
        try:
            folder = OutputFolder(args.out, overwrite=args.overwrite).claim()
        except ReportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    from core.run.script_process import ScriptProfile

    lives = {side: LiveLines(side, args.quiet) for side in ("compiled", "eager")}

    running = []

    def on_run(side: str) -> None:
        what = "as written" if side == "compiled" else "under set_stance('force_eager'), the eager baseline"
        running.append(lives[side])
        lives[side].started = time.monotonic()
        lives[side].say(f"running {job.display} {what}")

    profile = ScriptProfile(
        job,
        baseline=not args.no_baseline,
        repeat=args.repeat,
        on_output=lambda side, stream, text: _write_output(stream, text),
        on_event=lambda side, event: lives[side].on_event(event),
        on_run=on_run,
    )
    interrupt = CancelOnInterrupt(profile.cancel, "what the script did until now is kept")
    done = threading.Event()

    def beat():
        while not done.wait(1.0):
            if running:
                running[-1].heartbeat()

    threading.Thread(target=beat, daemon=True).start()
    try:
        with interrupt:
            result = profile.run()
        done.set()
        compiled, eager = result.compiled, result.eager
        lines = summary_lines(result)
        print()
        for line in lines:
            print(terminal_text(line))
        if folder is not None:
            from core.report.script_report import write_script_report

            try:
                write_script_report(folder, result)
                print(f"run: report written to {folder.path}", file=sys.stderr)
            except (OSError, ReportError) as exc:
                print(f"error: the report could not be written into {folder.path}: {exc}", file=sys.stderr)
                return 1
    finally:
        done.set()
        if folder is not None:
            folder.release()
    if interrupt.interrupted:
        return 130
    if compiled.exit_code != 0 or compiled.ended or (eager is not None and (eager.exit_code != 0 or eager.ended)):
        return 1
    if not compiled.entries:
        return 1
    return 0
