"""A loop over a tf.data pipeline whose map is slow Python: the loop waits for input."""
import time

import tensorflow as tf


def slow_parse(x):
    time.sleep(0.05)  # stands for decoding in Python
    return x * 2


def parse(x):
    return tf.py_function(slow_parse, [x], tf.int64)


dataset = tf.data.Dataset.range(30).map(parse)


@tf.function
def step(x):
    return x + 1


for element in dataset:
    step(element)
