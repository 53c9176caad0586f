"""Seed 002: XLA, mixed precision, pruning and op fusion.

Source article (the program as it wrote it, smaller sizes, ported to TF 2.21):
  "在 Tensorflow 上加速您的训练和推理" (a Chinese translation of "Accelerate your training and
  inference running on Tensorflow", towardsdatascience.com).

What it demonstrates (in the article's order)
  1. `tf.config.optimizer.set_jit(True)` at the top of the program (XLA auto-clustering).
  2. The TF 2.1-2.3 mixed precision API:
     `from tensorflow.keras.mixed_precision import experimental as mixed_precision`,
     `mixed_precision.Policy('mixed_float16')`, `mixed_precision.set_policy(policy)`, followed by
     "# Now design your model and train it" - filled in with the small Keras classifier a reader
     would write there.
  3. Pruning with tensorflow_model_optimization (prune_low_magnitude + PolynomialDecay).
  4. Op fusion: `model_fn(x, y, z) = tf.reduce_sum(x + y * z)` compiled with XLA
     (`xla.compile` inside a TF1 Session with placeholders).
  5. TF1 fused batch norm: `tf.layers.batch_normalization(input_layer, fused=True, data_format='NCHW')`.

Catalog ids it should trigger (see the `# expect:` comments)
  P2  `Dense(10, activation='softmax')` as the output layer under the mixed_float16 policy.
  Traps (`# expect-none:`): set_jit(True) is the first statement, before any model is built, so it
  is not X3; the output layer's width 10 is the number of classes, so P4 (multiple of 8) must not
  be suggested for it; the hidden Dense(64) is already a multiple of 8; model.fit under
  mixed_float16 is not P3 (Keras 3 compile() scales the loss itself: auto_scale_loss=True).
  Not claimed: the `mixed_precision.experimental` import is a removed API, but the catalog has no
  id for it (R7 covers only experimental_relax_shapes / experimental_compile).

Size reductions: the "design your model" classifier is 20 -> 64 -> 10 trained for 2 epochs on 256
  random samples; pruning (when available) runs 1 epoch; the fusion example feeds 8-element vectors;
  batch norm runs on a [2, 4, 3, 3] NCHW tensor.

Ports to TF 2.21 / Keras 3 (every original line is kept, in a guarded block when it no longer runs)
  - `from tensorflow.keras.mixed_precision import experimental`: removed in TF 2.4 and absent from
    Keras 3 (ImportError). Kept inside `try:`; the `except ImportError:` branch uses
    `tf.keras.mixed_precision.Policy` + `set_global_policy`, the current API.
  - `tensorflow_model_optimization` is not installed (and does not support Keras 3); the pruning
    block is skipped when the import fails. `build_your_model()` and `fit(...)` are filled in.
  - `from tensorflow.contrib.compiler import xla`: tf.contrib was removed in TF 2.0. The fallback
    imports the same function from its TF 2 location, `tensorflow.python.compiler.xla.xla` (still
    present in 2.21, deprecated). `tf.Session` / `tf.placeholder` -> `tf.compat.v1.*` inside an
    explicit `tf.Graph()` (TF 2 runs eagerly by default). The article's `feed_dict={ ... }` is
    filled with random vectors.
  - `tf.layers.batch_normalization(..., fused=True, data_format='NCHW')`: `tf.layers` is gone and
    `tf.compat.v1.layers.batch_normalization` raises "not available with Keras 3". The line is
    kept in `try:`; the fallback is the Keras 3 equivalent, `BatchNormalization(axis=1)`.
  - The mixed_float16 global policy is reset to float32 at the end so that nothing leaks if this
    file is imported.
"""
import numpy as np
import tensorflow as tf

# expect-none: X3 - set_jit is called at program start, before any model is built
tf.config.optimizer.set_jit(True)

# ... the rest of your program ..

# 张量流中的混合精度 (mixed precision in TensorFlow)
try:
    from tensorflow.keras.mixed_precision import experimental as mixed_precision
    policy = mixed_precision.Policy('mixed_float16')
    mixed_precision.set_policy(policy)
except ImportError:
    # Port: the experimental API was removed (TF >= 2.4, Keras 3); same policy, current API.
    from tensorflow.keras import mixed_precision
    policy = mixed_precision.Policy('mixed_float16')
    mixed_precision.set_global_policy(policy)
# Now design your model and train it
model = tf.keras.Sequential([
    tf.keras.Input(shape=(20,)),
    # expect-none: P4 - 64 is already a multiple of 8
    tf.keras.layers.Dense(64, activation='relu'),
    # expect: P2
    # expect-none: P4 - the output width is the number of classes (10), not a free choice
    tf.keras.layers.Dense(10, activation='softmax'),
])
model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy'])
x_train = np.random.randn(256, 20).astype('float32')
y_train = np.random.randint(0, 10, size=(256,))
# expect-none: P3 - Keras 3 compile()/fit() scales the loss itself (auto_scale_loss=True)
model.fit(x_train, y_train, batch_size=32, epochs=2, verbose=0)
print('mixed precision model output dtype:', model(x_train[:1]).dtype)

# tensor flow 中的修剪 (pruning)
try:
    import tensorflow_model_optimization as tfmot
except ImportError:
    # Port: tensorflow_model_optimization is not installed (and needs tf_keras, not Keras 3).
    tfmot = None

def build_your_model():  # added: the article leaves this undefined
    return tf.keras.Sequential([tf.keras.Input(shape=(20,)),
                                tf.keras.layers.Dense(64, activation='relu'),
                                tf.keras.layers.Dense(1)])

if tfmot is not None:
    try:
        model = build_your_model()

        pruning_schedule = tfmot.sparsity.keras.PolynomialDecay(
                                initial_sparsity=0.0, final_sparsity=0.5,
                                begin_step=1000, end_step=3000)

        model_for_pruning = tfmot.sparsity.keras.prune_low_magnitude(model, pruning_schedule=pruning_schedule)

        model_for_pruning.compile(optimizer='adam', loss='mse')  # added: needed before fit
        model_for_pruning.fit(x_train, np.random.randn(256, 1), epochs=1, verbose=0,
                              callbacks=[tfmot.sparsity.keras.UpdatePruningStep()])
    except (ValueError, TypeError) as e:  # tfmot rejects Keras 3 models
        print('pruning skipped:', type(e).__name__)
else:
    print('pruning skipped: tensorflow_model_optimization is not installed')

# 将多个操作融合为一个 (fusing several ops into one)
def model_fn(x, y, z):
  return tf.reduce_sum(x + y * z)

# 与 Tensorflow 2.x 的融合
try:
    from tensorflow.contrib.compiler import xla
except ImportError:
    # Port: tf.contrib was removed in TF 2.0; xla.compile still lives here (deprecated).
    from tensorflow.python.compiler.xla import xla

def model_fn(x, y, z):
  return tf.reduce_sum(x + y * z)

def create_and_run_graph():
  with tf.Graph().as_default():  # Port: TF 2 is eager by default; placeholders need a graph
    with tf.compat.v1.Session() as sess:  # Port: tf.Session -> tf.compat.v1.Session
      x = tf.compat.v1.placeholder(tf.float32, name='x')  # Port: tf.placeholder -> tf.compat.v1
      y = tf.compat.v1.placeholder(tf.float32, name='y')
      z = tf.compat.v1.placeholder(tf.float32, name='z')
      result = xla.compile(computation=model_fn, inputs=(x, y, z))[0]
      # `result` is a normal Tensor (albeit one that is computed by an XLA
      # compiled executable) and can be used like any other Tensor.
      result = tf.add(result, result)
      feed = {x: np.random.rand(8), y: np.random.rand(8), z: np.random.rand(8)}  # article: { ... }
      return sess.run(result, feed_dict=feed)

print('fused model_fn result:', create_and_run_graph())

# 与 Tensorflow 1.x 的融合 (fused batch norm)
input_layer = tf.random.normal([2, 4, 3, 3])  # added: NCHW input
try:
    #Using TF1.x in TF2.x
    b1 = tf.compat.v1.layers.batch_normalization(
        input_layer, fused=True, data_format='NCHW')
except (AttributeError, ImportError):
    # Port: "batch_normalization is not available with Keras 3"; axis=1 is channels-first (NCHW).
    b1 = tf.keras.layers.BatchNormalization(axis=1)(input_layer, training=True)
print('batch norm output shape:', b1.shape)

# Added: do not leak the global policy and JIT setting into code that imports this file.
tf.keras.mixed_precision.set_global_policy('float32')
tf.config.optimizer.set_jit(False)
