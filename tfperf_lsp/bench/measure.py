"""The timing engine: first call, warm-up, calibration, interleaved pairs. Framework-agnostic.

The worker plugs TensorFlow in through `Hooks` (device sync, memory stats) and each `Runner`
(one call of the variant, its trace counter), so this module runs without TensorFlow and the
tests can drive it with fake, sleep-based variants.
"""
from __future__ import annotations

import gc
import math
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from . import stats

CALL_STEPS = (1, 2, 5)  # calls per sample: 1, 2, 5, 10, 20, 50, ... (timeit's autorange)


def _none() -> None:
    return None


@dataclass
class Runner:
    name: str
    call: Callable[[], Any]                            # one call of __tfperf_run__
    trace_count: Callable[[], int | None] = _none      # total traces of its tf.functions


@dataclass
class Hooks:
    sync: Callable[[Any], None] = lambda out: None     # wait for the device; materialise outputs
    mem_reset: Callable[[], None] | None = None        # reset the device's peak memory (GPU)
    mem_peak: Callable[[], int | None] | None = None
    progress: Callable[[float, str], None] = lambda f, m: None
    graph_time: Callable[[], float | None] = _none      # TF's global graph-building seconds
    clock: Callable[[], float] = time.perf_counter


@dataclass
class Settings:
    budget_s: float = 3.0
    min_sample_s: float = 0.05
    max_pairs: int = 30
    seed: int = 0
    warmup_min_calls: int = 3
    warmup_min_s: float = 0.2
    warmup_cap_s: float = 2.0


# On a CPU, 0.1 s of warm-up per variant gives the same estimates as 0.2 s (benchmarks/
# bench_warmup.py, 8 alternated fresh-process runs each of three real jobs: medians within
# 0.976-1.020x, under the 3% verdict threshold; 0.05 s biased eager-vs-graph by up to 6.7%) and
# answers 0.3-0.45 s sooner. GPUs keep 0.2 s: not measured there.
CPU_WARMUP_MIN_S = 0.1


class UserCodeError(Exception):
    """The user's code raised; carries which variant and in which phase."""

    def __init__(self, variant: str, phase: str, exc: BaseException):
        super().__init__(f"{variant} ({phase}): {type(exc).__name__}: {exc}")
        self.variant, self.phase, self.exc = variant, phase, exc


@dataclass
class VariantRun:
    name: str
    first_call_s: float | None = None
    first_output: Any = None
    warmup_times: list[float] = field(default_factory=list)
    calls_per_sample: int = 1
    samples: list[float] = field(default_factory=list)   # per-call seconds of each timed sample
    sample_totals: list[float] = field(default_factory=list)  # raw sample durations
    traces_first_call: int | None = None
    traces_during_timing: int | None = None
    traces_total: int | None = None
    peak_memory_bytes: int | None = None
    graph_building_s: float | None = None  # during timing (catches functions we cannot count)


def _add(total: int | None, delta: int | None) -> int | None:
    if delta is None:
        return total
    return delta if total is None else total + delta


class Engine:
    def __init__(self, runners: list[Runner], settings: Settings, hooks: Hooks | None = None,
                 control: bool = False):
        """control: the last runner is an independent copy of the first (an A/A control, timed
        in the same rounds, see stats.compare_paired)."""
        self.control = control and len(runners) >= 3
        self.runners = runners
        self.s = settings
        self.h = hooks or Hooks()
        self.runs = [VariantRun(r.name) for r in runners]
        self.rng = random.Random(settings.seed)
        self.single_shot = False
        self.pairs = 0
        self.pairs_wall_s = 0.0
        self.warnings: list[str] = []
        self._progress = 0.0

    # ---- one timed block ------------------------------------------------------------------
    def _timed(self, i: int, calls: int, phase: str, track_memory: bool = False):
        """Run variant i `calls` times then sync; return (seconds, last output, traces)."""
        runner, run = self.runners[i], self.runs[i]
        before = runner.trace_count()
        if track_memory and self.h.mem_reset:
            self.h.mem_reset()
        gc_was = gc.isenabled()
        gc.disable()  # like timeit: no collector pauses inside a sample
        try:
            t0 = self.h.clock()
            out = None
            for _ in range(calls):
                out = runner.call()
            self.h.sync(out)
            elapsed = self.h.clock() - t0
        except BaseException as exc:  # noqa: BLE001 - user code may raise anything, even SystemExit
            raise UserCodeError(runner.name, phase, exc) from exc
        finally:
            if gc_was:
                gc.enable()
        after = runner.trace_count()
        delta = after - before if before is not None and after is not None else None
        run.traces_total = _add(run.traces_total, delta)
        if track_memory and self.h.mem_peak:
            peak = self.h.mem_peak()
            if peak is not None:
                run.peak_memory_bytes = max(run.peak_memory_bytes or 0, peak)
        return elapsed, out, delta

    def _report(self, fraction: float, message: str) -> None:
        self._progress = max(self._progress, min(fraction, 0.99))
        self.h.progress(self._progress, message)

    # ---- phases ---------------------------------------------------------------------------
    def first_calls(self, reference_twice: bool = True) -> Any:
        """First call of every variant (tracing/compilation included, timed on its own).
        Returns the reference's second output when reference_twice (determinism check)."""
        second = None
        for i, run in enumerate(self.runs):
            self._report(0.1 * i / len(self.runs), f"first call of {run.name}")
            t, out, traces = self._timed(i, 1, "first-call", track_memory=True)
            run.first_call_s, run.first_output, run.traces_first_call = t, out, traces
            if i == 0 and reference_twice:
                t2, second, _ = self._timed(0, 1, "warmup")
                run.warmup_times.append(t2)
        return second

    def warmup(self) -> None:
        """>= warmup_min_calls and >= warmup_min_s per variant, capped at warmup_cap_s.
        Calls that typically (median) take longer than the budget switch to single-shot mode:
        one call stalled by a busy machine among fast ones does not."""
        for i, run in enumerate(self.runs):
            self._report(0.1 + 0.2 * i / len(self.runs), f"warming up {run.name}")
            spent = sum(run.warmup_times)
            while True:
                if run.warmup_times and stats.median(run.warmup_times) > self.s.budget_s:
                    self.single_shot = True
                    break
                if len(run.warmup_times) >= self.s.warmup_min_calls and spent >= self.s.warmup_min_s:
                    break
                if spent >= self.s.warmup_cap_s:
                    break
                t, _, _ = self._timed(i, 1, "warmup")
                run.warmup_times.append(t)
                spent += t

    def calibrate(self) -> int | None:
        """Choose the calls per sample k (explore 1, 2, 5, 10, ..., then the exact k) so the
        slowest variant's sample lasts >= min_sample_s, then shrink k if the first pair stage
        would not fit in the budget. Returns the number of pairs to run first, or None for
        single-shot mode.

        Every variant (and the A/A control) is timed with the same k. Each sample pays one
        device sync and the timer's own cost; divided by different k's, that overhead made
        identical code look 1.15x faster on a stalled CI machine, where one side's calibration
        sample was slowed and got k=2 against the other's k=14. With one k the overhead weighs
        the same on every side: it can only pull a ratio towards 1, never invent a difference."""
        if self.single_shot:
            return None
        self._report(0.3, "calibrating")
        first = stats.pair_stages(self.s.max_pairs)[0]
        # Samples as long as the first stage of pairs can afford: with a small budget (the
        # editor's quick 0.2 s) they are cut to fit it below anyway, so calibrating the longer
        # min_sample_s first would only cost time (0.1-0.15 s of a 1 s answer).
        target = min(self.s.min_sample_s, self.s.budget_s / (first * len(self.runs)))
        per_call = [self._per_call_estimate(i, target) for i in range(len(self.runs))]
        # the 1-2-5 steps found the scale; the exact k wastes no budget (up to 2.5x otherwise)
        k = min(10 ** 7, max(1, math.ceil(target / max(per_call) - 1e-9)))
        if first * k * sum(per_call) > self.s.budget_s * (1 + 1e-9):  # (not for a rounding error)
            k = max(1, int(self.s.budget_s / (first * sum(per_call))))
        for run in self.runs:
            run.calls_per_sample = k
        pair_time = k * sum(per_call)
        n0 = stats.initial_pairs(pair_time, self.s.budget_s, self.s.max_pairs)
        if n0 is None:
            self.single_shot = True
            return None
        if n0 * pair_time > self.s.budget_s * 1.05:
            self.warnings.append(f"the time budget ({self.s.budget_s:g} s) is too small for "
                                 f"{n0} pairs; ran {n0} pairs anyway (about {n0 * pair_time:.1f} s)")
        if k * min(per_call) < 0.001:
            self.warnings.append("samples are shorter than 1 ms: timer and scheduler noise may "
                                 "dominate; raise the time budget")
        return n0

    def _per_call_estimate(self, i: int, target: float) -> float:
        """Seconds per call of variant i, from the warm-up then samples of growing k (1-2-5
        steps) until one lasts >= target / 2. A busy machine only ever adds time, so the
        lowest estimate is kept: one stalled sample does not shrink k for the whole job."""
        est = max(stats.median(self.runs[i].warmup_times), 1e-9)
        k = _calls_for(est, target)
        for _ in range(3):  # verify: warm-up calls include one sync each, so est is high
            t, _, _ = self._timed(i, k, "calibrate")
            est = min(est, max(t / k, 1e-9))
            if t >= 0.5 * target:
                break
            k = _calls_for(est, target, above=k)
        return est

    def run_pairs(self, first_target: int) -> int:
        """Interleaved samples in random order; adaptive 10 -> 20 -> 30 pairs within budget."""
        target, n = first_target, 0
        start = self.h.clock()
        budget = self.s.budget_s
        for runner, run in zip(self.runners, self.runs):
            run.traces_during_timing = 0 if runner.trace_count() is not None else None
        while True:
            while n < target:
                order = list(range(len(self.runs)))
                self.rng.shuffle(order)
                for i in order:
                    run = self.runs[i]
                    g0 = self.h.graph_time()
                    t, _, traces = self._timed(i, run.calls_per_sample, "timing", track_memory=True)
                    g1 = self.h.graph_time()
                    if g0 is not None and g1 is not None:
                        run.graph_building_s = (run.graph_building_s or 0.0) + max(0.0, g1 - g0)
                    run.sample_totals.append(t)
                    run.samples.append(t / run.calls_per_sample)
                    if traces is not None:
                        run.traces_during_timing = (run.traces_during_timing or 0) + traces
                n += 1
                elapsed = self.h.clock() - start
                self._report(0.35 + 0.6 * min(1.0, elapsed / budget), f"pair {n}/{target}")
            elapsed = self.h.clock() - start
            verdicts = [c.verdict for c in self.comparisons()]
            new = stats.next_target(n, verdicts, elapsed, budget, self.s.max_pairs)
            if new <= n:
                break
            target = new
        self.pairs, self.pairs_wall_s = n, self.h.clock() - start
        return n

    @property
    def measured(self) -> list[VariantRun]:
        """The variants of the job (without the A/A control)."""
        return self.runs[:-1] if self.control else self.runs

    @property
    def control_samples(self) -> list[float] | None:
        return self.runs[-1].samples if self.control else None

    def comparisons(self) -> list[stats.Paired]:
        """Each variant against the first, with the A/A control's noise floor when there is one."""
        ref = self.runs[0].samples
        return [stats.compare_paired(ref, r.samples, control=self.control_samples)
                for r in self.measured[1:]]

    def timing(self) -> None:
        """warm-up, calibration and pairs (after first_calls)."""
        self.warmup()
        n0 = self.calibrate()
        if n0 is not None:
            self.run_pairs(n0)
        self._report(0.99, "done")


def _calls_for(per_call_s: float, min_sample_s: float, above: int = 0) -> int:
    """Smallest k in 1, 2, 5, 10, 20, 50, ... with k * per_call >= min_sample_s and k > above."""
    decade = 1
    while True:
        for step in CALL_STEPS:
            k = step * decade
            if k > above and k * per_call_s >= min_sample_s:
                return k
            if k >= 10 ** 7:  # a call that takes nanoseconds: stop growing
                return max(k, above + 1)
        decade *= 10


def single_shot_time(run: VariantRun) -> float | None:
    """Steady-state time of one call in single-shot mode (no interval)."""
    if run.warmup_times:
        return stats.median(run.warmup_times)
    return run.first_call_s
