"""One profiling job: one model × one compile config, one compile. Runs in a child process.

`run_job(spec, emit)` is a plain function that reports everything through `emit(event)`;
`core.measure.child` is the child-process entry point that sends those events over a pipe. Tests
can call `run_job` in-process with a list's `append` as `emit`.

Sequence: load → eager warm-up → compile (first compiled call, timed) → compiled warm-up →
benchmark (eager and compiled calls alternate, as in PyTorch's benchmarks/dynamo/common.py,
so drift hits both alike) → accuracy check → op profile (core.measure.op_profile: where the time
goes, what each graph break costs; after everything timed). Every timed call is synchronised
on CUDA. Peak memory is taken per phase from the kernel's RSS high-water mark, reset between
phases. From the compile on, torch's compile log and structured trace are recorded
(core.capture.graphs.JobRecording): each compiled graph is reported and its files written under
`spec.artifacts_dir` as it is made. The timed call, samples, memory and events are
core.measure.job_instruments'; the checks after the benchmark core.measure.job_checks'.
"""

from __future__ import annotations

import os
import time
import traceback
from typing import Callable

from core.capture import compile_metrics
from core.capture import live as capture
from core.measure.environment import environment
from core.measure.failures import failure_reason
from core.measure.job_checks import check_accuracy, localize_modules, profile_ops
from core.measure.job_instruments import Emit, JobCancelledError, JobInstruments
from core.measure.sweep import run_sweep
from core.measure.timing import time_blocks, time_throughput, time_until_precise
from core.models import LoadedModel, ModelLoadError, check_forward, describe_inputs, load_model
from core.vocab import events as ev
from core.vocab import op_records as oprec
from core.vocab import records as rec
from core.vocab.config import JobSpec
from core.vocab.samples import SampleLog


class Job(JobInstruments):
    """One job's phases, in order (run), each timed and reported with the instruments it inherits
    (core.measure.job_instruments)."""

    def __init__(self, spec: JobSpec, emit: Emit, should_stop: Callable[[], bool], sample_log: SampleLog):
        super().__init__(spec, emit, should_stop, sample_log)
        self.steps = None  # core.measure.training.TrainingSteps for --task training (set when loading)
        self.compiled_module = None  # --task training: the module compiled (the step around it stays Python)
        self.last_compile_s = 0.0
        self.last_compile_metrics: list = []  # the metrics of the first compiled call (sweep reads them)
        self.recording = None  # compile log and structured trace (core.capture.graphs.JobRecording)
        self.break_at: dict[str, tuple] = {}  # compile id → the graph break logged in it (op profile)
        self.last_call: tuple[float, list] = (0.0, [])  # (seconds, metrics) of the last call that may compile
        self.first_compile: tuple[float, list] | None = None  # the same of the first compiled call
        self.profile: oprec.OpProfile | None = None  # the op profile, once measured
        self.accuracy: rec.AccuracyResult | None = None  # the accuracy check, once made

    # ---- phases
    def run(self) -> None:
        torch, spec = self.torch, self.spec
        if spec.threads:
            torch.set_num_threads(spec.threads)  # before compiling: inductor bakes it in
        self.emit(ev.JobStarted, pid=os.getpid(), environment=environment(spec))
        if spec.task == "training":
            grad = torch.enable_grad()
        else:
            grad = torch.inference_mode() if spec.inference_mode else torch.no_grad()
        with grad, self.autocast():
            loaded = self.load()
            self.run_eager(loaded)
            if spec.repeat:  # a further process of the job: it only times (core.run.runner)
                self.run_repeat(loaded)
                return
            if not loaded.compile_supported:
                self.run_eager_only_benchmark(loaded)
                self.emit(
                    ev.AccuracyChecked,
                    accuracy=rec.AccuracyResult(
                        rec.AccuracyStatus.NOT_CHECKED.value, f"nothing was compiled: {loaded.note}"
                    ),
                )
                profile_ops(self, loaded, None)
                return
            # patch() rather than setattr: restored afterwards when run in-process (tests)
            with torch._dynamo.config.patch(dict(spec.config.dynamo_config)), self.provenance_tracking():
                if spec.sweep_shapes or spec.sweep_batch:
                    compiled, first_inputs = run_sweep(self, loaded)
                    check_accuracy(self, loaded, compiled, first_inputs)
                    return
                compiled = self.compile(loaded)
                self.run_compiled_warmup(compiled, loaded)
                self.benchmark(loaded, compiled)
                check_accuracy(self, loaded, compiled, loaded.inputs)
                profile_ops(self, loaded, compiled)
                localize_modules(self, loaded)
        self.flush()

    def autocast(self):
        """torch.autocast around every call, eager and compiled (JobSpec.autocast), else nothing."""
        import contextlib

        if not self.spec.autocast:
            return contextlib.nullcontext()
        device = "cuda" if self.cuda else "cpu"
        return self.torch.autocast(device_type=device, dtype=getattr(self.torch, self.spec.autocast))

    def cast(self, loaded: LoadedModel) -> None:
        """The model and its floating inputs in JobSpec.dtype; ModelLoadError when this device
        or model cannot (never a silent float32 run)."""
        torch, spec = self.torch, self.spec
        if spec.dtype == "float32":
            return
        if self.cuda and spec.dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
            raise ModelLoadError(
                f"{torch.cuda.get_device_name(0)} does not support bfloat16; use --dtype float16 or float32."
            )
        if not isinstance(loaded.model, torch.nn.Module) or loaded.kind in ("export", "torchscript"):
            raise ModelLoadError(
                f"--dtype {spec.dtype} casts an nn.Module's parameters; a {loaded.kind} model keeps the dtypes it "
                "was saved with: profile it in float32 or use --autocast."
            )
        from core.models.values import cast_floating

        dtype = getattr(torch, spec.dtype)
        loaded.model.to(dtype)
        loaded.inputs = tuple(cast_floating(x, dtype) for x in loaded.inputs)

    def provenance_tracking(self):
        """inductor's kernel provenance on while this job compiles, when its op profile will time
        source lines (core.measure.line_profile); restored afterwards (jobs run in-process in tests)."""
        import contextlib

        if self.spec.config.backend != "inductor" or self.spec.op_profile_calls <= 0:
            return contextlib.nullcontext()
        return self.torch._inductor.config.patch({"trace.provenance_tracking_level": 1})

    def load(self) -> LoadedModel:
        torch, spec = self.torch, self.spec
        self.enter("load", f"loading {spec.model.source}")
        self.start_memory_phase()
        loaded = load_model(spec.model)
        model = loaded.model
        # torch.export's module() refuses .eval() ("not supported yet"); it was exported in
        # the mode it runs in.
        if isinstance(model, torch.nn.Module):
            if loaded.kind != "export":
                model.eval()
            if self.cuda:
                model.to("cuda")
        loaded.inputs = self.to_device(loaded.inputs)
        self.cast(loaded)
        if spec.config.mark_dynamic:  # a mark that does not fit is a setting to fix, before anything compiles
            from core.measure.dynamic_marks import check_marks

            problem = check_marks(loaded.inputs, spec.config.mark_dynamic)
            if problem:
                raise ModelLoadError(problem)
        description = loaded.description
        if spec.dtype != "float32" or spec.autocast:
            from core.vocab.config import precision_label

            description += f" [{precision_label(spec.dtype, spec.autocast)}]"
        if spec.task == "training":
            description = self.make_training_steps(loaded)
        params = sum(p.numel() for p in model.parameters()) if isinstance(model, torch.nn.Module) else 0
        if self.steps is not None:
            params = sum(p.numel() for p in self.steps.module.parameters())
        self.emit(
            ev.ModelLoaded,
            description=description,
            model_kind=loaded.kind,
            parameters=params,
            input_shapes=describe_inputs(loaded),
            compile_supported=loaded.compile_supported,
            note=loaded.note,
        )
        return loaded

    def make_training_steps(self, loaded: LoadedModel) -> str:
        """--task training: `loaded.model` becomes the eager training step (core.measure.training);
        the module stays in `self.steps.module` for compiling. Returns the description."""
        from core.measure import training

        torch, spec = self.torch, self.spec
        if not isinstance(loaded.model, torch.nn.Module) or loaded.kind == "export":
            raise ModelLoadError(
                f"--task training needs an nn.Module with parameters; a {loaded.kind} model cannot be trained here."
            )
        labels = training.add_labels(loaded)
        self.steps = training.TrainingSteps(loaded.model, loaded.inputs, spec.optimizer)
        loaded.model = self.steps.step(self.steps.module, "eager")
        what = [f"training step: forward, loss, backward, {spec.optimizer} step"]
        if labels:
            what.append(labels)
        if self.steps.dropouts_disabled:
            what.append(f"dropout off in {self.steps.dropouts_disabled} modules")
        return f"{loaded.description} [{'; '.join(what)}]"

    def run_eager(self, loaded: LoadedModel) -> None:
        spec = self.spec
        self.enter("eager", f"eager warm-up ({spec.warmup} calls)")
        self.start_memory_phase()
        try:
            check_forward(loaded, spec.model.source)  # names the model file's line on failure
        except ModelLoadError as exc:
            if spec.dtype == "float32" and not spec.autocast:
                raise
            from core.vocab.config import precision_label

            raise ModelLoadError(
                f"the model does not run in {precision_label(spec.dtype, spec.autocast)} on {spec.device}: {exc}; "
                "use another --dtype or --autocast, or float32.",
                detail=getattr(exc, "detail", ""),
            ) from None
        for i in range(spec.warmup):
            self.record(rec.LatencySample("eager", i, self.timed(loaded.model, loaded.inputs), warmup=True))
        self.end_memory_phase("eager")

    def run_repeat(self, loaded: LoadedModel) -> None:
        """A further fresh process of the job (JobSpec.processes): compile again (the caches
        are warm now), warm up and time, as the first process did; no capture, files,
        accuracy check or op profile (the first process has them)."""
        torch, spec = self.torch, self.spec
        if not loaded.compile_supported:
            self.run_eager_only_benchmark(loaded)
            return
        # the same provenance setting as the first process: it is part of the FX graph cache's key
        with torch._dynamo.config.patch(dict(spec.config.dynamo_config)), self.provenance_tracking():
            self.enter("compile", f"compiling with {spec.config.label} again in a fresh process")
            compiled = self._compile_plain(loaded.model)
            self.timed(compiled, loaded.inputs, self.step_marker())
            self.run_compiled_warmup(compiled, loaded)
            self.benchmark(loaded, compiled)
        self.flush()

    def _compile_plain(self, model):
        if self.steps is not None:
            compiled = self.compiled_module = self.torch.compile(self.steps.module, **self.spec.config.compile_kwargs())
            if self.spec.config.compile_optimizer:
                self.steps.compile_optimizer(self.spec.config.compile_kwargs())
            return self.steps.step(compiled, "compiled")
        return self.torch.compile(model, **self.spec.config.compile_kwargs())

    def make_compiled(self, model):
        compile_metrics.reset_compile_state()
        self.capture = capture.install(
            self._on_graph_break,
            lambda r: self.emit(ev.RecompileFound, recompile=r),
            fullgraph=bool(self.spec.config.fullgraph),
            on_cudagraph_skip=(
                (lambda s: self.emit(ev.CudagraphSkipped, skip=s)) if self.spec.config.records_cudagraphs else None
            ),
        )
        if self.recording is None:  # after capture.install: its set_logs would reset the log level
            from core.capture.graphs import JobRecording

            self.recording = JobRecording(
                self.spec,
                lambda g: self.emit(ev.GraphCompiled, graph=g),
                on_stage=self._on_compile_stage,
                on_specialization=lambda x: self.emit(ev.SpecializationFound, specialization=x),
            )
        return self._compile_plain(model)  # training: the module compiled, the step around it Python

    def first_call(self, compiled, inputs) -> tuple[float, list]:
        """Time a call that may compile; returns (seconds, the compilation metrics it added).

        Graph breaks are emitted while torch logs them (a cancel, timeout or crash keeps
        them); a frame the metrics show dynamo skipped is reported by a follow-up event."""
        mark = self.capture.mark()
        before = self.step_marker()
        t0 = time.perf_counter()
        try:
            self.timed(compiled, inputs, before)
        except BaseException as exc:  # a compile that made torch raise is no skipped frame
            self.capture.compile_raised(exc)
            raise
        finally:
            seconds = time.perf_counter() - t0
            new_metrics = self.capture.metrics_since(mark)
            self.last_call = (seconds, new_metrics)
        return seconds, new_metrics

    def compile(self, loaded: LoadedModel, inputs=None):
        cfg = self.spec.config
        self.enter("compile", f"compiling with {cfg.label} (first compiled call)")
        compiled = self.make_compiled(loaded.model)
        inputs = loaded.inputs if inputs is None else inputs
        if cfg.mark_dynamic:  # the dynamic-shape call: marked before the first compiled call
            from core.measure.dynamic_marks import apply_marks

            apply_marks(inputs, cfg.mark_dynamic)
        self.start_memory_phase()
        try:
            compile_s, metrics = self.first_call(compiled, inputs)
        finally:
            self.first_compile = self.last_call  # kept when torch raised: the counts of what it made
            self.end_memory_phase("compile")
        result = compile_metrics.summarize_compile(
            metrics, compile_s, cfg.backend, self.capture.per_call(), partial=self.capture.partial
        )
        self.last_compile_s, self.last_compile_metrics = compile_s, metrics
        self.emit(ev.CompileFinished, result=result)
        return compiled

    def report_compile(self) -> None:
        """The compile's figures again at the job's end (a second CompileFinished), counting
        every graph and frame compiled over the job (recompiles, sweep variants, later calls),
        the breaks a call passes as the op profile counted them, and a compile that made torch
        raise (sent on a failure too, so the counts of what it made are kept). Times stay the
        first compiled call's."""
        if self.capture is None or self.first_compile is None:
            return
        self.capture.poll()
        compile_s, metrics = self.first_compile
        profile = self.profile
        passes = {b.key: b.per_call for b in profile.break_passes} if profile is not None else {}
        breaks = sum(passes.get(key, counts[1]) for key, counts in self.capture.ordinary.items())
        compiled = profile.compiled if profile is not None else None
        result = compile_metrics.summarize_compile(
            metrics,
            compile_s,
            self.spec.config.backend,
            breaks,
            partial=self.capture.partial,
            job_metrics=self.capture.metrics,
            failed=self.capture.failed,
            graphs_per_call=compiled.graphs_per_call if compiled is not None and compiled.calls else None,
        )
        self.emit(ev.CompileFinished, result=result)

    def _on_compile_stage(self, text: str) -> None:
        """The compiler entered another stage (core.capture.compile_watch): said as the detail
        of the compile phase, so that every front end shows what it does now. Recompiles in
        later phases are not said (their phase's own progress stays)."""
        if self.phase == "compile":
            self.emit(ev.PhaseChanged, phase="compile", detail=self.process_note + text, process=self.spec.repeat)

    def _on_graph_break(self, gb: rec.GraphBreak) -> None:
        """Sent at once: a later event for the same compile id may move it to a skipped frame
        (see capture.Capture and results.JobResult._add_graph_break)."""
        if self.recording is not None and not gb.frame_skipped:
            self.recording.breaks += 1
        if gb.frame_skipped:  # that frame runs eagerly: no graph of it ends at a break
            self.break_at.pop(gb.compile_id, None)
        elif gb.compile_id:
            self.break_at[gb.compile_id] = gb.key
        self.emit(ev.GraphBreakFound, graph_break=gb)

    def step_marker(self):
        """CUDA-graph modes need a step boundary before each call (else outputs of the
        previous replay may be overwritten while still in use)."""
        mark = self.torch.compiler.cudagraph_mark_step_begin if self.spec.uses_cudagraphs() else None
        if self.steps is not None:  # training: back to the shared start state when the side changes
            return self.steps.before("compiled", mark)
        return mark

    def eager_before(self):
        return self.steps.before("eager") if self.steps is not None else None

    def run_compiled_warmup(self, compiled, loaded: LoadedModel) -> None:
        spec = self.spec
        # CUDA graphs record on the first calls after compiling: warm up at least three.
        warmup = spec.warmup_calls("compiled")
        self.enter("compiled", f"compiled warm-up ({warmup} calls)")
        self.start_memory_phase()
        before = self.step_marker()
        for i in range(warmup):
            self.record(rec.LatencySample("compiled", i, self.timed(compiled, loaded.inputs, before), warmup=True))
        self.end_memory_phase("compiled")

    def benchmark(self, loaded: LoadedModel, compiled) -> None:
        spec = self.spec
        calls = {"eager": (loaded.model, self.eager_before()), "compiled": (compiled, self.step_marker())}
        if spec.timing == "throughput":
            time_throughput(self, loaded, calls, as_samples=True)
            return
        if spec.auto_iters:
            time_until_precise(self, loaded, calls)
        else:
            time_blocks(self, loaded, calls)
        if spec.timing == "both":
            time_throughput(self, loaded, calls, as_samples=False)

    def run_eager_only_benchmark(self, loaded: LoadedModel) -> None:
        spec = self.spec
        iters = spec.fixed_calls()
        self.enter("benchmark", f"{iters} timed eager iterations (compiling not supported: {loaded.note})")
        for i in range(iters):
            self.record(rec.LatencySample("eager", i, self.timed(loaded.model, loaded.inputs)))
        self.flush()


def _report_compile(job: Job, exc: BaseException | None = None) -> None:
    """The compile's figures as the job ends early (best effort: the terminal event matters
    more); with the exception that ends it, a compile that made torch raise is said so."""
    try:
        if exc is not None and job.capture is not None:
            job.capture.compile_raised(exc)
        job.report_compile()
    except Exception:
        pass


def run_job(
    spec: JobSpec, emit: Emit, should_stop: Callable[[], bool] = lambda: False, sample_log_path: str | None = None
) -> rec.JobStatus:
    """Run one job, reporting through `emit`. Returns its JobStatus (completed, failed or cancelled);
    always emits exactly one terminal event. Every timed call is also appended to
    `sample_log_path` (see core.vocab.samples) when given."""
    started = time.perf_counter()
    job = None
    sample_log = SampleLog(sample_log_path)
    try:
        job = Job(spec, emit, should_stop, sample_log)
        job.run()
        job.poll_capture()
        _report_compile(job)
    except JobCancelledError:
        job.flush()
        _report_compile(job)
        emit(ev.JobCancelled(spec.job_id, phase=job.phase))
        return rec.JobStatus.CANCELLED
    except BaseException as exc:  # report anything, keep what was measured
        phase = job.phase if job else "start-up"
        if job is not None:
            try:
                job.flush()
            except Exception:
                pass
            _report_compile(job, exc)
        emit(
            ev.JobFailed(
                spec.job_id,
                reason=failure_reason(phase, exc, spec),
                detail=getattr(exc, "detail", "") or traceback.format_exc(),
                phase=phase,
            )
        )
        return rec.JobStatus.FAILED
    finally:
        sample_log.close()
        if job is not None and job.recording is not None:
            job.recording.close()
    emit(ev.JobCompleted(spec.job_id, wall_time_s=time.perf_counter() - started))
    return rec.JobStatus.COMPLETED
