"""XLA opportunities and pitfalls (catalog X1-X4, plus R7's experimental_compile).

Not from a seed article (seed002 only calls set_jit at program start). Realistic code on random
data; tests/examples/test_examples_pipeline_xla.py checks the numbers under TensorFlow.

Catalog ids it should trigger (see the `# expect:` comments)
  X1  train_step(): a hot @tf.function train step without jit_compile; gelu_tanh(): a chain of
      small elementwise ops in a @tf.function without jit_compile. (A hint to benchmark: on this
      2-core CPU XLA is not always faster - catalog X1 "Measured CPU slowdown".)
  X2  a tf_keras (Keras 2) model.compile() without jit_compile. tf_keras is not installed here,
      so that block is guarded and skipped at run time; the rule must still see it.
  X3  tf.config.optimizer.set_jit(True) called after the model and its train function exist.
  X4  a jit_compile=True function called with a different sequence length each time: XLA
      compiles once per new shape, even though reduce_retracing limits the retraces.
  R7  @tf.function(experimental_compile=True): the deprecated spelling of jit_compile
      (TF 2.21 still accepts it with a deprecation warning).
Traps (`# expect-none:`)
  - train_step_xla / gelu_tanh_xla already use jit_compile=True (not X1).
  - train_step_with_numpy_metric calls tf.numpy_function, which XLA cannot compile (not X1).
  - a Keras 3 model.compile() without jit_compile: Keras 3 defaults to jit_compile="auto", which
    turns XLA on by itself where it helps (on this CPU it resolves to False; on a GPU to True) -
    catalog X2 says do not flag (not X2).
  - the X4 call site has reduce_retracing=True already (not R3).
  - masked_mean_bucketed pads every batch to one bucket length: one compilation (not X4).

Sizes: a 32 -> 64 -> 1 MLP on 256 samples; vectors of 4096 floats for gelu; sequence lengths
16..40 for X4.
Run: python examples/xla.py
"""
import time

import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(0)
features = rng.normal(size=(256, 32)).astype("float32")
targets = rng.normal(size=(256, 1)).astype("float32")
dataset = (tf.data.Dataset.from_tensor_slices((features, targets))
           .batch(32, drop_remainder=True)
           .prefetch(tf.data.AUTOTUNE))


def build_regressor():
    return keras.Sequential([
        keras.Input(shape=(32,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])


# ----------------------------------------------------------------------------------------------
# X1: graph functions that XLA could fuse
# ----------------------------------------------------------------------------------------------
model = build_regressor()
optimizer = keras.optimizers.Adam(learning_rate=1e-3)


# expect-not-cpu: X1
@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


xla_model = build_regressor()
xla_optimizer = keras.optimizers.Adam(learning_rate=1e-3)


# expect-none: X1 - already jit_compile=True
@tf.function(jit_compile=True)
def train_step_xla(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(xla_model(x, training=True) - y))
    grads = tape.gradient(loss, xla_model.trainable_variables)
    xla_optimizer.apply_gradients(zip(grads, xla_model.trainable_variables))
    return loss


def host_side_metric(pred, y):
    return np.float32(np.median(np.abs(pred - y)))


# expect-none: X1 - tf.numpy_function cannot be compiled by XLA
@tf.function
def train_step_with_numpy_metric(x, y):
    with tf.GradientTape() as tape:
        pred = model(x, training=True)
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss, tf.numpy_function(host_side_metric, [pred, y], tf.float32)


def gelu_tanh_math(x):
    return 0.5 * x * (1.0 + tf.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


# expect-not-cpu: X1
@tf.function
def gelu_tanh(x):
    return gelu_tanh_math(x)


# expect-none: X1 - already jit_compile=True
@tf.function(jit_compile=True)
def gelu_tanh_xla(x):
    return gelu_tanh_math(x)


# expect: R7
@tf.function(experimental_compile=True)
def gelu_tanh_legacy_flag(x):
    return gelu_tanh_math(x)


# ----------------------------------------------------------------------------------------------
# X2: Keras compile() and jit_compile
# ----------------------------------------------------------------------------------------------
keras3_model = build_regressor()
# expect-none: X2 - Keras 3: compile() defaults to jit_compile="auto"
keras3_model.compile(optimizer="adam", loss="mse")

try:
    import tf_keras  # Keras 2 (what tf.keras was before TF 2.16; TF_USE_LEGACY_KERAS=1)
except ImportError:
    tf_keras = None

if tf_keras is not None:
    keras2_model = tf_keras.Sequential([
        tf_keras.layers.Dense(512, activation="relu", input_shape=(32,)),
        tf_keras.layers.Dense(1),
    ])
    # expect-not-cpu: X2
    keras2_model.compile(optimizer="adam", loss="mse")
    keras2_model.fit(features, targets, batch_size=32, epochs=1, verbose=0)


# ----------------------------------------------------------------------------------------------
# X4: a jit-compiled function fed varying shapes
# ----------------------------------------------------------------------------------------------
@tf.function(jit_compile=True, reduce_retracing=True)
def masked_mean(tokens, mask):
    return tf.reduce_sum(tokens * mask, axis=1) / tf.maximum(tf.reduce_sum(mask, axis=1), 1.0)


def encode_variable_lengths(lengths=(16, 24, 32, 40)):
    outputs = []
    for length in lengths:
        tokens = tf.random.normal([4, length])
        mask = tf.ones([4, length])
        # expect: X4
        # expect-none: R3 - reduce_retracing=True is already set; the remaining cost is XLA recompilation
        outputs.append(masked_mean(tokens, mask))
    return outputs


BUCKET_LENGTH = 64


@tf.function(jit_compile=True)
def masked_mean_bucketed(tokens, mask):
    return tf.reduce_sum(tokens * mask, axis=1) / tf.maximum(tf.reduce_sum(mask, axis=1), 1.0)


def encode_bucketed(lengths=(16, 24, 32, 40)):
    outputs = []
    for length in lengths:
        tokens = tf.random.normal([4, length])
        mask = tf.ones([4, length])
        padding = [[0, 0], [0, BUCKET_LENGTH - length]]
        # expect-none: X4 - padded to one bucket length: a single shape, a single compilation
        outputs.append(masked_mean_bucketed(tf.pad(tokens, padding), tf.pad(mask, padding)))
    return outputs


def run_epochs(step_fn, epochs=2):
    for epoch in range(epochs):
        start = time.perf_counter()
        for x, y in dataset:
            loss = step_fn(x, y)
        if isinstance(loss, tuple):
            loss = loss[0]
        print(f"  {step_fn.__name__} epoch {epoch}: loss {float(loss):.4f} in {time.perf_counter() - start:.3f} s")


def main():
    run_epochs(train_step)
    run_epochs(train_step_xla)
    run_epochs(train_step_with_numpy_metric)

    v = tf.random.normal([4096])
    for _ in range(1000):  # an activation called repeatedly: where fusing its ops can pay
        activations = gelu_tanh(v)
    print("gelu graph vs XLA max |diff|:", float(tf.reduce_max(tf.abs(activations - gelu_tanh_xla(v)))))
    print("gelu experimental_compile:", float(tf.reduce_sum(gelu_tanh_legacy_flag(v))))

    keras3_model.fit(features, targets, batch_size=32, epochs=1, verbose=0)
    print("Keras 3 compile() resolved jit_compile to:", keras3_model.jit_compile)

    encode_variable_lengths()
    print("X4 masked_mean traces:", masked_mean.experimental_get_tracing_count(), "for 4 lengths")
    encode_bucketed()
    print("X4 bucketed traces:", masked_mean_bucketed.experimental_get_tracing_count())

    # X3: XLA auto-clustering switched on after the model and its train function were built.
    # expect: X3
    tf.config.optimizer.set_jit(True)
    run_epochs(train_step)
    tf.config.optimizer.set_jit(False)  # added: restore the default for anything run later


if __name__ == "__main__":
    main()
