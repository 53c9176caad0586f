"""TFP502 under each Keras version (monkeypatched environment); the XLA rules' plain cases are
fixtures (tests/rules/fixtures/TFP50x.py)."""
import pytest

from tests.rules.device_helpers import fixed, own
from tfperf_lsp.analysis import environment
from tfperf_lsp.model import Severity


# ---------------------------------------------------------------------------------- TFP502
TF_KERAS_COMPILE = """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1024), tf.keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(train_ds, epochs=10)
"""


@pytest.fixture
def versions(monkeypatch):
    table = {}
    monkeypatch.setattr(environment, "installed_version", lambda *names: next((table[n] for n in names if n in table), None))
    monkeypatch.delenv("TF_USE_LEGACY_KERAS", raising=False)
    return table


def test_keras_compile_follows_the_keras_behind_tf_keras(versions, monkeypatch):
    versions["tensorflow"] = "2.15.1"  # tf.keras is Keras 2
    [finding] = own("TFP502", TF_KERAS_COMPILE)[1]
    assert finding.severity is Severity.HINT and "model.compile()" in finding.message
    versions["tensorflow"] = "2.21.0"  # tf.keras is Keras 3: jit_compile="auto"
    assert own("TFP502", TF_KERAS_COMPILE)[1] == []
    versions["tf-keras"] = "2.21.0"
    monkeypatch.setenv("TF_USE_LEGACY_KERAS", "1")
    assert len(own("TFP502", TF_KERAS_COMPILE)[1]) == 1


def test_keras_compile_configured_version_wins(versions):
    versions["tensorflow"] = "2.21.0"
    assert len(own("TFP502", TF_KERAS_COMPILE, {"kerasVersion": "2"})[1]) == 1
    versions["tensorflow"] = "2.15.0"
    assert own("TFP502", TF_KERAS_COMPILE, {"kerasVersion": "3"})[1] == []


def test_keras_compile_decides_per_model_in_a_file_mixing_keras_3_and_tf_keras(versions):
    versions["tensorflow"] = "2.21.0"
    source = """
    from tensorflow import keras
    import tf_keras

    def build():
        return keras.Sequential([keras.layers.Dense(1024), keras.layers.Dense(1)])

    keras3_model = build()
    keras3_model.compile(optimizer="adam", loss="mse")
    keras3_model.fit(train_ds, epochs=10)
    keras2_model = tf_keras.Sequential([tf_keras.layers.Dense(1024), tf_keras.layers.Dense(1)])
    keras2_model.compile(optimizer="adam", loss="mse")
    keras2_model.fit(train_ds, epochs=10)
    """
    [finding] = own("TFP502", source)[1]
    assert finding.span.start.line + 1 == 11


def test_keras_compile_is_silent_on_the_legacy_package_and_explicit_jit(versions):
    versions["tensorflow"] = "2.15.0"
    legacy = """
    from tensorflow.python.keras.models import Sequential
    from tensorflow.python.keras.layers import Dense
    model = Sequential([Dense(1)])
    model.compile("adam", "mse")
    model.fit(train_ds, epochs=10)
    """
    assert own("TFP502", legacy)[1] == []
    assert own("TFP502", TF_KERAS_COMPILE.replace('loss="mse"', 'loss="mse", jit_compile=False'))[1] == []
    assert own("TFP502", TF_KERAS_COMPILE.replace('loss="mse"', "**options"))[1] == []


def test_keras_compile_fix_adds_jit_compile_keeping_layout(versions):
    versions["tensorflow"] = "2.15.0"
    source = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1024), tf.keras.layers.Dense(1)])
    model.compile(
        optimizer="adam",
        loss="mse",  # regression
    )
    model.fit(train_ds, epochs=10)
    """
    assert fixed("TFP502", source).endswith(
        'model.compile(\n    optimizer="adam",\n    loss="mse",  # regression\n    jit_compile=True,\n)\nmodel.fit(train_ds, epochs=10)\n'
    )
