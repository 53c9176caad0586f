"""What the XLA rules claim, checked under TensorFlow (CPU): fixes keep results within the stated
tolerance, and the 'silent because XLA cannot compile it' cases really fail under XLA."""
import textwrap

import numpy as np
import pytest

from tests.rules.device_helpers import fixed, run, tensors
from tfperf_lsp.engine import fixed_example
from tfperf_lsp.rules import rule_by_code

pytestmark = pytest.mark.tf

# XLA reorders float work: results agree to this tolerance (catalog X1 measured 7.7e-6 relative).
RTOL, ATOL = 1e-5, 1e-6


def _assert_same(original, rewritten):
    assert set(original) == set(rewritten)
    for name, value in original.items():
        np.testing.assert_allclose(rewritten[name], value, rtol=RTOL, atol=ATOL, err_msg=name)


def test_jit_candidate_documented_fix_compiles_with_xla_and_keeps_results():
    # The other cases (a hot activation, a Keras train step) are fixtures with [run] and verify cells.
    rule = rule_by_code("TFP501")
    example = rule.invalid[0]
    original, rewritten = run(example.source), run(fixed_example(rule, example))
    _assert_same(tensors(original), tensors(rewritten))
    assert rewritten["train_step"]._jit_compile is True and not original["train_step"]._jit_compile


def test_what_jit_candidate_treats_as_uncompilable_really_is():
    import tensorflow as tf

    @tf.function(jit_compile=True)
    def prints(x):
        tf.print(x)
        return x * 2.0

    with pytest.raises(tf.errors.InvalidArgumentError, match="Detected unsupported operations"):
        prints(tf.ones([2]))

    @tf.function(jit_compile=True)
    def grows(x):
        array = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(3):
            array = array.write(i, x)
        return array.stack()

    # Not an error: a wrong (empty) result, which is worse. Without XLA it has 3 elements.
    assert grows(tf.constant(1.0)).shape[0] == 0
    assert grows.python_function(tf.constant(1.0)).shape[0] == 3


def test_xla_programs_are_per_concrete_shape_even_with_reduce_retracing():
    import tensorflow as tf

    source = rule_by_code("TFP504").invalid[0].source
    namespace = run(source)
    masked_mean = namespace["masked_mean"]
    assert masked_mean.experimental_get_tracing_count() == 2  # retracing is relaxed to [4, None] ...
    hlo = {n: masked_mean.experimental_get_compiler_ir(tf.zeros([4, n]), tf.ones([4, n]))(stage="hlo") for n in (16, 24)}
    assert "f32[4,16]" in hlo[16] and "f32[4,24]" in hlo[24]  # ... but XLA compiles per shape


def test_keras_compile_fix_under_tf_keras():
    tf_keras = pytest.importorskip("tf_keras", reason="tf_keras (Keras 2) is not installed here")
    del tf_keras
    source = textwrap.dedent("""
    import numpy as np
    import tf_keras

    tf_keras.utils.set_random_seed(0)
    x = np.random.default_rng(0).normal(size=(64, 8)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = tf_keras.Sequential([tf_keras.layers.Dense(16, activation="relu", input_shape=(8,)), tf_keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    preds = model.predict(x, verbose=0)
    """)
    rewritten = fixed("TFP502", source)
    assert 'model.compile(optimizer="sgd", loss="mse", jit_compile=True)' in rewritten
    original_ns, rewritten_ns = run(source), run(rewritten)
    assert rewritten_ns["model"]._jit_compile is True
    _assert_same(tensors(original_ns), tensors(rewritten_ns))
