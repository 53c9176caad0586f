"""Keras fit over tf.data datasets: one whose map is slow Python (input-bound), one that is fast."""
import sys
import time

import numpy as np
import tensorflow as tf


def slow_parse(x, y):
    time.sleep(0.03)  # stands for decoding in Python
    return x, y


def parse(x, y):
    x, y = tf.py_function(slow_parse, [x, y], (tf.float32, tf.float32))
    x.set_shape([8])
    y.set_shape([1])
    return x, y


features = np.random.rand(150, 8).astype("float32")
labels = np.random.rand(150, 1).astype("float32")
# Wide enough that a step's compute, not the iterator's few hundred microseconds, sets the fast
# pipeline's pace on any machine (a 4-unit model waited 31% of its step on a busy 2-core host).
model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(1024, activation="relu"),
                             tf.keras.layers.Dense(1024, activation="relu"), tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
if sys.argv[1:] == ["slow"]:
    slow = tf.data.Dataset.from_tensor_slices((features, labels)).map(parse).batch(16)
    model.fit(slow, epochs=2, verbose=0)
else:
    fast = tf.data.Dataset.from_tensor_slices((features, labels)).batch(16).cache().prefetch(4)
    model.fit(fast, epochs=2, verbose=0)
