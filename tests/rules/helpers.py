"""Analyse a snippet and apply rules' fixes the way ``tfperf check --fix`` does (shared by rule tests)."""
from __future__ import annotations

import textwrap

from tfperf_lsp.engine import analyze, fix_for
from tfperf_lsp.rewrite.edits import apply_edits


def source(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


def findings(code: str, rule_code: str, settings=None) -> list:
    analysis = analyze(source(code), settings=settings)
    assert not analysis.rule_errors, analysis.rule_errors
    return [f for f in analysis.findings if f.code == rule_code]


def fixed(code: str, codes: set[str], settings=None, rounds: int = 20) -> str:
    """``code`` after applying every fix (safe and unsafe) of ``codes``, one at a time."""
    text = source(code)
    for _ in range(rounds):
        analysis = analyze(text, settings=settings)
        assert not analysis.rule_errors, analysis.rule_errors
        todo = [f for f in analysis.findings if f.code in codes and f.fix_title]
        if not todo:
            return text
        fix = fix_for(analysis, todo[0])
        assert fix is not None and fix.edits, todo[0].message
        text = apply_edits(text, fix.edits)
    raise AssertionError("fixes did not converge")
