"""Eager training code that should run as a graph (catalog K3 and the graph-mode opportunity).

Not from a seed article: the custom training loop a TF user writes from the "Writing a training
loop from scratch" guide, before adding @tf.function.

Catalog ids it should trigger (see the `# expect:` comments)
  K3  train_step(): GradientTape + optimizer.apply_gradients in an undecorated def, called for
      every batch of every epoch.
  G1  the graph-mode opportunity (no catalog id; this repository's answer key calls it G1):
      - `model(x_batch, training=False)` called eagerly for every validation batch;
      - standardize(): a costly eager function (several reductions and elementwise ops) called
        for every batch.
  X1  train_step_graph(), the fixed @tf.function train step, has no jit_compile: an XLA candidate
      (a hint to benchmark; on this 2-core CPU XLA can be slower - catalog X1).
Traps (`# expect-none:`)
  - train_step_graph() is decorated: not K3.
  - the validation loop of evaluate_graph() calls a tf.function-wrapped model: not G1.
  - float(loss) once per epoch (after the batch loop) is a single host sync per epoch: not V5.
  - the model-building calls at import time run once: not G1.
  Validation accuracy is accumulated as a tensor and converted once after the loop, so the
  validation loops are not V5 either.

Sizes: 512 samples of 32 features, a 32 -> 64 -> 64 -> 10 MLP, batch 64, 2 epochs.
The dataset uses drop_remainder=True and prefetch so that R3/D2 do not apply here.

Run: python examples/eager_training.py  (prints the eager and graph epoch times).
"""
import time

import numpy as np
import tensorflow as tf

NUM_SAMPLES, NUM_FEATURES, NUM_CLASSES, BATCH_SIZE = 512, 32, 10, 64

rng = np.random.default_rng(0)
features = rng.normal(size=(NUM_SAMPLES, NUM_FEATURES)).astype("float32")
labels = rng.integers(0, NUM_CLASSES, size=(NUM_SAMPLES,)).astype("int32")

train_ds = (tf.data.Dataset.from_tensor_slices((features, labels))
            .shuffle(NUM_SAMPLES, seed=0)
            .batch(BATCH_SIZE, drop_remainder=True)
            .prefetch(tf.data.AUTOTUNE))
val_ds = (tf.data.Dataset.from_tensor_slices((features[:128], labels[:128]))
          .batch(BATCH_SIZE, drop_remainder=True)
          .prefetch(tf.data.AUTOTUNE))


def build_model():
    return tf.keras.Sequential([
        tf.keras.Input(shape=(NUM_FEATURES,)),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(NUM_CLASSES),
    ])


model = build_model()
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


# expect: G1
def standardize(x):
    mean = tf.reduce_mean(x, axis=0, keepdims=True)
    centered = x - mean
    std = tf.sqrt(tf.reduce_mean(tf.square(centered), axis=0, keepdims=True))
    clipped = tf.clip_by_value(centered / (std + 1e-6), -3.0, 3.0)
    return clipped * 0.5 + 0.5 * tf.tanh(clipped)


# expect: K3
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def evaluate():
    correct = 0
    for x_batch, y_batch in val_ds:
        # expect: G1
        logits = model(x_batch, training=False)
        correct += tf.reduce_sum(tf.cast(tf.argmax(logits, -1, output_type=tf.int32) == y_batch, tf.int32))
    return int(correct) / 128


def train_eager(epochs=2):
    for epoch in range(epochs):
        start = time.perf_counter()
        for x_batch, y_batch in train_ds:
            loss = train_step(standardize(x_batch), y_batch)
        # expect-none: V5 - one host sync per epoch, outside the batch loop
        print(f"eager epoch {epoch}: loss {float(loss):.4f}, {time.perf_counter() - start:.3f} s")
    return float(loss)


# Fixed versions ------------------------------------------------------------------------------
standardize_graph = tf.function(standardize)


# expect-not-cpu: X1
# expect-none: K3 - decorated with @tf.function
@tf.function
def train_step_graph(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


predict_graph = tf.function(model)


def evaluate_graph():
    correct = 0
    for x_batch, y_batch in val_ds:
        # expect-none: G1 - predict_graph is tf.function(model)
        logits = predict_graph(x_batch, training=False)
        correct += tf.reduce_sum(tf.cast(tf.argmax(logits, -1, output_type=tf.int32) == y_batch, tf.int32))
    return int(correct) / 128


def train_graph(epochs=2):
    for epoch in range(epochs):
        start = time.perf_counter()
        for x_batch, y_batch in train_ds:
            loss = train_step_graph(standardize_graph(x_batch), y_batch)
        print(f"graph epoch {epoch}: loss {float(loss):.4f}, {time.perf_counter() - start:.3f} s")
    return float(loss)


def main():
    train_eager()
    print("eager validation accuracy:", evaluate())
    train_graph()
    print("graph validation accuracy:", evaluate_graph())


if __name__ == "__main__":
    main()
