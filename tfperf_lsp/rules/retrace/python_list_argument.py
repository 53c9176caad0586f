"""TFP105: a tf.function called in a loop with a list of Python numbers that changes per iteration."""
from __future__ import annotations

from functools import partial
from typing import Iterator

from tfperf_lsp.analysis.dataflow import arithmetic_dtype
from tfperf_lsp.analysis.loopvalues import varying_number_list
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import function_label, pass_as_tensor, varying_arguments
from tfperf_lsp.rules.context import RuleContext

_FIX_TITLE = "Pass the list as tf.constant([...])"


class PythonListArgument(Rule):
    code = "TFP105"
    name = "python-list-argument"
    category = "retrace"
    severity = Severity.WARNING
    summary = "tf.function called in a loop with a list of Python numbers that changes: one trace per value"
    doc_url = "https://www.tensorflow.org/guide/function#rules_of_tracing"
    fixable = True
    docs = """
    ## What it does
    Finds calls of a `tf.function` in a loop that pass a list or tuple of Python numbers built
    from the loop variable, such as `[lr, i * 0.1]`.

    ## Why is this slow
    The values, order and length of a Python list are part of the trace key: each new list
    value traces the function again. Measured: `[1., 2.]` and `[2., 1.]` gave 2 traces.

    ## When it stays silent
    For a constant list (the same value each call traces once), and when the parameter is used
    to build the graph (`range()`, shapes, Python `if`, ...), as for TFP101.

    ## Fix
    `tf.constant([...])` at the call site (with `dtype=tf.float32` when the function does
    floating-point arithmetic with it). Marked unsafe: inside the function the argument is now
    one tensor instead of a Python list (`len()` and iteration behave differently).
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            @tf.function
            def affine(x, coefficients):
                return x * coefficients

            x = tf.ones([2])
            for i in range(3):
                affine(x, [1.0, i * 0.5])
            """,
            traced="affine",
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            @tf.function
            def affine(x, coefficients):
                return x * coefficients

            x = tf.ones([2])
            for i in range(3):
                affine(x, [1.0, 0.5])  # the same value every time: one trace
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for varying in varying_arguments(ctx, varying_number_list):
            fn, argument, variable = varying.fn, varying.argument, varying.variable
            fixable = varying.uses.only_tensor
            dtype = arithmetic_dtype(fn.node, varying.param) if fn.node is not None else None
            yield self.finding(
                ctx,
                argument,
                f"`{function_label(fn)}` is traced again for every value of this list (it changes with "
                f"`{variable}`): pass `tf.constant([...])` instead",
                label=f"retraces per value of {variable}",
                fix=partial(pass_as_tensor, ctx, argument, dtype, _FIX_TITLE) if fixable else None,
                fix_title=_FIX_TITLE if fixable else None,
                fix_applicability="unsafe",
                severity=None if fixable else Severity.INFORMATION,
            )
