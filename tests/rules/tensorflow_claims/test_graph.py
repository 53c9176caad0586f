"""What the graph rules claim, checked under TensorFlow 2.21 / Keras 3 on CPU."""
import textwrap

import pytest

from tests.rules.device_helpers import run
from tests.rules.helpers import findings

pytestmark = pytest.mark.tf

# A step that receives its optimizer, run twice with a new optimizer each time (a notebook cell
# run again, or two training runs): what TFP301 says instead of decorating the def.
STEP_WITH_OPTIMIZER_PASSED_IN = textwrap.dedent(
    """\
    import tensorflow as tf

    w = tf.Variable(1.0)


    def step(x, trainer):
        with tf.GradientTape() as tape:
            loss = (w * x) ** 2
        trainer.apply_gradients([(tape.gradient(loss, w), w)])
        return loss


    def train():
        trainer = tf.keras.optimizers.Adam(0.1)
        for i in range(1000):
            step(tf.constant(1.0), trainer)
    """
)


def test_decorating_a_step_that_receives_its_optimizer_breaks_a_second_run():
    [finding] = findings(STEP_WITH_OPTIMIZER_PASSED_IN + "\ntrain()\ntrain()\n", "TFP301")  # two runs, two optimizers
    assert finding.fix_title is None and "once per training run" in finding.message
    [finding] = findings(STEP_WITH_OPTIMIZER_PASSED_IN + "\ntrain()\n", "TFP301")  # one run, one optimizer
    assert finding.fix_title == "Decorate with @tf.function"
    decorated = STEP_WITH_OPTIMIZER_PASSED_IN.replace("def step(", "@tf.function\ndef step(")
    with pytest.raises(ValueError, match="singleton tf.Variables created on the first call"):
        run(decorated + "\ntrain()\ntrain()\n")  # the second run's new Adam makes variables on a new trace
    advised = STEP_WITH_OPTIMIZER_PASSED_IN.replace("    for i in range(1000):\n        step(",
                                                    "    fast_step = tf.function(step)\n    for i in range(1000):\n        fast_step(")
    run(advised + "\ntrain()\ntrain()\n")  # the advice: one tf.function per run


# A step fed by ``padded_batch``: every batch is padded to its own longest element.
STEP_ON_PADDED_BATCHES = textwrap.dedent(
    """\
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Embedding(50, 4), tf.keras.layers.GlobalAveragePooling1D(),
                                 tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)
    lengths = [3, 5, 7, 9, 11, 13, 4, 6]
    texts = tf.data.Dataset.from_generator(lambda: ([1] * n for n in lengths),
                                           output_signature=tf.TensorSpec([None], tf.int32))
    batches = texts.padded_batch(1)


    def train_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    plain = tf.function(train_step)
    relaxed = tf.function(train_step, reduce_retracing=True)
    for epoch in range(2):
        for x in batches:
            plain(x)
            relaxed(x)
    """)


def test_a_step_on_padded_batches_gets_reduce_retracing_which_traces_it_once_or_twice():
    """TFP301's advice for a step fed by ``padded_batch``: a plain tf.function traces it for every
    new length; ``reduce_retracing=True`` relaxes the length after the second and stops."""
    trained = STEP_ON_PADDED_BATCHES.split("plain = ")[0] + "for epoch in range(1000):\n    for x in batches:\n        train_step(x)\n"
    reported = findings(trained, "TFP301")
    assert len(reported) == 1 and "@tf.function(reduce_retracing=True)" in reported[0].message
    namespace = run(STEP_ON_PADDED_BATCHES)
    assert namespace["plain"].experimental_get_tracing_count() >= 8  # one per length at least
    assert namespace["relaxed"].experimental_get_tracing_count() <= 2
