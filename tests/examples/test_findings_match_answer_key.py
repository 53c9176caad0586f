"""tfperf's findings on examples/ against the answer key written into them (`# expect:` comments).

Each catalog id maps to the rule(s) that implement it. An id whose rules do not exist yet is
skipped (and listed by `python tests/examples/examples_answer_key.py`); once a rule exists, every
claim about it is checked: findings where the key expects them, none where it says `expect-none`,
and device-dependent ones (`expect-gpu`) only when the settings say the device is a GPU.
"""
from __future__ import annotations

import pathlib

import pytest

from examples_answer_key import parse_dir
from tfperf_lsp.analysis.workspace import WorkspaceIndex
from tfperf_lsp.config import Settings
from tfperf_lsp.engine import analyze
from tfperf_lsp.rules import rule_by_code

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

CODES = {
    "R1": {"TFP101"}, "R2": {"TFP102"}, "R3": {"TFP103"}, "R4": {"TFP104"}, "R5": {"TFP105"},
    "R7": {"TFP106", "TFP505"}, "R8": {"TFP107"},
    "C1": {"TFP201"}, "C2": {"TFP202"}, "C3": {"TFP203"},
    "K3": {"TFP301"}, "G1": {"TFP302", "TFP303"},
    "V1": {"TFP401"}, "V2": {"TFP402"}, "V3": {"TFP403"}, "V4": {"TFP404"}, "V5": {"TFP405"},
    "X1": {"TFP501"}, "X2": {"TFP502"}, "X3": {"TFP503"}, "X4": {"TFP504"},
    "P1": {"TFP601"}, "P2": {"TFP602"}, "P3": {"TFP603"}, "P4": {"TFP604"}, "P5": {"TFP605"},
    "D1": {"TFP701"}, "D2": {"TFP702"}, "D3": {"TFP703"}, "D4": {"TFP704"}, "D5": {"TFP705"},
    "K1": {"TFP801"}, "K2": {"TFP802"}, "K4": {"TFP804"}, "K5": {"TFP805"},
}
# The examples show the opt-in rules' patterns too (R7's deprecated argument, K2's
# train_on_batch loop): select them.
OPT_IN = {"extend-select": ["TFP106", "TFP802"]}
GPU = Settings().with_overrides({**OPT_IN, "device": {"gpu": True, "compute_capability": "8.6"}})
CPU = Settings().with_overrides(OPT_IN)  # no device configured: device-dependent rules treat it as unknown
KNOWN_CPU = Settings().with_overrides({**OPT_IN, "device": {"gpu": False}})

EXPECTATIONS = parse_dir(EXAMPLES)
_CACHE: dict = {}


def implemented(catalog_id: str, line: str) -> set[str]:
    codes = CODES.get(catalog_id, set())
    if catalog_id == "R7":  # the catalog's R7 covers both deprecated arguments; one rule each
        codes = {"TFP505"} if "experimental_compile" in line else {"TFP106"}
    return {code for code in codes if rule_by_code(code) is not None}


def findings(path: str, settings: Settings) -> list:
    key = (path, id(settings))
    if key not in _CACHE:
        text = pathlib.Path(path).read_text(encoding="utf-8")
        analysis = analyze(text, path, settings, WorkspaceIndex([str(EXAMPLES)]))
        assert not analysis.rule_errors, analysis.rule_errors
        _CACHE[key] = analysis.findings
    return _CACHE[key]


def codes_on(path, span, settings) -> set[str]:
    first, last = span
    return {f.code for f in findings(path, settings) if first <= f.span.start.line + 1 <= last}


def _cases():
    for e in EXPECTATIONS:
        for catalog_id in e.ids:
            yield pytest.param(e, catalog_id, id=f"{pathlib.Path(e.path).stem}:{e.row}:{e.kind}:{catalog_id}")


@pytest.mark.parametrize("expectation,catalog_id", list(_cases()))
def test_answer_key(expectation, catalog_id):
    codes = implemented(catalog_id, expectation.code)
    if not codes:
        pytest.skip(f"no rule implements {catalog_id} yet")
    where = f"{expectation.path}:{expectation.row}: {expectation.code}"
    if expectation.kind == "expect":
        assert codes & codes_on(expectation.path, expectation.span, CPU), f"{catalog_id} ({codes}) not reported at {where}"
    elif expectation.kind == "expect-none":
        assert not codes & codes_on(expectation.path, expectation.span, CPU), f"{catalog_id} wrongly reported at {where}"
        assert not codes & codes_on(expectation.path, expectation.span, GPU), f"{catalog_id} wrongly reported on GPU at {where}"
    elif expectation.kind == "expect-not-cpu":  # XLA: on a GPU or an unknown device, not on a known CPU
        assert codes & codes_on(expectation.path, expectation.span, GPU), f"{catalog_id} not reported on GPU at {where}"
        assert codes & codes_on(expectation.path, expectation.span, CPU), f"{catalog_id} not reported at {where}"
        assert not codes & codes_on(expectation.path, expectation.span, KNOWN_CPU), f"{catalog_id} reported on a CPU at {where}"
    else:  # expect-gpu: a GPU-only opportunity
        assert codes & codes_on(expectation.path, expectation.span, GPU), f"{catalog_id} not reported on GPU at {where}"
        assert not codes & codes_on(expectation.path, expectation.span, CPU), f"{catalog_id} reported on CPU at {where}"
