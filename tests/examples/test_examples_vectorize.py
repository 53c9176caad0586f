"""Loop vs vectorised equivalence for examples/vectorize.py (catalog V1-V5, check AC).

seed000's loop-vs-einsum claim is checked from its own output in test_examples_run.py.

Tolerances (stated per the catalog's "Verify" column):
  float32 matmul / einsum / reductions / normalisation: rtol=1e-5, atol=1e-5 (the catalog measured
  a V2 difference of 8e-7; summation order changes rounding);
  V4 concatenation: exact equality;
  V5 per-step floats vs keras.metrics.Mean: rtol=1e-5.
"""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

pytestmark = pytest.mark.tf

NAME = "vectorize"
RTOL = ATOL = 1e-5


@pytest.fixture
def vz(load_example):
    return load_example(NAME)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=RTOL, atol=ATOL)


def test_v1_append_loop_equals_einsum(vz):
    A, B = tf.random.normal([64, 8, 32], seed=1), tf.random.normal([32, 16], seed=2)
    close(vz.per_item_projection(A, B), vz.per_item_projection_vectorized(A, B))
    close(vz.per_item_projection(A, B), tf.matmul(A, B))  # broadcasting matmul, the other rewrite


def test_v1_transpose_b_is_carried_into_the_equation(vz):
    A, K = tf.random.normal([64, 8, 32], seed=3), tf.random.normal([24, 32], seed=4)
    loop = vz.per_item_scores(A, K)
    close(loop, vz.per_item_scores_vectorized(A, K))
    assert loop.shape == (64, 8, 24)
    # dropping the transpose flag (the catalog's trap) would not even have the right shape
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        tf.einsum("ijk,kl->ijl", A, K)


def test_v1_per_i_rhs_is_a_batched_matmul(vz):
    A, B = tf.random.normal([64, 8, 32], seed=5), tf.random.normal([64, 32, 16], seed=6)
    loop = vz.per_item_bilinear(A, B)
    close(loop, vz.per_item_bilinear_vectorized(A, B))
    close(loop, tf.einsum("ijk,ikl->ijl", A, B))
    # treating B as loop-invariant (B[0] for all i) would be wrong
    assert not np.allclose(loop.numpy(), tf.einsum("ijk,kl->ijl", A, B[0]).numpy(), rtol=RTOL, atol=ATOL)


def test_v1_traps_are_not_the_full_axis_batch(vz):
    A, B = tf.random.normal([10, 8, 32], seed=7), tf.random.normal([32, 16], seed=8)
    assert vz.even_items_projection(A, B).shape[0] == 5  # einsum over A would give 10
    x, W, U = tf.random.normal([5, 4, 8], seed=9), tf.random.normal([6, 6], seed=10), tf.random.normal([8, 6], seed=11)
    h = vz.simple_rnn(x, W, U)
    # a per-step "vectorisation" ignoring the recurrence gives a different answer
    assert not np.allclose(h.numpy(), tf.tanh(tf.matmul(x[-1], U)).numpy(), rtol=RTOL, atol=ATOL)


def test_v2_row_reduce_loop(vz):
    x = tf.random.normal([200, 64], seed=12)
    close(vz.mean_of_row_means(x), vz.mean_of_row_means_vectorized(x))


def test_v2_empty_input_edge_case(vz):
    # catalog V2: an empty x makes the loop return the Python float 0.0, the rewrite a Tensor
    empty = tf.zeros([0, 4])
    assert type(vz.mean_of_row_means(empty)) is float
    assert float(vz.mean_of_row_means_vectorized(empty)) == 0.0


def test_v3_stack_loop_and_map_fn(vz):
    x = tf.random.normal([200, 64], seed=13)
    reference = vz.normalize_rows_vectorized(x)
    close(vz.normalize_rows_loop(x), reference)
    close(vz.normalize_rows_map_fn(x), reference)
    close(vz.normalize_rows_vectorized_map(x), reference)  # fallback_to_while_loop=False


def test_v3_trap_unique_cannot_be_vectorized(vz):
    tokens = tf.constant([[1, 1, 2, 2], [3, 4, 5, 6], [7, 7, 7, 7]])
    assert vz.unique_counts(tokens).numpy().tolist() == [2, 4, 1]
    with pytest.raises(ValueError, match="(?i)pfor|vectoriz"):
        tf.vectorized_map(vz.count_unique, tokens, fallback_to_while_loop=False)


def test_v4_concat_growth_exact(vz):
    chunks = [tf.random.normal([7, 8], seed=20 + i) for i in range(30)]
    loop = vz.collect_embeddings(chunks, 8)
    fixed = vz.collect_embeddings_fixed(chunks, 8)
    assert loop.shape == (210, 8)
    assert np.array_equal(loop.numpy(), fixed.numpy())


def test_v5_metric_mean_equals_mean_of_per_step_floats(vz, capsys):
    dataset, d = vz.make_regression_problem()
    history = vz.train_with_per_step_sync(vz.LinearRegression(d), dataset, epochs=3)
    epoch_means = vz.train_with_metric(vz.LinearRegression(d), dataset, epochs=3)
    steps = len(history) // 3
    assert len(history) == 3 * steps == 48
    np.testing.assert_allclose(epoch_means, np.asarray(history).reshape(3, steps).mean(axis=1), rtol=1e-5)

