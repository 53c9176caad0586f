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
