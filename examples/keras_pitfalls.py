"""Keras API pitfalls (catalog K1, K2, K4, K5; K3 is in eager_training.py).

Not from a seed article (seed004 discusses the same APIs inside its benchmark harness). Realistic
Keras 3 code on random data; tests/examples/test_examples_keras.py checks that each rewrite gives
the same numbers as the original (which is what makes it a safe suggestion).

Catalog ids it should trigger (see the `# expect:` comments)
  K1  model.predict() on one sample at a time inside a loop (predict_one_by_one).
  K2  model.train_on_batch() over numpy slices in a loop (train_with_train_on_batch). Catalog:
      hint only - on Keras 3 CPU train_on_batch was measured faster than fit, benchmark it.
  K4  imports from tensorflow.python.keras (the legacy, private Keras 2 copy inside TF).
  K5  a small MLP compiled without steps_per_execution and then trained with fit() for many
      short steps (train_small_model).
Traps (`# expect-none:`)
  - one batched predict() call, and a tf.function-wrapped model called in the loop (not K1/G1).
  - model.fit(..., shuffle=False) as the K2 rewrite (not K2).
  - compile() of a model only trained with train_on_batch: steps_per_execution has no effect
    there (not K5); compile(..., steps_per_execution=16) (not K5).
  - `from tensorflow import keras` / `import keras`: the public API (not K4).

Port note: tensorflow.python.keras still imports on TF 2.21, but it is half broken: its
optimizers module no longer exports Adam (the legacy model compiles with the string "adam") and
its fit() raises AttributeError ("module 'tensorflow.python.distribute.input_lib' has no
attribute 'DistributedDatasetInterface'"), so the legacy model is trained with one
train_on_batch call. The import is guarded with try/except ImportError because newer TF releases
may delete the package.

Sizes: 256 samples of 16 features, a 16 -> 32 -> 1 MLP, batch 32, 2 epochs; 10 predict calls.
Run: python examples/keras_pitfalls.py  (prints the timings of each pair).
"""
import time

import numpy as np
import tensorflow as tf
# expect-none: K4 - the public tf.keras API (Keras 3 in TF 2.21)
from tensorflow import keras

try:
    # expect: K4
    from tensorflow.python.keras.models import Sequential as LegacySequential
    # expect-none: K4 - one finding per file, on the first import (its fix moves every one)
    from tensorflow.python.keras.layers import Dense as LegacyDense
except ImportError:  # newer TF releases may delete the legacy package
    LegacySequential = LegacyDense = None

NUM_SAMPLES, NUM_FEATURES, BATCH_SIZE = 256, 16, 32

rng = np.random.default_rng(0)
x_train = rng.normal(size=(NUM_SAMPLES, NUM_FEATURES)).astype("float32")
y_train = (x_train @ rng.normal(size=(NUM_FEATURES, 1))).astype("float32")


def build_mlp(seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([
        keras.Input(shape=(NUM_FEATURES,)),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1),
    ])


# ----------------------------------------------------------------------------------------------
# K1: predict() in a loop
# ----------------------------------------------------------------------------------------------
def predict_one_by_one(model, samples):
    predictions = []
    for sample in samples:
        # expect: K1
        predictions.append(model.predict(sample[None, :], verbose=0))
    return np.concatenate(predictions)


def predict_batched(model, samples):
    # expect-none: K1 - one predict() call for all samples
    return model.predict(samples, verbose=0)


def predict_with_graph_call(model, samples):
    serve = tf.function(model)
    predictions = []
    for sample in samples:
        # expect-none: K1, G1 - a tf.function-wrapped model called directly
        predictions.append(serve(sample[None, :], training=False))
    return np.concatenate([np.asarray(p) for p in predictions])


# ----------------------------------------------------------------------------------------------
# K2: train_on_batch over numpy slices
# ----------------------------------------------------------------------------------------------
def train_with_train_on_batch(model, x, y, epochs=2):
    for epoch in range(epochs):
        for start in range(0, len(x), BATCH_SIZE):
            # expect: K2
            loss = model.train_on_batch(x[start:start + BATCH_SIZE], y[start:start + BATCH_SIZE])
    return loss


def train_with_fit(model, x, y, epochs=2):
    # expect-none: K2 - the rewrite: one fit() call, shuffle=False keeps the batch order
    history = model.fit(x, y, batch_size=BATCH_SIZE, epochs=epochs, shuffle=False, verbose=0)
    return history.history["loss"][-1]


def compile_for_train_on_batch(model):
    # expect-none: K5 - trained only with train_on_batch, where steps_per_execution has no effect
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse")
    return model


def compile_for_fit(model, steps_per_execution=8):
    # expect-none: K5 - steps_per_execution is set
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse",
                  steps_per_execution=steps_per_execution)
    return model


# ----------------------------------------------------------------------------------------------
# K5: a small model, many short steps, no steps_per_execution
# ----------------------------------------------------------------------------------------------
def train_small_model(x, y, epochs=2):
    model = build_mlp()
    # expect: K5
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse")
    model.fit(x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0)
    return model


def train_small_model_fixed(x, y, epochs=2):
    model = build_mlp()
    # expect-none: K5 - steps_per_execution=16
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse", steps_per_execution=16)
    model.fit(x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0)
    return model


# ----------------------------------------------------------------------------------------------
# K4: a model built from the legacy tensorflow.python.keras package
# ----------------------------------------------------------------------------------------------
def build_legacy_mlp():
    model = LegacySequential([
        LegacyDense(32, activation="relu", input_shape=(NUM_FEATURES,)),
        LegacyDense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def _timed(label, fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    print(f"{label:42s} {time.perf_counter() - start:.3f} s")
    return result


def main():
    model = build_mlp()
    samples = x_train[:10]
    model.predict(samples[:1], verbose=0)  # warm-up
    a = _timed("K1 predict() per sample (10 calls)", predict_one_by_one, model, samples)
    b = _timed("   one batched predict()", predict_batched, model, samples)
    c = _timed("   tf.function(model) per sample", predict_with_graph_call, model, samples)
    print("   max |diff|:", float(np.max(np.abs(a - b))), float(np.max(np.abs(a - c))))

    _timed("K2 train_on_batch loop (2 epochs)", train_with_train_on_batch,
           compile_for_train_on_batch(build_mlp()), x_train, y_train)
    _timed("   fit(shuffle=False)", train_with_fit, compile_for_fit(build_mlp()), x_train, y_train)

    _timed("K5 fit, steps_per_execution=1", train_small_model, x_train, y_train)
    _timed("   fit, steps_per_execution=16", train_small_model_fixed, x_train, y_train)

    if LegacySequential is not None:
        legacy = build_legacy_mlp()
        # The legacy fit() no longer works on TF 2.21 (AttributeError: input_lib has no
        # DistributedDatasetInterface); train_on_batch / predict_on_batch still do.
        loss = legacy.train_on_batch(x_train[:BATCH_SIZE], y_train[:BATCH_SIZE])
        print("K4 legacy tensorflow.python.keras model:", type(legacy).__module__,
              "train_on_batch loss", round(float(loss), 4))
    else:
        print("K4 tensorflow.python.keras is not available in this TensorFlow")


if __name__ == "__main__":
    main()
