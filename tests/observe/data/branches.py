"""Python branches driven by tensors: on a value in eager code (a host sync each time), on a
static shape inside a tf.function (the graph is specialised per shape: a retrace per shape)."""
import tensorflow as tf


@tf.function
def pad_to_even(x):
    if x.shape[0] % 2:
        x = tf.concat([x, tf.zeros([1])], axis=0)
    return tf.reduce_sum(x)


@tf.function(autograph=False)
def double_if_long(x):
    return x * 2 if x.shape[0] > 3 else x


total = tf.constant(0.0)
for n in range(1, 7):
    x = tf.ones([n])
    pad_to_even(x)
    double_if_long(x)
    if tf.reduce_sum(x) > 2:
        total += 1
    while total > 100:
        total -= 1
    check = bool(tf.reduce_any(x > 0))
    shape_only = x.shape[0] > 2
