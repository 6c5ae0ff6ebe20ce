"""A JobResult as report.json holds it and back: everything a job measured, and on reading,
every value type-checked (core.vocab.schema) so that a report from anyone cannot put a wrong
type in front of the app; reports of version 1 read too."""

from __future__ import annotations

import dataclasses
from typing import Any

from core.analysis.compile_stages import compile_stages
from core.analysis.results import JobResult
from core.vocab import events as ev
from core.vocab import op_records as oprec
from core.vocab import records as rec
from core.vocab.config import CompileConfig, JobSpec
from core.vocab.records import JobStatus
from core.vocab.samples import SampleStore


def result_to_dict(result: JobResult) -> dict[str, Any]:
    """A JobResult as report.json holds it (jobs[i])."""
    return {
        "spec": result.spec.to_dict(),
        "status": result.status,
        "phase": result.phase,
        "failure_reason": result.failure_reason,
        "failure_detail": result.failure_detail,
        "environment": result.environment,
        "model_info": dataclasses.asdict(result.model_info) if result.model_info else None,
        "samples": result.samples.to_json(),
        "compile": dataclasses.asdict(result.compile) if result.compile else None,
        "graph_breaks": [dataclasses.asdict(g) for g in result.graph_breaks],
        "recompiles": [dataclasses.asdict(r) for r in result.recompiles],
        "specializations": [dataclasses.asdict(x) for x in result.specializations],
        "cudagraph_skips": [dataclasses.asdict(k) for k in result.cudagraph_skips],
        "memory": {k: dataclasses.asdict(v) for k, v in result.memory.items()},
        "resources": [dataclasses.asdict(r) for r in result.resources],
        "variants": [dataclasses.asdict(v) for v in result.variants],
        "accuracy": dataclasses.asdict(result.accuracy) if result.accuracy else None,
        "graphs": [dataclasses.asdict(g) for g in result.graphs],
        "op_profile": dataclasses.asdict(result.op_profile) if result.op_profile else None,
        "processes_ended": [
            {k: v for k, v in dataclasses.asdict(p).items() if k != "job_id"} for p in result.processes_ended
        ],
        "call_costs": [dataclasses.asdict(c) for c in result.call_costs],
        # derived, for readers of the file: the compile split into stages that add up to it
        "compile_stages": [
            {"stage": s.key, "label": s.label, "seconds": s.seconds, "share": s.share}
            for s in compile_stages(result.compile)
        ],
        "quality": result.quality().to_dict(),
        "wall_time_s": result.wall_time_s,
        "summary": result.summary(),
        "stats": {side: (st.to_dict() if (st := result.stats(side)) else None) for side in rec.SIDES},
    }


def result_from_dict(d: dict[str, Any], where: str = "job") -> JobResult:
    """Read a job back from a report, every value type-checked: raises
    core.vocab.schema.SchemaError naming the field ("jobs[0].spec.config.backend must be
    text, not 3"). Reads reports of version 1 too (samples as objects, `count`)."""
    from core.vocab.config import ModelSpec
    from core.vocab.schema import SchemaError, build, check

    if not isinstance(d, dict):
        raise SchemaError(f"{where} must be an object, not {type(d).__name__}")
    s = d.get("spec")
    if not isinstance(s, dict):
        raise SchemaError(f"{where}.spec is missing or not an object")
    c = s.get("config", {})
    if not isinstance(c, dict):
        raise SchemaError(f"{where}.spec.config must be an object")
    overrides = {
        k: check(dict | None, c.get(k), f"{where}.spec.config.{k}") or {} for k in ("dynamo_config", "inductor_options")
    }
    config = build(
        CompileConfig, c, f"{where}.spec.config", **{k: tuple(sorted(v.items())) for k, v in overrides.items()}
    )
    spec = build(
        JobSpec, s, f"{where}.spec", config=config, model=build(ModelSpec, s.get("model"), f"{where}.spec.model")
    )
    status = check(str, d.get("status", "pending"), f"{where}.status")
    if status not in {s.value for s in JobStatus}:
        raise SchemaError(f"{where}.status must be one of {', '.join(s.value for s in JobStatus)}, not {status!r}")
    status = JobStatus(status)
    try:
        samples = SampleStore.from_json(d.get("samples", []))
    except (KeyError, TypeError, ValueError) as exc:
        raise SchemaError(f"{where}.samples cannot be read: {exc}") from None

    def items(key: str) -> list:
        value = d.get(key) or []
        if not isinstance(value, list):
            raise SchemaError(f"{where}.{key} must be a list")
        return value

    breaks = []
    for i, g in enumerate(items("graph_breaks")):
        if isinstance(g, dict) and "count" in g:  # version 1: one count
            g = {**{k: v for k, v in g.items() if k != "count"}, "logged": g["count"], "per_call": g["count"]}
        breaks.append(build(rec.GraphBreak, g, f"{where}.graph_breaks[{i}]"))
    memory = d.get("memory") or {}
    if not isinstance(memory, dict):
        raise SchemaError(f"{where}.memory must be an object")
    return JobResult(
        spec=spec,
        status=status,
        phase=check(str, d.get("phase", ""), f"{where}.phase"),
        failure_reason=check(str, d.get("failure_reason", ""), f"{where}.failure_reason"),
        failure_detail=check(str, d.get("failure_detail", ""), f"{where}.failure_detail"),
        environment=check(dict, d.get("environment") or {}, f"{where}.environment"),
        model_info=(build(ev.ModelLoaded, d["model_info"], f"{where}.model_info") if d.get("model_info") else None),
        samples=samples,
        compile=build(rec.CompileResult, d["compile"], f"{where}.compile") if d.get("compile") else None,
        graph_breaks=breaks,
        recompiles=[build(rec.Recompile, r, f"{where}.recompiles[{i}]") for i, r in enumerate(items("recompiles"))],
        specializations=[
            build(rec.Specialization, x, f"{where}.specializations[{i}]")
            for i, x in enumerate(items("specializations"))
        ],
        cudagraph_skips=[
            build(rec.CudagraphSkip, k, f"{where}.cudagraph_skips[{i}]") for i, k in enumerate(items("cudagraph_skips"))
        ],
        memory={k: build(rec.MemoryPeak, v, f"{where}.memory.{k}") for k, v in memory.items()},
        resources=[build(rec.ResourceSample, x, f"{where}.resources[{i}]") for i, x in enumerate(items("resources"))],
        variants=[build(rec.VariantResult, v, f"{where}.variants[{i}]") for i, v in enumerate(items("variants"))],
        accuracy=(build(rec.AccuracyResult, d["accuracy"], f"{where}.accuracy") if d.get("accuracy") else None),
        graphs=[build(rec.CompiledGraph, g, f"{where}.graphs[{i}]") for i, g in enumerate(items("graphs"))],
        op_profile=(build(oprec.OpProfile, d["op_profile"], f"{where}.op_profile") if d.get("op_profile") else None),
        call_costs=[build(rec.CallCost, c, f"{where}.call_costs[{i}]") for i, c in enumerate(items("call_costs"))],
        processes_ended=[
            build(ev.ProcessEnded, p, f"{where}.processes_ended[{i}]", job_id=spec.job_id)
            for i, p in enumerate(items("processes_ended"))
        ],
        wall_time_s=check(float, d.get("wall_time_s", 0.0), f"{where}.wall_time_s"),
    )
