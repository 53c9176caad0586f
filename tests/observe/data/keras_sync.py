"""Keras fit with a Python-side bottleneck: a callback calls .numpy() on every step."""
import numpy as np
import tensorflow as tf


class LossLogger(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.values = []

    def on_train_batch_end(self, batch, logs=None):
        self.values.append(self.model.optimizer.iterations.numpy())  # host sync each step


model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(4), tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
x = np.random.rand(256, 8).astype("float32")
y = np.random.rand(256, 1).astype("float32")
model.fit(x, y, batch_size=16, epochs=2, verbose=0, callbacks=[LossLogger()])
