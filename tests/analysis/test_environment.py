import pytest

from tfperf_lsp.analysis import environment
from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.config import Settings


def facts(code):
    source = SourceText(code)
    return ModuleFacts(source.parse(), source)


@pytest.fixture
def versions(monkeypatch):
    table = {}

    def fake(*names):
        return next((table[n] for n in names if n in table), None)

    monkeypatch.setattr(environment, "installed_version", fake)
    return table


def test_tf_keras_follows_the_tensorflow_version(versions, monkeypatch):
    monkeypatch.delenv("TF_USE_LEGACY_KERAS", raising=False)
    code = "import tensorflow as tf\nmodel = tf.keras.Sequential()\n"
    versions["tensorflow-cpu"] = "2.21.0"
    assert environment.keras_major(facts(code)) == 3
    versions["tensorflow-cpu"] = "2.15.1"
    assert environment.keras_major(facts(code)) == 2


def test_legacy_keras_switch(versions, monkeypatch):
    versions.update({"tensorflow": "2.21.0", "tf-keras": "2.21.0"})
    monkeypatch.setenv("TF_USE_LEGACY_KERAS", "1")
    assert environment.keras_major(facts("import tensorflow as tf\n")) == 2


def test_explicit_imports_and_configuration(versions):
    versions["keras"] = "3.15.1"
    assert environment.keras_major(facts("import keras\n")) == 3
    assert environment.keras_major(facts("import tf_keras as keras\n")) == 2
    assert environment.keras_major(facts("from tensorflow.python.keras import layers\n")) == 2
    assert environment.keras_major(facts("import keras\n"), Settings(keras_version="2")) == 2
    assert environment.keras_major(facts("import numpy\n")) is None


def test_real_environment_answers_without_importing_tensorflow():
    import subprocess
    import sys

    code = "import sys\nfrom tfperf_lsp.analysis import environment\nfrom tfperf_lsp.analysis.facts import ModuleFacts\n"
    out = subprocess.run(
        [sys.executable, "-c", code + "from tfperf_lsp.analysis.source import SourceText\n"
         "s = SourceText('import tensorflow as tf\\n'); environment.keras_major(ModuleFacts(s.parse(), s))\n"
         "print('tensorflow' in sys.modules)"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert out == "False"
