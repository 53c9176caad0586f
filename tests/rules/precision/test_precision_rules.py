"""The precision rules' detection, device handling and rewrites (no TensorFlow needed)."""
import textwrap

import pytest

from tests.rules.xla._helpers import CPU, GPU, fixed, own
from tfperf_lsp.config import Settings
from tfperf_lsp.engine import analyze
from tfperf_lsp.model import Severity
from tfperf_lsp.rules.precision._policy import declared_device

TRAINED = """
import numpy as np
from tensorflow import keras

model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(np.ones((32, 8)), np.zeros((32, 1)), verbose=0)
"""


# ------------------------------------------------------------------------------ device facts
@pytest.mark.parametrize(
    "device,policy",
    [
        ({"gpu": True, "compute_capability": "8.6"}, "mixed_float16"),
        ({"gpu": True, "compute_capability": "7.0"}, "mixed_float16"),
        ({"gpu": True, "compute_capability": "6.1"}, None),
        ({"gpu": True}, None),  # capability unknown
        ({"gpu": False, "cpu_features": ["avx512_bf16"]}, "mixed_bfloat16"),
        ({"gpu": False, "cpu_features": ["amx_tile", "amx_bf16"]}, "mixed_bfloat16"),
        ({"gpu": False, "cpu_features": ["avx2", "avx512f"]}, None),
        (None, None),  # unknown device
    ],
)
def test_no_mixed_policy_depends_on_the_device(device, policy):
    findings = own("TFP601", TRAINED, {"device": device} if device else None)[1]
    if policy is None:
        assert findings == []
    else:
        [finding] = findings
        assert f"'{policy}'" in finding.message and "`model`" in finding.message
        assert finding.severity is Severity.INFORMATION and finding.fix_applicability == "unsafe"


def test_device_precedence_probe_beats_file_comment_beats_configuration():
    gpu_comment = "# tfperf: device=gpu cc=8.0\n" + TRAINED
    cpu_config = Settings().with_overrides(CPU)
    flagged = [f for f in analyze(gpu_comment, settings=cpu_config).findings if f.code == "TFP601"]
    assert len(flagged) == 1  # the file's own declaration beats the project default
    probed_cpu = cpu_config.with_probe({"kind": "cpu", "cpu_features": []})
    assert [f for f in analyze(gpu_comment, settings=probed_cpu).findings if f.code == "TFP601"] == []
    probed_gpu = Settings().with_probe({"kind": "gpu", "compute_capability": "9.0"})
    assert len([f for f in analyze(TRAINED, settings=probed_gpu).findings if f.code == "TFP601"]) == 1


def test_device_comment_syntax():
    assert declared_device(["# tfperf: device=cpu features=AVX512_BF16,amx_bf16"]).cpu_features == {"avx512_bf16", "amx_bf16"}
    gpu = declared_device(["#!/usr/bin/env python", "#tfperf: device=GPU compute_capability=7.5"])
    assert gpu.gpu is True and gpu.compute_capability == 7.5 and gpu.source == "comment"
    assert declared_device(["# tfperf: ignore[TFP601]", "x = 1  # tfperf: device=gpu"]) is None


def test_no_mixed_policy_fix_inserts_the_policy_after_the_imports():
    assert fixed("TFP601", TRAINED, GPU) == textwrap.dedent('''\
    import numpy as np
    from tensorflow import keras
    keras.mixed_precision.set_global_policy("mixed_float16")

    model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.ones((32, 8)), np.zeros((32, 1)), verbose=0)
    ''')
    tf_only = "import tensorflow as tf\n" + TRAINED.replace("from tensorflow import keras\n", "").replace("keras.", "tf.keras.")
    assert 'tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")' in fixed("TFP601", tf_only, {"device": {"gpu": False, "cpu_features": ["amx_bf16"]}})


def test_no_mixed_policy_needs_training_and_no_policy_above_the_model():
    untrained = TRAINED.replace("model.fit(", "model.predict(")
    assert own("TFP601", untrained, GPU)[1] == []
    later_policy = TRAINED + 'keras.mixed_precision.set_global_policy("mixed_float16")\n'
    [finding] = own("TFP601", later_policy, GPU)[1]
    assert finding.fix_title is None  # the file manages policies itself
    tape = """
    import tensorflow as tf

    def make():
        return tf.keras.Sequential([tf.keras.layers.Dense(1)])

    net = make()
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(net(tf.ones([2, 4])))
    grads = tape.gradient(loss, net.trainable_weights)
    """
    [finding] = own("TFP601", tape, GPU)[1]
    assert finding.fix_title is None  # a custom loop would mix float16 outputs and float32 targets


# ------------------------------------------------------------------------------ TFP602
def test_softmax_output_under_bfloat16_and_with_a_callable_activation():
    source = """
    import tensorflow as tf
    from tensorflow.keras.layers import Activation, Dense

    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    model = tf.keras.Sequential([Dense(4, activation=tf.nn.softmax)])
    """
    [finding] = own("TFP602", source)[1]
    assert "bfloat16" in finding.message and "Dense(4, activation=tf.nn.softmax)" in finding.message
    assert "Dense(4), Activation(tf.nn.softmax, dtype=\"float32\")])" in fixed("TFP602", source)


def test_softmax_output_model_add_gets_a_second_add():
    source = """
    from tensorflow import keras

    keras.mixed_precision.set_global_policy(keras.mixed_precision.Policy("mixed_float16"))
    model = keras.Sequential()
    for width in (64, 32):
        model.add(keras.layers.Dense(width, activation="relu"))
    if True:
        model.add(keras.layers.Dense(10, activation="softmax"))  # output
    """
    assert fixed("TFP602", source).endswith(
        'if True:\n    model.add(keras.layers.Dense(10))  # output\n'
        '    model.add(keras.layers.Activation("softmax", dtype="float32"))\n'
    )


def test_softmax_output_policy_follows_source_order_and_variables():
    source = """
    from tensorflow import keras
    from tensorflow.keras import layers

    head = layers.Dense(4, activation="softmax")  # before any policy
    policy = keras.mixed_precision.Policy("mixed_float16")
    keras.mixed_precision.set_global_policy(policy)
    mixed_head = layers.Dense(4, activation="softmax")
    stored = layers.Dense(4, activation="softmax", dtype="float32")
    keras.mixed_precision.set_global_policy("float32")
    after = layers.Dense(4, activation="softmax")
    """
    findings = own("TFP602", source)[1]
    assert [f.span.start.line + 1 for f in findings] == [7]
    assert findings[0].fix_title is None  # neither a list element, a functional call nor model.add


def test_softmax_output_no_fix_when_activation_cannot_be_spelled():
    source = """
    from tensorflow import keras
    from tensorflow.keras.layers import Dense

    keras.mixed_precision.set_global_policy("mixed_float16")
    model = keras.Sequential([Dense(4, activation="softmax")])
    """
    [finding] = own("TFP602", source)[1]
    assert finding.fix_title is None


# ------------------------------------------------------------------------------ TFP603
LOOP = """
import tensorflow as tf
from tensorflow import keras

keras.mixed_precision.set_global_policy("{policy}")
model = keras.Sequential([keras.layers.Dense(8)])
opt = keras.optimizers.Adam()

@tf.function
def step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x))
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
"""


def test_no_loss_scaling_names_the_api_of_the_keras_version():
    [k3] = own("TFP603", LOOP.format(policy="mixed_float16"), {"kerasVersion": "3"})[1]
    assert "scale_loss" in k3.message and "get_scaled_loss" not in k3.message and "`opt`" in k3.message
    assert k3.span.start.line + 1 == 6 and k3.fix_title is None
    [k2] = own("TFP603", LOOP.format(policy="mixed_float16"), {"kerasVersion": "2"})[1]
    assert "get_scaled_loss" in k2.message and "get_unscaled_gradients" in k2.message


def test_no_loss_scaling_silent_for_bfloat16_wrapped_or_scaled_optimizers_and_fit():
    assert own("TFP603", LOOP.format(policy="mixed_bfloat16"))[1] == []
    wrapped = LOOP.format(policy="mixed_float16").replace("keras.optimizers.Adam()", "keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())")
    assert own("TFP603", wrapped)[1] == []
    keras2 = LOOP.format(policy="mixed_float16").replace(
        "loss = tf.reduce_mean(model(x))", "loss = opt.get_scaled_loss(tf.reduce_mean(model(x)))"
    )
    assert own("TFP603", keras2)[1] == []
    fit = """
    from tensorflow import keras
    keras.mixed_precision.set_global_policy("mixed_float16")
    model = keras.Sequential([keras.layers.Dense(8)])
    model.compile(optimizer=keras.optimizers.SGD(), loss="mse")
    """
    assert own("TFP603", fit)[1] == []


# ------------------------------------------------------------------------------ TFP604 / TFP605
DIMS = """
import tensorflow as tf
from tensorflow import keras

keras.mixed_precision.set_global_policy("mixed_float16")
inputs = keras.Input(shape=(32, 32, 3))
x = keras.layers.Conv2D(filters=30, kernel_size=3, activation="relu")(inputs)
x = keras.layers.Conv2D(3, 1)(x)  # functional, no activation: may be an output
x = keras.layers.LSTM(100)(tf.reshape(x, [-1, 30, 30 * 3]))
x = keras.layers.Dense(6, activation="relu")(x)  # below 8
model = keras.Model(inputs, keras.layers.Dense(10, activation="sigmoid")(x))
seq = keras.Sequential([keras.layers.Dense(100, activation="relu"), keras.layers.Dense(12), keras.layers.Softmax()])
model.evaluate(tf.zeros([4, 32, 32, 3]), batch_size=12)
model.predict(tf.zeros([4, 32, 32, 3]), batch_size=flags.batch)
"""


def test_tensor_core_dims_on_a_tensor_core_gpu():
    findings = own("TFP604", DIMS, GPU)[1]
    assert [(f.span.start.line + 1, f.label) for f in findings] == [
        (6, "Tensor Cores prefer 32"),
        (8, "Tensor Cores prefer 104"),
        (11, "Tensor Cores prefer 104"),
        (12, "Tensor Cores prefer 16"),
    ]
    assert all(f.severity is Severity.HINT and f.fix_title is None for f in findings)


@pytest.mark.parametrize("options", [None, CPU, {"device": {"gpu": True, "compute_capability": "6.0"}}])
def test_tensor_core_dims_silent_off_tensor_core_gpus(options):
    assert own("TFP604", DIMS, options)[1] == []


def test_tensor_core_dims_silent_for_bfloat16_and_float32():
    assert own("TFP604", DIMS.replace('"mixed_float16"', '"mixed_bfloat16"'), GPU)[1] == []
    assert own("TFP604", DIMS.replace('"mixed_float16"', '"float32"'), GPU)[1] == []


def test_channels_first_needs_a_mixed_policy_and_a_tensor_core_gpu():
    source = """
    from tensorflow import keras

    nchw = keras.layers.Conv2D(32, 3, data_format="channels_first")
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    nchw_mixed = keras.layers.SeparableConv2D(32, 3, data_format="channels_first")
    nhwc_mixed = keras.layers.Conv2D(32, 3, data_format="channels_last")
    """
    [finding] = own("TFP605", source, GPU)[1]
    assert finding.span.start.line + 1 == 5 and finding.fix_title is None
    assert own("TFP605", source, CPU)[1] == [] and own("TFP605", source)[1] == []


# ------------------------------------------------------------------------------ TFP606
SEED002 = """
import tensorflow as tf

try:
    from tensorflow.keras.mixed_precision import experimental as mixed_precision
    policy = mixed_precision.Policy('mixed_float16')
    mixed_precision.set_policy(policy)
except ImportError:
    from tensorflow.keras import mixed_precision
    policy = mixed_precision.Policy('mixed_float16')
    mixed_precision.set_global_policy(policy)
"""


def test_removed_api_seed002_exact_form_fixes_to_valid_current_api():
    findings = own("TFP606", SEED002)[1]
    assert [(f.span.start.line + 1, f.severity) for f in findings] == [(4, Severity.ERROR), (6, Severity.ERROR)]
    result = fixed("TFP606", SEED002)
    compile(result, "<fixed>", "exec")
    assert result == textwrap.dedent(SEED002).lstrip("\n").replace(
        "from tensorflow.keras.mixed_precision import experimental as mixed_precision",
        "from tensorflow.keras import mixed_precision",
    ).replace("mixed_precision.set_policy(policy)", "mixed_precision.set_global_policy(policy)")
    assert own("TFP606", result)[1] == []


@pytest.mark.parametrize(
    "before,after",
    [
        ("from tensorflow.keras.mixed_precision import experimental\nexperimental.set_policy('float32')\n",
         "from tensorflow.keras import mixed_precision as experimental\nexperimental.set_global_policy('float32')\n"),
        ("from keras.mixed_precision.experimental import Policy, set_policy\nset_policy(Policy('float32'))\n",
         "from keras.mixed_precision import Policy, set_global_policy as set_policy\nset_policy(Policy('float32'))\n"),
        ("import tensorflow.keras.mixed_precision.experimental as mp\nmp.set_policy('float32')\n",
         "from tensorflow.keras import mixed_precision as mp\nmp.set_global_policy('float32')\n"),
        ("import tensorflow as tf\np = tf.keras.mixed_precision.experimental.global_policy()\n",
         "import tensorflow as tf\np = tf.keras.mixed_precision.global_policy()\n"),
    ],
)
def test_removed_api_import_and_call_forms(before, after):
    assert fixed("TFP606", before) == after


def test_removed_api_without_safe_rewrite():
    source = """
    from tensorflow.keras.mixed_precision.experimental import LossScaleOptimizer
    from tensorflow.keras.mixed_precision import (
        experimental as mp,
    )
    """
    findings = own("TFP606", source)[1]
    assert len(findings) == 2 and all(f.fix_title is None for f in findings)
