"""The benchmark code action's title for a finding: shown beside every diagnostic, so it must
not import the planner (LibCST, input inference), which only a benchmark needs."""
from __future__ import annotations

from tfperf_lsp.model import Finding
from tfperf_lsp.rules import rule_by_code


def benchmark_title(finding: Finding) -> str | None:
    """The code action's title, or None when the finding has nothing to measure (cheap)."""
    rule = rule_by_code(finding.code)
    if rule is None or not rule.measurable or finding.category == "correctness":
        return None
    kind = rule.benchmark
    if kind in ("graph", "graph-call"):
        return "Benchmark eager vs tf.function vs XLA"
    if kind == "xla":
        return "Benchmark tf.function vs jit_compile=True"
    if finding.fix_title:
        return f"Benchmark original vs {finding.fix_title[0].lower()}{finding.fix_title[1:]}"
    return None
