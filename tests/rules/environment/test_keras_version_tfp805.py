"""TFP805 on standalone ``import keras`` without TensorFlow: silent unless the settings say Keras 3
(the multi-backend Keras 2.0-2.3 of older books has no ``steps_per_execution``)."""
from tfperf_lsp.config import Settings

from tests.rules.helpers import findings

CODE = """\
import keras
from keras import layers, models


def build_model():
    model = models.Sequential()
    model.add(layers.Dense(64, activation="relu", input_shape=(13,)))
    model.add(layers.Dense(1))
    model.compile(optimizer="rmsprop", loss="mse", metrics=["mae"])
    return model


for i in range(4):
    model = build_model()
    model.fit(partial_train_data, partial_train_targets, epochs=500, batch_size=1, verbose=0)
"""

def test_standalone_keras_of_unknown_version_is_silent():
    assert findings(CODE, "TFP805", Settings()) == []
    assert findings(CODE, "TFP805", Settings(keras_version="2")) == []


def test_standalone_keras_3_from_the_settings_is_reported():
    [finding] = findings(CODE, "TFP805", Settings(keras_version="3"))
    assert "steps_per_execution" in finding.message
