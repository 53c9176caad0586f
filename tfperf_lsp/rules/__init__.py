"""The rule registry. A rule is one module; its category package lists it in ``RULES``.

Codes: TFP1xx retrace, TFP2xx correctness, TFP3xx graph, TFP4xx vectorize, TFP5xx xla,
TFP6xx precision, TFP7xx input-pipeline, TFP8xx keras, TFP9xx suppressions (opt-in). A code is never reused.
"""
from __future__ import annotations

from tfperf_lsp.rules import correctness, graph, input_pipeline, keras, precision, retrace, suppressions, vectorize, xla
from tfperf_lsp.rules.base import Example, Rule

_RULE_CLASSES: list[type[Rule]] = [
    *retrace.RULES,
    *correctness.RULES,
    *graph.RULES,
    *vectorize.RULES,
    *xla.RULES,
    *precision.RULES,
    *input_pipeline.RULES,
    *keras.RULES,
    *suppressions.RULES,
]

ALL_RULES: list[Rule] = [cls() for cls in _RULE_CLASSES]
_BY_CODE = {rule.code: rule for rule in ALL_RULES}


def rule_by_code(code: str) -> Rule | None:
    return _BY_CODE.get(code.upper())


__all__ = ["ALL_RULES", "Example", "Rule", "rule_by_code"]
