"""Every rule's documented examples are tests: invalid ones give findings (and fix to the
documented text), valid ones give none. A rule without examples fails here."""
import pytest

from tfperf_lsp.config import Settings
from tfperf_lsp.engine import analyze, fixed_example
from tfperf_lsp.model import CATEGORIES, Severity
from tfperf_lsp.rules import ALL_RULES

INVALID = [(rule, i, ex) for rule in ALL_RULES for i, ex in enumerate(rule.invalid)]
VALID = [(rule, i, ex) for rule in ALL_RULES for i, ex in enumerate(rule.valid)]


def _ids(cases):
    return [f"{rule.code}-{i}" for rule, i, _ in cases]


def own_findings(rule, source):
    analysis = analyze(source, settings=Settings().with_overrides({"select": ["ALL"]}))  # opt-in rules too
    assert not analysis.rule_errors, analysis.rule_errors
    assert analysis.parse_error is None, analysis.parse_error
    return analysis, [f for f in analysis.findings if f.code == rule.code]


@pytest.mark.parametrize("rule,index,example", INVALID, ids=_ids(INVALID))
def test_invalid_example_is_flagged(rule, index, example):
    _, findings = own_findings(rule, example.source)
    assert len(findings) == example.count, [f.message for f in findings]
    for finding in findings:
        assert finding.category == rule.category
        assert finding.message and "\n" not in finding.message
        if example.expect_no_fix:
            assert finding.fix_title is None, "a precondition of the rewrite fails here: no fix"


@pytest.mark.parametrize("rule,index,example", INVALID, ids=_ids(INVALID))
def test_invalid_example_fix_compiles_and_leaves_nothing_to_fix(rule, index, example):
    """What the fix makes of the example is pinned by the snapshot (tests/rules/snapshots); here:
    it is Python, and no fixable finding of the rule remains."""
    fixed = fixed_example(rule, example)
    if fixed is None:
        return
    compile(fixed, "<fixed>", "exec")
    _, remaining = own_findings(rule, fixed)
    assert [f for f in remaining if f.fix_title] == [], [f.message for f in remaining]


@pytest.mark.parametrize("rule,index,example", VALID, ids=_ids(VALID))
def test_valid_example_is_silent(rule, index, example):
    _, findings = own_findings(rule, example.source)
    assert findings == [], [f.message for f in findings]


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_rule_is_documented(rule):
    assert rule.invalid and rule.valid, "a rule needs at least one invalid and one valid example"
    assert rule.category in CATEGORIES
    assert isinstance(rule.severity, Severity)
    assert rule.doc_url.startswith("https://")
    docs = rule.markdown()
    for heading in ("## What it does", "## Why", "## When it stays silent", "## Fix"):
        assert heading in docs, f"{rule.code} docs lack {heading!r}"


def test_codes_are_unique_and_well_formed():
    codes = [rule.code for rule in ALL_RULES]
    assert len(codes) == len(set(codes))
    assert all(len(code) == 6 and code.startswith("TFP") and code[3:].isdigit() for code in codes)


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_rule_name_file_and_class_agree(rule):
    """``python-scalar-argument`` lives in ``python_scalar_argument.py`` as ``PythonScalarArgument``:
    a newcomer finds a rule's file from the name the CLI prints."""
    module = type(rule).__module__.rsplit(".", 1)[1]
    assert module == rule.name.replace("-", "_")
    assert type(rule).__name__.lower() == module.replace("_", "")


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_fixes_are_built_where_the_finding_is_reported(rule):
    """A rule passes ``fix=`` to ``self.finding`` with the nodes in scope; a ``fix(ctx, finding)``
    method that looks its node up again by position is the old shape (docs/writing-rules.md)."""
    assert "fix" not in vars(type(rule)), f"{rule.code}: move fix() into self.finding(..., fix=partial(...))"
