"""TFP106: the deprecated ``experimental_relax_shapes=`` argument of tf.function."""
from __future__ import annotations

from tfperf_lsp.analysis.facts import TF_FUNCTION
from tfperf_lsp.model import Fix, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import rename_keyword_edit


class DeprecatedRelaxShapes(Rule):
    code = "TFP106"
    name = "deprecated-relax-shapes"
    category = "retrace"
    severity = Severity.WARNING
    summary = "`experimental_relax_shapes=` is deprecated: use `reduce_retracing=`"
    doc_url = "https://www.tensorflow.org/api_docs/python/tf/function"
    fixable = True
    measurable = False  # a rename: same behaviour, nothing to time
    docs = """
    ## What it does
    Finds `tf.function(..., experimental_relax_shapes=...)`, the deprecated name of
    `reduce_retracing=`.

    ## Why is this slow
    It is not slower today: TensorFlow maps it to `reduce_retracing` and logs a deprecation
    warning. Deprecated arguments are removed in later releases, and the new name says what it
    does: trace a more general graph (unknown dimensions) instead of one per shape.

    ## When it stays silent
    On `reduce_retracing=`. The XLA twin `experimental_compile=` is rule TFP505's business.

    ## Fix
    Rename the keyword to `reduce_retracing=`. Always safe: same behaviour.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            @tf.function(experimental_relax_shapes=True)
            def total(x):
                return tf.reduce_sum(x)
            """,
            fixed="""
            import tensorflow as tf

            @tf.function(reduce_retracing=True)
            def total(x):
                return tf.reduce_sum(x)
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            @tf.function(reduce_retracing=True)
            def total(x):
                return tf.reduce_sum(x)
            """
        ),
    )

    def check(self, ctx):
        for call in ctx.facts.calls:
            if ctx.facts.qualname(call.func) != TF_FUNCTION:
                continue
            for kw in call.keywords:
                if kw.arg == "experimental_relax_shapes":
                    yield self.finding(
                        ctx,
                        kw,
                        "`experimental_relax_shapes` is deprecated: use `reduce_retracing`",
                        label="deprecated",
                        fix_title="Rename to reduce_retracing=",
                        call_line=call.lineno,
                        call_col=call.col_offset,
                    )

    def fix(self, ctx, finding):
        call = next(
            c for c in ctx.facts.calls
            if c.lineno == finding.data["call_line"] and c.col_offset == finding.data["call_col"]
        )
        edit = rename_keyword_edit(ctx, call, "experimental_relax_shapes", "reduce_retracing")
        return Fix(finding.fix_title, (edit,)) if edit else None
