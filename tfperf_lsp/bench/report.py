"""Human text for a Result: a one-line summary and a few hover lines. Pure Python."""
from __future__ import annotations

from .protocol import Comparison, Result, VariantStats


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.3g} us"
    return f"{seconds * 1e9:.3g} ns"


def comparison_line(c: Comparison) -> str:
    """'1.84x faster (95% CI 1.71-1.97x) - outputs match (max rel err 3e-07)'"""
    s, lo, hi = c.speedup, c.ci_low, c.ci_high
    if s is None:
        head = c.timing_verdict
    elif c.single_shot:
        head = f"{s:.2f}x speedup (single shot, no interval: one call is longer than the budget)"
    elif lo is None or hi is None:
        head = f"{s:.2f}x speedup (too few pairs for an interval)"
    elif c.timing_verdict == "faster":
        head = f"{s:.2f}x faster (95% CI {lo:.2f}-{hi:.2f}x)"
    elif c.timing_verdict == "slower":  # state the slowdown, its interval reciprocal
        head = f"{1 / s:.2f}x slower (95% CI {1 / hi:.2f}-{1 / lo:.2f}x)"
    elif c.timing_verdict == "equivalent":
        head = f"same speed within {c.threshold:.0%} ({s:.2f}x, 95% CI {lo:.2f}-{hi:.2f}x)"
    else:
        head = f"inconclusive: {s:.2f}x (95% CI {lo:.2f}-{hi:.2f}x)"
    if c.outputs_match is True:
        tail = "outputs match"
        if c.max_rel_err:
            tail += f" (max rel err {c.max_rel_err:.1g})"
    elif c.outputs_match is False:
        tail = f"OUTPUTS DIFFER: {c.mismatch}" if c.mismatch else "OUTPUTS DIFFER"
    else:
        tail = f"outputs not verified ({c.mismatch})" if c.mismatch else "outputs not verified"
    return f"{head} - {tail}"


def summarize(result: Result) -> str:
    if result.error is not None:
        where = f" in {result.error.variant}" if result.error.variant else ""
        return f"benchmark failed{where}: {result.error.message.splitlines()[0][:200]}"
    if not result.comparisons:
        return result.verdict
    return comparison_line(result.comparisons[0])


def _variant_line(v: VariantStats, pairs: int, width: int) -> str:
    if v.samples_s:
        detail = f"(median, {pairs} pairs x {v.calls_per_sample} calls)"
        t = v.median_s
    else:
        detail = "(single shot)"
        t = v.median_s
    return f"{v.name:<{width}}  {fmt_time(t)}  {detail}"


def hover_lines(result: Result) -> list[str]:
    """The lines of the benchmark hover (plain text; the caller adds Markdown)."""
    lines = [result.summary or summarize(result)]
    if result.error is not None:
        if result.error.traceback:
            lines += result.error.traceback.splitlines()[-8:]
        if result.error.stderr_tail and result.error.kind in ("crash", "start", "protocol"):
            lines += ["worker stderr:"] + result.error.stderr_tail.splitlines()[-5:]
        return lines
    pairs = int(result.timing.get("pairs") or 0)
    width = max((len(v.name) for v in result.variants), default=8)
    lines += [_variant_line(v, pairs, width) for v in result.variants]
    firsts = [fmt_time(v.first_call_s) for v in result.variants]
    traces = [v.traces_during_timing for v in result.variants]
    trace_text = ", ".join("?" if t is None else str(t) for t in traces)
    lines.append(f"first call {' -> '.join(firsts)} (tracing/compile) - traces during timing: {trace_text}")
    peaks = [v.peak_memory_bytes for v in result.variants]
    if any(p is not None for p in peaks):  # GPUs report it; CPUs do not
        lines.append("peak device memory " + " -> ".join("?" if p is None else f"{p / 2**20:.1f} MiB" for p in peaks))
    device = result.device.label() if result.device else "unknown device"
    lines.append(f"{device} - TF {result.tf_version or '?'} - Python {result.python or '?'}")
    lines += [f"warning: {w}" for w in result.warnings]
    return lines
