"""What TensorFlow does where a precondition of a vectorize rewrite fails (the cases themselves,
flagged without a fix or silent, are in tests/rules/fixtures/TFP401.py ... TFP405.py)."""
import pytest


@pytest.mark.tf
def test_mixed_dtypes_raise_in_loop_and_einsum():
    """Catalog trap: float32 x float16 is an error both ways, so no rewrite can be right."""
    import tensorflow as tf

    A, B = tf.random.uniform([4, 3, 5]), tf.random.uniform([5, 2], dtype=tf.float16)
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError)):
        tf.einsum("ijk,kl->ijl", A, B)
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError)):
        tf.matmul(A[0], B)
