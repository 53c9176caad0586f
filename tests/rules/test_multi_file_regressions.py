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
