"""Run rule examples under TensorFlow: what a rule claims must be what TF does.

- Retrace examples (``traced=``): the code traces the named tf.function more than once, and the
  code after the rule's fix traces it exactly once.
- Every example with a fix: original and fixed code both run, and the fixed code's module-level
  tensors equal the original's (``np.allclose``), unless the rule documents a behaviour change.
"""
import pytest

from tests.rules.tensorflow_harness import assert_same_values, module_values, run
from tests.rules.tensorflow_harness import trace_count as count_traces
from tfperf_lsp.engine import fixed_example
from tfperf_lsp.rules import ALL_RULES

pytestmark = pytest.mark.tf

TRACED = [(rule, ex) for rule in ALL_RULES for ex in rule.invalid if ex.traced or ex.trace_counter]
VERIFIED = [(rule, ex) for rule in ALL_RULES for ex in rule.invalid + rule.valid if ex.verify or ex.verify_fixed]


def trace_count(example, namespace):
    return count_traces(namespace, example.traced, example.trace_counter)


@pytest.mark.parametrize("rule,example", TRACED, ids=[f"{r.code}-{e.traced or e.trace_counter}" for r, e in TRACED])
def test_example_retraces_and_fix_traces_once(rule, example):
    before = trace_count(example, run(example.source))
    assert before > 1, f"{rule.code}: the example should retrace, it traced {before} time(s)"
    after_source = fixed_example(rule, example)
    if after_source is None:
        return  # no fix is safe for this pattern: the finding explains instead
    after = trace_count(example, run(after_source))
    assert after == example.traces_after, f"{rule.code}: after the fix, {after} traces"


@pytest.mark.parametrize("rule,example", VERIFIED, ids=[f"{r.code}-{i}" for i, (r, e) in enumerate(VERIFIED)])
def test_example_behaves_as_documented_under_tensorflow(rule, example):
    if example.verify:
        run(example.source, example.verify)
    if example.verify_fixed:
        run(fixed_example(rule, example), example.verify_fixed)


FIXED = [(rule, ex) for rule in ALL_RULES for ex in rule.invalid
         if ex.runnable and not ex.changes_outputs and fixed_example(rule, ex) is not None]


@pytest.mark.parametrize("rule,example", FIXED, ids=[f"{r.code}-{i}" for i, (r, e) in enumerate(FIXED)])
def test_fixed_example_runs_and_keeps_results(rule, example):
    assert_same_values(module_values(run(example.source)), module_values(run(fixed_example(rule, example))))
