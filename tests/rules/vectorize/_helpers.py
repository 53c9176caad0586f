"""Shared by the vectorize tests: analyse, apply one rule's fixes, run code under TensorFlow."""
import textwrap

from tests.rules.helpers import fixed as apply_fixes
from tfperf_lsp.engine import analyze


def own(code, source):
    analysis = analyze(textwrap.dedent(source).lstrip("\n"))
    assert not [e for e in analysis.rule_errors if e[0] == code], analysis.rule_errors
    return analysis, [f for f in analysis.findings if f.code == code]


def fixed(code, source):
    """The source after applying every fix of ``code`` (one at a time, re-analysing)."""
    return apply_fixes(source, {code})


def namespace(source):
    scope = {"__name__": "__vectorize_test__"}
    exec(compile(source, "<example>", "exec"), scope)  # noqa: S102 - test code we wrote
    return scope
