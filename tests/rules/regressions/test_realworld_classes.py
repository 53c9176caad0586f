"""One regression case per class of mistake found on real code (tensorflow/examples, addons,
agents; Apache-2.0), a few lines adapted from the real file, which each case names. Each must stay
silent (or give exactly the findings listed); each miss found there is a positive case.
The cases of the graph and vectorize rules (TFP3xx, TFP4xx) are cells of their fixture files
(tests/rules/fixtures/TFP301.py ...), with the path of the real file as ``path=``."""
import textwrap

import pytest

from tfperf_lsp.engine import analyze

CASES = [
    # ---------------------------------------------------------------- code that is not hot
    pytest.param(  # tensorflow/addons tensorflow_addons/optimizers/tests/weight_decay_optimizers_test.py
        "tensorflow_addons/optimizers/tests/weight_decay_optimizers_test.py",
        """
        import numpy as np
        import tensorflow as tf

        def test_keras_fit():
            model = tf.keras.Sequential([tf.keras.Input(shape=(1,)), tf.keras.layers.Dense(2)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(np.ones((4, 1)), np.ones((4, 2)), epochs=2)
        """, [], id="TFP805-small-model-in-a-test"),
    pytest.param(  # tensorflow/agents tf_agents/train/utils/test_utils.py (a test helper module)
        "tf_agents/train/utils/test_utils.py",
        """
        import tensorflow as tf

        def create_dataset(experience):
            ds = tf.data.Dataset.from_tensors(experience).repeat()
            return ds.map(lambda x: tf.random.shuffle(x))
        """, [], id="TFP701-test-helper-module"),
    # ---------------------------------------------------------------- correct idioms
    pytest.param(  # tensorflow/examples model_maker core/task/model_spec/text_spec.py
        "text_spec.py",
        """
        import tensorflow as tf

        @tf.function
        def predict_step(iterator):
            return strategy.run(replicated_step, args=(next(iterator),))
        """, [], id="TFP202-next-on-a-tf-data-iterator"),
    pytest.param(  # tensorflow/addons tensorflow_addons/utils/types.py
        "tensorflow_addons/utils/types.py",
        """
        import tensorflow as tf
        from packaging.version import Version

        if Version(tf.__version__).release >= Version("2.13").release:
            from keras.src.engine.keras_tensor import KerasTensor
        else:
            from tensorflow.python.keras.engine.keras_tensor import KerasTensor
        """, [], id="TFP804-version-gated-fallback"),
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
    # ---------------------------------------------------------------- cost that does not matter
    pytest.param(  # tensorflow/agents tf_agents/replay_buffers/episodic_replay_buffer.py
        "episodic_replay_buffer.py",
        """
        import tensorflow as tf

        def as_dataset(ds, sample_batch_size, num_steps):
            shards = tf.data.Dataset.range(sample_batch_size).map(lambda i: ds.shard(sample_batch_size, i))
            return shards.interleave(lambda d: d).batch(sample_batch_size)
        """, [], id="TFP701-map-returns-datasets"),
    pytest.param(  # tensorflow/agents tf_agents/utils/example_encoding_dataset.py
        "example_encoding_dataset.py",
        """
        import tensorflow as tf

        def load_dataset(files, decoder):
            dataset = tf.data.TFRecordDataset(files).map(decoder.decode).batch(2)
            return dataset
        """, [], id="TFP702-TFP703-library-loader"),
    # ---------------------------------------------------------------- misses, now found
    pytest.param(  # tensorflow/examples tensorflow_examples/profiling/imagenet_preprocessing_ineffecient_input_pipeline.py
        "imagenet_preprocessing_ineffecient_input_pipeline.py",
        """
        import tensorflow as tf

        def input_fn(filenames):
            dataset = tf.data.Dataset.from_tensor_slices(filenames)
            dataset = dataset.interleave(tf.data.TFRecordDataset)
            return dataset
        """, ["TFP701"], id="miss-TFP701-serial-interleave"),
    pytest.param(
        "detect.py",
        """
        import tensorflow as tf

        model = tf.keras.models.load_model("detector.keras")
        while True:
            ok, frame = capture.read()
            scores = model.predict(frame[None])
        """, ["TFP801"], id="miss-TFP801-predict-per-frame"),
    pytest.param(
        "rounds.py",
        """
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer="adam", loss="mse")
        for round_ in range(20):
            model.fit(x, y, epochs=1, verbose=0)
        """, ["TFP806"], id="miss-TFP806-fit-in-loop"),
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
        "epochs.py",
        """
        import tensorflow as tf

        def make_dataset(files):
            return tf.data.TFRecordDataset(files).shuffle(50_000).batch(64)

        for epoch in range(10):
            ds = make_dataset(files)
            for batch in ds:
                step(batch)
        """, ["TFP706"], id="miss-TFP706-dataset-rebuilt-per-epoch"),
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
