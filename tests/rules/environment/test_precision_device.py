"""The precision rules' device handling and Keras-version-dependent messages (settings objects);
the plain cases are fixtures (tests/rules/fixtures/TFP60x.py, devices declared by comment)."""
import pytest

from tests.rules.device_helpers import CPU, GPU, own
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


# ------------------------------------------------------------------------------ TFP604
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


@pytest.mark.parametrize("options", [None, CPU, {"device": {"gpu": True, "compute_capability": "6.0"}}])
def test_tensor_core_dims_silent_off_tensor_core_gpus(options):
    assert len(own("TFP604", DIMS, GPU)[1]) == 4  # the same code on a Tensor Core GPU (fixture TFP604)
    assert own("TFP604", DIMS, options)[1] == []
