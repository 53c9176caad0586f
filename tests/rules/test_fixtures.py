"""Every rule's fixture file against its snapshot: where each finding is, what it says, what its
fix changes. A change to any of them fails here until the snapshot is rewritten and reviewed:

    .venv/bin/python -m tests.rules.fixtures --update TFP401
"""
import difflib
import os

import pytest

from tests.rules import fixtures
from tfperf_lsp.rules import ALL_RULES

CODES = [rule.code for rule in ALL_RULES]
CASES = fixtures.all_cases()


@pytest.mark.parametrize("code", CODES)
def test_every_rule_has_a_fixture_and_a_snapshot(code):
    assert os.path.exists(fixtures.fixture_path(code)), f"{code}: no tests/rules/fixtures/{code}.py"
    assert os.path.exists(fixtures.snapshot_path(code)), f"{code}: no snapshot; run python -m tests.rules.fixtures --update {code}"


def test_every_fixture_is_a_rule():
    assert set(fixtures.fixture_codes()) <= set(CODES)


@pytest.mark.parametrize("code", fixtures.fixture_codes())
def test_snapshot_is_up_to_date(code):
    with open(fixtures.snapshot_path(code), encoding="utf-8") as handle:
        expected = handle.read()
    actual = fixtures.render(code)
    if actual != expected:
        diff = "\n".join(difflib.unified_diff(expected.splitlines(), actual.splitlines(), "snapshot", "now", lineterm=""))
        pytest.fail(f"{code}: findings or fixes changed; if intended: python -m tests.rules.fixtures --update {code}\n{diff}")


@pytest.mark.parametrize("code,case", CASES, ids=fixtures.case_ids(CASES))
def test_flagged_lines_are_the_marked_lines(code, case):
    _, findings = fixtures.analyse(case, code)
    flagged = sorted({case.first_line + f.span.start.line for f in findings})
    assert flagged == case.expected_lines(code), "lines flagged (0-based, in the fixture file) vs '# expect:' markers"
    for finding in findings:
        assert finding.message and "\n" not in finding.message
        if case.option("no_fix"):
            assert finding.fix_title is None, "a precondition of the rewrite fails here: no fix"


OTHERS = [(code, case) for code, case in CASES if case.option("others")]


@pytest.mark.parametrize("code,case", OTHERS, ids=fixtures.case_ids(OTHERS))
def test_other_rules_report_what_the_case_says(code, case):
    expected = sorted(set(case.option("others", "").split()) - {"none"})
    assert fixtures.other_codes(case, code) == expected


FLAGGED = [(code, case) for code, case in CASES if case.expected_lines(code)]


@pytest.mark.parametrize("code,case", FLAGGED, ids=fixtures.case_ids(FLAGGED))
def test_fixed_case_compiles_and_is_clean(code, case):
    after = fixtures.fixed(case, code)
    compile(after, "<fixed>", "exec")
    _, before = fixtures.analyse(case, code)
    _, remaining = fixtures.analyse(case, code, after)
    assert [f for f in remaining if f.fix_title] == [], [f.message for f in remaining]
    if all(f.fix_title for f in before):
        assert remaining == [], [f.message for f in remaining]


@pytest.mark.parametrize("rule", ALL_RULES, ids=CODES)
def test_fixable_says_whether_the_rule_offers_fixes(rule):
    with open(fixtures.snapshot_path(rule.code), encoding="utf-8") as handle:
        snapshot_fixes = "[fix:" in handle.read()
    assert rule.fixable == snapshot_fixes
