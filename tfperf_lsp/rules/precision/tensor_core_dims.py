"""TFP604: layer widths and batch sizes that are not multiples of 8 under float16 on a Tensor Core GPU."""
from __future__ import annotations

import ast
from typing import Iterator

from tfperf_lsp.analysis.astutil import keyword
from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.precision._policy import (
    CONV, DENSE, RNN, activation_name, device_facts, policy_at, policy_events, tensor_core_gpu,
)

_OUTPUT_ACTIVATIONS = frozenset({"softmax", "sigmoid", "log_softmax"})
_BATCHED = frozenset({"fit", "evaluate", "predict"})
_SIZE = {**{q: "units" for q in DENSE | RNN}, **{q: "filters" for q in CONV}}


class TensorCoreDims(Rule):
    code = "TFP604"
    name = "tensor-core-dims"
    category = "precision"
    severity = Severity.HINT
    summary = "float16 layer width or batch size not a multiple of 8: Tensor Cores may not be used"
    doc_url = "https://www.tensorflow.org/guide/mixed_precision#gpu_performance_tips"
    docs = """
    ## What it does
    Under the `mixed_float16` policy, on a GPU with compute capability >= 7.0, points at integer
    literals that are not multiples of 8: `Dense(units)`, `Conv*(filters)`, `LSTM`/`GRU`/
    `SimpleRNN(units)`, and `batch_size=` of `fit`/`evaluate`/`predict`. The message names the
    next multiple of 8.

    ## Why is this slow
    Tensor Cores run float16 matrix math when the dimensions are multiples of 8; otherwise
    cuBLAS/cuDNN may fall back to slower kernels (mixed precision guide, GPU performance guide). cuDNN >= 7.6.3 pads convolutions itself, so convolutions may gain less.

    ## When it stays silent
    When the device is not known to be such a GPU (on a CPU the advice is moot; see TFP601 for
    how the device is known), under float32 or `mixed_bfloat16`, for widths below 8, and for
    output layers, whose width is the number of classes: a Dense or Conv with a `softmax`/
    `sigmoid` activation, the last layer of a `Sequential([...])` list (or the last before its
    `Activation`), and a functional Dense/Conv without an activation (tfperf cannot tell it is
    hidden).

    ## Fix
    No automatic fix: a different width changes the architecture (and the checkpoint), a
    different batch size changes the training dynamics. Change it by hand if the benchmark shows
    a gain.
    """
    invalid = (
        Example(
            """
            # tfperf: device=gpu cc=7.5
            import numpy as np
            from tensorflow import keras

            keras.mixed_precision.set_global_policy("mixed_float16")
            model = keras.Sequential([
                keras.Input(shape=(32, 32, 3)),
                keras.layers.Conv2D(30, 3, activation="relu"),
                keras.layers.GlobalAveragePooling2D(),
                keras.layers.Dense(units=100, activation="relu"),
                keras.layers.Dense(10, activation="softmax"),
            ])
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            model.fit(np.zeros((100, 32, 32, 3)), np.zeros(100), batch_size=50, verbose=0)
            """,
            count=3,
        ),
    )
    valid = (
        Example(
            """
            import numpy as np
            from tensorflow import keras

            keras.mixed_precision.set_global_policy("mixed_float16")  # device unknown: silent
            model = keras.Sequential([keras.Input(shape=(20,)), keras.layers.Dense(100, activation="relu"), keras.layers.Dense(10)])
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if not any(e.policy == "mixed_float16" for e in policy_events(ctx)) or not tensor_core_gpu(device_facts(ctx)):
            return
        facts = ctx.facts
        batched = [c for c in facts.calls if isinstance(c.func, ast.Attribute) and c.func.attr in _BATCHED]
        for call in ctx.facts.calls_to(*_SIZE) + batched:
            qualname = facts.qualname(call.func)
            if qualname in _SIZE:
                node = call.args[0] if call.args else keyword(call, _SIZE[qualname])
                what = f"{qualname.rsplit('.', 1)[1]} {_SIZE[qualname]}"
                if qualname not in RNN and _is_output_layer(facts, call):
                    continue
            else:
                node = keyword(call, "batch_size")
                what = "batch_size"
            if not isinstance(node, ast.Constant):
                continue
            value = node.value
            if type(value) is not int or value < 8 or value % 8 == 0:
                continue
            if policy_at(ctx, call.lineno) != "mixed_float16":
                continue
            rounded = (value + 7) // 8 * 8
            yield self.finding(
                ctx,
                node,
                f"{what} {value} is not a multiple of 8: float16 Tensor Core kernels prefer {rounded} "
                f"(a change to the model - benchmark it)",
                label=f"Tensor Cores prefer {rounded}",
            )


def _is_output_layer(facts: ModuleFacts, call: ast.Call) -> bool:
    activation = activation_name(facts, call)
    if activation in _OUTPUT_ACTIVATIONS:
        return True
    parent = facts.parent(call)
    if isinstance(parent, ast.List):
        later = parent.elts[parent.elts.index(call) + 1 :]
        return all(_is_activation_layer(facts, e) for e in later)
    # Functional or stored layers: only a layer with a hidden-style activation is known to be hidden.
    return activation is None


def _is_activation_layer(facts: ModuleFacts, expr: ast.AST) -> bool:
    return isinstance(expr, ast.Call) and facts.qualname(expr.func) in (
        "keras.layers.Activation", "keras.layers.Softmax", "keras.layers.ReLU",
    )
