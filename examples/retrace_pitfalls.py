"""Retracing pitfalls (catalog R1-R8) and the look-alikes that must NOT be flagged.

Realistic code for the retracing problems of the tf.function guide
(https://www.tensorflow.org/guide/function) that the article programs do not show. Every bad pattern sits next
to its fixed version; tests/examples/test_examples_retrace.py checks the trace counts with
`fn.experimental_get_tracing_count()`.

Catalog ids it should trigger (see the `# expect:` comments)
  R1  a Python float/int derived from the loop variable passed to a tf.function
      (train_with_python_lr, warmup_loop).
  R2  tf.function(...) created inside a loop (normalize_batches) and a nested @tf.function def
      inside a function that is called per batch (mse, called from evaluate).
  R3  variable-length sequences (score_sequences) fed to a tf.function. Not R3: NumPy batches
      sliced as a window of fixed size (epoch_over_numpy): one more trace for the last partial
      batch, never one per batch.
  R4  a fresh AugmentConfig instance built at every call (augment_loop).
  R5  a Python list of floats that changes per epoch (weighted_epochs).
  R6  a tf.Module with a @tf.function method constructed inside a loop (per_fold_normalizers).
  R7  `experimental_relax_shapes=True` (TF 2.21 still accepts it, with a deprecation warning).
  R8  `for _ in range(n)` inside a tf.function (cumulative_decay).
Traps (`# expect-none:`), each checked by a test
  - forward(x, training=True): a constant Python bool that picks the dropout branch: 1 trace.
  - split_heads(x, num_heads) with num_heads from a loop: num_heads is the number of tf.split
    outputs and must be a Python int (a tensor raises ValueError); one graph per value is intended.
  - deep_block(x, depth): depth feeds range() and the body indexes the Python list `kernels` with
    the loop index, so neither R1 (tf.constant(depth) raises TypeError) nor R8 (the loop cannot
    become tf.range) applies.
  - the fixed versions (tensor arguments, hoisted functions, input_signature, drop_remainder,
    one reused config object, tf.constant lists, reduce_retracing, tf.range).

Run: python examples/retrace_pitfalls.py  (prints the trace count of each function).
"""
import numpy as np
import tensorflow as tf


# ----------------------------------------------------------------------------------------------
# R1: Python scalars that change per call
# ----------------------------------------------------------------------------------------------
@tf.function
def decayed_update(w, grad, lr):
    return w - lr * grad


def train_with_python_lr(w, grad, epochs=8):
    for epoch in range(epochs):
        lr = 0.1 / (1 + epoch)
        # expect: R1
        w = decayed_update(w, grad, lr)
    return w


def train_with_tensor_lr(w, grad, epochs=8):
    for epoch in range(epochs):
        lr = 0.1 / (1 + epoch)
        # expect-none: R1 - fixed: the scalar is a tensor (tf.constant at the call site)
        w = decayed_update(w, grad, tf.constant(lr))
    return w


@tf.function
def warmup_scale(x, step):
    return x * tf.minimum(1.0, tf.cast(step, tf.float32) / 10.0)


def warmup_loop(x, steps=6):
    outputs = []
    for step in range(steps):
        # expect: R1
        outputs.append(warmup_scale(x, step))
    return outputs


def warmup_loop_fixed(x, steps=6):
    outputs = []
    for step in tf.range(steps):
        # expect-none: R1 - step comes from tf.range, so it is already a tensor
        outputs.append(warmup_scale(x, step))
    return outputs


# R1 traps: Python values that are meant to stay Python values.
@tf.function
def forward(x, training):
    if training:
        x = tf.nn.dropout(x, rate=0.2)
    return tf.reduce_sum(x, axis=-1)


def train_loop_forward(x, steps=5):
    for step in range(steps):
        # expect-none: R1 - training=True is the same constant on every call; the Python bool selects the dropout branch at trace time
        forward(x, training=True)


@tf.function
def split_heads(x, num_heads):
    return tf.stack(tf.split(x, num_heads, axis=-1), axis=0)


def head_sweep(x):
    outputs = []
    for num_heads in (1, 2, 4):
        # expect-none: R1 - num_heads is the number of tf.split outputs and must be a Python int; one graph per head count is intended
        outputs.append(split_heads(x, num_heads))
    return outputs


kernels = [tf.Variable(tf.random.normal([16, 16], seed=i) * 0.1) for i in range(4)]


@tf.function
def deep_block(x, depth):
    # expect-none: R8 - the body indexes the Python list `kernels` with i, so the loop must stay an unrolled Python loop
    for i in range(depth):
        x = tf.tanh(tf.matmul(x, kernels[i]))
    return x


def depth_sweep(x):
    outputs = []
    for depth in (1, 2, 4):
        # expect-none: R1 - depth feeds range() and a Python list index inside deep_block; one graph per depth is intended
        outputs.append(deep_block(x, depth))
    return outputs


# ----------------------------------------------------------------------------------------------
# R2: a new tf.function per iteration
# ----------------------------------------------------------------------------------------------
def normalize(x):
    return (x - tf.reduce_mean(x)) / (tf.math.reduce_std(x) + 1e-6)


def normalize_batches(batches):
    outputs = []
    for batch in batches:
        # expect: R2
        normalize_fn = tf.function(normalize)
        outputs.append(normalize_fn(batch))
    return outputs


def mse(y_true, y_pred):
    # expect: R2
    @tf.function
    def _mse(a, b):
        return tf.reduce_mean(tf.square(a - b))
    return _mse(y_true, y_pred)


def evaluate(pairs):
    return [mse(y_true, y_pred) for y_true, y_pred in pairs]


# Fixed: created once, at module scope.
normalize_graph = tf.function(normalize)


@tf.function
def mse_graph(a, b):
    return tf.reduce_mean(tf.square(a - b))


def normalize_batches_hoisted(batches):
    outputs = []
    for batch in batches:
        # expect-none: R2 - fixed: the tf.function is created once at module scope
        outputs.append(normalize_graph(batch))
    return outputs


def evaluate_hoisted(pairs):
    return [mse_graph(y_true, y_pred) for y_true, y_pred in pairs]


# ----------------------------------------------------------------------------------------------
# R3: tensors of varying shape
# ----------------------------------------------------------------------------------------------
@tf.function
def sequence_energy(seq):
    return tf.reduce_sum(tf.square(seq))


def score_sequences(sequences):
    scores = []
    for seq in sequences:
        # expect: R3
        scores.append(sequence_energy(seq))
    return scores


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def sequence_energy_any_length(seq):
    return tf.reduce_sum(tf.square(seq))


@tf.function(reduce_retracing=True)
def sequence_energy_relaxed(seq):
    return tf.reduce_sum(tf.square(seq))


def score_sequences_fixed(sequences, fn=sequence_energy_any_length):
    scores = []
    for seq in sequences:
        # expect-none: R3 - fixed: input_signature with a None dimension (or reduce_retracing=True)
        scores.append(fn(seq))
    return scores


@tf.function
def batch_loss(xb):
    return tf.reduce_mean(tf.square(xb))


def epoch_over_numpy(x, batch_size=32):
    losses = []
    for start in range(0, len(x), batch_size):
        # expect-none: R3 - a window of fixed size: two traces in all (full batches, the last partial one)
        losses.append(batch_loss(x[start:start + batch_size]))
    return losses


def epoch_over_dataset(x, batch_size=32):
    dataset = (tf.data.Dataset.from_tensor_slices(x)
               .batch(batch_size, drop_remainder=True)
               .prefetch(tf.data.AUTOTUNE))
    losses = []
    for xb in dataset:
        # expect-none: R3 - fixed: drop_remainder=True gives every batch the same static shape
        losses.append(batch_loss(xb))
    return losses


# ----------------------------------------------------------------------------------------------
# R4: a fresh Python object per call
# ----------------------------------------------------------------------------------------------
class AugmentConfig:
    def __init__(self, noise_std):
        self.noise_std = noise_std


@tf.function
def add_noise(x, config):
    return x + tf.random.normal(tf.shape(x), stddev=config.noise_std)


def augment_loop(x, steps=5):
    outputs = []
    for step in range(steps):
        # expect: R4
        outputs.append(add_noise(x, AugmentConfig(0.1)))
    return outputs


def augment_loop_fixed(x, steps=5):
    config = AugmentConfig(0.1)
    outputs = []
    for step in range(steps):
        # expect-none: R4 - fixed: one config object, created once and reused
        outputs.append(add_noise(x, config))
    return outputs


# ----------------------------------------------------------------------------------------------
# R5: a Python list of numbers
# ----------------------------------------------------------------------------------------------
@tf.function
def weighted_loss(per_class_loss, class_weights):
    return tf.reduce_sum(per_class_loss * class_weights)


def weighted_epochs(per_class_loss, epochs=4):
    losses = []
    for epoch in range(epochs):
        class_weights = [1.0, 1.0 + 0.5 * epoch]
        # expect: R5
        losses.append(weighted_loss(per_class_loss, class_weights))
    return losses


def weighted_epochs_fixed(per_class_loss, epochs=4):
    losses = []
    for epoch in range(epochs):
        class_weights = [1.0, 1.0 + 0.5 * epoch]
        # expect-none: R5 - fixed: the list is converted with tf.constant at the call site
        losses.append(weighted_loss(per_class_loss, tf.constant(class_weights)))
    return losses


# ----------------------------------------------------------------------------------------------
# R6: a tf.function method on an object constructed inside a loop
# ----------------------------------------------------------------------------------------------
class Standardizer(tf.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean = tf.constant(mean)
        self.std = tf.constant(std)

    @tf.function
    def __call__(self, x):
        return (x - self.mean) / self.std


def per_fold_normalizers(x, folds=5):
    outputs = []
    for fold in range(folds):
        # expect: R6
        standardizer = Standardizer(float(fold), 1.0 + fold)
        outputs.append(standardizer(x))
    return outputs


# ----------------------------------------------------------------------------------------------
# R7: deprecated argument names
# ----------------------------------------------------------------------------------------------
# expect: R7
@tf.function(experimental_relax_shapes=True)
def running_max(x):
    return tf.reduce_max(tf.math.cumsum(x))


# expect-none: R7 - the current spelling
@tf.function(reduce_retracing=True)
def running_min(x):
    return tf.reduce_min(tf.math.cumsum(x))


# ----------------------------------------------------------------------------------------------
# R8: a Python range loop inside a tf.function (unrolled into the graph)
# ----------------------------------------------------------------------------------------------
@tf.function
def cumulative_decay(x, n):
    acc = tf.zeros_like(x)
    # expect: R8
    for _ in range(n):
        acc = acc * 0.9 + x
    return acc


@tf.function
def cumulative_decay_loop(x, n):
    acc = tf.zeros_like(x)
    # expect-none: R8 - fixed: tf.range becomes a tf.while_loop
    for _ in tf.range(n):
        acc = acc * 0.9 + x
    return acc


def main():
    x = tf.random.normal([8, 16])
    w, grad = tf.ones([16]), tf.fill([16], 0.5)

    train_with_python_lr(w, grad)
    print("R1 python lr   :", decayed_update.experimental_get_tracing_count(), "traces")
    warmup_loop(x)
    print("R1 python step :", warmup_scale.experimental_get_tracing_count(), "traces")
    train_loop_forward(x)
    print("trap training= :", forward.experimental_get_tracing_count(), "trace")
    head_sweep(x)
    print("trap num_heads :", split_heads.experimental_get_tracing_count(), "traces (intended)")
    depth_sweep(x)
    print("trap depth     :", deep_block.experimental_get_tracing_count(), "traces (intended)")

    batches = [tf.random.normal([4, 16]) for _ in range(6)]
    normalize_batches(batches)
    evaluate([(b, b * 0.5) for b in batches])
    normalize_batches_hoisted(batches)
    print("R2 hoisted     :", normalize_graph.experimental_get_tracing_count(), "trace")

    sequences = [tf.random.normal([n]) for n in (5, 7, 9, 11)]
    score_sequences(sequences)
    print("R3 sequences   :", sequence_energy.experimental_get_tracing_count(), "traces")
    score_sequences_fixed(sequences)
    print("R3 signature   :", sequence_energy_any_length.experimental_get_tracing_count(), "trace")
    x_np = np.random.rand(100, 16).astype("float32")
    epoch_over_numpy(x_np)
    print("R3 last batch  :", batch_loss.experimental_get_tracing_count(), "traces")

    augment_loop(x)
    print("R4 fresh object:", add_noise.experimental_get_tracing_count(), "traces")
    weighted_epochs(tf.constant([0.3, 0.7]))
    print("R5 python list :", weighted_loss.experimental_get_tracing_count(), "traces")
    per_fold_normalizers(x)
    print("R7 relax shapes:", [float(running_max(tf.range(n, dtype=tf.float32))) for n in (3, 4, 5)])
    print("R8 unrolled    :", [float(tf.reduce_sum(cumulative_decay(x, n))) for n in (50, 100)],
          cumulative_decay.experimental_get_tracing_count(), "traces;",
          "loop:", [float(tf.reduce_sum(cumulative_decay_loop(x, tf.constant(n)))) for n in (50, 100)])


if __name__ == "__main__":
    main()
