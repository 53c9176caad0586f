"""One regression case per class of mistake found on real code (tensorflow/examples, addons,
agents; Apache-2.0), a few lines adapted from the real file, which each case names. Each must stay
silent (or give exactly the findings listed); each miss found there is a positive case."""
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
    pytest.param(  # tensorflow/addons tensorflow_addons/layers/spatial_pyramid_pooling.py
        "spatial_pyramid_pooling.py",
        """
        import tensorflow as tf

        class SpatialPyramidPooling2D(tf.keras.layers.Layer):
            def compute_output_shape(self, input_shape):
                pooled_shape = 0
                for bin in self.bins:
                    pooled_shape += tf.reduce_prod(bin)
                return tf.TensorShape([input_shape[0], pooled_shape, input_shape[-1]])
        """, [], id="TFP402-compute-output-shape-runs-once"),
    # ---------------------------------------------------------------- 'called repeatedly' guessed wrong
    pytest.param(  # tensorflow/examples lite/examples/recommendation/ml/data/example_generation_movielens.py
        "example_generation_movielens.py",
        """
        import tensorflow as tf

        def generate_movie_genres(movie):
            genres = [tf.compat.as_bytes(g) for g in movie["genres"]]
            genres = [tf.compat.as_bytes(g.lower()) for g in genres]
            return genres

        def generate_examples(movies):
            return [generate_movie_genres(m) for m in movies]
        """, [], id="TFP303-not-tensorflow-ops"),
    pytest.param(  # tensorflow/addons tensorflow_addons/image/color_ops.py (a library function)
        "tensorflow_addons/image/color_ops.py",
        """
        import tensorflow as tf

        def _scale_channel(image, channel):
            image = tf.cast(image[:, :, channel], tf.int32)
            histo = tf.histogram_fixed_width(image, [0, 255], nbins=256)
            nonzero = tf.where(tf.not_equal(histo, 0))
            step = (tf.reduce_sum(histo) - tf.reduce_sum(tf.gather(histo, nonzero[-1]))) // 255
            lut = (tf.cumsum(histo) + (step // 2)) // tf.maximum(step, 1)
            return tf.cast(tf.gather(tf.clip_by_value(lut, 0, 255), image), tf.uint8)

        def equalize_image(image):
            return tf.stack([_scale_channel(image, c) for c in range(image.shape[-1])], -1)
        """, [], id="TFP303-library-function-short-loop"),
    pytest.param(  # a Keras functional builder (tensorflow/examples efficientdet efficientdet_arch.py style)
        "efficientdet_arch.py",
        """
        import tensorflow as tf

        def box_net(images, level_size):
            inputs = tf.keras.Input(shape=(None, None, 3))
            x = inputs
            for i in range(level_size):
                x = tf.keras.layers.Conv2D(64, 3, padding="same")(x)
                x = tf.nn.swish(tf.keras.layers.BatchNormalization()(x))
                x = tf.nn.relu(x) + tf.nn.sigmoid(x) * tf.nn.tanh(x)
            return tf.keras.Model(inputs, x)

        for level in range(8):
            box_net(None, level)
        """, [], id="TFP303-keras-functional-builder"),
    # ---------------------------------------------------------------- correct idioms
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
    pytest.param(  # tensorflow/agents tf_agents/bandits/agents/exp3_agent.py
        "exp3_agent.py",
        """
        import tensorflow as tf

        def selective_sum(values, partitions, num_partitions):
            partitioned_values = tf.dynamic_partition(values, partitions, num_partitions)
            return tf.stack([tf.reduce_sum(partition) for partition in partitioned_values])
        """, [], id="TFP403-dynamic-partition-pieces"),
    pytest.param(  # tensorflow/addons tensorflow_addons/losses/contrastive.py (a library loss)
        "tensorflow_addons/losses/contrastive.py",
        """
        import tensorflow as tf

        @tf.function
        def contrastive_loss(y_true, y_pred, margin=1.0):
            y_true = tf.cast(y_true, y_pred.dtype)
            return y_true * tf.math.square(y_pred) + (1.0 - y_true) * tf.math.square(tf.math.maximum(margin - y_pred, 0.0))
        """, [], id="TFP501-library-function-shapes-unknown"),
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
    # ---------------------------------------------------------------- seen on other repositories (yolov3-tf2, yolov4, tutorials)
    pytest.param(  # a main() that builds a functional model, then trains it eagerly (hunglc007/tensorflow-yolov4-tflite train.py)
        "train.py",
        """
        import tensorflow as tf

        def main():
            inputs = tf.keras.Input([416, 416, 3])
            model = tf.keras.Model(inputs, tf.keras.layers.Conv2D(8, 3)(inputs))
            optimizer = tf.keras.optimizers.Adam()
            for epoch in range(10):
                for image, target in dataset:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(image, training=True) - target))
                    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

        main()
        """, ["TFP301"], id="builder-and-trainer-is-not-a-builder"),
    pytest.param(  # two tapes in one with statement (a GAN step): one finding
        "gan.py",
        """
        import tensorflow as tf

        for images in dataset:
            with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
                fake = generator(noise, training=True)
                gen_loss, disc_loss = losses(discriminator(images), discriminator(fake))
            g_opt.apply_gradients(zip(gen_tape.gradient(gen_loss, gv), gv))
            d_opt.apply_gradients(zip(disc_tape.gradient(disc_loss, dv), dv))
        """, ["TFP301"], id="TFP301-one-finding-per-step"),
    pytest.param(  # yolov3-tf2 train.py: an eager debugging branch beside fit()
        "train.py",
        """
        import tensorflow as tf

        if FLAGS.mode == "eager_tf":
            for epoch in range(10):
                for images, labels in train_dataset:
                    with tf.GradientTape() as tape:
                        loss = loss_fn(labels, model(images, training=True))
                    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        else:
            model.fit(train_dataset, epochs=10)
        """, [], id="TFP301-deliberately-eager-branch"),
    pytest.param(  # a periodic eager model call, and one per epoch beside the step loop
        "sample.py",
        """
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(8)])
        for epoch in range(100):
            for step, batch in enumerate(dataset):
                train_step(batch)
                if step % 100 == 0:
                    preview = model(batch)
            epoch_preview = model(seed)
        """, [], id="TFP302-periodic-and-per-epoch"),
    pytest.param(  # printing the loss of an eager step costs nothing more
        "eager_loop.py",
        """
        import tensorflow as tf

        for step, (x, y) in enumerate(dataset):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            print(float(loss))
        """, ["TFP301"], id="TFP405-host-sync-after-an-eager-step"),
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
    pytest.param(  # the step written in main()'s loop
        "train.py",
        """
        import tensorflow as tf

        def main():
            for x, y in dataset:
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

        main()
        """, ["TFP301"], id="miss-TFP301-step-inline-in-main"),
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
