"""Mixed precision pitfalls (catalog P1-P5), written the way the Keras mixed-precision guide is
usually followed, and the fixed versions.

Not from a seed article (seed002 only sets the policy). Realistic Keras 3 code on random data.

Device dependence. P1, P4 and P5 are about GPU Tensor Cores / cuDNN: on this project's 2-core CPU
test machine mixed_float16 is slower than float32 (catalog P1: "significantly slower" on x86
CPUs), so tfperf must stay silent about them on a CPU. Their answer-key comments use
`# expect-gpu: <id>`: expected when the target device is a GPU (compute capability >= 7.0),
expected absent on a CPU. P2 and P3 are numerics (float16 outputs, gradient underflow) and do not
depend on the device, so they use plain `# expect:`.

Catalog ids it should trigger
  P1 (gpu)  the float32 baseline classifier is built and trained while no dtype policy is set.
  P2        `Dense(10, activation="softmax")` as the output layer under mixed_float16: the model
            returns float16 (printed below).
  P3        a GradientTape loop under mixed_float16 with a plain SGD optimizer (no
            LossScaleOptimizer): the comment sits on the optimizer construction. The script shows
            the underflow: with a small loss every kernel gradient is exactly 0 without loss
            scaling and none is 0 with scale_loss.
  P4 (gpu)  Conv2D(30), Dense(100) and fit(batch_size=50) under mixed_float16: not multiples of 8.
  P5 (gpu)  `Conv2D(..., data_format="channels_first")` under mixed_float16.
  X1        the custom-loop @tf.function train steps have no jit_compile (an XLA hint).
Traps (`# expect-none:`)
  - the output Dense(10, ...) width is the number of classes: P4 must not ask for 16.
  - models built after set_global_policy("mixed_float16") are not P1.
  - the fixed model: Dense(10) + Activation("softmax", dtype="float32") is not P2; Conv2D(32) and
    Dense(128) are not P4.
  - the fixed custom loop wraps the optimizer in LossScaleOptimizer and calls scale_loss: not P3.
  - model.fit under mixed_float16 is not P3: Keras 3 compile() defaults to auto_scale_loss=True.

Port note: TF's CPU Conv2D kernels only support NHWC in graph mode ("The Conv2D op currently only
supports the NHWC tensor format on the CPU"), so the channels_first (P5) model is built everywhere
but trained only when a GPU is present - as code written for a GPU would be.

Sizes: 256 random 32x32x3 images, 1 epoch each, a 2-layer conv net.
Run: python examples/mixed_precision.py
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras

gpus = tf.config.list_physical_devices("GPU")
print("GPUs:", gpus or "none (mixed_float16 is expected to be slower here)")

rng = np.random.default_rng(0)
x_train = rng.random((256, 32, 32, 3), dtype=np.float32)
y_train = rng.integers(0, 10, size=(256,))

# ----------------------------------------------------------------------------------------------
# P1: float32 training, no dtype policy
# ----------------------------------------------------------------------------------------------
# expect-gpu: P1
baseline = keras.Sequential([
    keras.Input(shape=(32, 32, 3)),
    keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
    keras.layers.GlobalAveragePooling2D(),
    keras.layers.Dense(128, activation="relu"),
    keras.layers.Dense(10),
])
baseline.compile(optimizer="adam",
                 loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
baseline.fit(x_train, y_train, batch_size=64, epochs=1, verbose=0)
print("baseline compute dtype:", baseline.layers[0].compute_dtype)

# ----------------------------------------------------------------------------------------------
# The mixed precision guide: set the policy, then build the model
# ----------------------------------------------------------------------------------------------
keras.mixed_precision.set_global_policy("mixed_float16")

inputs = keras.Input(shape=(32, 32, 3))
# expect-none: P1 - built after set_global_policy("mixed_float16")
# expect-gpu: P4
x = keras.layers.Conv2D(30, 3, padding="same", activation="relu")(inputs)
x = keras.layers.GlobalAveragePooling2D()(x)
# expect-gpu: P4
x = keras.layers.Dense(100, activation="relu")(x)
# expect: P2
# expect-none: P4 - the output width is the number of classes
outputs = keras.layers.Dense(10, activation="softmax")(x)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
# expect-gpu: P4
# expect-none: P3 - Keras 3 compile() scales the loss itself (auto_scale_loss=True)
model.fit(x_train, y_train, batch_size=50, epochs=1, verbose=0)
print("P2 softmax output dtype:", model(x_train[:2]).dtype.name)

# Fixed: float32 output activation, Tensor-Core friendly widths.
inputs = keras.Input(shape=(32, 32, 3))
# expect-none: P4 - 32 filters
x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inputs)
x = keras.layers.GlobalAveragePooling2D()(x)
# expect-none: P4 - 128 units
x = keras.layers.Dense(128, activation="relu")(x)
x = keras.layers.Dense(10)(x)
# expect-none: P2 - the softmax runs in float32
outputs = keras.layers.Activation("softmax", dtype="float32")(x)
fixed_model = keras.Model(inputs, outputs)
fixed_model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
fixed_model.fit(x_train, y_train, batch_size=64, epochs=1, verbose=0)
print("fixed output dtype:", fixed_model(x_train[:2]).dtype.name)


# ----------------------------------------------------------------------------------------------
# P5: channels_first convolutions (code written for a GPU)
# ----------------------------------------------------------------------------------------------
def build_nchw_classifier():
    nchw_inputs = keras.Input(shape=(3, 32, 32))
    # expect-gpu: P5
    h = keras.layers.Conv2D(32, 3, padding="same", data_format="channels_first", activation="relu")(nchw_inputs)
    h = keras.layers.GlobalAveragePooling2D(data_format="channels_first")(h)
    h = keras.layers.Dense(10)(h)
    return keras.Model(nchw_inputs, keras.layers.Activation("softmax", dtype="float32")(h))


nchw_model = build_nchw_classifier()
nchw_model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
if gpus:
    nchw_model.fit(np.transpose(x_train, (0, 3, 1, 2)), y_train, batch_size=64, epochs=1, verbose=0)
else:
    print("P5 channels_first model built; training skipped (TF CPU Conv2D kernels are NHWC only)")

# ----------------------------------------------------------------------------------------------
# P3: a custom training loop under mixed_float16
# ----------------------------------------------------------------------------------------------
custom_model = keras.Sequential([
    keras.Input(shape=(32,)),
    keras.layers.Dense(16),
    keras.layers.Activation("linear", dtype="float32"),
])
# expect: P3
optimizer = keras.optimizers.SGD(learning_rate=0.01)


# expect-none: X1 - called once below: an XLA compile cannot pay back
@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(custom_model(x, training=True) - y)) * 1e-5
    grads = tape.gradient(loss, custom_model.trainable_variables)
    optimizer.apply_gradients(zip(grads, custom_model.trainable_variables))
    return grads


# Fixed: wrap the optimizer and scale the loss (Keras 3 API: scale_loss; apply() unscales).
# expect-none: P3 - LossScaleOptimizer
scaled_optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(learning_rate=0.01))


# expect-none: X1 - called once below: an XLA compile cannot pay back
@tf.function
def train_step_scaled(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(custom_model(x, training=True) - y)) * 1e-5
        scaled_loss = scaled_optimizer.scale_loss(loss)
    scaled_grads = tape.gradient(scaled_loss, custom_model.trainable_variables)
    scaled_optimizer.apply_gradients(zip(scaled_grads, custom_model.trainable_variables))
    return scaled_grads


x_small = tf.random.uniform([64, 32], 0, 1e-2, seed=1)
y_small = tf.zeros([64, 16])
kernel_grad = train_step(x_small, y_small)[0]
scaled_kernel_grad = train_step_scaled(x_small, y_small)[0]
print("P3 zero kernel-gradient entries without loss scaling:",
      int(tf.reduce_sum(tf.cast(kernel_grad == 0, tf.int32))), "of", int(tf.size(kernel_grad)))
print("P3 zero kernel-gradient entries with loss scaling:",
      int(tf.reduce_sum(tf.cast(scaled_kernel_grad == 0, tf.int32))), "of", int(tf.size(scaled_kernel_grad)))

# Added: do not leak the global policy into code that imports this file.
keras.mixed_precision.set_global_policy("float32")
