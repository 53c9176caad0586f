"""TFP804 with the Keras version of the environment: Keras 2 vs 3, old TensorFlow (the plain
flagged/silent/fix cases of the Keras rules are in tests/rules/fixtures/TFP8xx.py)."""
import pytest

from tfperf_lsp.config import Settings
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
    code = extra_import + "from tensorflow.python.keras.layers import Dense\n" + "layer = Dense(8)\n"
    assert expected in fixed(code, {"TFP804"}, settings)


def test_keras2_on_old_tensorflow_uses_tf_keras_namespace_of_tensorflow(monkeypatch):
    import tfperf_lsp.rules.keras.legacy_keras_import as rule

    monkeypatch.setattr(rule, "tf_before_216", lambda: True)
    code = "from tensorflow.python.keras import layers\nfrom tensorflow.python.keras import backend as K\n" \
           "layer = layers.Dense(8)\neps = K.epsilon()\n"
    assert "from tensorflow.keras import backend as K" in fixed(code, {"TFP804"}, KERAS2)


@pytest.mark.parametrize(
    "code, keras3, keras2, use",
    [
        ("from tensorflow.python import keras\n", "from tensorflow import keras\n", "import tf_keras as keras\n",
         "layer = keras.layers.Dense(8)\n"),
        ("import tensorflow.python.keras as K\n", "from tensorflow import keras as K\n", "import tf_keras as K\n",
         "layer = K.layers.Dense(8)\n"),
        ("import tensorflow.python.keras.models as M\nimport tensorflow.python.keras.backend as K\n", None,
         "import tf_keras.models as M\nimport tf_keras.backend as K\n", "model = M.Sequential()\neps = K.epsilon()\n"),
        ("from tensorflow.python.keras.layers import CuDNNLSTM\n", None, "from tf_keras.layers import CuDNNLSTM\n",
         "layer = CuDNNLSTM(8)\n"),
    ],
)
def test_legacy_import_forms(code, keras3, keras2, use, monkeypatch):
    import tfperf_lsp.rules.keras.legacy_keras_import as rule

    monkeypatch.setattr(rule, "tf_before_216", lambda: False)
    [finding] = findings(code + use, "TFP804", KERAS3)
    if keras3 is None:
        assert finding.fix_title is None  # not one-to-one in Keras 3 (backend API, dropped layer): no import of the file moves
    else:
        assert fixed(code + use, {"TFP804"}, KERAS3) == keras3 + use
    assert fixed(code + use, {"TFP804"}, KERAS2) == keras2 + use


def test_an_unused_import_is_silent_but_a_re_export_is_not(monkeypatch):
    import tfperf_lsp.rules.keras.legacy_keras_import as rule

    monkeypatch.setattr(rule, "tf_before_216", lambda: False)
    code = "from tensorflow.python.keras.layers import Dense\n"
    assert findings(code, "TFP804", KERAS3) == []  # a leftover import builds nothing
    assert len(findings(code + "__all__ = ['Dense']\n", "TFP804", KERAS3)) == 1  # other files import it from here


def test_unknown_keras_version_gives_a_hint_without_fix(monkeypatch):
    monkeypatch.setattr(_keras, "tf_keras_major", lambda: None)
    [finding] = findings("from tensorflow.python.keras.layers import Dense\nlayer = Dense(8)\n", "TFP804")
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
