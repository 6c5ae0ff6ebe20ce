"""Are the verdicts right? (issue 45): `python -m tests.bench verdicts`, `python3 main.py bench verdicts`.

For each model of a fixed list (DEFAULT_MODELS: torchvision, timm, Hugging Face with tiny configs,
and three small model files: compiled slower than eager on a CPU, graph breaks, LSTMs dynamo skips):

1. the product's answer: the default profile as the app runs it (`main.py profile MODEL`: inductor's
   default config, --iters auto, 3 processes, ±2%, 60 s, the recommendation for 10,000 calls), its
   recommendation (report.json `recommendation`, core.decide.recommend) and its top suggestion
   (core.decide.suggestions);
2. the truth: every candidate config tune knows (core.decide.tune.candidates for the CPU), each in
   its own `main.py profile` with more processes (--truth-processes, 5) and a tighter precision
   (--truth-precision, ±1%); its best is the fastest option (not compiling included, 1x) whose
   speedup interval overlaps no other's; options whose intervals overlap the fastest's are a tie
   set ("cannot tell" which), not a single winner. Reference backends (eager, aot_eager) and
   configs whose outputs differ from eager are measured but never a contender, as in the product;
   nor is a config timed on a busy machine (others using 0.75 cores or more);
3. agreement (`agreement`): the pick equals the truth's best or lies in its tie set; a disagreement
   says why (`cause`): "timing" (the default's figures differ from the truth's for the same config,
   or were too noisy to separate what the truth separates), "rule" (its figures agree with the
   truth's, yet it chose otherwise), "not tried" (the truth's best is a config the default run does
   not profile), "compile cost" (the product weighed the compile at 10,000 calls, the truth compares
   per call); the product's "cannot tell" where the truth could tell is counted apart;
4. for every model where compiled lost (the default's speedup below 1, or the truth's interval for
   the same config wholly below 1), the top suggestion with an apply-and-re-run change applied
   (profiled as the default run was): did the speedup move beyond the noise (`suggestion_effect`)?

Output: a table (model, the product's pick, the truth's best or tie set, agree?, why), the agreement
rate, the suggestion hit rate, the machine's load (others' cores during each model, CpuWatch, and
the runner's own readings per job) and the command; on stdout and as DIR/verdicts.json, rewritten
after each model. --resume skips the models already in it (a full run takes hours). Every `profile`
runs with a timeout (--run-timeout); Ctrl+C stops the running profile (it writes what it measured),
keeps every model done and prints the table.

The classification is small pure functions over report.json's own fields (tested with made-up
reports in tests/test_bench_verdicts.py); `run` is the part that runs `main.py profile`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

from tests.bench import ROOT, CpuWatch, python_loop_s

TRUTH_PROCESSES = 5
TRUTH_PRECISION_PCT = 1.0
TRUTH_MAX_TIME_S = 180.0
RUN_TIMEOUT_S = 3600.0
STOP_GRACE_S = 60.0  # a profile stopped (Ctrl+C, timeout) writes its report meanwhile
RESULT_FILE = "verdicts.json"
NOT_COMPILED = "not compiled"  # core.decide.recommend.NOT_COMPILED, the option of not compiling
FIRM = ("clear", "indistinguishable", "only option")
UNUSABLE = "unusable"
# A truth config timed while other programs used this many cores or more says more about the machine
# than the model (core.analysis.quality.OTHERS_UNUSABLE_CORES): left out of the truth. Any other
# grade stands: the truth's interval (Student's t over its processes) already widens with their
# spread, where the product's grade would call processes that disagree unusable.
BUSY_CORES = 0.75

_TINY_BERT = ("--hf-config", "num_hidden_layers=2", "--seq-len", "64")
_TINY_GPT2 = ("--hf-config", "n_layer=2", "--seq-len", "64")
_TINY_BART = (
    *("--hf-config", "d_model=64", "--hf-config", "encoder_layers=2", "--hf-config", "decoder_layers=2"),
    *("--hf-config", "encoder_attention_heads=2", "--hf-config", "decoder_attention_heads=2"),
    *("--hf-config", "encoder_ffn_dim=128", "--hf-config", "decoder_ffn_dim=128", "--seq-len", "32"),
)
# (name as `profile` takes it, extra arguments). "tiny" is tests.bench.trust's 3-layer MLP (calls of
# tens of µs, compiled slower than eager on this CPU); resources/models/* are the bundled examples
# (a data-dependent branch: graph breaks; an LSTM: frames dynamo skips without allow_rnn).
DEFAULT_MODELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("resnet18", ()),
    ("mobilenet_v3_small", ()),
    ("squeezenet1_1", ()),
    ("shufflenet_v2_x0_5", ()),
    ("efficientnet_b0", ()),
    ("regnet_y_400mf", ()),
    ("timm:resnet18", ()),
    ("timm:convnext_atto", ()),
    ("timm:vit_tiny_patch16_224", ()),
    ("timm:sequencer2d_s", ()),
    ("hf:bert", _TINY_BERT),
    ("hf:gpt2", _TINY_GPT2),
    ("hf:bart", _TINY_BART),
    ("tiny", ()),
    ("resources/models/conditional_execution.py", ()),
    ("resources/models/lstm_variable_length.py", ()),
)


# --------------------------------------------------------------------------- pure: reading reports
def overlap(a: dict, b: dict) -> bool:
    """Two rows' speedup intervals ({low, high}) overlap."""
    return a["low"] <= b["high"] and b["low"] <= a["high"]


def job_row(doc: dict, index: int = 0) -> dict:
    """One config of a report.json, as the verdicts compare it: its label, status, speedup with its
    95% interval (over its processes), compile time, grade, whether the recommendation may choose it
    and why not, and what its timing reached. Missing figures are None (a failed job)."""
    from core.vocab.config import CompileConfig

    job = doc["jobs"][index]
    label = CompileConfig.from_dict(job["spec"]["config"]).label
    s, q = job.get("summary") or {}, job.get("quality") or {}
    option = next((o for o in (doc.get("recommendation") or {}).get("options") or () if o["label"] == label), None)
    speedup, low, high = s.get("speedup"), s.get("speedup_ci_low"), s.get("speedup_ci_high")
    if speedup is not None and (low is None or high is None):
        low = high = speedup
    return {
        "label": label,
        "status": job.get("status"),
        "failure": job.get("failure_reason") or "",
        "speedup": speedup,
        "low": low,
        "high": high,
        "compile_s": s.get("compile_time_s"),
        "timing": q.get("grade", "unknown"),
        "timing_reason": "; ".join(q.get("reasons") or ()),
        "precision_pct": s.get("precision_pct"),
        "precision_reached": s.get("precision_reached"),
        "processes": s.get("processes"),
        "others_cores": q.get("others_cores"),
        "graph_break_sites": s.get("graph_break_sites"),
        "frames_skipped": s.get("frames_skipped"),
        "eligible": bool(option and option["eligible"]),
        "why_not": option["why_not"] if option else (job.get("failure_reason") or "no speedup measured"),
    }


def product_answer(doc: dict) -> dict:
    """The product's answer from its report.json: the pick ("" when it decided nothing), how sure,
    the configs tied with it, its sentence, every config it profiled (`rows`) and its suggestions."""
    rec = doc.get("recommendation") or {}
    suggestions = doc.get("suggestions") or []
    # a setting the run did not try, which nothing it measured points to (the product says so and
    # lists it last), is no suggestion from the measurements: not the top one, never applied
    said = [s for s in suggestions if not s.get("untried")]
    return {
        "pick": rec.get("choice") or "",
        "confidence": rec.get("confidence") or "none",
        "tied": list(rec.get("tied") or ()),
        "sentence": rec.get("sentence") or "",
        "calls": rec.get("calls"),
        "faster_per_call": rec.get("faster_per_call") or "",
        "overtakes_after_calls": rec.get("overtakes_after_calls"),
        "rows": [job_row(doc, i) for i in range(len(doc.get("jobs") or ()))],
        "top_suggestion": f"[{said[0]['rule']}] {said[0]['title']}" if said else "",
        "suggestions": [
            {"rule": s["rule"], "title": s["title"], "config": s["config"], "changes": s.get("changes") or []}
            for s in said
        ],
        "untried": [f"[{s['rule']}] {s['config']}" for s in suggestions if s.get("untried")],
    }


def said_cannot_tell(product: dict) -> bool:
    """The product decided nothing firm: "cannot tell" (with or without "not compiled" meanwhile) or
    nothing measured."""
    return product["confidence"] not in FIRM or not product["pick"]


# --------------------------------------------------------------------------- pure: the truth
def contenders(rows: list[dict]) -> tuple[list[dict], dict[str, str]]:
    """The options the truth may choose from (not compiling first, at exactly 1x) and, by label,
    why each other row is left out (a reference backend, outputs that differ, a failed job, a
    timing on a busy machine)."""
    out = [{"label": NOT_COMPILED, "speedup": 1.0, "low": 1.0, "high": 1.0}]
    left_out = {}
    for r in rows:
        if r.get("speedup") is None:
            left_out[r["label"]] = f"no speedup measured ({r.get('failure') or r.get('status')})"
        elif not r.get("eligible"):
            left_out[r["label"]] = r.get("why_not") or "not eligible"
        elif (r.get("others_cores") or 0.0) >= BUSY_CORES:
            left_out[r["label"]] = f"the machine was busy: other processes used {r['others_cores']:.2f} cores"
        else:
            out.append(r)
    return out, left_out


def truth_verdict(rows: list[dict]) -> dict:
    """The truth from its rows (one per candidate config): the fastest option by its speedup, the
    options whose intervals overlap it (`ties`, the best included; one when `decided`), the
    ranking, and what was left out and why. `measured` is False when no compiled config could be
    weighed (every one failed, timed on a busy machine, or a reference): the truth knows nothing."""
    options, left_out = contenders(rows)
    best = max(options, key=lambda o: o["speedup"])
    ties = [best["label"]] + [o["label"] for o in options if o is not best and overlap(o, best)]
    return {
        "best": best["label"],
        "ties": ties,
        "decided": len(ties) == 1,
        "measured": len(options) > 1,
        "ranking": [
            {"timing": "", **{k: o.get(k) for k in ("label", "speedup", "low", "high", "timing")}}
            for o in sorted(options, key=lambda o: -o["speedup"])
        ],
        "left_out": left_out,
    }


def truth_text(truth: dict) -> str:
    if not truth["measured"]:
        return "unknown (no config weighed)"
    if truth["decided"]:
        return truth["best"]
    return "tie: " + ", ".join(truth["ties"])


# --------------------------------------------------------------------------- pure: agreement
def _fmt_row(r: dict) -> str:
    if r.get("speedup") is None:
        return f"{r['label']} (not measured)"
    return f"{r['label']} {r['speedup']:.2f}x [{r['low']:.2f}-{r['high']:.2f}]"


def timing_problems(product: dict, truth_rows: list[dict], labels) -> list[str]:
    """Where the default run's timing of the configs named misled: figures whose interval misses
    the truth's for the same config, a grade other than quiet, a precision not reached."""
    truth_by = {r["label"]: r for r in truth_rows if r.get("speedup") is not None}
    out = []
    for r in product["rows"]:
        if r["label"] not in labels or r.get("speedup") is None:
            continue
        t = truth_by.get(r["label"])
        if t is not None and not overlap(r, t):
            out.append(
                f"the default run measured {_fmt_row(r)}, the truth {t['speedup']:.2f}x [{t['low']:.2f}-{t['high']:.2f}]"
            )
        if r.get("timing") not in ("quiet", None):
            out.append(f"its timing was {r['timing']} ({(r.get('timing_reason') or '').split('; ')[0]})")
        elif r.get("precision_reached") is False:
            out.append(f"its interval ±{r.get('precision_pct') or 0:.1f}% missed the precision asked")
    return out


def agreement(product: dict, truth_rows: list[dict]) -> dict:
    """Whether the product's answer agrees with the truth, and why not. `outcome`: "agree",
    "disagree", "product cannot tell" (the truth could tell), "both cannot tell" (an honest answer:
    agree), "no truth" (the truth weighed no compiled config), "pick not in the truth" (the
    candidates left the product's pick out). `agree`: True, False or None (not judged: no truth, or
    the product decided nothing). `cause` of a disagreement: timing, rule, not tried, compile cost."""
    truth = truth_verdict(truth_rows)
    tried = [r["label"] for r in product["rows"]]

    def result(outcome, agree, cause="", why=""):
        return {"outcome": outcome, "agree": agree, "cause": cause, "why": why, "truth": truth}

    if not truth["measured"]:
        why = "; ".join(f"{k}: {v}" for k, v in truth["left_out"].items()) or "no candidate ran"
        return result("no truth", None, "", f"the truth weighed no compiled config ({why})")
    if said_cannot_tell(product):
        if not truth["decided"]:
            return result("both cannot tell", True, "", f"the truth too is a tie: {', '.join(truth['ties'])}")
        problems = timing_problems(product, truth_rows, tried)
        why = f"the truth could tell: {truth['best']} ({_ranked(truth, truth['best'])})"
        if truth["best"] != NOT_COMPILED and truth["best"] not in tried:
            return result("product cannot tell", None, "not tried", f"{why}, a config the default run does not profile")
        return result("product cannot tell", None, "timing", why + ("; " + "; ".join(problems) if problems else ""))
    pick = product["pick"]
    known = {NOT_COMPILED} | {r["label"] for r in truth_rows}
    if pick not in known:
        return result("pick not in the truth", None, "", f"the candidates did not include {pick}")
    if pick in truth["ties"]:
        why = "" if truth["decided"] else f"within the truth's tie set ({', '.join(truth['ties'])})"
        return result("agree", True, "", why)
    best = truth["best"]
    head = f"the truth's best is {best} ({_ranked(truth, best)})"
    named = product.get("faster_per_call") or ""
    if named and named in truth["ties"]:
        # the product chose for the calls it was asked about and named the truth's best for more
        return result(
            "disagree",
            False,
            "compile cost",
            f"{head}; the product named it faster a call too, overtaking {pick} after "
            f"{product.get('overtakes_after_calls') or 0:,.0f} calls, and chose {pick} for the compile at "
            f"{product.get('calls') or 10000:,} calls",
        )
    if pick == NOT_COMPILED and best != NOT_COMPILED and _per_call_faster(product):
        return result(
            "disagree",
            False,
            "compile cost",
            f"{head}; the default run also found a compiled config faster a call, but at "
            f"{product.get('calls') or 10000:,} calls the compile outweighed it",
        )
    if best not in tried and best != NOT_COMPILED:
        restricted = truth_verdict([r for r in truth_rows if r["label"] in tried])
        if pick in restricted["ties"]:
            return result("disagree", False, "not tried", f"{head}, a config the default run does not profile")
    problems = timing_problems(product, truth_rows, {pick, best})
    if problems:
        return result("disagree", False, "timing", f"{head}; " + "; ".join(problems))
    return result(
        "disagree",
        False,
        "rule",
        f"{head}; the default run's figures agree with the truth's, yet it chose {pick} ({product['confidence']})",
    )


def _ranked(truth: dict, label: str) -> str:
    r = next(o for o in truth["ranking"] if o["label"] == label)
    return f"{r['speedup']:.2f}x [{r['low']:.2f}-{r['high']:.2f}]"


def _per_call_faster(product: dict) -> bool:
    """The default run measured an eligible compiled config faster than eager beyond the noise."""
    return any(r.get("eligible") and r.get("low") is not None and r["low"] > 1.0 for r in product["rows"])


# --------------------------------------------------------------------------- pure: suggestions
def compiled_lost(product: dict, truth_rows: list[dict]) -> bool:
    """Compiled lost against eager: the default config's speedup below 1 in the default run, or
    the truth's interval for that config wholly below 1."""
    truth_by = {r["label"]: r for r in truth_rows}
    for r in product["rows"]:
        if r.get("speedup") is not None and r["speedup"] < 1.0:
            return True
        t = truth_by.get(r["label"])
        if t is not None and t.get("high") is not None and t["high"] < 1.0:
            return True
    return False


def suggestion_to_apply(product: dict) -> dict | None:
    """The first of the product's suggestions (their order is the product's ranking) with an
    apply-and-re-run change that changes the config (not "re-run unchanged"): {rule, title, config,
    change}."""
    for s in product["suggestions"]:
        for change in s["changes"]:
            if not change.get("rerun_only"):
                return {"rule": s["rule"], "title": s["title"], "config": s["config"], "change": change}
    return None


def applied_config(config: dict, change: dict) -> dict:
    """The CompileConfig (as a dict) a suggestion's change makes of the config it was made for."""
    from core.decide.advice import ConfigChange
    from core.vocab.config import CompileConfig, DimMark

    c = ConfigChange(
        description=change.get("description", ""),
        backend=change.get("backend"),
        mode=change.get("mode"),
        dynamic=change.get("dynamic"),
        fullgraph=change.get("fullgraph"),
        dynamo_config=tuple(sorted((change.get("dynamo_config") or {}).items())),
        inductor_options=tuple(sorted((change.get("inductor_options") or {}).items())),
        mark_dynamic=tuple(DimMark.from_dict(m) for m in change.get("mark_dynamic") or ()),
    )
    return c.apply(CompileConfig.from_dict(config)).to_dict()


def suggestion_effect(before: dict | None, after: dict | None) -> str:
    """What applying a change did to the speedup, from two rows: "faster beyond the noise" (the
    intervals apart, the new one higher), "slower beyond the noise", "within the noise", or
    "cannot tell" (a run without a speedup, or a timing graded unusable)."""
    for r in (before, after):
        if r is None or r.get("speedup") is None:
            return "cannot tell (no speedup measured)"
        if r.get("timing") == UNUSABLE:
            return "cannot tell (a timing graded unusable)"
    if after["low"] > before["high"]:
        return "faster beyond the noise"
    if after["high"] < before["low"]:
        return "slower beyond the noise"
    return "within the noise"


def config_args(config: dict) -> list[str]:
    """`profile`'s flags for a CompileConfig dict."""
    out = ["--backend", config["backend"], "--mode", config["mode"], "--dynamic", config["dynamic"]]
    if config.get("fullgraph"):
        out.append("--fullgraph")
    for k, v in (config.get("dynamo_config") or {}).items():
        out += ["--dynamo-config", f"{k}={v}"]
    for k, v in (config.get("inductor_options") or {}).items():
        out += ["--inductor-option", f"{k}={v}"]
    for m in config.get("mark_dynamic") or ():
        bounds = f":{m['min']}:{m['max']}" if m.get("min") is not None and m.get("max") is not None else ""
        out += ["--mark-dynamic", f"{m['input']}:{m['dim']}{bounds}"]
    return out


# --------------------------------------------------------------------------- pure: the summary
def summarize(records: dict) -> dict:
    """The figures over the models done: agreement among firm answers and overall, the product's
    "cannot tell" where the truth could tell, the causes, the suggestion hit rate, the load."""
    done = [r for r in records.values() if r.get("verdict")]
    outcomes = [r["verdict"]["outcome"] for r in done]
    judged = [r for r in done if r["verdict"]["agree"] is not None]
    firm = [r for r in judged if r["verdict"]["outcome"] in ("agree", "disagree")]
    causes: dict[str, int] = {}
    for r in done:
        if r["verdict"]["cause"]:
            causes[r["verdict"]["cause"]] = causes.get(r["verdict"]["cause"], 0) + 1
    tried = [r["suggestion"] for r in done if (r.get("suggestion") or {}).get("effect")]
    others = [r["load"]["others_cores"] for r in done if (r.get("load") or {}).get("others_cores") is not None]
    jobs_max = [
        r["load"]["jobs_others_cores_max"]
        for r in done
        if (r.get("load") or {}).get("jobs_others_cores_max") is not None
    ]
    return {
        "models": len(done),
        "agree": sum(r["verdict"]["agree"] is True for r in done),
        "agreement_rate": _rate(sum(r["verdict"]["agree"] is True for r in judged), len(judged)),
        "firm_agreement_rate": _rate(sum(r["verdict"]["agree"] is True for r in firm), len(firm)),
        "product_cannot_tell_truth_could": outcomes.count("product cannot tell"),
        # a pick that lost to the truth's best only by the compile at the calls asked, the
        # product naming that best for a longer run: right per call, if not at those calls
        "named_for_longer_run": sum(
            r["verdict"]["cause"] == "compile cost" and bool(r["product"].get("faster_per_call")) for r in done
        ),
        "both_cannot_tell": outcomes.count("both cannot tell"),
        "no_truth": outcomes.count("no truth") + outcomes.count("pick not in the truth"),
        "causes": causes,
        "compiled_lost": sum(bool((r.get("suggestion") or {}).get("lost")) for r in done),
        "suggestions_applied": len(tried),
        "suggestion_hits": sum(s["effect"] == "faster beyond the noise" for s in tried),
        "suggestion_hit_rate": _rate(sum(s["effect"] == "faster beyond the noise" for s in tried), len(tried)),
        "others_cores_median": sorted(others)[len(others) // 2] if others else None,
        "others_cores_max": max(others) if others else None,
        "jobs_others_cores_max": max(jobs_max) if jobs_max else None,
    }


def _rate(n: int, d: int) -> str:
    return f"{n}/{d}" + (f" ({100 * n / d:.0f}%)" if d else "")


def table_lines(records: dict) -> list[str]:
    """The table: model, the product's pick, the truth's best or tie set, agree?, why."""
    lines = [
        "| model | product's pick | truth's best / tie set | agree? | why |",
        "|---|---|---|---|---|",
    ]
    for name, r in records.items():
        if not r.get("verdict"):
            lines.append(f"| {name} | - | - | - | {'; '.join(r.get('errors') or ['not done'])} |")
            continue
        p, v = r["product"], r["verdict"]
        pick = f"{p['pick'] or '-'} ({p['confidence']})"
        agree = {True: "yes", False: "no", None: "-"}[v["agree"]]
        why = f"{v['cause']}: {v['why']}" if v["cause"] else v["why"] or v["outcome"]
        if v["outcome"] not in ("agree", "disagree"):
            why = f"{v['outcome']}; {why}" if why != v["outcome"] else why
        lines.append(f"| {name} | {pick} | {truth_text(v['truth'])} | {agree} | {why.replace('|', '/')} |")
    return lines


def suggestion_lines(records: dict) -> list[str]:
    """Per model where compiled lost: the top suggestion, the one applied and what it did."""
    out = []
    for name, r in records.items():
        sug = r.get("suggestion") or {}
        if not sug.get("lost"):
            continue
        top = sug.get("top") or "none"
        if sug.get("effect"):
            before, after = sug["before"], sug.get("after")
            moved = f"{_fmt_row(before)} -> {_fmt_row(after) if after else 'failed'}: {sug['effect']}"
            out.append(f"verdicts_suggestion[{name}]: top {top}; applied {sug['applied']}; {moved}")
        else:
            out.append(f"verdicts_suggestion[{name}]: top {top}; nothing applied: {sug.get('why', '')}")
    return out


def summary_lines(summary: dict) -> list[str]:
    s = summary
    causes = ", ".join(f"{k} {n}" for k, n in sorted(s["causes"].items())) or "-"

    def cores(x):
        return "-" if x is None else f"{x:.2f}"

    return [
        f"verdicts_models: {s['models']}",
        f"verdicts_agreement_rate: {s['agreement_rate']} (firm answers: {s['firm_agreement_rate']})",
        f"verdicts_product_cannot_tell_where_truth_could: {s['product_cannot_tell_truth_could']}",
        f"verdicts_truths_best_named_for_a_longer_run: {s['named_for_longer_run']}",
        f"verdicts_both_cannot_tell: {s['both_cannot_tell']}; no truth: {s['no_truth']}",
        f"verdicts_disagreement_causes: {causes}",
        f"verdicts_suggestion_hit_rate: {s['suggestion_hit_rate']} (compiled lost for {s['compiled_lost']} models)",
        f"verdicts_others_cores: median {cores(s['others_cores_median'])}, max {cores(s['others_cores_max'])} "
        f"(the runner's own readings, worst job: {cores(s['jobs_others_cores_max'])})",
    ]


# --------------------------------------------------------------------------- running
def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "model"


def _stop(proc: subprocess.Popen) -> None:
    """Stop a profile as Ctrl+C does (it writes its report), killing it only after STOP_GRACE_S."""
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        except KeyboardInterrupt:
            proc.kill()
            proc.wait()


def run_profile(source: str, out: str, args: list[str], timeout_s: float, log: str) -> tuple[dict | None, str, float]:
    """One `main.py profile SOURCE --out OUT ARGS` (its stdout and stderr kept in LOG): (its
    report.json or None, what went wrong or "", wall seconds). Ctrl+C stops it (it writes what it
    measured) and is raised again."""
    cmd = [sys.executable, os.path.join(ROOT, "main.py"), "profile", source, "--out", out, "--overwrite", *args]
    t0 = time.monotonic()
    problem = ""
    with open(log, "w") as fh:
        fh.write(shlex.join(cmd) + "\n")
        fh.flush()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
        try:
            rc = proc.wait(timeout=timeout_s)
            if rc not in (0, 1):
                problem = f"profile exited {rc} (see {log})"
        except subprocess.TimeoutExpired:
            _stop(proc)
            problem = f"profile timed out after {timeout_s:.0f} s (see {log})"
        except KeyboardInterrupt:
            _stop(proc)
            raise
    wall = time.monotonic() - t0
    try:
        with open(os.path.join(out, "report.json")) as fh:
            return json.load(fh), problem, wall
    except (OSError, ValueError) as exc:
        return None, problem or f"no report.json ({exc}; see {log})", wall


def truth_candidates(names: list[str] | None) -> list:
    """tune's candidate configs for the CPU (core.decide.tune.candidates), or those named."""
    from core.decide.tune import candidates

    found = [c.config for c in candidates("cpu", has_variants=False)]
    if not names:
        return found
    by_label = {c.label: c for c in found}
    unknown = [n for n in names if n not in by_label]
    if unknown:
        raise ValueError(f"unknown candidate {', '.join(unknown)}; tune's candidates: {', '.join(by_label)}")
    return [by_label[n] for n in names]


def run_model(name: str, extra: list[str], settings: dict, folder: str, kept: dict | None = None) -> dict:
    """Everything for one model: the product's answer, the truth, the verdict, the suggestion.
    `kept`: this model's earlier record, whose truth is kept (--product-again: the product's
    answer measured anew after a change to the product, against the same truth)."""
    from tests.bench.trust import model_source

    os.makedirs(folder, exist_ok=True)
    source = model_source(name, os.path.dirname(folder)) if name == "tiny" else name
    if source.startswith("resources/"):
        source = os.path.join(ROOT, source)
    record: dict = {"model": name, "args": extra, "errors": []}
    watch = CpuWatch()
    t0 = time.monotonic()
    product_args = [*extra]
    if settings["product_max_time"] is not None:
        product_args += ["--max-time", str(settings["product_max_time"])]
    say_line(f"[{name}] the product: profile {shlex.join([source, *product_args])}")
    doc, problem, wall = run_profile(
        source,
        os.path.join(folder, "product"),
        product_args,
        settings["run_timeout"],
        os.path.join(folder, "product.log"),
    )
    if problem:
        record["errors"].append(f"product: {problem}")
    if doc is None:
        return record
    product = product_answer(doc)
    product["wall_s"] = round(wall, 1)
    record["product"] = product
    say_line(
        f"[{name}] product: {product['pick'] or '-'} ({product['confidence']}); "
        + "; ".join(_fmt_row(r) + f" {r['timing']}" for r in product["rows"])
    )
    if kept is not None:
        record["earlier_product"] = kept.get("product")
        record["truth_rows"] = truth_rows = kept["truth_rows"]
        say_line(f"[{name}] truth kept: " + "; ".join(_fmt_row(r) for r in truth_rows))
        return _judge(record, product, truth_rows, source, product_args, settings, folder, watch, t0)
    truth_rows = []
    truth_args = [
        *extra,
        *("--processes", str(settings["truth_processes"]), "--precision", str(settings["truth_precision"])),
        *("--max-time", str(settings["truth_max_time"]), "--op-profile", "0"),
    ]
    for config in truth_candidates(settings["candidates"]):
        label = config.label
        sub = os.path.join(folder, "truth", slug(label))
        os.makedirs(os.path.dirname(sub), exist_ok=True)
        doc, problem, wall = run_profile(
            source, sub, [*config_args(config.to_dict()), *truth_args], settings["run_timeout"], sub + ".log"
        )
        if problem:
            record["errors"].append(f"truth {label}: {problem}")
        row = (
            job_row(doc)
            if doc and doc.get("jobs")
            else {"label": label, "speedup": None, "status": "failed", "failure": problem}
        )
        row["wall_s"] = round(wall, 1)
        truth_rows.append(row)
        say_line(f"[{name}] truth {_fmt_row(row)} {row.get('timing', '')} ({wall:.0f} s)")
    record["truth_rows"] = truth_rows
    return _judge(record, product, truth_rows, source, product_args, settings, folder, watch, t0)


def _judge(record, product, truth_rows, source, product_args, settings, folder, watch, t0) -> dict:
    """The verdict, the suggestion applied where compiled lost, and the machine's load."""
    record["verdict"] = agreement(product, truth_rows)
    record["suggestion"] = {"lost": compiled_lost(product, truth_rows), "top": product["top_suggestion"]}
    if record["suggestion"]["lost"]:
        record["suggestion"].update(_apply_suggestion(source, product, product_args, settings, folder, record))
    jobs_others = [r["others_cores"] for r in product["rows"] + truth_rows if r.get("others_cores") is not None]
    record["load"] = {
        "others_cores": round(watch.others_cores(), 3),
        "jobs_others_cores_max": max(jobs_others) if jobs_others else None,
    }
    record["wall_s"] = round(time.monotonic() - t0, 1)
    record["complete"] = True
    return record


def _apply_suggestion(source, product, product_args, settings, folder, record) -> dict:
    """The top suggestion with a change, applied and profiled as the default run was."""
    chosen = suggestion_to_apply(product)
    if chosen is None:
        return {"applied": "", "effect": "", "why": "no suggestion with an apply-and-re-run change"}
    row = next((r for r in product["rows"] if r["label"] == chosen["config"]), product["rows"][0])
    doc = _load(os.path.join(folder, "product", "report.json"))
    config = next(j["spec"]["config"] for j in doc["jobs"] if _label(j) == row["label"])
    try:
        new = applied_config(config, chosen["change"])
    except Exception as exc:  # a change this torch cannot apply (an unknown mode): said, not fatal
        return {"applied": chosen["title"], "effect": "", "why": f"the change could not be applied: {exc}"}
    out = os.path.join(folder, "suggestion")
    doc, problem, wall = run_profile(
        source, out, [*config_args(new), *product_args, "--op-profile", "0"], settings["run_timeout"], out + ".log"
    )
    if problem:
        record["errors"].append(f"suggestion: {problem}")
    after = job_row(doc) if doc and doc.get("jobs") else None
    effect = suggestion_effect(row, after)
    say_line(
        f"[{record['model']}] suggestion {chosen['rule']} applied: {_fmt_row(row)} -> "
        f"{_fmt_row(after) if after else 'failed'}: {effect}"
    )
    return {
        "applied": f"[{chosen['rule']}] {chosen['title']}: {chosen['change'].get('description', '')}",
        "config": new,
        "before": row,
        "after": after,
        "effect": effect,
        "wall_s": round(wall, 1),
    }


def _label(job: dict) -> str:
    from core.vocab.config import CompileConfig

    return CompileConfig.from_dict(job["spec"]["config"]).label


def _load(path: str) -> dict:
    with open(path) as fh:
        return json.load(fh)


def say_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def write_json(path: str, doc: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=1, default=str)
    os.replace(tmp, path)


SETTING_KEYS = ("candidates", "truth_processes", "truth_precision", "truth_max_time", "product_max_time")


def parse(argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python3 main.py bench verdicts",
        description="Are the verdicts right? The product's default answer against an exhaustive truth, per model.",
    )
    p.add_argument("--models", help="comma-separated model names (default: the fixed list of 16)")
    p.add_argument("--candidates", help="comma-separated labels of tune's candidate configs (default: all)")
    p.add_argument("--truth-processes", type=int, default=TRUTH_PROCESSES)
    p.add_argument("--truth-precision", type=float, default=TRUTH_PRECISION_PCT, help="±PCT (default 1)")
    p.add_argument("--truth-max-time", type=float, default=TRUTH_MAX_TIME_S, help="seconds a config (default 180)")
    p.add_argument(
        "--product-max-time", type=float, default=None, help="the default run's --max-time (default: its own)"
    )
    p.add_argument("--run-timeout", type=float, default=RUN_TIMEOUT_S, help="seconds a profile may run")
    p.add_argument("--out", help="folder for verdicts.json and every report (default: a new temporary folder)")
    p.add_argument("--resume", action="store_true", help="keep the models already in OUT/verdicts.json")
    p.add_argument(
        "--product-again",
        action="store_true",
        help="with --resume: the done models of --models get the product's answer anew, their truth kept "
        "(after a change to the product)",
    )
    return p.parse_args(list(argv))


def models_of(text: str | None) -> list[tuple[str, tuple[str, ...]]]:
    """The models to run: the default list, or those named (with the default list's arguments
    when a name is on it)."""
    if not text:
        return list(DEFAULT_MODELS)
    known = dict(DEFAULT_MODELS)
    return [(n, known.get(n, ())) for n in (x.strip() for x in text.split(",")) if n]


def bench_verdicts(argv=()) -> None:
    """The benchmark (tests.bench's entry): its exit code other than 0 as SystemExit (2 for a
    refused option or --out, 130 after Ctrl+C)."""
    rc = verdicts(list(argv))
    if rc:
        raise SystemExit(rc)


def verdicts(argv: list[str]) -> int:
    a = parse(argv)
    settings = {
        "candidates": [c.strip() for c in a.candidates.split(",")] if a.candidates else None,
        "truth_processes": a.truth_processes,
        "truth_precision": a.truth_precision,
        "truth_max_time": a.truth_max_time,
        "product_max_time": a.product_max_time,
        "run_timeout": a.run_timeout,
    }
    try:
        truth_candidates(settings["candidates"])  # an unknown label is refused before anything runs
    except ValueError as exc:
        print(f"verdicts: {exc}", file=sys.stderr)
        return 2
    if a.resume and not a.out:
        print("verdicts: --resume needs --out DIR (the folder of the run to resume)", file=sys.stderr)
        return 2
    if a.product_again and not (a.resume and a.models):
        print("verdicts: --product-again needs --resume and --models (the done models to answer anew)", file=sys.stderr)
        return 2
    out = os.path.abspath(a.out) if a.out else tempfile.mkdtemp(prefix="bench-verdicts-")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, RESULT_FILE)
    command = shlex.join(["python3", "main.py", "bench", "verdicts", *argv])
    doc = {"command": command, "settings": settings, "models": {}}
    if os.path.exists(path):
        if not a.resume:
            print(f"verdicts: {path} exists; pass --resume to go on with it, or another --out", file=sys.stderr)
            return 2
        doc = _load(path)
        differ = [k for k in SETTING_KEYS if doc.get("settings", {}).get(k) != settings[k]]
        if differ:
            print(f"verdicts: --resume with other settings than {path} ({', '.join(differ)})", file=sys.stderr)
            return 2
        doc.setdefault("resumed", []).append(command)
    doc["machine"] = {
        "cores": os.cpu_count(),
        "python_loop_s": round(python_loop_s(), 3),
        "loadavg_start": os.getloadavg(),
    }
    print(f"verdicts_out: {out}", flush=True)
    records = doc["models"]
    interrupted = False
    try:
        for name, extra in models_of(a.models):
            done = records.get(name, {}).get("complete")
            if done and not a.product_again:
                say_line(f"[{name}] done before: kept (--resume)")
                continue
            kept = records[name] if done else None
            records[name] = run_model(name, list(extra), settings, os.path.join(out, slug(name)), kept)
            doc["summary"] = summarize(records)
            write_json(path, doc)
    except KeyboardInterrupt:
        interrupted = True
        say_line("interrupted (Ctrl+C): the models done are kept; --resume goes on")
    doc["machine"]["loadavg_end"] = os.getloadavg()
    doc["summary"] = summarize(records)
    doc["interrupted"] = interrupted
    write_json(path, doc)
    print(f"# {command}")
    for line in table_lines(records):
        print(line)
    for line in suggestion_lines(records) + summary_lines(doc["summary"]):
        print(line)
    print(
        f"verdicts_machine: {doc['machine']['cores']} cores, python loop {doc['machine']['python_loop_s']} s, "
        f"load average {doc['machine']['loadavg_start'][0]:.2f} at the start, {doc['machine']['loadavg_end'][0]:.2f} at the end"
    )
    print(f"verdicts_json: {path}", flush=True)
    return 130 if interrupted else 0
