"""The checks a job makes after its timed benchmark, none of which may cost the job its figures:
compiled outputs against eager's (core.measure.accuracy), the submodule whose compiled outputs
diverge when they do (core.measure.localize_modules), and where the time goes
(core.measure.op_profile). Each ends with its event; a check that cannot run says why.
"""

from __future__ import annotations

import dataclasses

from core.measure.context import JobContext
from core.measure.job_instruments import JobCancelledError
from core.models import LoadedModel
from core.vocab import events as ev
from core.vocab import op_records as oprec
from core.vocab import records as rec


def check_accuracy(job: JobContext, loaded: LoadedModel, compiled, inputs) -> None:
    """Compiled outputs against eager's on the same inputs (core.measure.accuracy). After the
    timed benchmark, so nothing it does (a float64 copy of the model) touches the figures;
    a check that cannot run ends as "not checked" with its reason, never fails the job."""
    from core.measure import accuracy

    job.enter("accuracy", "comparing compiled outputs with eager on the same inputs")
    job.check_stop()
    try:
        if job.steps is not None:  # training: the loss and every gradient, from the same start state
            eager_step = job.steps.checked(job.steps.module, "eager")
            compiled_step = job.steps.checked(job.compiled_module, "compiled")
            result = accuracy.check(eager_step, compiled_step, inputs, job.step_marker())
            job.emit(ev.AccuracyChecked, accuracy=result)
            return
        result = accuracy.check(
            loaded.model,
            compiled,
            inputs,
            job.step_marker(),
            lambda: accuracy.float64_reference(loaded.model, inputs, accuracy.free_bytes(job.cuda)),
        )
    except Exception as exc:  # noqa: BLE001 - the check must never cost the job its figures
        first = next((t for t in str(exc).splitlines() if t.strip()), "")
        result = rec.AccuracyResult(
            rec.AccuracyStatus.NOT_CHECKED.value,
            f"the check could not run the model: {type(exc).__name__}: {first}",
        )
    job.accuracy = result
    job.emit(ev.AccuracyChecked, accuracy=result)


def localize_modules(job: JobContext, loaded: LoadedModel) -> None:
    """A failed accuracy check with `spec.localize`: the submodule whose compiled outputs
    diverge (core.measure.localize_modules), added to the accuracy result. Last of all: it
    resets dynamo's caches. Never costs the job what it measured."""
    result = job.accuracy
    if not job.spec.localize or result is None or result.status != rec.AccuracyStatus.FAIL.value:
        return
    if job.steps is not None or not isinstance(loaded.model, job.torch.nn.Module):
        return
    from core.measure.localize_modules import localize

    job.enter("localize", "compiling the submodules one at a time to find the one that diverges")
    kwargs = job.spec.config.compile_kwargs()
    try:
        found = localize(loaded.model, loaded.inputs, lambda m: job.torch.compile(m, **kwargs), job.check_stop)
        fields = {
            "module": found.module,
            "module_kind": found.kind,
            "module_reason": found.reason,
            "modules_checked": found.checked,
            "module_rel_error": found.max_rel_error,
        }
    except JobCancelledError:
        raise
    except Exception as exc:  # noqa: BLE001
        first = next((t for t in str(exc).splitlines() if t.strip()), "")
        fields = {"module_reason": f"the submodules could not be compared: {type(exc).__name__}: {first}"}
    job.accuracy = dataclasses.replace(result, **fields)
    job.emit(ev.AccuracyChecked, accuracy=job.accuracy)


def profile_ops(job: JobContext, loaded: LoadedModel, compiled) -> None:
    """Where the time goes (core.measure.op_profile): eager and compiled calls under the profiler,
    after everything timed. A profile that cannot run says why; the job still completes."""
    calls = job.spec.op_profile_calls
    if calls <= 0:
        return
    from core.measure import op_profile
    from core.vocab.artifacts import JobArtifacts

    job.enter(
        "op_profile",
        f"op-level profile of {calls} eager and {calls} compiled calls"
        if compiled is not None
        else f"op-level profile of {calls} eager calls",
    )
    job.check_stop()
    try:
        profile = op_profile.run_op_profile(
            loaded.model,
            compiled,
            loaded.inputs,
            calls,
            job.step_marker(),
            job.cuda,
            job.spec.artifacts_dir,
            JobArtifacts.for_label(job.spec.config.label),
            job.break_at,
            job.recording.trace.capture.provenance if job.recording is not None else None,
        )
    except Exception as exc:  # noqa: BLE001 - the profile must never cost the job its figures
        first = next((t for t in str(exc).splitlines() if t.strip()), "")
        profile = oprec.OpProfile(calls=calls, note=f"the op profile could not run: {type(exc).__name__}: {first}")
    job.profile = profile
    job.emit(ev.OpProfileMeasured, profile=profile)
