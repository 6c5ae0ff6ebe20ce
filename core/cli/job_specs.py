"""The jobs a command line asks for (`build_specs`): every value of `profile`, `tune` and `zoo`
(core.cli.args.build_parser) validated against the installed torch and the accepted ranges before
any work starts, torch's offer read from the cache the app keeps when there is one.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from core.capture.compile_log import CompileLogError
from core.capture.compile_log import parse_settings as parse_compile_log
from core.cli.args import AUTO
from core.cli.output import say
from core.vocab.config import (
    JobSpec,
    ModelSpec,
    default_configs,
    default_configs_note,
    dynamo_config_defaults,
    expand_configs,
    inductor_config_defaults,
    make_jobs,
    parse_dim_marks,
    parse_key_values,
    validate_config,
)
from core.vocab.limits import LIMITS, ConfigError, check_limits, iteration_fields


def iteration_settings(args: argparse.Namespace) -> dict:
    """The JobSpec fields of --iters/--precision/--max-time/--processes, checked."""
    return iteration_fields(None if args.iters == AUTO else args.iters, args.precision, args.max_time, args.processes)


def build_specs(
    args: argparse.Namespace, configs: list | None = None, device_here: bool = True, announce: bool = False
) -> list[JobSpec]:
    """Validate everything and build the jobs (one per config: `configs`, or every
    combination of the command line's, with what the default adds when no backend or mode was
    given: core.vocab.config.default_configs, said on stderr when `announce`); raises
    ConfigError before any work. `device_here` False: the jobs run on other machines (zoo on a
    Ray cluster), so --device cuda and a model's memory fit are not checked against this one."""
    device = args.device if device_here else "cpu"
    from core.models import (
        TORCHSCRIPT_SUFFIXES,
        ModelLoadError,
        check_source,
        defines_variants,
        normalize_source,
        source_kind,
        split_factory,
    )

    check_limits(
        warmup=args.warmup,
        block=args.block,
        batch_size=args.batch_size,
        image_size=args.image_size,
        threads=args.threads,
        timeout=args.timeout,
        seq_len=args.seq_len,
    )
    iterations = iteration_settings(args)
    _check_source_options(args, source_kind(args.model))
    if args.sweep_shapes and not defines_variants(args.model):
        raise ConfigError(
            f"--sweep-shapes needs a Python model file that defines get_input_variants(); {args.model} does not."
        )
    task = getattr(args, "task", "inference")
    sweep_batch = tuple(getattr(args, "sweep_batch", None) or ())
    if sweep_batch and args.sweep_shapes:
        raise ConfigError("--sweep-batch and --sweep-shapes are two different sweeps; give one.")
    if task == "training" and args.sweep_shapes:
        raise ConfigError("--sweep-shapes measures inference; it does not combine with --task training.")
    if task != "training" and (getattr(args, "compile_optimizer", False) or getattr(args, "optimizer", "sgd") != "sgd"):
        raise ConfigError("--optimizer and --compile-optimizer apply only to --task training.")
    if getattr(args, "flush_cache", False) and device != "cuda":
        raise ConfigError("--flush-cache clears a GPU's L2 cache between calls; it applies to --device cuda only.")
    if getattr(args, "timing", "latency") != "latency" and (args.sweep_shapes or sweep_batch):
        raise ConfigError("--timing throughput/both times the example inputs; a sweep times each shape by latency.")
    if args.weights and not os.path.exists(args.weights):
        raise ConfigError(f"weights file {args.weights} not found.")
    check_limits(op_profile=args.op_profile)
    check_limits(calls=args.calls)
    # The compile settings before the model, against torch's offer as the app keeps it
    # (core.run.torch_info's cache for this install) when there is one: a wrong --mode or
    # --backend is then refused without importing torch and torchvision first (seconds).
    offer = cached_offer()
    dynamo = parse_key_values(
        args.dynamo_config, _dynamo_defaults(offer) if args.dynamo_config else {}, "torch._dynamo.config"
    )
    inductor = parse_key_values(
        args.inductor_option, inductor_config_defaults() if args.inductor_option else {}, "torch._inductor.config"
    )
    if configs is None:
        configs = expand_configs(
            args.backend or ["inductor"],
            args.mode or ["default"],
            args.dynamic or ["auto"],
            args.fullgraph,
            dynamo,
            inductor,
        )
        if getattr(args, "compile_optimizer", False):
            configs = [dataclasses.replace(c, compile_optimizer=True) for c in configs]
        scripted = split_factory(args.model)[0].endswith(TORCHSCRIPT_SUFFIXES)  # compiled not at all
        if not args.backend and not args.mode and not scripted:  # no choice made: the default's configs
            chosen = configs
            configs = default_configs(chosen, device, task, bool(args.sweep_shapes or sweep_batch))
            added = [c for c in configs if c not in chosen]
            if added and announce:
                say(default_configs_note(added, app=False), file=sys.stderr)
    else:
        configs = [
            dataclasses.replace(c, dynamo_config=tuple(sorted({**dict(c.dynamo_config), **dict(dynamo)}.items())))
            for c in configs
        ]
    marks = parse_dim_marks(getattr(args, "mark_dynamic", None) or [])
    if marks:
        configs = [dataclasses.replace(c, mark_dynamic=marks) for c in configs]
    # what the cache holds answers; the rest is asked of torch (None), a GPU the cache found
    # missing too (one may have come back since)
    known = {}
    if offer is not None:
        known = {"backends": offer.all_backends, "modes": offer.modes, "cuda_available": offer.cuda_available or None}
    for cfg in configs:
        validate_config(cfg, device, **known)
    try:
        model = ModelSpec(
            normalize_source(args.model),
            args.batch_size,
            args.image_size,
            args.weights,
            seq_len=args.seq_len,
            hf_class=args.hf_class,
            hf_config=tuple(args.hf_config),
        )
        # unknown names, missing packages, configs too big: before any work
        check_source(model, device, torchvision_names=offer.models if offer is not None else None)
    except ModelLoadError as exc:
        raise ConfigError(str(exc)) from None
    try:  # imports torch (its log registry)
        parse_compile_log(args.compile_log)
    except CompileLogError as exc:
        raise ConfigError(str(exc)) from None
    return make_jobs(
        model,
        configs,
        warmup=args.warmup,
        **iterations,
        device=args.device,
        threads=args.threads,
        inference_mode=not args.no_inference_mode,
        timeout_s=args.timeout,
        sweep_shapes=args.sweep_shapes,
        block_size=args.block,
        op_profile_calls=args.op_profile,
        compile_log=args.compile_log,
        task=task,
        optimizer=getattr(args, "optimizer", "sgd"),
        sweep_batch=sweep_batch,
        dtype=getattr(args, "dtype", None) or "float32",
        autocast=getattr(args, "autocast", None) or "",
        timing=getattr(args, "timing", None) or "latency",
        flush_cache=bool(getattr(args, "flush_cache", False)),
    )


def cached_offer():
    """torch's offer (core.run.torch_info.TorchInfo) from the cache the app and earlier commands
    keep for this install, or None: no cache yet, or one that says loading failed or lacks a list
    the checks need. Reads a small file; imports neither torch nor torchvision."""
    from core.run.torch_info import cached_torch_info

    offer = cached_torch_info()
    if offer is None or offer.error or not (offer.all_backends and offer.modes and offer.models):
        return None
    return offer


def remember_offer() -> None:
    """Keep torch's offer in the cache `cached_offer` reads when there is none and this command
    imported torch and torchvision anyway (a torchvision model's checks): the next refusal then
    needs neither. Called once a command's jobs are done (`core.cli.profile.run_and_report`):
    reading the offer asks torch about the GPU, which no measurement should share. A Hugging
    Face or file model leaves it to the app (no torchvision import for it). Never raises."""
    if "torchvision" not in sys.modules:
        return
    from core.run.torch_info import cached_torch_info, load_and_cache_torch_info

    if cached_torch_info() is None:
        load_and_cache_torch_info()  # never raises: a failed load is not kept


def _dynamo_defaults(offer) -> dict:
    """torch._dynamo.config's settings with their defaults: the cached offer's (each value's type
    kept where JSON holds it, as the checks of an override need), else torch's own."""
    if offer is not None and offer.dynamo_defaults:
        return dict(offer.dynamo_defaults)
    return dynamo_config_defaults()


def _check_source_options(args: argparse.Namespace, kind: str) -> None:
    """Refuse options the model source would ignore, rather than ignore them silently."""
    image_default = LIMITS["image_size"].default
    if kind != "hf":
        given = [
            flag
            for flag, value in (
                ("--hf-class", args.hf_class),
                ("--hf-config", args.hf_config),
                ("--seq-len", args.seq_len != LIMITS["seq_len"].default),
            )
            if value
        ]
        if given:
            raise ConfigError(
                f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only to Hugging Face "
                f"models (hf:TYPE or hf:FOLDER), not {args.model}."
            )
    else:
        if args.image_size != image_default:
            raise ConfigError(
                "--image-size does not apply to hf: models: their image size comes from the config; "
                "set it with --hf-config image_size=N."
            )
        if args.weights:
            raise ConfigError(
                "--weights does not apply to hf: models; give a folder saved with save_pretrained "
                "(hf:./folder) to profile trained weights."
            )
