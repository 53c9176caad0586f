"""The XLA rules' detection, silence and rewrites (no TensorFlow needed)."""
import textwrap

import pytest

from tests.rules.xla._helpers import fixed, own
from tfperf_lsp.analysis import environment
from tfperf_lsp.model import Severity


# ---------------------------------------------------------------------------------- TFP501
@pytest.mark.parametrize(
    "body",
    [
        "tf.print(loss)",
        "tf.strings.as_string(loss)",
        "tf.numpy_function(abs, [loss], tf.float32)",
        "tf.py_function(abs, [loss], tf.float32)",
        "tf.TensorArray(tf.float32, size=0, dynamic_size=True)",
    ],
)
def test_jit_candidate_is_silent_when_xla_cannot_compile_the_function(body):
    source = f"""
    import tensorflow as tf
    w = tf.Variable(1.0)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = x * w
        w.assign_sub(tape.gradient(loss, w))
        {body}
    """
    assert own("TFP501", source)[1] == []


def test_jit_candidate_sees_blockers_and_ops_in_local_helpers():
    source = """
    import tensorflow as tf

    def log(x):
        tf.print(x)

    def act(x):
        return 0.5 * x * (1.0 + tf.tanh(0.79 * (x + 0.04 * x * x * x)))

    @tf.function
    def noisy(x):
        log(x)
        return act(x)

    @tf.function
    def quiet(x):
        return act(x)

    for step in range(10):  # called repeatedly by this file (a library function alone is silent)
        noisy(tf.ones([4]))
        quiet(tf.ones([4]))
    """
    _, findings = own("TFP501", source)
    assert [f.span.start.line + 1 for f in findings] == [14]  # quiet's decorator
    assert "9 elementwise ops" in findings[0].message
    assert findings[0].severity is Severity.INFORMATION
    assert "benchmark" in findings[0].message and "slower" in findings[0].message


def test_jit_candidate_is_silent_for_small_functions_explicit_choices_and_keras_methods():
    source = """
    import tensorflow as tf
    from tensorflow import keras

    @tf.function
    def add(x, y):
        return x + y * 2.0

    @tf.function(jit_compile=False)
    def step(x, w):
        with tf.GradientTape() as tape:
            loss = x * w
        return tape.gradient(loss, w)

    class Net(keras.Model):
        @tf.function
        def train_step(self, data):
            with tf.GradientTape() as tape:
                loss = self(data)
            return tape.gradient(loss, self.trainable_variables)
    """
    assert own("TFP501", source)[1] == []


def test_jit_candidate_fix_extends_an_existing_decorator_call_and_keeps_comments():
    source = """
    import tensorflow as tf

    @tf.function(reduce_retracing=True)  # the train step
    def step(x, w):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(x * w)
        return tape.gradient(loss, w)
    """
    assert "@tf.function(reduce_retracing=True, jit_compile=True)  # the train step" in fixed("TFP501", source)


def test_jit_candidate_fix_is_unsafe_and_absent_for_seed_ignoring_random_ops():
    source = """
    import tensorflow as tf

    @tf.function
    def step(x, w):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.dropout(x, 0.5) * w)
        return tape.gradient(loss, w)
    """
    [finding] = own("TFP501", source)[1]
    assert finding.fix_title is None
    [finding] = own("TFP501", source.replace("tf.nn.dropout(x, 0.5)", "x"))[1]
    assert finding.fix_applicability == "unsafe"


# ---------------------------------------------------------------------------------- TFP502
TF_KERAS_COMPILE = """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
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
        return keras.Sequential([keras.layers.Dense(1)])

    keras3_model = build()
    keras3_model.compile(optimizer="adam", loss="mse")
    keras2_model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
    keras2_model.compile(optimizer="adam", loss="mse")
    """
    [finding] = own("TFP502", source)[1]
    assert finding.span.start.line + 1 == 10


def test_keras_compile_is_silent_on_the_legacy_package_and_explicit_jit(versions):
    versions["tensorflow"] = "2.15.0"
    legacy = """
    from tensorflow.python.keras.models import Sequential
    from tensorflow.python.keras.layers import Dense
    model = Sequential([Dense(1)])
    model.compile("adam", "mse")
    """
    assert own("TFP502", legacy)[1] == []
    assert own("TFP502", TF_KERAS_COMPILE.replace('loss="mse"', 'loss="mse", jit_compile=False'))[1] == []
    assert own("TFP502", TF_KERAS_COMPILE.replace('loss="mse"', "**options"))[1] == []


def test_keras_compile_fix_adds_jit_compile_keeping_layout(versions):
    versions["tensorflow"] = "2.15.0"
    source = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(
        optimizer="adam",
        loss="mse",  # regression
    )
    """
    assert fixed("TFP502", source).endswith(
        'model.compile(\n    optimizer="adam",\n    loss="mse",  # regression\n    jit_compile=True,\n)\n'
    )


# ---------------------------------------------------------------------------------- TFP503
def test_set_jit_late_moves_the_call_after_docstring_and_imports():
    source = '''
    """A script."""
    from __future__ import annotations

    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    tf.config.optimizer.set_jit("autoclustering")
    '''
    [finding] = own("TFP503", source)[1]
    assert "`Sequential` (line 6)" in finding.message and finding.fix_applicability == "unsafe"
    assert fixed("TFP503", source) == textwrap.dedent('''\
    """A script."""
    from __future__ import annotations

    import tensorflow as tf
    tf.config.optimizer.set_jit("autoclustering")

    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    ''')


def test_set_jit_late_after_a_tf_function_call():
    source = """
    import tensorflow as tf

    f = tf.function(lambda x: x * 2)
    f(tf.ones([2]))
    tf.config.optimizer.set_jit(True)
    """
    [finding] = own("TFP503", source)[1]
    assert "tf.function call `f`" in finding.message


def test_set_jit_late_is_silent_when_early_disabled_or_unknown():
    source = """
    import tensorflow as tf

    tf.config.optimizer.set_jit(True)
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    tf.config.optimizer.set_jit(False)
    tf.config.optimizer.set_jit(ENABLE)
    """
    assert own("TFP503", source)[1] == []


def test_set_jit_late_in_a_function_sees_module_code_above_its_def_only():
    late = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])

    def main():
        tf.config.optimizer.set_jit(True)
    """
    [finding] = own("TFP503", late)[1]
    assert finding.fix_title is None
    early = """
    import tensorflow as tf

    def main():
        tf.config.optimizer.set_jit(True)
        build()

    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    """
    assert own("TFP503", early)[1] == []


def test_set_jit_late_no_fix_when_another_set_jit_would_be_jumped():
    source = """
    import tensorflow as tf

    tf.config.optimizer.set_jit(False)
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    tf.config.optimizer.set_jit(True)
    """
    [finding] = own("TFP503", source)[1]
    assert finding.fix_title is None


# ---------------------------------------------------------------------------------- TFP504
def test_jit_varying_shapes_needs_a_jit_function_and_a_moving_shape():
    source = """
    import tensorflow as tf

    plain = tf.function(lambda x: tf.reduce_sum(x))
    fast = tf.function(lambda x: tf.reduce_sum(x), experimental_compile=True)
    data = tf.range(64.0)
    for n in [8, 16, 32]:
        plain(tf.zeros([n]))
        fast(tf.zeros([n]))
        fast(data[n:n + 8])
    """
    [finding] = own("TFP504", source)[1]
    assert finding.span.start.line + 1 == 8 and "`n`" in finding.message
    assert finding.fix_title is None


# ---------------------------------------------------------------------------------- TFP505
def test_experimental_compile_rename_on_a_call_form():
    source = """
    import tensorflow as tf

    square = tf.function(lambda x: x * x, experimental_compile=True)(tf.ones([2]))
    """
    assert "tf.function(lambda x: x * x, jit_compile=True)(tf.ones([2]))" in fixed("TFP505", source)
