"""Run one Job inside the worker: user code, device placement, traces, outputs, Result.

TensorFlow arrives as the `tf` argument (imported by worker.py only), so this module is
importable anywhere; it is only *called* in the worker process.
"""
from __future__ import annotations

import builtins
import contextlib
import linecache
import os
import random
import sys
import time
import traceback
import types

from . import measure, report, safety, stats
from .outputs import OutputCheck, compare_outputs
from .protocol import (RUN_FUNCTION, Comparison, Device, ErrorInfo, Frame, Job, Result,
                       VariantStats, error_result)

MAX_MESSAGE = 2000   # characters of an exception message kept (TF messages can be huge)
MAX_FRAMES = 6


def _filename(where: str) -> str:
    return "<tfperf:prelude>" if where == "prelude" else f"<tfperf:variant:{where}>"


def _where(filename: str) -> str | None:
    if filename == "<tfperf:prelude>":
        return "prelude"
    if filename.startswith("<tfperf:variant:") and filename.endswith(">"):
        return filename[len("<tfperf:variant:"):-1]
    return None


def exec_user(source: str, where: str, namespace: dict) -> None:
    """exec with a named pseudo-file registered in linecache, so tracebacks show the lines."""
    name = _filename(where)
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    exec(compile(source, name, "exec"), namespace)  # noqa: S102 - running the user's code is the job


def user_error(variant: str | None, phase: str, exc: BaseException) -> ErrorInfo:
    """ErrorInfo with the exception and the last frames that are the user's snippet."""
    frames = [Frame(w, f.lineno or 0, (f.line or "").strip())
              for f in traceback.extract_tb(exc.__traceback__)
              if (w := _where(f.filename)) is not None][-MAX_FRAMES:]
    text = str(exc)
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE] + f"... ({len(text) - MAX_MESSAGE} more characters)"
    head = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    tb = ["Traceback (your code, most recent call last):"]
    tb += [f"  {f.where}, line {f.line}: {f.code}" for f in frames]
    tb.append(head)
    return ErrorInfo(kind="exception", message=head, variant=None if variant == "prelude" else variant,
                     phase=phase, exception_type=type(exc).__name__, frames=frames,
                     traceback="\n".join(tb))


def _is_tf_function(obj) -> bool:
    return callable(getattr(type(obj), "experimental_get_tracing_count", None))


def find_functions(namespace: dict, run) -> list:
    """tf.function objects reachable from the variant: namespace values, attributes of
    instances and classes in it, and the closure of __tfperf_run__. Rescanned on every count
    so functions created lazily (Keras' predict_function) are seen."""
    found, seen = [], set()

    def add(obj):
        if _is_tf_function(obj) and id(obj) not in seen:
            seen.add(id(obj))
            found.append(obj)

    values = list(namespace.values())
    values += [c.cell_contents for c in (getattr(run, "__closure__", None) or ())
               if _cell_filled(c)]
    for value in values:
        if isinstance(value, (types.ModuleType, types.BuiltinFunctionType)):
            continue
        add(value)
        attrs = getattr(value, "__dict__", None)
        if isinstance(attrs, (dict, types.MappingProxyType)) and not isinstance(value, types.FunctionType):
            for attr in list(attrs.values()):
                add(attr)
    return found


def _cell_filled(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def trace_counter(namespace: dict, run):
    def count() -> int:
        total = 0
        for fn in find_functions(namespace, run):
            try:
                total += int(fn.experimental_get_tracing_count())
            except Exception:  # noqa: BLE001 - a counter that fails counts as zero
                pass
        return total
    return count


def _graph_building_us() -> float | None:
    """TF's global graph-building timer: catches tf.functions we cannot reach (created per call)."""
    tc = sys.modules.get("tensorflow.python.eager.polymorphic_function.tracing_compilation")
    try:  # already loaded by the worker's `import tensorflow`; not an import of our own
        return float(tc._graph_building_time_counter.get_cell().value())  # noqa: SLF001
    except Exception:  # noqa: BLE001 - private API, best-effort
        return None


class Placement:
    def __init__(self, tf, requested: str, device: Device, warnings: list[str]):
        n_gpu = len(device.gpus)
        self.scope = contextlib.nullcontext()
        self.name, self.mem_device = "cpu", None
        if requested == "cpu":
            self.scope = tf.device("/CPU:0")
        elif requested.startswith("gpu:"):
            idx = int(requested[4:])
            self.scope = tf.device(f"/GPU:{idx}")  # soft placement falls back to CPU
            if idx < n_gpu:
                self.name, self.mem_device = requested, f"GPU:{idx}"
            else:
                warnings.append(f"{requested} was requested but TensorFlow sees {n_gpu} GPU(s): "
                                "ran on CPU (soft placement)")
        elif n_gpu:
            self.name, self.mem_device = "gpu:0", "GPU:0"
        self.gpu = self.mem_device is not None
        cc = device.gpus[int(self.name[4:])].compute_capability if self.gpu else None
        self.tf32 = bool(self.gpu and cc and float(cc) >= 8.0 and _tf32_enabled(tf))


def _tf32_enabled(tf) -> bool:
    try:
        return bool(tf.config.experimental.tensor_float_32_execution_enabled())
    except Exception:  # noqa: BLE001
        return False


def _hooks(tf, place: Placement, progress) -> measure.Hooks:
    def sync(_out):
        tf.test.experimental.sync_devices()  # GPU streams and async eager queues

    mem_reset = mem_peak = None
    if place.gpu:
        def mem_reset():
            tf.config.experimental.reset_memory_stats(place.mem_device)

        def mem_peak():
            return int(tf.config.experimental.get_memory_info(place.mem_device)["peak"])
    def graph_time():
        us = _graph_building_us()
        return None if us is None else us / 1e6

    return measure.Hooks(sync=sync, mem_reset=mem_reset, mem_peak=mem_peak, progress=progress,
                         graph_time=graph_time)


def _output_devices(tf, out) -> list[str]:
    devs = []
    for leaf in tf.nest.flatten(out, expand_composites=True):
        d = getattr(leaf, "device", None)
        if isinstance(d, str) and d:
            short = d.rsplit("device:", 1)[-1]
            if short not in devs:
                devs.append(short)
    return devs


def run_job(tf, job: Job, device: Device, progress) -> Result:
    """Everything after the worker received `job`. Never raises for user-code problems."""
    started = time.perf_counter()
    warnings: list[str] = []
    place = Placement(tf, job.device, device, warnings)
    env = {"device": device, "placement": place.name, "tf_version": tf.__version__,
           "python": sys.version.split()[0]}
    random.seed(job.seed)
    tf.random.set_seed(job.seed)
    try:
        import numpy as np
        np.random.seed(job.seed % 2 ** 32)
    except ImportError:
        pass
    try:
        with place.scope:
            return _run(tf, job, place, progress, warnings, env, started)
    except measure.UserCodeError as e:
        info = user_error(e.variant, e.phase, e.exc)
        res = Result(verdict="error", summary="", error=info, warnings=warnings, **env)
        res.summary = report.summarize(res)
        return res


def _run(tf, job, place, progress, warnings, env, started) -> Result:
    if os.environ.get("TFPERF_BENCH_ALLOW_NETWORK") != "1":
        safety.block_network()  # fail closed: before any of the user's code runs
    namespace = {"__name__": "__tfperf__", "__builtins__": builtins}
    _guard("prelude", "prelude", exec_user, job.prelude, "prelude", namespace)
    runners = []
    for v in job.variants:
        ns = dict(namespace)
        _guard(v.name, "define", exec_user, v.source, v.name, ns)
        fn = ns.get(RUN_FUNCTION)
        if not callable(fn):
            return error_result("invalid-job", f"variant '{v.name}' does not define {RUN_FUNCTION}()",
                                variant=v.name, phase="define", **env)
        runners.append(measure.Runner(v.name, fn, trace_counter(ns, fn)))
    # The A/A control: the original defined again (its own tf.functions), timed in every round.
    ns = dict(namespace)
    _guard(job.variants[0].name, "define", exec_user, job.variants[0].source, job.variants[0].name, ns)
    runners.append(measure.Runner(CONTROL, ns[RUN_FUNCTION], trace_counter(ns, ns[RUN_FUNCTION])))
    s = measure.Settings(budget_s=job.budget_s, min_sample_s=job.min_sample_s,
                         max_pairs=job.max_pairs, seed=job.seed)
    if not place.gpu:
        s.warmup_min_s = measure.CPU_WARMUP_MIN_S
    engine = measure.Engine(runners, s, _hooks(tf, place, progress), control=True)
    # A stateful method (train_step) changes the model on every call: its two first calls differ
    # by design, so each variant's first call (same seed, same state) is what is compared.
    stateful = bool(job.meta.get("stateful"))
    second = engine.first_calls(reference_twice=job.compare and not stateful)
    out_devices = [_output_devices(tf, r.first_output) for r in engine.measured]
    kinds = [_variant_kind(v.name, v.source) for v in job.variants]
    checks = _check_outputs(tf, engine, second, place, warnings, kinds) if job.compare else None
    for r in engine.runs:  # do not keep outputs alive during timing
        r.first_output = None
    del second
    engine.warmup()
    n0 = engine.calibrate()
    graph_us = _graph_building_us()
    if n0 is not None:
        engine.run_pairs(n0)
    graph_after = _graph_building_us()
    graph_s = (graph_after - graph_us) / 1e6 if graph_us is not None and graph_after is not None else None
    kinds = [_variant_kind(v.name, v.source) for v in job.variants]
    return _result(engine, checks, out_devices, place, warnings, env, started, job, graph_s, kinds)


def _guard(variant, phase, fn, *args):
    try:
        return fn(*args)
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything
        raise measure.UserCodeError(variant, phase, exc) from exc


CONTROL = "A/A control"


def _variant_kind(name: str, source: str) -> str | None:
    """How a variant computes, for its output tolerance: XLA and mixed precision are looser."""
    if "mixed_float16" in source or "mixed_bfloat16" in source:
        return "mixed"
    if "jit_compile=True" in source or "XLA" in name or "jit_compile" in name:
        return "xla"
    return None


def _check_outputs(tf, engine, second, place, warnings, kinds) -> list[OutputCheck]:
    def cmp(a, b, values=True, kind=None):
        try:
            return compare_outputs(a, b, flatten=lambda x: tf.nest.flatten(x, expand_composites=True),
                                   same_structure=lambda x, y: tf.nest.assert_same_structure(
                                       x, y, check_types=False, expand_composites=True),
                                   tf32=place.tf32, values=values, kind=kind)
        except Exception as e:  # noqa: BLE001 - exotic outputs must not crash the benchmark
            return OutputCheck(None, f"could not compare outputs: {type(e).__name__}: {e}"[:300])

    if place.tf32:
        warnings.append("TF32 is on for this GPU: float32 outputs compared with rtol 1e-3")
    ref = engine.runs[0].first_output
    deterministic = second is None or cmp(ref, second).match is not False
    if not deterministic:
        warnings.append("cannot verify: the original is not deterministic (two runs differ)")
    checks = []
    for run, kind in zip(engine.measured[1:], kinds[1:]):
        chk = cmp(ref, run.first_output, values=deterministic, kind=kind)
        if not deterministic and chk.match is True:
            chk = OutputCheck(None, "cannot verify: the original is not deterministic",
                              values_checked=False)
        checks.append(chk)
    return checks


def _variant_stats(run: measure.VariantRun, single_shot: bool, devices: list[str]) -> VariantStats:
    v = VariantStats(name=run.name, first_call_s=run.first_call_s, samples_s=list(run.samples),
                     calls_per_sample=0 if single_shot else run.calls_per_sample,
                     warmup_calls=len(run.warmup_times), traces_first_call=run.traces_first_call,
                     traces_during_timing=run.traces_during_timing, traces_total=run.traces_total,
                     peak_memory_bytes=run.peak_memory_bytes, output_devices=devices,
                     graph_building_s=run.graph_building_s)
    if single_shot:
        v.median_s = measure.single_shot_time(run)
    else:
        for key, value in stats.describe(run.samples).items():
            setattr(v, key, value)
        v.warnings = stats.instability_warnings(run.name, run.samples)
    if run.traces_during_timing:
        v.warnings.append(f"{run.name}: {run.traces_during_timing} tf.function trace(s) during "
                          "timing: the times include retracing")
    return v


def _comparison(ref: measure.VariantRun, run: measure.VariantRun, single_shot: bool,
                check: OutputCheck | None, paired: stats.Paired | None = None,
                kind: str | None = None, tf32: bool = False) -> Comparison:
    c = Comparison(baseline=ref.name, candidate=run.name, verdict="inconclusive",
                   timing_verdict="inconclusive", single_shot=single_shot, threshold=stats.THRESHOLD)
    if single_shot:
        a, b = measure.single_shot_time(ref), measure.single_shot_time(run)
        c.speedup = a / b if a and b else None
    else:
        p = paired or stats.compare_paired(ref.samples, run.samples)
        c.speedup, c.ci_low, c.ci_high = p.speedup, p.speedup_low, p.speedup_high
        c.ci_coverage, c.pairs, c.timing_verdict = p.coverage, p.n, p.verdict
        c.noise_floor = p.noise_floor
    if check is not None:
        c.outputs_match, c.max_abs_err, c.max_rel_err = check.match, check.max_abs_err, check.max_rel_err
        c.mismatch, c.rtol = check.reason, check.rtol
    notes = [n for n in (kind, "tf32" if tf32 else None) if n]
    if notes:
        from .outputs import KIND_NOTES
        c.tolerance_note = " and ".join(dict.fromkeys(KIND_NOTES[n] for n in notes))
    c.verdict = "outputs-differ" if c.outputs_match is False else c.timing_verdict
    return c


def _result(engine, checks, out_devices, place, warnings, env, started, job, graph_s, kinds) -> Result:
    runs, single = engine.measured, engine.single_shot
    variants = [_variant_stats(r, single, d) for r, d in zip(runs, out_devices)]
    paired = None if single or engine.pairs == 0 else engine.comparisons()
    comps = [_comparison(runs[0], r, single, checks[i] if checks else None,
                         paired[i] if paired else None, kinds[i + 1], place.tf32)
             for i, r in enumerate(runs[1:])]
    if place.gpu and any(d and all(x.startswith("CPU") for x in d) for d in out_devices):
        warnings.append("outputs are on the CPU although the job ran on a GPU: "
                        "some ops fell back to the CPU (soft placement)")
    if single:
        warnings.append("single shot: the calls are too slow for the minimum number of timed pairs "
                        "to fit in the time budget, so there is no interval; raise the budget for a verdict")
    uncounted = [v for v in variants if (v.graph_building_s or 0) > 0.001 and not v.traces_during_timing]
    if uncounted:  # graphs built by tf.functions the trace counter cannot reach (made per call)
        who = ", ".join(f"{v.name} {v.graph_building_s * 1e3:.0f} ms" for v in uncounted)
        warnings.append(f"TensorFlow built graphs during timing ({who}) that the trace counts do not "
                        "include: a tf.function is probably created or retraced on every call")
    load = _load_avg()
    if load and load[0] > (os.cpu_count() or 1):
        warnings.append(f"the machine is busy (load average {load[0]:.1f} on {os.cpu_count()} "
                        "CPUs): timings are noisy")
    warnings = engine.warnings + warnings + [w for v in variants for w in v.warnings]
    matches = [c.outputs_match for c in comps]
    overall = False if False in matches else (True if matches and all(matches) else None)
    timing = {"pairs": engine.pairs, "single_shot": single, "budget_s": job.budget_s,
              "pairs_wall_s": engine.pairs_wall_s, "wall_s": time.perf_counter() - started,
              "load_avg": load, "graph_building_s_during_timing": graph_s}
    ctrl = paired[0].control if paired else None
    if ctrl is not None:  # the A/A control: identical code, timed in the same rounds
        timing["control"] = {"speedup": ctrl.speedup, "ci95": [ctrl.speedup_low, ctrl.speedup_high],
                             "verdict": ctrl.verdict, "noise_floor": paired[0].noise_floor}
    if isinstance(job.meta.get("elements_per_call"), int):
        timing["elements_per_call"] = job.meta["elements_per_call"]
    res = Result(verdict=comps[0].verdict, summary="", variants=variants, comparisons=comps,
                 outputs_match=overall, warnings=warnings, timing=timing, **env)
    res.summary = report.summarize(res)
    return res


def _load_avg():
    try:
        return list(os.getloadavg())
    except (OSError, AttributeError):
        return None
