# Adapted from tensorflow_examples/models/densenet/train.py and efficientdet's train_lib.py: a
# keras.Model subclass with its own `train_step`, which adds up per-example losses in a loop.
import tensorflow as tf


class Classifier(tf.keras.Model):
    def __init__(self, classes=10):
        super().__init__()
        self.dense = tf.keras.layers.Dense(classes)

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            logits = self(x, training=True)
            errors = tf.square(logits - y)
            loss = 0.0
            for row in errors:
                loss += tf.reduce_mean(row)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


# tfperf: model=Classifier(classes=10) data=(float32[32,20], float32[32,10])
