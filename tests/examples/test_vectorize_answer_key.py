"""tfperf's vectorize findings on examples/ match the answer key (catalog V1-V5 <-> TFP401-405).

Every `# expect: Vn` line gets TFPn on that line; no `# expect-none: Vn` line gets it; and no
vectorize finding appears on a line the answer key does not mention (false positives).
"""
import pathlib
import sys

import pytest

from tfperf_lsp.engine import analyze

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "examples"))
from examples_answer_key import parse_dir  # noqa: E402

CODES = {"V1": "TFP401", "V2": "TFP402", "V3": "TFP403", "V4": "TFP404", "V5": "TFP405"}
FILES = sorted((REPO / "examples").glob("*.py"))


def findings_by_row(path):
    analysis = analyze(path.read_text(encoding="utf-8"), str(path))
    assert analysis.parse_error is None
    rows = {}
    for finding in analysis.findings:
        if finding.code in CODES.values():
            rows.setdefault(finding.span.start.line + 1, set()).add(finding.code)
    return rows


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_vectorize_findings_match_the_answer_key(path):
    key = [e for e in parse_dir(REPO / "examples") if pathlib.Path(e.path).name == path.name]
    rows = findings_by_row(path)
    expected, forbidden = {}, {}
    for e in key:
        for catalog_id in e.ids:
            if catalog_id in CODES:
                target = expected if e.kind == "expect" else forbidden
                target.setdefault(e.row, set()).add(CODES[catalog_id])
    missing = {row: codes - rows.get(row, set()) for row, codes in expected.items() if codes - rows.get(row, set())}
    wrong = {row: codes & rows.get(row, set()) for row, codes in forbidden.items() if codes & rows.get(row, set())}
    unexpected = {row: codes for row, codes in rows.items() if row not in expected}
    assert not missing, f"{path.name}: expected findings missing at rows {missing}"
    assert not wrong, f"{path.name}: findings on expect-none rows {wrong}"
    assert not unexpected, f"{path.name}: findings the answer key does not ask for {unexpected}"


def test_every_vectorize_id_is_in_the_answer_key():
    ids = {i for e in parse_dir(REPO / "examples") if e.kind == "expect" for i in e.ids}
    assert set(CODES) <= ids
