"""Run the fixture cases' ``# %% verify`` / ``# %% verify fixed`` cells under TensorFlow: the
assertions run after the case / its fixed version (what a rule's note claims TF does, it does).
The ``run`` / ``traced`` cases are in test_fixtures_under_tensorflow.py.
"""
import pytest

from tests.rules import fixtures
from tests.rules.tensorflow_harness import run

pytestmark = pytest.mark.tf

CASES = fixtures.all_cases()
VERIFIED = [(c, k) for c, k in CASES if k.verify or k.verify_fixed]


@pytest.mark.parametrize("code,case", VERIFIED, ids=fixtures.case_ids(VERIFIED))
def test_case_behaves_as_stated_under_tensorflow(code, case):
    if case.verify:
        run(case.source, case.verify)
    if case.verify_fixed:
        run(fixtures.fixed(case, code), case.verify_fixed)
