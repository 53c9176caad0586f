"""Run the fixture cases that say so under TensorFlow: what a rule claims must be what TF does.

- ``traced=NAME``: the case traces NAME more than once; its fixed version ``traces_after`` times.
- ``run``: the case and its fixed version both run and their module-level tensors are equal.

The ``# %% verify`` cells run in test_fixtures_verified_under_tensorflow.py: a file of its own so
that the two halves, the suite's slowest file together, run in parallel (scripts/test gives each
pytest process whole files).
"""
import pytest

from tests.rules import fixtures
from tests.rules.tensorflow_harness import assert_same_values, module_values, run, trace_count

pytestmark = pytest.mark.tf

CASES = fixtures.all_cases()
TRACED = [(c, k) for c, k in CASES if k.option("traced") or k.option("trace_counter")]
RUN = [(c, k) for c, k in CASES if k.option("run") and not k.option("changes_outputs")]


def _count(case, namespace):
    return trace_count(namespace, case.option("traced"), case.option("trace_counter"))


@pytest.mark.parametrize("code,case", TRACED, ids=fixtures.case_ids(TRACED))
def test_case_retraces_and_fixed_case_traces_as_stated(code, case):
    before = _count(case, run(case.source))
    assert before > 1, f"{code}: the case should retrace, it traced {before} time(s)"
    if not any(f.fix_title for f in fixtures.analyse(case, code)[1]):
        return  # no fix is safe for this pattern: the finding explains instead
    after = _count(case, run(fixtures.fixed(case, code)))
    assert after == int(case.option("traces_after", "1")), f"{code}: after the fix, {after} traces"


@pytest.mark.parametrize("code,case", RUN, ids=fixtures.case_ids(RUN))
def test_fixed_case_runs_and_keeps_results(code, case):
    assert_same_values(module_values(run(case.source)), module_values(run(fixtures.fixed(case, code))))

