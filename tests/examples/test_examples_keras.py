"""The Keras rewrites of examples/keras_pitfalls.py and examples/eager_training.py give the same
numbers as the original code (catalog K1-K5, G1), checked under TensorFlow/Keras 3.

Tolerances: predictions rtol=1e-5, atol=1e-6; weights after identical SGD training
rtol=1e-5, atol=1e-6 (same batches, same order, float32; only kernel dispatch differs).
"""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

pytestmark = pytest.mark.tf


@pytest.fixture
def kp(load_example):
    return load_example("keras_pitfalls")


def assert_same_weights(a, b):
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-5, atol=1e-6)


def test_k1_predict_loop_equals_batched_and_graph_call(kp):
    model = kp.build_mlp()
    samples = kp.x_train[:8]
    loop = kp.predict_one_by_one(model, samples)
    assert loop.shape == (8, 1)
    np.testing.assert_allclose(loop, kp.predict_batched(model, samples), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loop, kp.predict_with_graph_call(model, samples), rtol=1e-5, atol=1e-6)


def test_k2_train_on_batch_loop_equals_fit_without_shuffle(kp):
    a = kp.compile_for_train_on_batch(kp.build_mlp(seed=1))
    b = kp.compile_for_fit(kp.build_mlp(seed=1), steps_per_execution=1)
    assert_same_weights(a, b)  # same start
    kp.train_with_train_on_batch(a, kp.x_train, kp.y_train, epochs=2)
    kp.train_with_fit(b, kp.x_train, kp.y_train, epochs=2)
    assert_same_weights(a, b)
    # and the default fit() shuffles, which is why the rewrite needs shuffle=False
    c = kp.compile_for_fit(kp.build_mlp(seed=1), steps_per_execution=1)
    c.fit(kp.x_train, kp.y_train, batch_size=kp.BATCH_SIZE, epochs=2, verbose=0)
    assert not all(np.allclose(wa, wc, rtol=1e-5, atol=1e-6) for wa, wc in zip(a.get_weights(), c.get_weights()))


def test_k5_steps_per_execution_does_not_change_training(kp):
    slow = kp.train_small_model(kp.x_train, kp.y_train, epochs=1)
    fast = kp.train_small_model_fixed(kp.x_train, kp.y_train, epochs=1)
    assert fast.steps_per_execution == 16 and slow.steps_per_execution == 1
    assert_same_weights(slow, fast)


def test_k4_legacy_keras_is_a_separate_class_hierarchy(kp):
    if kp.LegacyDense is None:
        pytest.skip("tensorflow.python.keras is not available in this TensorFlow")
    legacy = kp.build_legacy_mlp()
    assert type(legacy).__module__.startswith("tensorflow.python.keras")
    assert not isinstance(legacy, tf.keras.Model)
    # mixing it with tf.keras (Keras 3) fails (catalog K4: "Sequential rejects a legacy Dense")
    with pytest.raises((ValueError, TypeError)):
        tf.keras.Sequential([tf.keras.Input(shape=(kp.NUM_FEATURES,)), kp.LegacyDense(4)])


def test_k3_g1_graph_train_step_matches_eager(load_example):
    m = load_example("eager_training")
    x, y = next(iter(m.train_ds))
    np.testing.assert_allclose(m.standardize(x).numpy(), m.standardize_graph(x).numpy(), rtol=1e-5, atol=1e-6)
    start = m.model.get_weights()
    eager_loss = m.train_step(m.standardize(x), y)
    m.model.set_weights(start)
    graph_loss = m.train_step_graph(m.standardize_graph(x), y)
    np.testing.assert_allclose(float(eager_loss), float(graph_loss), rtol=1e-5)
    np.testing.assert_allclose(m.model(x).numpy(), m.predict_graph(x, training=False).numpy(),
                               rtol=1e-5, atol=1e-6)
