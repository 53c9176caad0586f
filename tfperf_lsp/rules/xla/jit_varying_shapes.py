"""TFP504: a jit-compiled tf.function fed tensors whose shape changes every loop iteration."""
from __future__ import annotations

from typing import Iterator

from tfperf_lsp.analysis.shapes import varying_shape
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import eager_loop_calls, function_label
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.xla._common import is_jit_compiled


class JitVaryingShapes(Rule):
    code = "TFP504"
    name = "jit-varying-shapes"
    category = "xla"
    severity = Severity.WARNING
    summary = "jit-compiled tf.function fed a new shape every iteration: XLA compiles once per shape"
    doc_url = "https://www.tensorflow.org/xla/known_issues#dynamic_shapes"
    docs = """
    ## What it does
    Finds calls, in a Python loop, of a `tf.function(jit_compile=True)` (or the deprecated
    `experimental_compile=True`) where a tensor argument's shape depends on the loop variable: a
    slice with one moving bound (`x[:i]`) or a tensor built with a shape that uses it
    (`tf.zeros([4, n])`), directly or through a name assigned in the loop.

    ## Why is this slow
    XLA compiles a program for every new input shape. `reduce_retracing=True` or an
    `input_signature` with `None` dimensions stops the *retracing* but not the *recompiling*:
    measured, a `reduce_retracing` function traced twice yet paid about 50 ms at the first call
    of each new shape.

    ## When it stays silent
    When the function does not jit-compile, when the shape is fixed (a slice of constant length
    `x[i:i + 32]`, or inputs padded to one bucket length with `tf.pad`), and when tfperf cannot
    see how the shape is built.

    ## Fix
    No automatic fix: the remedy changes the inputs. Pad to a few bucket lengths (a multiple of
    64, say) and mask the padding, or batch with `padded_batch` / `bucket_by_sequence_length`;
    or drop `jit_compile` for this function if the shapes really are all different. Rule TFP103
    covers the retracing side when `reduce_retracing` is not set.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf


            @tf.function(jit_compile=True, reduce_retracing=True)
            def masked_mean(tokens, mask):
                return tf.reduce_sum(tokens * mask, axis=1) / tf.reduce_sum(mask, axis=1)


            for length in (16, 24, 32, 40):
                tokens = tf.random.normal([4, length])
                masked_mean(tokens, tf.ones([4, length]))
            """,
            count=1,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            BUCKET = 64


            @tf.function(jit_compile=True)
            def masked_mean(tokens, mask):
                return tf.reduce_sum(tokens * mask, axis=1) / tf.reduce_sum(mask, axis=1)


            for length in (16, 24, 32, 40):
                tokens = tf.random.normal([4, length])
                padding = [[0, 0], [0, BUCKET - length]]
                masked_mean(tf.pad(tokens, padding), tf.pad(tf.ones([4, length]), padding))
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in eager_loop_calls(ctx):
            fn = site.callee.fn
            if not is_jit_compiled(fn):
                continue
            for argument in list(site.call.args) + [kw.value for kw in site.call.keywords]:
                variable = varying_shape(ctx.facts, argument, site.loops)
                if variable is None:
                    continue
                yield self.finding(
                    ctx,
                    argument,
                    f"`{function_label(fn)}` is jit-compiled and this argument's shape changes with "
                    f"`{variable}`: XLA compiles it again for every new shape (reduce_retracing does "
                    f"not prevent that) - pad or bucket the inputs",
                    label=f"XLA recompiles per {variable}",
                )
                break
