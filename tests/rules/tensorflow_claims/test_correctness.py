"""What the correctness rules claim, checked under TensorFlow 2.21 / Keras 3 on CPU."""
import pytest

from tests.rules.device_helpers import run
from tests.rules.helpers import findings

pytestmark = pytest.mark.tf

# Keras' directory loader, split with take/skip as the popular image-classification tutorials do.
_LOADER_SPLIT = """\
import os
import tensorflow as tf

for label in ("a", "b"):
    os.makedirs(os.path.join(ROOT, label), exist_ok=True)
    for i in range(10):
        value = (0 if label == "a" else 10) + i
        image = tf.io.encode_png(tf.fill((4, 4, 3), tf.constant(value * 10, tf.uint8)))
        tf.io.write_file(os.path.join(ROOT, label, f"{i}.png"), image)
data = tf.keras.utils.image_dataset_from_directory(ROOT, image_size=(4, 4), batch_size=2SHUFFLE)
train = data.take(7)
test = data.skip(7)
model = tf.keras.Sequential([tf.keras.Input((4, 4, 3)), tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)])
model.compile("sgd", "sparse_categorical_crossentropy")
model.fit(train, epochs=1, verbose=0)


def ids(dataset):
    return {int(round(v / 10)) for images, _ in dataset for v in images[:, 0, 0, 0].numpy()}


tested_on = ids(test)
trained_on = ids(train)  # the next pass: the next epoch's training split
"""


def test_a_take_skip_split_of_the_directory_loader_mixes_test_images_into_training(tmp_path):
    """TFP205's claim for Keras' directory loader: it shuffles on every pass, so each pass draws
    another split (and with ``shuffle=False``, where it stays silent, the split holds)."""
    code = _LOADER_SPLIT.replace("SHUFFLE", "").replace("ROOT", repr(str(tmp_path / "shuffled")))
    [finding] = findings(code, "TFP205")
    assert "image_dataset_from_directory" in finding.message and finding.fix_title is None
    namespace = run(code)
    assert namespace["tested_on"] & namespace["trained_on"]

    fixed_order = _LOADER_SPLIT.replace("SHUFFLE", ", shuffle=False").replace("ROOT", repr(str(tmp_path / "kept")))
    assert not findings(fixed_order, "TFP205")
    namespace = run(fixed_order)
    assert not namespace["tested_on"] & namespace["trained_on"]
