"""What the input-pipeline rules claim, checked under TensorFlow 2.21 on CPU."""
import numpy as np
import pytest

from tests.rules.device_helpers import run
from tests.rules.helpers import findings

pytestmark = pytest.mark.tf

_MAP_SHUFFLE_BATCH = """\
import tensorflow as tf

def scale(x):
    return tf.cast(x, tf.float32) / 255.0 - 0.5

images = tf.reshape(tf.range(40 * 3, dtype=tf.int32) % 256, (40, 3))
ds = tf.data.Dataset.from_tensor_slices(images)
ds = ds.map(scale).shuffle(40, seed=7).batch(8)
batched_first = tf.data.Dataset.from_tensor_slices(images).shuffle(40, seed=7).batch(8).map(scale)
epochs = [[b.numpy() for b in ds] for _ in range(2)]
epochs_batched_first = [[b.numpy() for b in batched_first] for _ in range(2)]
"""


def test_a_shuffle_between_an_elementwise_map_and_the_batch_gives_the_same_batches_batched_first():
    """TFP703's advice for ``map(f).shuffle(n).batch(b)``: ``.shuffle(n).batch(b).map(f)`` reads
    the same batches, epoch after epoch (the shuffle picks by position, not by value)."""
    reported = findings(_MAP_SHUFFLE_BATCH, "TFP703")
    assert [f.span.start.line for f in reported] == [7]
    namespace = run(_MAP_SHUFFLE_BATCH)
    for mapped_first, batched_first in zip(namespace["epochs"], namespace["epochs_batched_first"]):
        assert len(mapped_first) == len(batched_first) == 5
        for a, b in zip(mapped_first, batched_first):
            np.testing.assert_allclose(a, b)
    assert not np.allclose(namespace["epochs"][0][0], namespace["epochs"][1][0])  # reshuffled each epoch
