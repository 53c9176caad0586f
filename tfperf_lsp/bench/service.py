"""Benchmarks for the CLI and the server: plan a finding, find or run its Job, remember the result.

One ``BenchService`` per process owns the worker pool (started lazily: nothing imports
TensorFlow until a benchmark is wanted) and the on-disk cache. Results are keyed by the Job
(code, inputs), the device and the TF version, so they show again after a restart and vanish
when the code changes. The device and TF version of the last worker are remembered on disk, so
a restarted server can find cached results without starting a worker.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Callable

from tfperf_lsp import settings_schema as schema
from tfperf_lsp.bench.cache import ResultCache, cache_key, workspace_imports
from tfperf_lsp.bench.protocol import Device, Result
from tfperf_lsp.bench.report import fmt_time, hover_lines
from tfperf_lsp.bench.ship import parse_command

if TYPE_CHECKING:  # the planner (LibCST, input inference) loads with the first benchmark
    from tfperf_lsp.bench.plans import Plan

log = logging.getLogger("tfperf_lsp.bench")


@dataclass
class BenchSettings:
    """The ``benchmark`` settings; defaults and ranges are ``settings_schema``'s."""

    time_budget: float = field(default_factory=partial(schema.default, "benchmark.timeBudget"))
    timeout: float = field(default_factory=partial(schema.default, "benchmark.timeout"))
    device: str = field(default_factory=partial(schema.default, "benchmark.device"))
    max_input_mb: float = field(default_factory=partial(schema.default, "benchmark.maxInputMB"))
    memory_limit_mb: float = field(default_factory=partial(schema.default, "benchmark.memoryLimitMB"))
    worker_command: list[str] = field(default_factory=partial(schema.default, "benchmark.workerCommand"))

    @classmethod
    def from_options(cls, options: dict[str, Any] | None) -> "BenchSettings":
        return cls.parse(options)[0]

    @classmethod
    def parse(cls, options: Any, previous: "BenchSettings | None" = None) -> tuple["BenchSettings", list[str]]:
        """Settings from the `benchmark` options, and what was wrong with them: a value of the
        wrong type keeps the previous good one (or the default), a number out of range is clamped
        to the schema's bound; each with a message, never raising."""
        base = previous or cls()
        if not isinstance(options, dict):
            return base, ([] if options is None else [f"benchmark: expected an object, got {options!r}"])
        problems: list[str] = []

        def value(key: str, attr: str, check) -> Any:
            if key not in options or options[key] is None:
                return schema.default(f"benchmark.{key}")
            used, problem = check(f"benchmark.{key}", options[key], getattr(base, attr))
            if problem:
                problems.append(problem)
            return used

        raw = options.get("workerCommand")
        try:  # a list as is, a string split the way a shell would ("ssh gpu 'python3 -X dev'")
            if raw is not None and not isinstance(raw, (str, list)):
                raise ValueError
            command = parse_command(raw)
        except ValueError:
            problems.append(f"benchmark.workerCommand: {raw!r} is not a command line; keeping the previous one")
            command = base.worker_command
        settings = cls(
            time_budget=value("timeBudget", "time_budget", schema.check_number),
            timeout=value("timeout", "timeout", schema.check_number),
            device=value("device", "device", schema.check_device),
            max_input_mb=value("maxInputMB", "max_input_mb", schema.check_number),
            memory_limit_mb=value("memoryLimitMB", "memory_limit_mb", schema.check_number),
            worker_command=list(command),
        )
        return settings, problems


@dataclass
class Outcome:
    plan: Plan
    result: Result | None
    cached: bool = False


class BenchService:
    def __init__(self, settings: BenchSettings | None = None, cache: ResultCache | None = None, log_line: Callable[[str], None] | None = None):
        self.settings = settings or BenchSettings()
        self.cache = cache or ResultCache()
        self._pool = None
        self._log_line = log_line or (lambda line: log.info("worker: %s", line))
        self.worker = self._remembered_worker()
        self._session_keys: set[str] = set()  # results measured by this process (not "cached")

    # ------------------------------------------------------------------ configuration
    def configure(self, settings: BenchSettings) -> None:
        changed_worker = settings.worker_command != self.settings.worker_command
        self.settings = settings
        if self._pool is not None:
            if changed_worker:
                self._pool.close()
                self._pool = None
                self.worker = None
            else:
                self._pool.configure(memory_limit_mb=int(settings.memory_limit_mb), timeout_s=settings.timeout)

    @property
    def pool(self):
        if self._pool is None:
            from tfperf_lsp.bench.pool import WorkerPool

            self._pool = WorkerPool(
                command=self.settings.worker_command or None,
                memory_limit_mb=int(self.settings.memory_limit_mb),
                timeout_s=self.settings.timeout,
                log=self._log_line,
            )
        return self._pool

    def probe(self) -> tuple[Device, str]:
        """Ask a worker what it runs on (imports TF in that worker, runs no user code)."""
        info = self.pool.worker_info()
        self.worker = (info.device, info.tf_version)
        self._save_worker()
        return self.worker

    def device_facts(self) -> dict | None:
        """The last worker's device as settings facts (for the precision rules)."""
        return device_facts(self.worker[0]) if self.worker else None

    def warm_up(self) -> None:
        """Start the spare worker now (it imports TensorFlow) so the next benchmark starts at once."""
        self.pool.start_spare()

    def expect(self, jobs: int) -> None:
        """``jobs`` benchmarks are about to run one after another: the pool keeps a warm worker
        for each (bounded), so they do not pay a TensorFlow import each. 0 ends the batch."""
        if jobs or self._pool is not None:
            self.pool.expect(jobs)

    def skip_expected(self) -> None:
        """An announced benchmark needs no worker (cached, or no plan): one spare fewer."""
        if self._pool is not None and self._pool.expected:
            self._pool.expect(self._pool.expected - 1)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    # ------------------------------------------------------------------ plans and results
    def plan(self, analysis, finding) -> Plan:
        from tfperf_lsp.bench.plans import build_plan

        plan = build_plan(
            analysis, finding,
            max_input_mb=self.settings.max_input_mb, budget_s=self.settings.time_budget, device=self.settings.device,
        )
        path = getattr(analysis.source, "path", None)
        if plan.job is not None and path:
            # The worker imports the file's sibling modules from here (and nothing from its cwd).
            plan.job.meta["folder"] = os.path.dirname(os.path.abspath(path))
        return plan

    def key(self, plan: Plan, device: Device, tf_version: str) -> str:
        """The cache key: the job's code and the workspace modules it imports, by content."""
        return cache_key(plan.job, device, tf_version, workspace_imports(plan.job, plan.job.meta.get("folder")))

    def has_results(self, uri: str) -> bool:
        """Whether any result was ever stored for this file (cheap: one directory check)."""
        return self.worker is not None and self.cache.has(uri)

    def cached(self, plan: Plan) -> Result | None:
        if plan.job is None or self.worker is None:
            return None
        device, tf_version = self.worker
        return self.cache.get(self.key(plan, device, tf_version))

    def run(self, plan: Plan, uri: str | None = None, on_progress=None, cancel=None, use_cache: bool = True) -> Outcome:
        """Blocking: the CLI, or a server thread."""
        if plan.job is None:
            self.skip_expected()
            return Outcome(plan, None)
        if use_cache:
            hit = self.cached(plan)
            if hit is not None:
                self.skip_expected()
                return Outcome(plan, hit, cached=True)
        result = self.pool.run_job(plan.job, on_progress=on_progress, cancel=cancel, timeout_s=self.settings.timeout)
        return Outcome(plan, self._remember(plan, result, uri))

    async def run_async(self, plan: Plan, uri: str | None = None, on_progress=None) -> Outcome:
        """For the server: cancelling the awaiting task kills the worker."""
        if plan.job is None:
            self.skip_expected()
            return Outcome(plan, None)
        hit = self.cached(plan)
        if hit is not None:
            self.skip_expected()
            return Outcome(plan, hit, cached=True)
        result = await self.pool.run_job_async(plan.job, on_progress=on_progress, timeout_s=self.settings.timeout)
        return Outcome(plan, self._remember(plan, result, uri))

    def _remember(self, plan: Plan, result: Result, uri: str | None) -> Result:
        for warning in plan.warnings:
            if warning not in result.warnings:
                result.warnings.append(warning)
        if result.device is not None and result.tf_version:
            self.worker = (result.device, result.tf_version)
            self._save_worker()
            key = self.key(plan, result.device, result.tf_version)
            self.cache.put(key, result, uri=uri)
            self._session_keys.add(key)
        if plan.traces_per_call:
            # A retrace benchmark re-creates its functions on every timed call: tracing is the
            # cost being measured, not noise.
            result.warnings = [w for w in result.warnings if "built graphs" not in w and "retrac" not in w]
            result.warnings.append("each timed call traces its tf.functions from scratch: tracing is what is measured")
        return result

    def measured_now(self, plan: Plan) -> bool:
        """Whether this process measured the plan (as opposed to finding it from an earlier run)."""
        return plan.job is not None and self.worker is not None and self.key(plan, *self.worker) in self._session_keys

    def forget_session_results(self) -> None:
        self._session_keys.clear()

    # ------------------------------------------------------------------ the last worker, on disk
    def _worker_file(self) -> str:
        name = "worker-" + "_".join(self.settings.worker_command or ["local"]).replace(os.sep, "_")[:80] + ".json"
        return os.path.join(str(self.cache.root), name)

    def _remembered_worker(self):
        if not self.cache.usable():
            return None
        try:
            with open(self._worker_file(), encoding="utf-8") as handle:
                data = json.load(handle)
            return Device.from_dict(data["device"]), data["tf_version"]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _save_worker(self) -> None:
        from dataclasses import asdict

        device, tf_version = self.worker
        try:
            if not self.cache.usable(create=True):
                return
            with open(self._worker_file(), "w", encoding="utf-8") as handle:
                json.dump({"device": asdict(device), "tf_version": tf_version}, handle)
        except OSError as exc:
            log.debug("cannot remember the worker: %s", exc)


def device_facts(device: Device) -> dict:
    return {"kind": device.kind, "name": device.label(), "compute_capability": device.compute_capability,
            "cpu_features": list(device.cpu_features)}


def remembered_device_facts(worker_command: list[str] | None = None) -> dict | None:
    """What the last benchmark worker reported, without starting one (the CLI and server share it)."""
    return BenchService(BenchSettings(worker_command=worker_command or [])).device_facts()


# ---------------------------------------------------------------------- presentation
def bar_chart(result: Result, width: int = 24) -> list[str]:
    """Median time per variant as text bars, longest = slowest."""
    timed = [(v.name, v.median_s) for v in result.variants if v.median_s]
    if not timed:
        return []
    slowest = max(t for _, t in timed)
    label = max(len(n) for n, _ in timed)
    lines = []
    for name, seconds in timed:
        eighths = max(1, round(width * 8 * seconds / slowest))
        bar = "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]
        lines.append(f"{name:<{label}}  {bar:<{width}}  {fmt_time(seconds)}")
    return lines


def short_verdict(result: Result) -> str:
    """A few words for inlay hints and diagnostic messages: 'measured 6.2x faster'."""
    if result.error is not None:
        return "benchmark failed"
    if result.outputs_match is False:
        return "measured: outputs differ"
    comparison = result.comparisons[0] if result.comparisons else None
    if comparison is None or comparison.speedup is None:
        return f"measured: {result.verdict}"
    best = max(result.comparisons, key=lambda c: c.speedup or 0)
    verdict = best.timing_verdict
    with_what = "" if best.candidate == "rewritten" else f" with {best.candidate}"
    if verdict == "faster":
        return f"measured {best.speedup:.1f}x faster{with_what}"
    if verdict == "slower":
        return f"measured {1 / comparison.speedup:.1f}x slower"
    if verdict == "equivalent":
        return "measured: same speed"
    if verdict == "noisy-machine":
        return "measured: machine too noisy"
    return f"measured {comparison.speedup:.2f}x, inconclusive"


def result_markdown(plan: Plan, result: Result, cached: bool) -> str:
    lines = hover_lines(result)
    if result.outputs_match is False:
        lines.insert(0, "OUTPUTS DIFFER: the rewrite changes results on these inputs.")
    if plan.inputs is not None:
        lines.append(f"inputs: {plan.inputs.describe()}")
    chart = bar_chart(result)
    text = "**Benchmark** " + ("(cached) " if cached else "") + "\n\n```text\n" + "\n".join(lines[:1] + chart + lines[1:]) + "\n```"
    return text

