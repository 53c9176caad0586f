"""tf.function correctness traps (catalog C1-C3): stale captures, Python side effects, variables.

Realistic code for the correctness traps of the tf.function guide
(https://www.tensorflow.org/guide/function). These are flagged as correctness problems, not speed-ups.
tests/examples/test_examples_traps.py checks each claim under TensorFlow.

Catalog ids it should trigger (see the `# expect:` comments)
  C1  count_above() reads the module global `threshold`, which set_threshold() re-assigns later:
      the traced graph keeps the old value. scale_logits() does the same with an eager-tensor
      global `temperature`.
  C2  noisy_step(): print(), np.random.normal(), time.time() and list.append() inside a tf.function
      run only while tracing (print once; the NumPy noise is frozen into a constant; the list gets
      one symbolic tensor).
  C3  running_total(): tf.Variable(...) created unconditionally in the body - TF raises
      "ValueError: tf.function only supports singleton tf.Variables created on the first call".
Traps (`# expect-none:`)
  - count_above_live() reads a tf.Variable global updated with .assign(): stays live (not C1).
  - noisy_step_fixed() uses tf.print and tf.random.normal (not C2).
  - Accumulator.__call__ creates its variable under `if self.total is None:` - the documented,
    correct lazy-creation idiom (not C3). Its first call traces twice (TF's variable-creation
    protocol); later calls do not retrace.

Run: python examples/tf_function_traps.py
"""
import time

import numpy as np
import tensorflow as tf

# ----------------------------------------------------------------------------------------------
# C1: a global captured at trace time
# ----------------------------------------------------------------------------------------------
threshold = 0.5


@tf.function
def count_above(x):
    # expect: C1
    return tf.reduce_sum(tf.cast(x > threshold, tf.int32))


def set_threshold(value):
    global threshold
    threshold = value


temperature = tf.constant(1.0)


@tf.function
def scale_logits(logits):
    # expect: C1
    return logits / temperature


def anneal(logits, steps=3):
    global temperature
    outputs = []
    for step in range(steps):
        temperature = tf.constant(1.0 + step)
        outputs.append(scale_logits(logits))
    return outputs


# Fixed: a tf.Variable is read at run time.
threshold_var = tf.Variable(0.5)


@tf.function
def count_above_live(x):
    # expect-none: C1 - threshold_var is a tf.Variable, read when the graph runs
    return tf.reduce_sum(tf.cast(x > threshold_var, tf.int32))


# ----------------------------------------------------------------------------------------------
# C2: Python side effects inside a tf.function
# ----------------------------------------------------------------------------------------------
seen_outputs = []


@tf.function
def noisy_step(x):
    # expect: C2
    print("noisy_step got", x)
    # expect: C2
    noise = np.random.normal(scale=0.1)
    # expect: C2
    started = time.time()
    y = x * 2.0 + noise
    # expect: C2
    seen_outputs.append(y)
    return y


@tf.function
def noisy_step_fixed(x):
    # expect-none: C2 - tf.print is a graph op and runs on every call
    tf.print("noisy_step_fixed called")
    # expect-none: C2 - tf.random draws a new value on every call
    noise = tf.random.normal([], stddev=0.1)
    return x * 2.0 + noise


# ----------------------------------------------------------------------------------------------
# C3: creating tf.Variables inside a tf.function
# ----------------------------------------------------------------------------------------------
@tf.function
def running_total(x):
    # expect: C3
    total = tf.Variable(0.0)
    total.assign_add(tf.reduce_sum(x))
    return total.read_value()


class Accumulator(tf.Module):
    def __init__(self):
        super().__init__()
        self.total = None

    @tf.function
    def __call__(self, x):
        if self.total is None:
            # expect-none: C3 - guarded by `if self.total is None`: created on the first call only
            self.total = tf.Variable(0.0)
        self.total.assign_add(tf.reduce_sum(x))
        return self.total.read_value()


def main():
    x = tf.constant([0.1, 0.6, 0.8])
    print("C1 count_above, threshold=0.5:", int(count_above(x)))
    set_threshold(0.7)
    print("C1 count_above, threshold=0.7:", int(count_above(x)),
          "(eager would give", int(count_above.python_function(x)), ")")
    print("C1 scale_logits:", [float(t[0]) for t in anneal(tf.constant([6.0]))])
    print("C1 fixed count_above_live, 0.5:", int(count_above_live(x)))
    threshold_var.assign(0.7)
    print("C1 fixed count_above_live, 0.7:", int(count_above_live(x)))

    outs = [float(noisy_step(tf.constant(1.0))) for _ in range(3)]
    print("C2 noisy_step outputs (frozen noise):", outs, "list length:", len(seen_outputs))
    outs = [float(noisy_step_fixed(tf.constant(1.0))) for _ in range(3)]
    print("C2 noisy_step_fixed outputs:", outs)

    try:
        running_total(x)
    except ValueError as exc:
        print("C3 running_total raised ValueError:", str(exc).strip().splitlines()[-1][:90])
    acc = Accumulator()
    print("C3 Accumulator:", [float(acc(x)) for _ in range(3)],
          "traces:", acc.__call__.experimental_get_tracing_count())


if __name__ == "__main__":
    main()
