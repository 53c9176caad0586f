"""Regressions found on real code (tensorflow/examples, addons, agents; Apache-2.0) that need
more than one file. The one-file cases are cells of the rules' fixture files
(tests/rules/fixtures/TFP103.py ...), with the real file's path as ``path=`` and what the other
rules report as ``others=``."""
import textwrap

from tfperf_lsp.engine import analyze


def test_padded_batches_built_in_an_imported_module_of_the_folder(tmp_path):
    """The dataset is padded in dataset.py, the step is in train.py (tutorial repositories)."""
    (tmp_path / "dataset.py").write_text(
        "import tensorflow as tf\n\ndef make(lines):\n    return tf.data.Dataset.from_tensor_slices(lines).padded_batch(32)\n"
    )
    train = tmp_path / "train.py"
    code = textwrap.dedent(
        """\
        import tensorflow as tf
        from dataset import make

        @tf.function
        def train_step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

        for x in make(lines):
            train_step(x)
        """
    )
    train.write_text(code)
    codes = sorted(f.code for f in analyze(code, str(train)).findings)
    assert codes == ["TFP103"]  # retraces per length; and no XLA advice (it would compile per length)


_TRAIN_WITH_AN_IMPORTED_MODEL = """\
import tensorflow as tf
from modules.models import build_model

model = build_model()
optimizer = tf.keras.optimizers.Adam()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


for epoch in range(100):
    for x, y in dataset:
        loss = train_step(x, y)
        print(loss.numpy())
"""


def _train_beside(tmp_path, builder_body: str) -> list[str]:
    from tfperf_lsp.analysis.workspace import WorkspaceIndex

    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "__init__.py").write_text("")
    (tmp_path / "modules" / "models.py").write_text(
        "import tensorflow as tf\n\n\ndef build_model():\n" + textwrap.indent(builder_body, "    "))
    train = tmp_path / "train.py"
    train.write_text(_TRAIN_WITH_AN_IMPORTED_MODEL)
    analysis = analyze(_TRAIN_WITH_AN_IMPORTED_MODEL, str(train), workspace=WorkspaceIndex([str(tmp_path)]))
    return sorted(f.code for f in analysis.findings)


def test_a_step_through_a_pretrained_network_built_in_another_module(tmp_path):
    """retinaface-tf2: ``RetinaFaceModel`` (modules/models.py) sits on keras.applications'
    ResNet50, whose convolutions set the pace: no XLA hint, no per-step wait hint."""
    codes = _train_beside(tmp_path, textwrap.dedent("""\
        def backbone(x):
            return tf.keras.applications.ResNet50(include_top=False, weights="imagenet")(x)
        inputs = tf.keras.Input([224, 224, 3])
        return tf.keras.Model(inputs, tf.keras.layers.Dense(4)(backbone(inputs)))
        """))
    assert "TFP501" not in codes and "TFP405" not in codes


def test_a_step_through_a_network_built_from_scratch_in_another_module(tmp_path):
    codes = _train_beside(tmp_path, textwrap.dedent("""\
        inputs = tf.keras.Input([8])
        return tf.keras.Model(inputs, tf.keras.layers.Dense(4)(inputs))
        """))
    assert "TFP501" in codes and "TFP405" in codes
