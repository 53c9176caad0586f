"""Analyse a snippet and apply rules' fixes the way ``tfperf check --fix`` does (shared by rule tests)."""
from __future__ import annotations

import textwrap

from tfperf_lsp.engine import analyze, fixed_text


def source(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


def findings(code: str, rule_code: str, settings=None) -> list:
    analysis = analyze(source(code), settings=settings)
    assert not analysis.rule_errors, analysis.rule_errors
    return [f for f in analysis.findings if f.code == rule_code]


def fixed(code: str, codes: set[str], settings=None) -> str:
    """``code`` after applying every fix (safe and unsafe) of ``codes``, one at a time
    (engine.fixed_text); fails if a fixable finding of ``codes`` remains (a fix that could not
    be built, or fixes that do not converge)."""
    text = fixed_text(source(code), codes, settings)
    remaining = [f for f in analyze(text, settings=settings).findings if f.code in codes and f.fix_title]
    assert not remaining, [f.message for f in remaining]
    return text


def break_fix_building(monkeypatch, rule_code: str) -> None:
    """Make every fix of ``rule_code`` fail to build (its findings stay), as a rewrite that
    cannot handle the file would: for tests of how --fix reports a fix it left out."""
    from tfperf_lsp.rules import rule_by_code

    rule = rule_by_code(rule_code)
    report = rule.finding

    def broken():
        raise RuntimeError("cannot rewrite this")

    def finding(*args, **kwargs):
        found = report(*args, **kwargs)
        if found.build_fix is not None:
            found.build_fix = broken
        return found

    monkeypatch.setattr(rule, "finding", finding)
