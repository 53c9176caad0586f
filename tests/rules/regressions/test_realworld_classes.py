"""One regression case per class of mistake found on real code (tensorflow/examples, addons,
agents; Apache-2.0), a few lines adapted from the real file, which each case names. Each must stay
silent (or give exactly the findings listed); each miss found there is a positive case.
The cases of the graph and vectorize rules (TFP3xx, TFP4xx) are cells of their fixture files
(tests/rules/fixtures/TFP301.py ...), with the path of the real file as ``path=``."""
import textwrap

import pytest

from tfperf_lsp.engine import analyze

CASES = [
    # ---------------------------------------------------------------- correct idioms
    pytest.param(  # tensorflow/examples model_maker core/task/model_spec/text_spec.py
        "text_spec.py",
        """
        import tensorflow as tf

        @tf.function
        def predict_step(iterator):
            return strategy.run(replicated_step, args=(next(iterator),))
        """, [], id="TFP202-next-on-a-tf-data-iterator"),
    pytest.param(  # a loop that builds a returned Python list inside a tf.function
        "pyramid.py",
        """
        import tensorflow as tf

        @tf.function
        def pyramid(x, levels):
            outputs = []
            for level in range(levels):
                x = tf.nn.avg_pool2d(x, 2, 2, "VALID")
                outputs.append(x)
            return outputs
        """, [], id="TFP107-list-building-loop"),
    pytest.param(  # a train step fed padded batches (XLA would compile per length)
        "nmt_train.py",
        """
        import tensorflow as tf

        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

        ds = tf.data.Dataset.from_generator(gen, output_signature=spec).padded_batch(32)
        for x, y in ds:
            train_step(x, y)
        """, ["TFP103"], id="TFP501-padded-batches-and-TFP103-retraces-per-length"),
    # ---------------------------------------------------------------- misses, now found
    pytest.param(
        "step.py",
        """
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            tf.clip_by_norm(grads[0], 15)
            return grads
        """, ["TFP204"], id="miss-TFP204-discarded-clip"),
    pytest.param(
        "index.py",
        """
        import tensorflow as tf

        class Index:
            def add(self, batch):
                self.vectors = tf.concat([self.vectors, batch], axis=0)

            @tf.function
            def _search(self, vectors, query):
                return tf.matmul(query, vectors, transpose_b=True)

            def query(self, q):
                return self._search(self.vectors, q)
        """, ["TFP103"], id="miss-TFP103-growing-index-from-a-method"),
]


@pytest.mark.parametrize("path, code, expected", CASES)
def test_real_world_class(path, code, expected):
    findings = analyze(textwrap.dedent(code), path).findings
    assert sorted(f.code for f in findings) == sorted(expected), [f.message for f in findings]


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
