"""examples/keras_pitfalls.py and seed004 after every TFP8xx fix (safe and unsafe): valid Python,
the answer key's rewrites made, and under TensorFlow the same predictions and weights."""
import importlib.util
import pathlib

import pytest

from tests.rules.helpers import fixed

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
CODES = {"TFP801", "TFP802", "TFP804", "TFP805"}


def fixed_text(name):
    return fixed((EXAMPLES / name).read_text(encoding="utf-8"), CODES)


def test_keras_pitfalls_fixed():
    text = fixed_text("keras_pitfalls.py")
    compile(text, "keras_pitfalls.py", "exec")
    assert "predictions.append(model(sample[None, :], training=False).numpy())" in text  # K1
    assert "from tensorflow.keras.models import Sequential as LegacySequential" in text  # K4 (Keras 3 here)
    assert 'loss="mse", steps_per_execution=32)' in text  # K5
    assert "loss = model.train_on_batch(" in text  # K2: hint only


def test_seed004_fixed():
    text = fixed_text("seed004_tf2_vs_tf1_keras_training.py")
    compile(text, "seed004", "exec")
    # the file imports standalone keras (Keras 3): the legacy imports move there
    assert "from keras.layers import Dense as LegacyDense" in text
    assert "from keras import optimizers as legacy_optimizers" in text
    assert "preds = model_small.predict(X, verbose=0)" in text  # K1 without a visible size: hint only


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.tf
def test_keras_pitfalls_fixed_gives_the_same_numbers(tmp_path):
    import numpy as np

    path = tmp_path / "keras_pitfalls_fixed.py"
    path.write_text(fixed_text("keras_pitfalls.py"), encoding="utf-8")
    before, after = _load(EXAMPLES / "keras_pitfalls.py", "_kp_before"), _load(path, "_kp_after")
    samples = before.x_train[:6]
    model = before.build_mlp()
    np.testing.assert_allclose(before.predict_one_by_one(model, samples), after.predict_one_by_one(model, samples),
                               rtol=1e-5, atol=1e-6)  # K1: predict vs model(x) on one row
    slow = before.train_small_model(before.x_train, before.y_train, epochs=1)
    fast = after.train_small_model(after.x_train, after.y_train, epochs=1)
    assert fast.steps_per_execution == 32
    for a, b in zip(slow.get_weights(), fast.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)  # K5: same SGD steps
    legacy = after.build_legacy_mlp()  # K4: the former legacy model is now a Keras 3 model
    assert isinstance(legacy, after.keras.Model)
