"""tf.data rewrites (catalog D1-D5) of examples/input_pipeline.py and XLA claims (X1, X2, X4, R7)
of examples/xla.py, checked under TensorFlow.

Tolerances: deterministic tf.data rewrites must give the same elements (images: rtol=1e-6,
atol=1e-6 since resize on a batch and on single images may differ in the last bit; labels and
uint8 images: exact). XLA vs graph: rtol=1e-5, atol=1e-6 (catalog X1 measured a relative
difference of 7.7e-6 on a train step; fusion changes rounding).
"""
import time

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

pytestmark = pytest.mark.tf


def collect(dataset):
    images, labels = [], []
    for image_batch, label_batch in dataset:
        images.append(np.asarray(image_batch))
        labels.append(np.asarray(label_batch))
    return np.concatenate(images), np.concatenate(labels)


# ---------------------------------------------------------------------------------------------
# tf.data
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def ip(load_example):
    return load_example("input_pipeline")


def test_d1_d3_d4_eval_rewrite_gives_the_same_elements(ip):
    slow_images, slow_labels = collect(ip.make_eval_dataset_slow())      # map, batch
    fast_images, fast_labels = collect(ip.make_eval_dataset_fast())      # batch, parallel map, cache
    assert slow_images.shape == (ip.NUM_IMAGES, 48, 48, 3)
    np.testing.assert_array_equal(slow_labels, fast_labels)               # D1: order kept
    np.testing.assert_allclose(slow_images, fast_images, rtol=1e-6, atol=1e-6)  # D3: batched map equal


def test_d4_cache_replays_the_first_epoch(ip):
    fast = ip.make_eval_dataset_fast()
    first, _ = collect(fast)
    second, _ = collect(fast)  # served from the cache
    np.testing.assert_array_equal(first, second)


def test_d4_trap_caching_random_augmentation_freezes_it(ip):
    # Two epochs through one iterator (repeat(2)), so the random stream continues between epochs
    # even when a global seed is set (re-creating the iterator would restart a seeded stream).
    n = 64
    base = tf.data.Dataset.from_tensor_slices((ip.images[:n], ip.labels[:n])).batch(ip.BATCH_SIZE)
    cached, _ = collect(base.map(ip.augment).cache().repeat(2))
    np.testing.assert_array_equal(cached[:n], cached[n:])  # cached: the "random" augmentation repeats
    uncached, _ = collect(base.map(ip.augment).repeat(2))
    assert not np.array_equal(uncached[:n], uncached[n:])  # uncached: a new draw every epoch


def test_d5_generator_and_py_function_equal_tensor_slices(ip):
    ref_images, ref_labels = collect(ip.make_in_memory_dataset())
    for make in (ip.make_generator_dataset, ip.make_py_function_dataset):
        images, labels = collect(make())
        np.testing.assert_array_equal(images, ref_images)
        np.testing.assert_array_equal(labels, ref_labels)


# ---------------------------------------------------------------------------------------------
# XLA
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def xl(load_example):
    return load_example("xla")


def test_x1_jit_compile_gives_the_same_numbers(xl):
    v = tf.random.normal([4096], seed=1)
    np.testing.assert_allclose(xl.gelu_tanh(v).numpy(), xl.gelu_tanh_xla(v).numpy(), rtol=1e-5, atol=1e-6)
    # R7: the deprecated experimental_compile=True still compiles and agrees
    np.testing.assert_allclose(xl.gelu_tanh_legacy_flag(v).numpy(), xl.gelu_tanh_xla(v).numpy(),
                               rtol=1e-5, atol=1e-6)
    # the same train step with and without XLA, from the same weights
    xl.xla_model.set_weights(xl.model.get_weights())
    x, y = next(iter(xl.dataset))
    np.testing.assert_allclose(float(xl.train_step(x, y)), float(xl.train_step_xla(x, y)), rtol=1e-5)


def test_x1_trap_numpy_function_cannot_be_jit_compiled(xl):
    x, y = next(iter(xl.dataset))
    loss, metric = xl.train_step_with_numpy_metric(x, y)  # fine as a plain graph
    assert np.isfinite(float(metric))
    jitted = tf.function(xl.train_step_with_numpy_metric.python_function, jit_compile=True)
    with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.UnimplementedError)):
        jitted(x, y)


def test_x2_trap_keras3_compile_defaults_to_auto(xl):
    import inspect

    import keras

    assert inspect.signature(keras.Model.compile).parameters["jit_compile"].default == "auto"
    xl.keras3_model.fit(xl.features[:64], xl.targets[:64], batch_size=32, epochs=1, verbose=0)
    if not tf.config.list_physical_devices("GPU"):
        assert xl.keras3_model.jit_compile is False  # "auto" resolves to no XLA on a CPU


def test_x4_jit_function_compiles_per_shape(xl):
    outs = xl.encode_variable_lengths((16, 24, 32, 40))
    assert xl.masked_mean.experimental_get_tracing_count() == 2  # reduce_retracing: traces bounded
    fixed = xl.encode_bucketed((16, 24, 32, 40))
    assert xl.masked_mean_bucketed.experimental_get_tracing_count() == 1
    assert [tuple(o.shape) for o in outs] == [tuple(f.shape) for f in fixed] == [(4,)] * 4

    # ... yet XLA compiles again at every new shape: a call at a new length costs far more than a
    # repeated call at a known length (median of 5 of each).
    def timed(length):
        tokens, mask = tf.random.normal([4, length]), tf.ones([4, length])
        start = time.perf_counter()
        xl.masked_mean(tokens, mask).numpy()
        return time.perf_counter() - start

    new = [timed(50 + i) for i in range(5)]        # lengths never seen: one XLA compile each
    known = [timed(16) for _ in range(5)]          # already compiled
    assert np.median(new) > 3 * np.median(known), (new, known)
    print("X4 new-shape vs known-shape call seconds:", np.median(new), np.median(known))
    assert xl.masked_mean.experimental_get_tracing_count() == 2  # no retrace behind that cost


def test_x4_bucketing_gives_the_same_means(xl):
    tokens, mask = tf.random.normal([4, 24], seed=3), tf.ones([4, 24])
    padding = [[0, 0], [0, xl.BUCKET_LENGTH - 24]]
    np.testing.assert_allclose(xl.masked_mean(tokens, mask).numpy(),
                               xl.masked_mean_bucketed(tf.pad(tokens, padding), tf.pad(mask, padding)).numpy(),
                               rtol=1e-5, atol=1e-6)
