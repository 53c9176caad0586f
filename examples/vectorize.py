"""Loops that should be vectorised (catalog V1-V5), each next to its vectorised rewrite.

Not from a seed article: realistic per-example loops as TF users write them.
tests/examples/test_examples_vectorize.py checks that every loop and its rewrite give the same
numbers (np.allclose, rtol=1e-5, atol=1e-5 for float32 matmuls/reductions; exact equality for
concatenation).

Catalog ids it should trigger (see the `# expect:` comments)
  V1  per-item matmul loops: an append loop + tf.stack (per_item_projection), a comprehension
      with transpose_b=True (per_item_scores) and a per-i right-hand side B[i]
      (per_item_bilinear).
  V2  `total += tf.reduce_mean(row)` over the rows of a tensor (mean_of_row_means).
  V3  tf.stack of a pure per-row function (normalize_rows_loop) and tf.map_fn of the same
      function (normalize_rows_map_fn).
  V4  `acc = tf.concat([acc, chunk], 0)` inside a loop (collect_embeddings).
  V5  float(loss) on every step of a training loop (train_with_per_step_sync); the loss.numpy()
      right after it reads a value already on the host (not V5 again).
  X1  the tf.function train step used by the V5 example has no jit_compile (an XLA hint).
Traps (`# expect-none:`)
  - the RNN-style loop `h = tf.tanh(tf.matmul(h, W) + x[t])`: each step needs the previous h
    (loop-carried dependency), not V1.
  - a strided loop `range(0, n, 2)` does not cover the whole axis, not V1.
  - tf.map_fn over tf.unique (data-dependent output shape; tf.vectorized_map with
    fallback_to_while_loop=False raises), not V3.
  - logging every 10 steps and an early-stopping check that needs the loss value in Python, not V5.
  - the vectorised rewrites themselves.

Run: python examples/vectorize.py  (prints loop vs vectorised timings and max differences).
"""
import time

import numpy as np
import tensorflow as tf

# ----------------------------------------------------------------------------------------------
# V1: a matmul per item
# ----------------------------------------------------------------------------------------------
def per_item_projection(A, B):
    C = []
    # expect: V1
    for i in range(A.shape[0]):
        C.append(tf.matmul(A[i], B))
    return tf.stack(C, axis=0)


def per_item_projection_vectorized(A, B):
    return tf.einsum("ijk,kl->ijl", A, B)


def per_item_scores(queries, keys):
    # expect: V1
    return tf.stack([tf.matmul(queries[i], keys, transpose_b=True) for i in range(queries.shape[0])])


def per_item_scores_vectorized(queries, keys):
    return tf.einsum("ijk,lk->ijl", queries, keys)


def per_item_bilinear(A, B):
    outputs = []
    # expect: V1
    for i in range(A.shape[0]):
        outputs.append(tf.matmul(A[i], B[i]))
    return tf.stack(outputs)


def per_item_bilinear_vectorized(A, B):
    return tf.matmul(A, B)  # batched matmul == einsum("ijk,ikl->ijl")


def simple_rnn(x, W, U):
    h = tf.zeros([x.shape[1], W.shape[1]])
    # expect-none: V1 - loop-carried dependency: step t needs h from step t-1
    for t in range(x.shape[0]):
        h = tf.tanh(tf.matmul(h, W) + tf.matmul(x[t], U))
    return h


def even_items_projection(A, B):
    outputs = []
    # expect-none: V1 - strided range: the loop does not cover the whole of axis 0
    for i in range(0, A.shape[0], 2):
        outputs.append(tf.matmul(A[i], B))
    return tf.stack(outputs)


# ----------------------------------------------------------------------------------------------
# V2: accumulate a reduction over rows
# ----------------------------------------------------------------------------------------------
def mean_of_row_means(x):
    total = 0.0
    # expect: V2
    for row in x:
        total += tf.reduce_mean(row)
    return total


def mean_of_row_means_vectorized(x):
    return tf.reduce_sum(tf.reduce_mean(x, axis=1))


# ----------------------------------------------------------------------------------------------
# V3: a pure function applied row by row
# ----------------------------------------------------------------------------------------------
def normalize_row(row):
    return (row - tf.reduce_mean(row)) / (tf.math.reduce_std(row) + 1e-6)


def normalize_rows_loop(x):
    # expect: V3
    return tf.stack([normalize_row(x[i]) for i in range(x.shape[0])])


def normalize_rows_map_fn(x):
    # expect: V3
    return tf.map_fn(normalize_row, x)


def normalize_rows_vectorized(x):
    mean = tf.reduce_mean(x, axis=1, keepdims=True)
    std = tf.math.reduce_std(x, axis=1, keepdims=True)
    return (x - mean) / (std + 1e-6)


def normalize_rows_vectorized_map(x):
    return tf.vectorized_map(normalize_row, x, fallback_to_while_loop=False)


def count_unique(row):
    return tf.size(tf.unique(row).y)


def unique_counts(tokens):
    # expect-none: V3 - tf.unique has a data-dependent output shape; vectorized_map cannot handle it
    return tf.map_fn(count_unique, tokens, fn_output_signature=tf.int32)


# ----------------------------------------------------------------------------------------------
# V4: growing a tensor with tf.concat
# ----------------------------------------------------------------------------------------------
def collect_embeddings(chunks, dim):
    acc = tf.zeros([0, dim])
    # expect: V4
    for chunk in chunks:
        acc = tf.concat([acc, chunk], axis=0)
    return acc


def collect_embeddings_fixed(chunks, dim):
    parts = [tf.zeros([0, dim])]
    # expect-none: V4 - fixed: a Python list and one tf.concat after the loop
    for chunk in chunks:
        parts.append(chunk)
    return tf.concat(parts, axis=0)


# ----------------------------------------------------------------------------------------------
# V5: a host sync on every training step
# ----------------------------------------------------------------------------------------------
def make_regression_problem(n=512, d=16, batch_size=32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype("float32")
    y = (x @ rng.normal(size=(d, 1))).astype("float32")
    dataset = (tf.data.Dataset.from_tensor_slices((x, y))
               .batch(batch_size, drop_remainder=True)
               .prefetch(tf.data.AUTOTUNE))
    return dataset, d


class LinearRegression:
    def __init__(self, d):
        self.w = tf.Variable(tf.zeros([d, 1]))
        self.b = tf.Variable(0.0)
        self.optimizer = tf.keras.optimizers.SGD(learning_rate=0.05)

    # expect-not-cpu: X1
    @tf.function
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, self.w) + self.b - y))
        grads = tape.gradient(loss, [self.w, self.b])
        self.optimizer.apply_gradients(zip(grads, [self.w, self.b]))
        return loss


def train_with_per_step_sync(model, dataset, epochs=3):
    history = []
    for epoch in range(epochs):
        for step, (x, y) in enumerate(dataset):
            loss = model.train_step(x, y)
            # expect: V5
            history.append(float(loss))
            # expect-none: V5 - a second read of the same loss in the iteration: the first one waited
            print(f"epoch {epoch} step {step} loss {loss.numpy():.4f}", end="\r")
    print()
    return history


def train_with_metric(model, dataset, epochs=3, log_every=10):
    mean_loss = tf.keras.metrics.Mean()
    epoch_means = []
    for epoch in range(epochs):
        mean_loss.reset_state()
        for step, (x, y) in enumerate(dataset):
            loss = model.train_step(x, y)
            mean_loss.update_state(loss)
            if step % log_every == 0:
                # expect-none: V5 - logged every log_every steps, as the catalog's rewrite does
                print(f"epoch {epoch} step {step} loss {loss.numpy():.4f}", end="\r")
        epoch_means.append(float(mean_loss.result()))
    print()
    return epoch_means


def train_until_converged(model, dataset, tol=1e-3, max_epochs=20):
    for epoch in range(max_epochs):
        for x, y in dataset:
            loss = model.train_step(x, y)
        # expect-none: V5 - the value drives Python control flow (early stopping), once per epoch
        if loss.numpy() < tol:
            break
    return epoch


def _timed(fn, *args):
    fn(*args)  # warm-up
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def main():
    A = tf.random.normal([200, 8, 32])
    B = tf.random.normal([32, 16])
    Bs = tf.random.normal([200, 32, 16])
    keys = tf.random.normal([24, 32])
    rows = tf.random.normal([200, 64])
    pairs = [
        ("V1 append loop", per_item_projection, per_item_projection_vectorized, (A, B)),
        ("V1 transpose_b", per_item_scores, per_item_scores_vectorized, (A, keys)),
        ("V1 per-i B[i]", per_item_bilinear, per_item_bilinear_vectorized, (A, Bs)),
        ("V2 row means", mean_of_row_means, mean_of_row_means_vectorized, (rows,)),
        ("V3 stack loop", normalize_rows_loop, normalize_rows_vectorized, (rows,)),
        ("V3 map_fn", normalize_rows_map_fn, normalize_rows_vectorized_map, (rows,)),
    ]
    for name, loop_fn, vec_fn, args in pairs:
        loop_out, t_loop = _timed(loop_fn, *args)
        vec_out, t_vec = _timed(vec_fn, *args)
        diff = float(np.max(np.abs(np.asarray(loop_out) - np.asarray(vec_out))))
        print(f"{name:16s} loop {t_loop * 1e3:7.2f} ms  vectorised {t_vec * 1e3:6.2f} ms  max|diff| {diff:.2e}")

    chunks = [tf.random.normal([16, 8]) for _ in range(50)]
    same = bool(tf.reduce_all(collect_embeddings(chunks, 8) == collect_embeddings_fixed(chunks, 8)))
    print("V4 concat loop == list + one concat:", same)
    print("trap simple_rnn:", simple_rnn(tf.random.normal([5, 4, 8]), tf.random.normal([6, 6]),
                                         tf.random.normal([8, 6])).shape)
    print("trap even items:", even_items_projection(A, B).shape)
    print("trap unique counts:", unique_counts(tf.constant([[1, 1, 2], [3, 4, 5]])).numpy())

    dataset, d = make_regression_problem()
    history = train_with_per_step_sync(LinearRegression(d), dataset)
    epoch_means = train_with_metric(LinearRegression(d), dataset)
    print("V5 per-step floats:", len(history), "values; epoch means via keras.metrics.Mean:",
          [round(m, 4) for m in epoch_means])
    print("trap early stopping stopped after epoch", train_until_converged(LinearRegression(d), dataset))


if __name__ == "__main__":
    main()
