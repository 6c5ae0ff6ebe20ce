"""How a job ended, as the runner decides it: the finish reasons (`FinishReason`, set on
`core.run.runner.RunnerStatus.finish_reason`), what a timed-out job was probably doing, and
what is wrong with a message on a job's event pipe that is not one of its events."""

from __future__ import annotations

import enum

from core.vocab import events as ev


class FinishReason(str, enum.Enum):
    """Why a job ended, decided by the runner where it ends it (not read back from the
    terminal event): the job's own end (completed, failed, cancelled), a timeout, a crash
    of its process (it died, or sent what is not an event), or a stop: a cancel between or
    during its further processes, after which it completes with the processes it has."""

    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    STOPPED = "stopped"

    def __str__(self) -> str:
        return self.value

    @property
    def cancelled(self) -> bool:
        """A cancel ended the job (before, during or after its first process)."""
        return self in (FinishReason.CANCELLED, FinishReason.STOPPED)


def reason_of(terminal: ev.Event) -> FinishReason:
    """The finish reason of a terminal event the job's process sent itself."""
    if isinstance(terminal, ev.JobCompleted):
        return FinishReason.COMPLETED
    if isinstance(terminal, ev.JobCancelled):
        return FinishReason.CANCELLED
    return FinishReason.FAILED


# What a job that ran out of time was probably doing, by the phase it was in (records.PHASES):
# only the compile phases are the compiler's; a hang while the calls are timed is the model's.
TIMEOUT_GUESSES = {
    "": "the job process did not get going: a slow import of torch or a busy machine?",
    "load": "a hung or very slow model build or load?",
    "eager": "a hung or very slow eager call?",
    "compile": "a hung or very slow compile?",
    "compiled": "a hung or very slow compile of the first compiled calls, or a recompile?",
    "benchmark": "a hung or very slow timed call: the model itself, or too many calls for the timeout?",
    "sweep": "a hung or very slow call or recompile at one of the swept shapes?",
    "accuracy": "a hung or very slow accuracy check?",
    "op_profile": "a hung or very slow op profile?",
    "localize": "a hung or very slow compile of one stage or submodule?",
}


def unreadable_event_reason(problem: str) -> str:
    """Why a job ended when its process sent something that is not one of its events."""
    return (
        f"the job process sent a message on its event pipe that is not an event of this job ({problem}): "
        "the job was ended there, and what it had measured is kept. Does the model, or a library it "
        "uses, write to file descriptors it did not open?"
    )


def event_problem(event, job_id: str) -> str:
    """What is wrong with a message read from a job's pipe as an event of job `job_id` ("" if nothing)."""
    if not isinstance(event, ev.Event):
        return f"a {type(event).__name__}"
    if event.job_id != job_id:
        return f"a {event.kind} of another job"
    return ""
