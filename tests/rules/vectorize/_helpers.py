"""Shared by the vectorize tests: analyse, apply one rule's fixes, run code under TensorFlow."""
import textwrap

from tfperf_lsp.engine import analyze, fix_for
from tfperf_lsp.rewrite.edits import apply_edits


def own(code, source):
    analysis = analyze(textwrap.dedent(source).lstrip("\n"))
    assert not [e for e in analysis.rule_errors if e[0] == code], analysis.rule_errors
    return analysis, [f for f in analysis.findings if f.code == code]


def fixed(code, source):
    """The source after applying every fix of ``code`` (one at a time, re-analysing)."""
    source = textwrap.dedent(source).lstrip("\n")
    for _ in range(10):
        analysis, findings = own(code, source)
        fixable = [f for f in findings if f.fix_title]
        if not fixable:
            return source
        fix = fix_for(analysis, fixable[0])
        assert fix is not None and fix.edits
        source = apply_edits(source, fix.edits)
    return source


def namespace(source):
    scope = {"__name__": "__vectorize_test__"}
    exec(compile(source, "<example>", "exec"), scope)  # noqa: S102 - test code we wrote
    return scope
