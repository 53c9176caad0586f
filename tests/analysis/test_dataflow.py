"""The traps of catalog section 4: a Python value that shapes the graph is not a retrace bug."""
import textwrap

import pytest

from tfperf_lsp.analysis.dataflow import Use, classify_parameter
from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.source import SourceText


def uses(body: str, param: str = "n"):
    code = "import tensorflow as tf\nimport numpy as np\n\ndef helper(v, k):\n    return tf.reshape(v, [k, -1])\n\n" + textwrap.dedent(body)
    source = SourceText(code)
    facts = ModuleFacts(source.parse(), source)
    fn = next(f for f in facts.functions if f.name == "f")
    return classify_parameter(facts, fn, param)


@pytest.mark.parametrize(
    "body,reason",
    [
        ("def f(x, n):\n    for _ in range(n):\n        x = x * 2\n    return x\n", "range"),
        ("def f(x, n):\n    return tf.zeros([n, 3]) + x\n", "shape"),
        ("def f(x, n):\n    if n > 2:\n        return x\n    return -x\n", "if"),
        ("def f(x, n):\n    return tf.keras.layers.Dense(n)(x)\n", "Keras layer"),
        ("def f(x, n):\n    return model(x, training=n)\n", "training"),
        ("def f(x, n):\n    return x + np.ones(n)\n", "numpy"),
        ("def f(x, n):\n    m = n * 2\n    return tf.ones([m])\n", "shape"),  # through a derived name
        ("def f(x, n):\n    return helper(x, n)\n", "reshape"),  # through a local helper
    ],
)
def test_static_uses_are_recognised(body, reason):
    result = uses(body)
    assert result.is_static, reason
    assert result.static_reason


@pytest.mark.parametrize(
    "body",
    [
        "def f(x, n):\n    return x * tf.cast(n, tf.float32)\n",
        "def f(x, n):\n    return tf.math.pow(x, n)\n",
        "def f(x, n):\n    y = n + 1\n    return tf.add(x, y)\n",
    ],
)
def test_tensor_only_uses(body):
    assert uses(body).kinds == {Use.TENSOR}


def test_unknown_use_is_neither():
    result = uses("def f(x, n):\n    return some_object.method(x, n)\n")
    assert result.kinds == {Use.UNKNOWN}
    assert not result.only_tensor and not result.is_static
