"""TFP101: a tf.function called in a loop with a Python number that changes every iteration."""
from __future__ import annotations

from functools import partial
from typing import Iterator

from tfperf_lsp.analysis.dataflow import arithmetic_dtype
from tfperf_lsp.analysis.loopvalues import varying_scalar
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.common import function_label, pass_as_tensor, varying_arguments


class PythonScalarArgument(Rule):
    code = "TFP101"
    name = "python-scalar-argument"
    category = "retrace"
    severity = Severity.WARNING
    summary = "tf.function called in a loop with a Python number that changes each iteration"
    doc_url = "https://www.tensorflow.org/guide/function#rules_of_tracing"
    fixable = True
    docs = """
    ## What it does
    Finds calls of a `tf.function` inside a Python loop where an argument is a Python `int` or
    `float` that changes from one iteration to the next: a loop counter, an `enumerate` index, an
    epoch number, or a value computed from one.

    ## Why is this slow
    A tf.function keys its cache of traced graphs by the *value* of Python arguments. Every new
    value traces the function again (seconds for a real model) and keeps one more graph in memory.
    TensorFlow warns only after five retraces and does not say which argument is at fault.
    Measured on CPU: 200 calls with `step=i` took 1.85 s; with `tf.constant(i)`, 0.106 s and one trace.
    `reduce_retracing=True` does not help for Python values.

    ## When it stays silent
    When the parameter is *meant* to be a Python value, because the function uses it to build the
    graph: it feeds `range()`, a shape, a Python `if`, `training=`, a Keras layer, or NumPy.
    Then each value needs its own graph. If the parameter goes somewhere tfperf cannot follow, the
    finding is shown at information level without a fix.

    ## Fix
    Pass a tensor: `tf.constant(step)` at the call site. If the function does arithmetic with the
    value and floating-point tensors, the fix uses `dtype=tf.float32` so the arithmetic keeps
    working; if the value is a summary's `step=`, `dtype=tf.int64` (summaries take no other). The fix is marked unsafe: inside the function the value is now a tensor, so check
    Python code that reads it (formatting, `int(step)`).
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, step):
                return x * 2.0 + tf.cast(step, tf.float32)

            x = tf.ones([4])
            for step in range(3):
                train_step(x, step)
            """,
            traced="train_step",
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            @tf.function
            def stacked(x, num_layers):
                for _ in range(num_layers):  # a Python value that shapes the graph: intended
                    x = tf.nn.relu(x)
                return x

            x = tf.ones([4])
            for n in range(3):
                stacked(x, n)
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for varying in varying_arguments(ctx, varying_scalar):
            fn, argument, loop_variable = varying.fn, varying.argument, varying.variable
            name = function_label(fn)
            if varying.uses.only_tensor:
                dtype = arithmetic_dtype(fn.node, varying.param) if fn.node is not None else None
                yield self.finding(
                    ctx,
                    argument,
                    f"`{name}` is traced again for every value of `{loop_variable}`: "
                    f"pass a tensor (`tf.constant(...)`) instead of a Python number",
                    label=f"retraces per value of {loop_variable}",
                    fix=partial(pass_as_tensor, ctx, argument, dtype),
                    fix_title=f"Pass tf.constant({ctx.source.segment(argument)})",
                    fix_applicability="unsafe",
                )
            else:
                yield self.finding(
                    ctx,
                    argument,
                    f"`{name}` is traced again for every value of `{loop_variable}`, "
                    f"unless `{varying.param}` must be a Python value: pass a tensor if it need not be",
                    label=f"retraces per value of {loop_variable}?",
                    severity=Severity.INFORMATION,
                )
