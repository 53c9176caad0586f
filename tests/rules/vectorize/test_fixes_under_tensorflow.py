"""TFP402-TFP404 rewrites run under TensorFlow on the same inputs as the original loops.

Tolerances: reductions and elementwise kernels over the whole tensor may round the last bit
differently: np.allclose(rtol=1e-5, atol=1e-6) for float32. Concatenation (TFP404) is exact.
"""
import textwrap

import numpy as np
import pytest

from tests.rules.vectorize._helpers import fixed, namespace, own

pytestmark = pytest.mark.tf

REDUCE = """
    import tensorflow as tf

    def f(x):
        s = 0.0
        for row in x:
            s += tf.{reduction}(row{axis})
        return s
    """


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"])
@pytest.mark.parametrize("shape", [(7,), (7, 5), (7, 4, 3)])
def test_row_reductions_any_rank(reduction, shape):
    """Rank unknown to the rule: the fix reduces over tf.range(1, tf.rank(x)), right for any rank."""
    import tensorflow as tf

    source = REDUCE.format(reduction=reduction, axis="")
    after = fixed("TFP402", source)
    assert "for row" not in after
    x = tf.random.uniform(shape, 0.5, 1.5, seed=1)
    _close(namespace(after)["f"](x), namespace(textwrap.dedent(source))["f"](x))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_row_reduction_with_an_axis(axis):
    import tensorflow as tf

    source = REDUCE.format(reduction="reduce_mean", axis=f", axis={axis}")
    after = fixed("TFP402", source)
    assert "for row" not in after, after
    x = tf.random.uniform([6, 4, 3], seed=2)
    _close(namespace(after)["f"](x), namespace(textwrap.dedent(source))["f"](x))


def test_ragged_rows_keep_per_row_means():
    """Catalog V2 trap: ragged rows. The fix still averages each row (never n * mean of all)."""
    import tensorflow as tf

    source = REDUCE.format(reduction="reduce_mean", axis="")
    x = tf.ragged.constant([[1.0, 2.0, 3.0], [4.0], [5.0, 7.0]])
    before = namespace(textwrap.dedent(source))["f"](x)
    after = namespace(fixed("TFP402", source))["f"](x)
    assert float(before) == float(after) == 12.0  # 2 + 4 + 6; 3 * mean of all values would be 9.0


def test_empty_input_changes_only_the_type():
    """Catalog trap 9 (why the fix is unsafe): the loop returns the Python start, the fix a tensor."""
    import tensorflow as tf

    source = REDUCE.format(reduction="reduce_mean", axis="")
    empty = tf.zeros([0, 5])
    before = namespace(textwrap.dedent(source))["f"](empty)
    after = namespace(fixed("TFP402", source))["f"](empty)
    assert isinstance(before, float) and isinstance(after, tf.Tensor)
    assert float(after) == before == 0.0


@pytest.mark.parametrize("body", [
    "tf.nn.relu(x[i]) * 2.0 - 1",
    "tf.cast(x[i] > 0.5, tf.float32)",
    "tf.clip_by_value(x[i], -0.5, 0.5)",
    "tf.nn.leaky_relu(x[i], alpha=0.1)",
    "tf.math.log1p(tf.abs(x[i])) ** 2",
])
def test_elementwise_comprehension_is_the_op_on_the_whole_tensor(body):
    import tensorflow as tf

    source = f"""
        import tensorflow as tf

        def f(x):
            return tf.stack([{body} for i in range(x.shape[0])])
        """
    _, findings = own("TFP403", source)
    assert len(findings) == 1 and findings[0].fix_title
    after = fixed("TFP403", source)
    assert "tf.stack" not in after and "x[i]" not in after
    x = tf.random.normal([6, 4, 3], seed=3)
    _close(namespace(after)["f"](x), namespace(textwrap.dedent(source))["f"](x))


def test_map_fn_of_an_elementwise_def():
    import tensorflow as tf

    source = """
        import tensorflow as tf

        def squash(r):
            return tf.tanh(r) * 3.0

        def f(x):
            return tf.map_fn(squash, x, fn_output_signature=tf.float32)
        """
    after = fixed("TFP403", source)
    assert "return squash(x)" in after
    x = tf.random.normal([5, 7], seed=4)
    _close(namespace(after)["f"](x), namespace(textwrap.dedent(source))["f"](x))


@pytest.mark.parametrize("chunks", [0, 1, 9])
def test_concat_growth_equals_one_concat_exactly(chunks):
    import tensorflow as tf

    source = """
        import tensorflow as tf

        def f(pieces):
            acc = tf.zeros([0, 4])
            i = 0
            while i < len(pieces):
                acc = tf.concat([acc, pieces[i] * 2.0], 0)
                i += 1
            return acc
        """
    after = fixed("TFP404", source)
    assert "acc_parts.append(pieces[i] * 2.0)" in after and "acc = tf.concat(acc_parts, 0)" in after
    pieces = [tf.random.normal([3, 4], seed=s) for s in range(chunks)]
    before = namespace(textwrap.dedent(source))["f"](pieces)
    result = namespace(after)["f"](pieces)
    assert result.shape == before.shape and np.array_equal(result.numpy(), before.numpy())
