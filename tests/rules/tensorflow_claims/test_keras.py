"""What the Keras rules claim, checked under TensorFlow 2.21 / Keras 3 on CPU."""
import pytest

from tests.rules.device_helpers import run
from tests.rules.helpers import findings
from tfperf_lsp.rules.keras.legacy_keras_import import _ABSENT_ON_TF_2_21

pytestmark = pytest.mark.tf

_MIXED = """\
import numpy as np
import tensorflow as tf

state_in, action_in = tf.keras.Input((3,)), tf.keras.Input((1,))
critic = tf.keras.Model([state_in, action_in], tf.keras.layers.Dense(1)(tf.keras.layers.Concatenate()([state_in, action_in])))
state = np.ones((1, 3), np.float32)
a = tf.clip_by_value(tf.ones((1, 1)), -0.5, 0.5)
for step in range(1000):
    q = critic.predict([state, a], verbose=0)
"""


def test_the_direct_call_on_a_list_mixing_an_array_and_a_tensor_converts_the_array():
    """TFP801's advice for ``predict([state, a])``: Keras 3 refuses the mixed list called
    directly (``predict`` takes it); converting the array makes the direct call work."""
    [finding] = findings(_MIXED, "TFP801")
    assert "critic([tf.convert_to_tensor(state), a], training=False)" in finding.message and finding.fix_title is None
    namespace = run(_MIXED.replace("for step in range(1000):", "for step in range(1):"))
    critic, state, a = namespace["critic"], namespace["state"], namespace["a"]
    with pytest.raises(ValueError):
        critic([state, a], training=False)
    advised = critic([namespace["tf"].convert_to_tensor(state), a], training=False).numpy()
    assert abs(float(advised[0, 0]) - float(namespace["q"][0, 0])) < 1e-5


@pytest.mark.parametrize("subpackage", sorted(_ABSENT_ON_TF_2_21))
def test_the_private_keras_copy_has_no_longer_these_subpackages(subpackage):
    """TFP804's message for ``from tensorflow.python.keras.datasets import mnist``: the import
    itself raises on the TensorFlow CI installs (its other subpackages still import)."""
    import importlib

    importlib.import_module("tensorflow.python.keras.layers")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"tensorflow.python.keras.{subpackage}")
