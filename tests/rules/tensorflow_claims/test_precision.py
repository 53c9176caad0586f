"""What the precision rules claim, checked under TensorFlow 2.21 / Keras 3 on CPU."""
import textwrap

import numpy as np
import pytest

from tests.rules.device_helpers import GPU, fixed, run, tensors
from tfperf_lsp.engine import fixed_example
from tfperf_lsp.rules import rule_by_code

pytestmark = pytest.mark.tf

# float16 keeps ~3 significant digits: the mixed-precision rewrites agree with the float32 /
# float16 originals to this tolerance, not to the harness's 1e-5.
RTOL_FP16, ATOL_FP16 = 1e-2, 1e-3


def test_removed_api_originals_really_fail_on_tf_2_21():
    import_form = rule_by_code("TFP606").invalid[0]
    attribute_form = 'import tensorflow as tf\n\ntf.keras.mixed_precision.experimental.set_policy("mixed_bfloat16")\n'
    with pytest.raises(ImportError, match="cannot import name 'experimental'"):
        run(import_form.source)
    with pytest.raises(AttributeError, match="has no attribute 'experimental'"):
        run(attribute_form)


def test_softmax_output_split_returns_float32_and_the_same_probabilities():
    rule = rule_by_code("TFP602")
    for example in rule.invalid:
        original, rewritten = run(example.source), run(fixed_example(rule, example))
        assert original["probs"].dtype == "float16" and rewritten["probs"].dtype == "float32"
        np.testing.assert_allclose(
            np.asarray(rewritten["probs"]), np.asarray(original["probs"]).astype("float32"), rtol=RTOL_FP16, atol=ATOL_FP16
        )
        np.testing.assert_allclose(np.asarray(rewritten["probs"]).sum(axis=-1), 1.0, rtol=1e-6)


def test_mixed_policy_fix_trains_in_float16_and_predicts_close_to_float32():
    rule = rule_by_code("TFP601")
    example = rule.invalid[0]
    original = run(example.source)
    rewritten = run(fixed_example(rule, example))
    assert original["model"].layers[0].compute_dtype == "float32"
    assert rewritten["model"].layers[0].compute_dtype == "float16"
    for name, value in tensors(original).items():
        np.testing.assert_allclose(np.asarray(rewritten[name], dtype="float32"), value, rtol=RTOL_FP16, atol=1e-2, err_msg=name)


def test_mixed_policy_fix_on_a_file_without_device_comment():
    source = textwrap.dedent("""
    import numpy as np
    import tensorflow as tf

    net = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)])
    net.compile(optimizer="sgd", loss="mse")
    net.fit(np.ones((16, 4), "float32"), np.ones((16, 1), "float32"), verbose=0)
    dtype_in_use = net.layers[0].compute_dtype
    """)
    assert run(fixed("TFP601", source, GPU))["dtype_in_use"] == "float16"


def test_loss_scaling_is_needed_for_small_float16_gradients():
    source = rule_by_code("TFP603").invalid[0].source + textwrap.dedent("""
    x = tf.random.uniform([64, 4], 0, 1e-2, seed=1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x)) * 1e-5
    plain = tape.gradient(loss, model.trainable_variables)[0]
    scaler = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD())
    scaler.build(model.trainable_variables)
    with tf.GradientTape() as tape:
        scaled_loss = scaler.scale_loss(tf.reduce_mean(model(x)) * 1e-5)
    scaled = tape.gradient(scaled_loss, model.trainable_variables)[0]
    """)
    namespace = run(source)
    assert not np.any(np.asarray(namespace["plain"], dtype="float32"))  # every kernel gradient underflowed
    assert np.all(np.asarray(namespace["scaled"], dtype="float32") != 0)


def test_channels_first_float16_convolution_cannot_train_on_cpu():
    import tensorflow as tf

    if tf.config.list_physical_devices("GPU"):
        pytest.skip("a CPU-only claim")
    source = """
    import numpy as np
    from tensorflow import keras

    keras.mixed_precision.set_global_policy("{policy}")
    model = keras.Sequential([keras.Input(shape=(3, 8, 8)), keras.layers.Conv2D(8, 3, data_format="channels_first"),
                              keras.layers.GlobalAveragePooling2D(data_format="channels_first")])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.ones((4, 3, 8, 8), "float32"), np.ones((4, 8), "float32"), verbose=0)
    """
    # Whether a CPU kernel for NCHW exists depends on the CPU and TensorFlow's build (oneDNN
    # paths differ between CPUs with and without AVX-512): check the claim only where its
    # premise, a float32 channels_first model that trains, holds on this machine.
    try:
        run(source.format(policy="float32"))
    except tf.errors.InvalidArgumentError as exc:
        pytest.skip(f"this CPU's TensorFlow cannot train channels_first convolutions even in float32: {exc.message[:80]}")
    try:
        run(source.format(policy="mixed_float16"))
    except tf.errors.InvalidArgumentError as exc:
        assert "only supports NHWC" in exc.message
    else:
        pytest.skip("this CPU's TensorFlow trains channels_first convolutions in float16 too: the contrast in TFP605's docs does not hold here")
