"""TFP801-TFP805 beyond their documented examples: Keras 2 vs 3, preconditions of fixes, traps."""
import pytest

from tfperf_lsp.config import Settings
from tfperf_lsp.model import Severity
from tfperf_lsp.rules.keras import _keras

from tests.rules.helpers import findings, fixed

KERAS2 = Settings(keras_version="2")
KERAS3 = Settings(keras_version="3")


# ---------------------------------------------------------------------- TFP804: Keras 2 vs 3
@pytest.mark.parametrize(
    "settings, extra_import, expected",
    [
        (KERAS3, "", "from tensorflow.keras.layers import Dense"),
        (KERAS3, "import keras\n", "from keras.layers import Dense"),  # the file already uses keras
        (KERAS2, "", "from tf_keras.layers import Dense"),
    ],
)
def test_legacy_import_target_follows_the_keras_version(settings, extra_import, expected, monkeypatch):
    monkeypatch.setattr(_keras, "tf_before_216", lambda: False)
    code = extra_import + "from tensorflow.python.keras.layers import Dense\n"
    assert expected in fixed(code, {"TFP804"}, settings)


def test_keras2_on_old_tensorflow_uses_tf_keras_namespace_of_tensorflow(monkeypatch):
    import tfperf_lsp.rules.keras.legacy_keras_import as rule

    monkeypatch.setattr(rule, "tf_before_216", lambda: True)
    assert "from tensorflow.keras import backend as K" in fixed("from tensorflow.python.keras import backend as K\n", {"TFP804"}, KERAS2)


@pytest.mark.parametrize(
    "code, keras3, keras2",
    [
        ("from tensorflow.python import keras\n", "from tensorflow import keras\n", "import tf_keras as keras\n"),
        ("import tensorflow.python.keras as K\n", "from tensorflow import keras as K\n", "import tf_keras as K\n"),
        ("import tensorflow.python.keras.backend as K\n", None, "import tf_keras.backend as K\n"),
        ("from tensorflow.python.keras.layers import CuDNNLSTM\n", None, "from tf_keras.layers import CuDNNLSTM\n"),
    ],
)
def test_legacy_import_forms(code, keras3, keras2, monkeypatch):
    import tfperf_lsp.rules.keras.legacy_keras_import as rule

    monkeypatch.setattr(rule, "tf_before_216", lambda: False)
    [finding] = findings(code, "TFP804", KERAS3)
    if keras3 is None:
        assert finding.fix_title is None  # not one-to-one in Keras 3 (backend API, dropped layer)
    else:
        assert fixed(code, {"TFP804"}, KERAS3) == keras3
    assert fixed(code, {"TFP804"}, KERAS2) == keras2


def test_unknown_keras_version_gives_a_hint_without_fix(monkeypatch):
    monkeypatch.setattr(_keras, "tf_keras_major", lambda: None)
    [finding] = findings("from tensorflow.python.keras.layers import Dense\n", "TFP804")
    assert finding.fix_title is None and "tf_keras" in finding.message


def test_tf_keras_import_means_keras2_and_the_legacy_import_itself_does_not():
    assert _keras.target_keras(_facts("import tf_keras\nfrom tensorflow.python.keras import layers\n"), Settings()) == 2
    # the legacy import alone says nothing about the target: the environment decides
    legacy_only = _facts("from tensorflow.python.keras import layers\n")
    assert _keras.target_keras(legacy_only, Settings()) == _keras.tf_keras_major()


def _facts(code):
    import ast

    from tfperf_lsp.analysis.facts import ModuleFacts
    from tfperf_lsp.analysis.source import SourceText

    text = SourceText(code)
    return ModuleFacts(ast.parse(code), text)


# ---------------------------------------------------------------------- TFP801
MODEL = """
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(1)])
x = np.zeros((10, 4), dtype="float32")
"""


@pytest.mark.parametrize(
    "call, fixable",
    [
        ("model.predict(x[i:i + 1])", True),
        ("model.predict(np.expand_dims(x[i], 0), verbose=0)", True),
        ("model.predict(x[i].reshape(1, -1))", True),
        ("model.predict(x[i:i + 64])", False),  # more rows than predict's batch of 32
        ("model.predict(x[i:i + 1], batch_size=1)", False),
        ("model.predict(x[i:i + 1], callbacks=[])", False),
        ("model.predict(x)", False),
    ],
)
def test_predict_fix_needs_a_visibly_small_input_and_no_other_arguments(call, fixable):
    [finding] = findings(MODEL + f"for i in range(10):\n    out = {call}\n", "TFP801")
    assert bool(finding.fix_title) == fixable
    assert finding.severity == (Severity.WARNING if fixable else Severity.INFORMATION)


def test_multi_output_model_gets_no_fix():
    code = """
import numpy as np
import tensorflow as tf

inputs = tf.keras.Input(shape=(4,))
model = tf.keras.Model(inputs, [tf.keras.layers.Dense(1)(inputs), tf.keras.layers.Dense(2)(inputs)])
for row in np.zeros((3, 4)):
    out = model.predict(row[None, :], verbose=0)
"""
    [finding] = findings(code, "TFP801")
    assert finding.fix_title is None


def test_predict_traps_are_silent():
    code = """
import numpy as np
import tensorflow as tf
from sklearn.ensemble import RandomForestRegressor

forest = RandomForestRegressor().fit(np.zeros((4, 2)), np.zeros(4))
model = forest
for row in np.zeros((3, 2)):
    forest.predict(row[None, :])
    model.predict(row[None, :])  # a model-like name, but the file uses scikit-learn

@tf.function
def serve(net, x):
    return [net.predict(x[i:i + 1]) for i in range(2)]
"""
    assert findings(code, "TFP801") == []


def test_predict_rewrite_keeps_comments_inside_the_call():
    code = MODEL + """for i in range(10):
    out = model.predict(
        x[i:i + 1],  # one row
        verbose=0,
    )
"""
    after = fixed(code, {"TFP801"})
    assert "    out = model(\n        x[i:i + 1],  # one row\n        training=False,\n    ).numpy()\n" in after
    compile(after, "<fixed>", "exec")


# ---------------------------------------------------------------------- TFP802
def test_train_on_batch_needs_keras_and_a_loop():
    assert findings("for b in range(3):\n    thing.train_on_batch(b)\n", "TFP802") == []  # no Keras import
    code = "import tensorflow as tf\nmodel = tf.keras.Sequential()\nmodel.train_on_batch([[0.0]], [[0.0]])\n"
    assert findings(code, "TFP802") == []
    [finding] = findings("import keras\ndef go(m, xs):\n    for x in xs:\n        m.train_on_batch(x, x)\n", "TFP802")
    assert finding.severity == Severity.INFORMATION and finding.fix_title is None and "benchmark" in finding.message


# ---------------------------------------------------------------------- TFP805
SMALL = """
import numpy as np
from tensorflow import keras

def build():
    return keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8), keras.layers.Dense(1)])

model = build()
model.compile(
    optimizer="sgd",
    loss="mse",  # regression
)
"""


def test_steps_per_execution_fix_keeps_the_argument_layout():
    after = fixed(SMALL + "model.fit(np.zeros((8, 4)), np.zeros((8, 1)), verbose=0)\n", {"TFP805"})
    assert '    loss="mse",  # regression\n    steps_per_execution=32,\n)' in after


def test_fit_with_callbacks_gets_a_hint_and_no_fit_gets_nothing():
    [finding] = findings(SMALL + "model.fit(np.zeros((8, 4)), np.zeros((8, 1)), callbacks=[cb])\n", "TFP805")
    assert finding.fix_title is None and finding.severity == Severity.INFORMATION
    assert findings(SMALL + "model.evaluate(np.zeros((8, 4)), np.zeros((8, 1)))\n", "TFP805") == []


def test_recurrent_or_large_or_looped_layers_are_not_small():
    for layers in ("keras.layers.LSTM(8), keras.layers.Dense(1)", "keras.layers.Dense(512), keras.layers.Dense(1)"):
        code = SMALL.replace("keras.layers.Dense(8), keras.layers.Dense(1)", layers) + "model.fit(x, y)\n"
        assert findings(code, "TFP805") == [], layers


def test_models_containing_other_models_or_helpers_are_not_small():
    pretrained = """
import tensorflow as tf

def make():
    base = tf.keras.applications.MobileNetV2(include_top=False, weights=None)
    model = tf.keras.Sequential([base, tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(1)])
    model.compile("adam", "mse")
    return model

model = make()
model.fit(x, y)
"""
    helper = """
import tensorflow as tf

def block(x):
    return tf.keras.layers.Dense(8)(x)

def make():
    inputs = tf.keras.Input(shape=(4,))
    model = tf.keras.Model(inputs, block(inputs))
    model.compile("adam", "mse")
    model.fit(x, y)
"""
    assert findings(pretrained, "TFP805") == []
    assert findings(helper, "TFP805") == []
