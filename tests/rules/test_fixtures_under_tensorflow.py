"""Run the fixture cases that say so under TensorFlow: what a rule claims must be what TF does.

- ``traced=NAME``: the case traces NAME more than once; its fixed version ``traces_after`` times.
- ``run``: the case and its fixed version both run and their module-level tensors are equal.
- ``# %% verify`` / ``# %% verify fixed`` cells: assertions run after the case / its fixed version.
"""
import pytest

from tests.rules import fixtures
from tests.rules.tensorflow_harness import assert_same_values, module_values, run, trace_count

pytestmark = pytest.mark.tf

CASES = [(code, case) for code in fixtures.fixture_codes() for case in fixtures.parse(fixtures.fixture_path(code))]
TRACED = [(c, k) for c, k in CASES if k.option("traced") or k.option("trace_counter")]
RUN = [(c, k) for c, k in CASES if k.option("run") and not k.option("changes_outputs")]
VERIFIED = [(c, k) for c, k in CASES if k.verify or k.verify_fixed]


def _ids(cases):
    return [f"{code}-{case.title}" for code, case in cases]


def _count(case, namespace):
    return trace_count(namespace, case.option("traced"), case.option("trace_counter"))


@pytest.mark.parametrize("code,case", TRACED, ids=_ids(TRACED))
def test_case_retraces_and_fixed_case_traces_as_stated(code, case):
    before = _count(case, run(case.source))
    assert before > 1, f"{code}: the case should retrace, it traced {before} time(s)"
    if not any(f.fix_title for f in fixtures.analyse(case, code)[1]):
        return  # no fix is safe for this pattern: the finding explains instead
    after = _count(case, run(fixtures.fixed(case, code)))
    assert after == int(case.option("traces_after", "1")), f"{code}: after the fix, {after} traces"


@pytest.mark.parametrize("code,case", RUN, ids=_ids(RUN))
def test_fixed_case_runs_and_keeps_results(code, case):
    assert_same_values(module_values(run(case.source)), module_values(run(fixtures.fixed(case, code))))


@pytest.mark.parametrize("code,case", VERIFIED, ids=_ids(VERIFIED))
def test_case_behaves_as_stated_under_tensorflow(code, case):
    if case.verify:
        run(case.source, case.verify)
    if case.verify_fixed:
        run(fixtures.fixed(case, code), case.verify_fixed)
