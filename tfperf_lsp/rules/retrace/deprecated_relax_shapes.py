"""TFP106: the deprecated ``experimental_relax_shapes=`` argument of tf.function."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator

from tfperf_lsp.analysis.facts import TF_FUNCTION
from tfperf_lsp.model import Finding, Fix, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import rename_keyword_edit
from tfperf_lsp.rules.context import RuleContext

_FIX_TITLE = "Rename to reduce_retracing="


class DeprecatedRelaxShapes(Rule):
    code = "TFP106"
    since_tf = (2, 9)  # reduce_retracing, which the fix names, came in TensorFlow 2.9
    name = "deprecated-relax-shapes"
    category = "retrace"
    severity = Severity.WARNING
    summary = "opt-in: `experimental_relax_shapes=` is deprecated: use `reduce_retracing=`"
    doc_url = "https://www.tensorflow.org/api_docs/python/tf/function"
    fixable = True
    measurable = False  # a rename: same behaviour, nothing to time
    opt_in = True  # not slower, still accepted: only with `select`/`extend-select` naming it
    docs = """
    ## What it does
    Finds `tf.function(..., experimental_relax_shapes=...)`, the deprecated name of
    `reduce_retracing=`.

    ## Why is this slow
    It is not slower today: TensorFlow maps it to `reduce_retracing` and logs a deprecation
    warning. Deprecated arguments are removed in later releases, and the new name says what it
    does: trace a more general graph (unknown dimensions) instead of one per shape.

    ## When it stays silent
    Unless selected (`select`/`extend-select` naming `TFP106`, `deprecated-relax-shapes`, `TFP1`
    or `retrace`; `tfperf check --extend-select TFP106`): the old name costs nothing today, and
    on real code every finding of it was judged not worth a reader's attention (19 of 19), so
    it is a clean-up to run on purpose, not a default. Silent on `reduce_retracing=`. The XLA twin
    `experimental_compile=` is rule TFP505's business.

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

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for call in ctx.facts.calls_to(TF_FUNCTION):
            for kw in call.keywords:
                if kw.arg == "experimental_relax_shapes":
                    yield self.finding(
                        ctx,
                        kw,
                        "`experimental_relax_shapes` is deprecated: use `reduce_retracing`",
                        label="deprecated",
                        fix=partial(_rename, ctx, call),
                        fix_title=_FIX_TITLE,
                    )


def _rename(ctx: RuleContext, call: ast.Call) -> Fix | None:
    """``tf.function(f, experimental_relax_shapes=True)`` -> ``tf.function(f, reduce_retracing=True)``."""
    edit = rename_keyword_edit(ctx, call, "experimental_relax_shapes", "reduce_retracing")
    return Fix(_FIX_TITLE, (edit,)) if edit else None
