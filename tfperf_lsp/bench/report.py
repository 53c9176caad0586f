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
        head = f"{s:.2f}x speedup (single shot, no interval: too slow for enough timed pairs in the budget)"
    elif lo is None or hi is None:
        head = f"{s:.2f}x speedup (too few pairs for an interval)"
    elif c.timing_verdict == "faster":
        head = f"{s:.2f}x faster (95% CI {lo:.2f}-{hi:.2f}x)"
    elif c.timing_verdict == "slower":  # state the slowdown, its interval reciprocal
        head = f"{1 / s:.2f}x slower (95% CI {1 / hi:.2f}-{1 / lo:.2f}x)"
    elif c.timing_verdict == "equivalent":
        head = f"same speed within {c.threshold:.0%} ({s:.2f}x, 95% CI {lo:.2f}-{hi:.2f}x)"
    elif c.timing_verdict == "noisy-machine":
        floor = f"identical code differs by {c.noise_floor:.0%} here" if c.noise_floor is not None else "the A/A control is unstable"
        head = (f"noisy machine ({floor}): no verdict at {c.threshold:.0%}, "
                f"{s:.2f}x (95% CI {lo:.2f}-{hi:.2f}x)")
    else:
        head = f"inconclusive: {s:.2f}x (95% CI {lo:.2f}-{hi:.2f}x)"
    if c.outputs_match is True:
        tail = "outputs match"
        details = []
        if c.max_rel_err is not None:
            details.append(f"max rel err {c.max_rel_err:.1g}")
        if c.rtol is not None:
            details.append(f"rtol {c.rtol:g}" + (f" for {c.tolerance_note}" if c.tolerance_note else ""))
        if details:
            tail += f" ({', '.join(details)})"
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
    first = result.comparisons[0]
    line = comparison_line(first)
    if len(result.comparisons) > 1:
        line = f"{first.candidate} vs {first.baseline}: {line}"
    return line


def _variant_line(v: VariantStats, pairs: int, width: int, elements: int | None) -> str:
    if v.samples_s:
        detail = f"(median, {pairs} pairs x {v.calls_per_sample} call{'' if v.calls_per_sample == 1 else 's'})"
    else:
        detail = "(single shot)"
    rate = ""
    if elements and v.median_s:
        rate = f"  {_rate(elements / v.median_s)} elements/s"
    return f"{v.name:<{width}}  {fmt_time(v.median_s)}{rate}  {detail}"


def _rate(per_s: float) -> str:
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if per_s >= limit:
            return f"{per_s / limit:.3g}{suffix}"
    return f"{per_s:.3g}"


def _traces(v: VariantStats) -> str:
    t = "?" if v.traces_during_timing is None else str(v.traces_during_timing)
    if (v.graph_building_s or 0) > 0.001 and not v.traces_during_timing:
        return f"{v.name} {t} counted, but graphs built for {fmt_time(v.graph_building_s)}"
    return f"{v.name} {t}"


def hover_lines(result: Result) -> list[str]:
    """The lines of the benchmark hover (plain text; the caller adds Markdown). Every number is
    labelled with its variant."""
    lines = [result.summary or summarize(result)]
    if result.error is not None:
        if result.error.traceback:
            lines += result.error.traceback.splitlines()[-8:]
        if result.error.stderr_tail and result.error.kind in ("crash", "start", "protocol"):
            lines += ["worker stderr:"] + result.error.stderr_tail.splitlines()[-5:]
        return lines
    for c in result.comparisons[1:]:
        lines.append(f"{c.candidate} vs {c.baseline}: {comparison_line(c)}")
    pairs = int(result.timing.get("pairs") or 0)
    elements = result.timing.get("elements_per_call")
    elements = elements if isinstance(elements, int) and elements > 0 else None
    width = max((len(v.name) for v in result.variants), default=8)
    lines += [_variant_line(v, pairs, width, elements) for v in result.variants]
    if elements:
        lines.append(f"each call iterates {elements} elements of the dataset (synthetic inputs)")
    firsts = ", ".join(f"{v.name} {fmt_time(v.first_call_s)}" for v in result.variants)
    lines.append(f"first call (tracing/compile included): {firsts}")
    if any(v.samples_s for v in result.variants):
        lines.append("traces during timing: " + ", ".join(_traces(v) for v in result.variants))
    control = result.timing.get("control")
    if isinstance(control, dict) and control.get("speedup"):
        ci = control.get("ci95") or [None, None]
        ci_text = f" (95% CI {ci[0]:.2f}-{ci[1]:.2f}x)" if None not in ci else ""
        floor = control.get("noise_floor")
        lines.append(f"A/A control (the original twice): {control['speedup']:.2f}x{ci_text}, "
                     f"{control.get('verdict')}" + (f"; intervals widened by {floor:.1%}" if floor is not None else ""))
    peaks = [v.peak_memory_bytes for v in result.variants]
    if any(p is not None for p in peaks):  # GPUs report it; CPUs do not
        lines.append("peak device memory: " + ", ".join(
            f"{v.name} " + ("?" if p is None else f"{p / 2**20:.1f} MiB") for v, p in zip(result.variants, peaks)))
    device = result.device.label() if result.device else "unknown device"
    lines.append(f"{device} - TF {result.tf_version or '?'} - Python {result.python or '?'}")
    lines += [f"warning: {w}" for w in result.warnings]
    return lines
