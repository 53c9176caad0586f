"""Run rule examples under TensorFlow: what a rule claims must be what TF does.

- Retrace examples (``traced=``): the code traces the named tf.function more than once, and the
  code after the rule's fix traces it exactly once.
- Every example with a fix: original and fixed code both run, and the fixed code's module-level
  tensors equal the original's (``np.allclose``), unless the rule documents a behaviour change.
"""
import contextlib
import io
import os
import runpy
import tempfile
import textwrap

import pytest

from tests.rules.helpers import fixed as apply_fixes
from tfperf_lsp.rules import ALL_RULES

pytestmark = pytest.mark.tf

TRACED = [(rule, ex) for rule in ALL_RULES for ex in rule.invalid if ex.traced or ex.trace_counter]
VERIFIED = [(rule, ex) for rule in ALL_RULES for ex in rule.invalid + rule.valid if ex.verify or ex.verify_fixed]


def run(source, verify=None):
    """Run ``source`` as a real file (AutoGraph reads the source of what it converts)."""
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)  # original and fixed code must draw the same numbers
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "example.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
            if verify:
                handle.write("\n" + textwrap.dedent(verify))
        with contextlib.redirect_stdout(io.StringIO()):
            return runpy.run_path(path, run_name="__tfperf_example__")


def fixed(rule, source):
    return apply_fixes(source, {rule.code})


def trace_count(example, namespace):
    if example.trace_counter:
        return len(namespace[example.trace_counter])
    return namespace[example.traced].experimental_get_tracing_count()


@pytest.mark.parametrize("rule,example", TRACED, ids=[f"{r.code}-{e.traced or e.trace_counter}" for r, e in TRACED])
def test_example_retraces_and_fix_traces_once(rule, example):
    before = trace_count(example, run(example.source))
    assert before > 1, f"{rule.code}: the example should retrace, it traced {before} time(s)"
    if example.fixed is None:
        return  # no fix is safe for this pattern: the finding explains instead
    after_source = fixed(rule, example.source)
    assert after_source == example.fixed_source
    after = trace_count(example, run(after_source))
    assert after == example.traces_after, f"{rule.code}: after the fix, {after} traces"


@pytest.mark.parametrize("rule,example", VERIFIED, ids=[f"{r.code}-{i}" for i, (r, e) in enumerate(VERIFIED)])
def test_example_behaves_as_documented_under_tensorflow(rule, example):
    if example.verify:
        run(example.source, example.verify)
    if example.verify_fixed:
        run(example.fixed_source, example.verify_fixed)


FIXED = [(rule, ex) for rule in ALL_RULES for ex in rule.invalid if ex.fixed and not ex.changes_outputs]


def module_values(namespace):
    import numpy as np
    import tensorflow as tf

    values = {}
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        if isinstance(value, (tf.Tensor, tf.Variable, np.ndarray)):
            values[name] = np.asarray(value)
    return values


@pytest.mark.parametrize("rule,example", FIXED, ids=[f"{r.code}-{i}" for i, (r, e) in enumerate(FIXED)])
def test_fixed_example_runs_and_keeps_results(rule, example):
    import numpy as np

    original = module_values(run(example.source))
    rewritten = module_values(run(example.fixed_source))
    assert set(original) == set(rewritten)
    for name, value in original.items():
        assert value.shape == rewritten[name].shape, name
        # Reordered float sums (vectorised reductions) differ in the last bits: 1e-5 relative.
        assert np.allclose(value, rewritten[name], rtol=1e-5, atol=1e-6), name
