"""Messages between the language server and the benchmark worker (docs/contract.md, section 2).

Pure Python (no TensorFlow, no numpy): the server imports this. Every message is one JSON object
on one line. ``to_dict``/``from_dict`` round-trip exactly; ``from_dict`` raises ProtocolError
with the offending field named, so a malformed worker message becomes a clear error result.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import asdict, dataclass, field

from .jsonshape import NUM, ProtocolError, dumps, finite, loads, loose, opt, req

SCHEMA = 1
VERDICTS = ("faster", "slower", "equivalent", "inconclusive", "noisy-machine", "outputs-differ", "error")
ERROR_KINDS = ("exception", "invalid-job", "timeout", "memory", "crash", "cancelled", "protocol",
               "start", "output-limit")
MAX_BUDGET_S = 10.0
MAX_VARIANTS = 4
RUN_FUNCTION = "__tfperf_run__"
_DEVICE_RE = re.compile(r"^(auto|cpu|gpu:\d+)$")


class JobError(ValueError):
    """A Job that cannot be run; the message says which field and why."""


@dataclass
class Variant:
    name: str
    source: str  # defines `def __tfperf_run__():` returning the outputs to compare

    @classmethod
    def from_dict(cls, d: dict, where: str = "variant") -> "Variant":
        return cls(req(d, "name", str, where), req(d, "source", str, where))


@dataclass
class Job:
    prelude: str
    variants: list[Variant]
    budget_s: float = 3.0        # seconds of timed pairs (warm-up and first calls are extra)
    min_sample_s: float = 0.05   # one sample = k calls lasting at least this long
    max_pairs: int = 30
    device: str = "auto"         # auto | cpu | gpu:N
    seed: int = 0                # pair order, tf/numpy/random seeds
    compare: bool = True         # check the outputs against variants[0]
    inputs: str | None = None    # human description of the inputs (display, cache key)
    meta: dict = field(default_factory=dict)  # free-form for the caller; ignored by the worker

    def validate(self) -> "Job":
        """Raise JobError naming the bad field; return self so calls chain."""
        if not isinstance(self.prelude, str):
            raise JobError("prelude must be a string of Python code")
        _check_syntax(self.prelude, "prelude", need_run=False)
        if not isinstance(self.variants, list) or not 2 <= len(self.variants) <= MAX_VARIANTS:
            raise JobError(f"a job needs 2 to {MAX_VARIANTS} variants (the first is the reference)")
        names = [v.name for v in self.variants]
        if any(not isinstance(n, str) or not n.strip() for n in names):
            raise JobError("every variant needs a non-empty name")
        if len(set(names)) != len(names):
            raise JobError(f"variant names must be unique: {names}")
        for v in self.variants:
            _check_syntax(v.source, f"variant '{v.name}'", need_run=True)
        if not _is_num(self.budget_s) or not 0 < self.budget_s <= MAX_BUDGET_S:
            raise JobError(f"budget_s must be in (0, {MAX_BUDGET_S:g}] seconds, got {self.budget_s!r}")
        if not _is_num(self.min_sample_s) or not 0.0001 <= self.min_sample_s <= 1.0:
            raise JobError(f"min_sample_s must be in [0.0001, 1] seconds, got {self.min_sample_s!r}")
        if not _is_int(self.max_pairs) or not 6 <= self.max_pairs <= 100:
            raise JobError(f"max_pairs must be an integer in [6, 100], got {self.max_pairs!r}")
        if not isinstance(self.device, str) or not _DEVICE_RE.match(self.device):
            raise JobError(f"device must be 'auto', 'cpu' or 'gpu:N', got {self.device!r}")
        if not _is_int(self.seed) or self.seed < 0:
            raise JobError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not isinstance(self.compare, bool):
            raise JobError("compare must be true or false")
        if self.inputs is not None and not isinstance(self.inputs, str):
            raise JobError("inputs must be a string description or null")
        if not isinstance(self.meta, dict):
            raise JobError("meta must be an object")
        return self

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Job":
        w = "job"
        variants = req(d, "variants", list, w)
        return cls(
            prelude=req(d, "prelude", str, w),
            variants=[Variant.from_dict(v, f"job.variants[{i}]") for i, v in enumerate(variants)],
            budget_s=opt(d, "budget_s", NUM, w, 3.0),
            min_sample_s=opt(d, "min_sample_s", NUM, w, 0.05),
            max_pairs=opt(d, "max_pairs", int, w, 30),
            device=opt(d, "device", str, w, "auto"),
            seed=opt(d, "seed", int, w, 0),
            compare=opt(d, "compare", bool, w, True),
            inputs=opt(d, "inputs", str, w),
            meta=opt(d, "meta", dict, w, {}),
        )


def _is_num(x) -> bool:
    return isinstance(x, NUM) and not isinstance(x, bool) and math.isfinite(x)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_syntax(source: str, where: str, need_run: bool) -> None:
    if not isinstance(source, str):
        raise JobError(f"{where}: source must be a string")
    try:
        tree = ast.parse(source, filename=f"<{where}>")
    except SyntaxError as e:
        raise JobError(f"{where} has a syntax error at line {e.lineno}: {e.msg}") from None
    if need_run and not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                            and n.name == RUN_FUNCTION for n in tree.body):
        raise JobError(f"{where} must define `def {RUN_FUNCTION}():` at top level")


@dataclass
class GpuInfo:
    index: int
    name: str
    compute_capability: str | None = None


@dataclass
class Device:
    kind: str                    # "cpu" | "gpu": where `device: auto` runs
    name: str                    # GPU name when kind == "gpu", else the CPU model
    compute_capability: str | None = None
    cpu_features: list[str] = field(default_factory=list)
    gpus: list[GpuInfo] = field(default_factory=list)
    cpu_name: str = ""
    cpu_count: int = 0
    platform: str = ""

    def identity(self) -> dict:
        """What makes two measurements comparable (for cache keys)."""
        return {"kind": self.kind, "name": self.name, "cc": self.compute_capability,
                "cpu": self.cpu_name, "features": sorted(self.cpu_features),
                "gpus": [(g.name, g.compute_capability) for g in self.gpus]}

    def label(self) -> str:
        if self.kind == "gpu":
            cc = f" (cc {self.compute_capability})" if self.compute_capability else ""
            return f"GPU: {self.name}{cc}"
        return f"CPU: {self.name}"

    @classmethod
    def from_dict(cls, d: dict) -> "Device":
        w = "device"
        gpus = [GpuInfo(req(g, "index", int, "gpu"), req(g, "name", str, "gpu"),
                        opt(g, "compute_capability", str, "gpu"))
                for g in opt(d, "gpus", list, w, [])]
        kind = req(d, "kind", str, w)
        if kind not in ("cpu", "gpu"):
            raise ProtocolError(f"device.kind must be 'cpu' or 'gpu', got {kind!r}")
        return cls(kind=kind, name=req(d, "name", str, w),
                   compute_capability=opt(d, "compute_capability", str, w),
                   cpu_features=list(opt(d, "cpu_features", list, w, [])), gpus=gpus,
                   cpu_name=opt(d, "cpu_name", str, w, ""), cpu_count=opt(d, "cpu_count", int, w, 0),
                   platform=opt(d, "platform", str, w, ""))


@dataclass
class Frame:
    where: str   # "prelude" or the variant name
    line: int
    code: str


@dataclass
class ErrorInfo:
    kind: str                    # one of ERROR_KINDS
    message: str
    variant: str | None = None
    phase: str | None = None     # prelude | define | first-call | warmup | calibrate | timing | compare
    exception_type: str | None = None
    frames: list[Frame] = field(default_factory=list)   # the user's frames, innermost last
    traceback: str | None = None                        # formatted user frames + exception
    stderr_tail: str | None = None

    @classmethod
    def from_dict(cls, d: dict) -> "ErrorInfo":
        w = "error"
        kind = req(d, "kind", str, w)
        if kind not in ERROR_KINDS:
            raise ProtocolError(f"error.kind {kind!r} is not one of {ERROR_KINDS}")
        frames = [Frame(req(f, "where", str, "frame"), req(f, "line", int, "frame"),
                        req(f, "code", str, "frame")) for f in opt(d, "frames", list, w, [])]
        return cls(kind=kind, message=req(d, "message", str, w), variant=opt(d, "variant", str, w),
                   phase=opt(d, "phase", str, w), exception_type=opt(d, "exception_type", str, w),
                   frames=frames, traceback=opt(d, "traceback", str, w),
                   stderr_tail=opt(d, "stderr_tail", str, w))


@dataclass
class VariantStats:
    name: str
    first_call_s: float | None = None   # includes tracing / XLA compilation
    median_s: float | None = None       # per call, over the timed samples
    mean_s: float | None = None
    stdev_s: float | None = None
    cv: float | None = None
    min_s: float | None = None
    max_s: float | None = None
    samples_s: list[float] = field(default_factory=list)   # per-call time of each sample
    calls_per_sample: int = 0
    warmup_calls: int = 0
    traces_first_call: int | None = None
    traces_during_timing: int | None = None
    traces_total: int | None = None
    graph_building_s: float | None = None  # TF graph building while this variant was timed
    peak_memory_bytes: int | None = None  # GPU only
    output_devices: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: dict) -> "VariantStats":
        return loose(cls, d, "variant_stats")


@dataclass
class Comparison:
    baseline: str
    candidate: str
    verdict: str                     # faster | slower | equivalent | inconclusive | outputs-differ
    timing_verdict: str              # the verdict from timing alone
    speedup: float | None = None     # baseline_time / candidate_time: > 1 means candidate faster
    ci_low: float | None = None      # of the speedup
    ci_high: float | None = None
    ci_coverage: float | None = None  # exact coverage of the sign-test interval (>= 0.95)
    pairs: int = 0
    single_shot: bool = False
    threshold: float = 0.03
    outputs_match: bool | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatch: str | None = None
    noise_floor: float | None = None  # |ln ratio| of the A/A control; the CI is widened by it
    rtol: float | None = None         # tolerance the outputs were compared with (float outputs)
    tolerance_note: str | None = None  # why it is looser than plain fp32 (XLA, TF32, mixed precision)

    @classmethod
    def from_dict(cls, d: dict) -> "Comparison":
        c = loose(cls, d, "comparison")
        if c.verdict not in VERDICTS:
            raise ProtocolError(f"comparison.verdict {c.verdict!r} is not one of {VERDICTS}")
        return c


@dataclass
class Result:
    verdict: str
    summary: str
    variants: list[VariantStats] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    outputs_match: bool | None = None
    warnings: list[str] = field(default_factory=list)
    error: ErrorInfo | None = None
    device: Device | None = None
    placement: str | None = None      # where the job ran: "cpu", "gpu:0"
    tf_version: str | None = None
    python: str | None = None
    timing: dict = field(default_factory=dict)  # pairs, single_shot, wall_s, budget_s, load_avg
    schema: int = SCHEMA

    def to_dict(self) -> dict:
        return finite(asdict(self))

    def to_json(self) -> str:
        return dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict) -> "Result":
        w = "result"
        verdict = req(d, "verdict", str, w)
        if verdict not in VERDICTS:
            raise ProtocolError(f"result.verdict {verdict!r} is not one of {VERDICTS}")
        err = d.get("error")
        dev = d.get("device")
        return cls(
            verdict=verdict, summary=req(d, "summary", str, w),
            variants=[VariantStats.from_dict(v) for v in opt(d, "variants", list, w, [])],
            comparisons=[Comparison.from_dict(c) for c in opt(d, "comparisons", list, w, [])],
            outputs_match=opt(d, "outputs_match", bool, w),
            warnings=[str(x) for x in opt(d, "warnings", list, w, [])],
            error=ErrorInfo.from_dict(err) if err is not None else None,
            device=Device.from_dict(dev) if dev is not None else None,
            placement=opt(d, "placement", str, w), tf_version=opt(d, "tf_version", str, w),
            python=opt(d, "python", str, w), timing=opt(d, "timing", dict, w, {}),
            schema=opt(d, "schema", int, w, SCHEMA))

    @classmethod
    def from_json(cls, text: str) -> "Result":
        return cls.from_dict(loads(text))


def error_result(kind: str, message: str, **info) -> Result:
    """A Result with verdict 'error'; `info` fills ErrorInfo fields and Result fields."""
    res_keys = {"device", "tf_version", "python", "placement", "warnings", "timing"}
    res_kw = {k: info.pop(k) for k in list(info) if k in res_keys}
    err = ErrorInfo(kind=kind, message=message, **info)
    where = f" in {err.variant}" if err.variant else ""
    first = message.splitlines()[0][:200] if message else kind
    return Result(verdict="error", summary=f"benchmark failed{where}: {first}", error=err, **res_kw)


# ---- message constructors (worker -> server unless noted) ----

def ready_msg(tf_version: str, python: str, device: Device, pid: int) -> dict:
    return {"type": "ready", "tf_version": tf_version, "python": python,
            "device": asdict(device), "pid": pid}


def progress_msg(fraction: float, message: str) -> dict:
    return {"type": "progress", "fraction": max(0.0, min(1.0, float(fraction))), "message": message}


def result_msg(result: Result) -> dict:
    return {"type": "result", "result": result.to_dict()}


def device_msg(tf_version: str, python: str, device: Device) -> dict:
    """The answer to {"type": "probe"}."""
    return {"type": "device", "tf_version": tf_version, "python": python, "device": asdict(device)}


def fatal_msg(message: str) -> dict:
    """The worker could not start (e.g. TensorFlow missing); sent instead of `ready`."""
    return {"type": "fatal", "message": message}


def job_msg(job: Job) -> dict:  # server -> worker
    return {"type": "job", "job": job.to_dict()}


PROBE_MSG = {"type": "probe"}  # server -> worker

MESSAGE_TYPES = ("ready", "progress", "result", "device", "fatal", "job", "probe")


def check_message(msg: dict) -> dict:
    """Validate the envelope of a message; return it."""
    t = msg.get("type")
    if t not in MESSAGE_TYPES:
        raise ProtocolError(f"unknown message type {t!r}")
    if t == "progress":
        req(msg, "fraction", NUM, "progress")
        req(msg, "message", str, "progress")
    elif t in ("ready", "device"):
        req(msg, "tf_version", str, t)
        Device.from_dict(req(msg, "device", dict, t))
    elif t == "result":
        req(msg, "result", dict, "result message")
    elif t == "fatal":
        req(msg, "message", str, "fatal")
    elif t == "job":
        req(msg, "job", dict, "job message")
    return msg
