"""tf.data input pipeline pitfalls and the fixed pipelines.

Not from a seed article: realistic image-classification input code written from the tf.data
guide, on random uint8 "images" held in memory (no downloads).
tests/examples/test_examples_pipeline_xla.py checks that every fixed pipeline yields the same elements
as the slow one where the rewrite is meant to be exact (deterministic map functions).

Catalog ids it should trigger (see the `# expect:` comments)
  D1  `ds.map(augment)` without num_parallel_calls (make_train_dataset_slow): augment draws
      random numbers, so tf.data keeps it serial (a stateless map, such as
      `ds.map(decode_and_normalize)`, tf.data 2.7+ parallelises by itself: not reported).
  D2  a pipeline whose options turn tf.data's own prefetch injection off
      (count_labels_without_injected_prefetch), iterated without `.prefetch(...)`; the slow
      pipelines that only lack `.prefetch` are not reported: tf.data 2.12+ appends one itself.
  D3  `ds.map(augment)` followed by `ds.batch(32)`: an elementwise map before batch.
  D4  `ds.map(decode_and_normalize, ...)`: an expensive deterministic map re-run every epoch
      (evaluate_every_epoch iterates the dataset 3 times) without `.cache()`.
  D5  `tf.data.Dataset.from_generator` over in-memory numpy arrays, and `tf.py_function` that
      indexes in-memory arrays.
Traps (`# expect-none:`)
  - D4 on the random `augment` map: caching it would freeze the augmentation.
  - the fixed pipelines: parallel map after batch, cache after the deterministic map, prefetch
    last, from_tensor_slices.

Sizes: 512 images of 32x32x3, batch 32, resize to 48x48, 3 epochs.

Run: python examples/input_pipeline.py  (prints the time to iterate each pipeline).
"""
import time

import numpy as np
import tensorflow as tf

NUM_IMAGES, IMAGE_SIZE, BATCH_SIZE = 512, 32, 32

rng = np.random.default_rng(0)
images = rng.integers(0, 256, size=(NUM_IMAGES, IMAGE_SIZE, IMAGE_SIZE, 3), dtype=np.uint8)
labels = rng.integers(0, 10, size=(NUM_IMAGES,)).astype("int64")

CHANNEL_MEAN = tf.constant([0.485, 0.456, 0.406])
CHANNEL_STD = tf.constant([0.229, 0.224, 0.225])


def augment(image, label):
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, max_delta=0.1)
    return image, label


def decode_and_normalize(image, label):
    image = tf.cast(image, tf.float32) / 255.0
    image = tf.image.resize(image, [48, 48])
    image = (image - CHANNEL_MEAN) / CHANNEL_STD
    return image, label


# ----------------------------------------------------------------------------------------------
# Slow pipelines
# ----------------------------------------------------------------------------------------------
def make_train_dataset_slow():
    ds = tf.data.Dataset.from_tensor_slices((images, labels))
    ds = ds.shuffle(NUM_IMAGES)
    # expect: D1
    # expect-none: D3 - augment draws random numbers per element: mapped on batches it would draw once per batch
    # expect-none: D4 - augment is random; caching its output would freeze the augmentation
    ds = ds.map(augment)
    # expect-none: D2 - tf.data (2.12+) appends a prefetch by itself
    ds = ds.batch(BATCH_SIZE)
    return ds


def make_eval_dataset_slow():
    ds = tf.data.Dataset.from_tensor_slices((images, labels))
    # expect-none: D1 - decode_and_normalize is stateless: tf.data (2.7+) runs it in parallel by itself
    # expect: D3
    # expect: D4
    ds = ds.map(decode_and_normalize)
    # expect-none: D2 - tf.data (2.12+) appends a prefetch by itself
    ds = ds.batch(BATCH_SIZE)
    return ds


def count_labels_without_injected_prefetch():
    """Options that turn tf.data's own prefetch off (to bound memory): now nothing overlaps."""
    options = tf.data.Options()
    options.experimental_optimization.inject_prefetch = False
    ds = tf.data.Dataset.from_tensor_slices((images, labels)).with_options(options)
    # expect: D2
    ds = ds.batch(BATCH_SIZE)
    total = 0
    for _, batch_labels in ds:
        total += int(tf.reduce_sum(batch_labels))
    return total


def sample_generator():
    for i in range(len(images)):
        yield images[i], labels[i]


def make_generator_dataset():
    # expect: D5
    ds = tf.data.Dataset.from_generator(
        sample_generator,
        output_signature=(tf.TensorSpec([IMAGE_SIZE, IMAGE_SIZE, 3], tf.uint8),
                          tf.TensorSpec([], tf.int64)))
    ds = ds.batch(BATCH_SIZE)
    return ds.prefetch(tf.data.AUTOTUNE)


def load_batch(indices):
    indices = indices.numpy()
    return images[indices], labels[indices]


def make_py_function_dataset():
    ds = tf.data.Dataset.range(NUM_IMAGES).batch(BATCH_SIZE)
    # expect: D5
    ds = ds.map(lambda idx: tf.py_function(load_batch, [idx], [tf.uint8, tf.int64]),
                num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE)


# ----------------------------------------------------------------------------------------------
# Fixed pipelines
# ----------------------------------------------------------------------------------------------
def make_train_dataset_fast():
    ds = tf.data.Dataset.from_tensor_slices((images, labels))
    ds = ds.shuffle(NUM_IMAGES)
    ds = ds.batch(BATCH_SIZE)
    # expect-none: D1, D3, D4 - parallel map after batch; random augmentation is not cached
    ds = ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE)
    # expect-none: D2 - prefetch is the last transformation
    return ds.prefetch(tf.data.AUTOTUNE)


def make_eval_dataset_fast():
    ds = tf.data.Dataset.from_tensor_slices((images, labels))
    ds = ds.batch(BATCH_SIZE)
    # expect-none: D1, D3, D4 - parallel, after batch, cached
    ds = ds.map(decode_and_normalize, num_parallel_calls=tf.data.AUTOTUNE).cache()
    return ds.prefetch(tf.data.AUTOTUNE)


def make_in_memory_dataset():
    # expect-none: D5 - from_tensor_slices over the in-memory arrays
    ds = tf.data.Dataset.from_tensor_slices((images, labels))
    return ds.batch(BATCH_SIZE).prefetch(tf.data.AUTOTUNE)


def evaluate_every_epoch(dataset, epochs=3):
    checksum = tf.constant(0.0)
    for epoch in range(epochs):
        for image_batch, label_batch in dataset:
            checksum += tf.reduce_sum(image_batch)
    return float(checksum)


def time_pipeline(dataset, epochs=1):
    start = time.perf_counter()
    n = 0
    for _ in range(epochs):
        for image_batch, _labels in dataset:
            n += int(image_batch.shape[0])
    return n, time.perf_counter() - start


def main():
    for name, make in [("train slow", make_train_dataset_slow), ("train fast", make_train_dataset_fast),
                       ("from_generator", make_generator_dataset), ("py_function", make_py_function_dataset),
                       ("from_tensor_slices", make_in_memory_dataset)]:
        n, seconds = time_pipeline(make())
        print(f"{name:20s} {n} images in {seconds:.3f} s")
    for name, make in [("eval slow (3 epochs)", make_eval_dataset_slow),
                       ("eval fast (3 epochs)", make_eval_dataset_fast)]:
        n, seconds = time_pipeline(make(), epochs=3)
        print(f"{name:20s} {n} images in {seconds:.3f} s")
    print("checksums equal:",
          np.isclose(evaluate_every_epoch(make_eval_dataset_slow()),
                     evaluate_every_epoch(make_eval_dataset_fast()), rtol=1e-5))


if __name__ == "__main__":
    main()
