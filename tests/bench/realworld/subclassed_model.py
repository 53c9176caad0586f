# Adapted from a keras.Model subclass (the shape of tensorflow/examples' recommendation and
# densenet models): `call` multiplies each item of a batch by the same weights in a Python loop.
import tensorflow as tf


class ItemTower(tf.keras.Model):
    def __init__(self, units):
        super().__init__()
        self.units = units
        self.w = tf.Variable(tf.random.uniform([units, units], seed=3))

    def call(self, inputs):
        rows = []
        for item in inputs:
            rows.append(tf.matmul(item, self.w))
        return tf.stack(rows, axis=0)


def main():
    model = ItemTower(units=32)
    features = tf.random.uniform([128, 8, 32])
    print(model(features).shape)


if __name__ == "__main__":
    main()
