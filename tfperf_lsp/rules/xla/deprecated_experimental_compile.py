"""TFP505: the deprecated ``experimental_compile=`` argument of tf.function."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator

from tfperf_lsp.analysis.facts import TF_FUNCTION
from tfperf_lsp.model import Finding, Fix, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import rename_keyword_edit
from tfperf_lsp.rules.context import RuleContext

_FIX_TITLE = "Rename to jit_compile="


class DeprecatedExperimentalCompile(Rule):
    code = "TFP505"
    since_tf = (2, 5)  # jit_compile, which the fix names, came in TensorFlow 2.5
    name = "deprecated-experimental-compile"
    category = "xla"
    severity = Severity.WARNING
    summary = "`experimental_compile=` is deprecated: use `jit_compile=`"
    doc_url = "https://www.tensorflow.org/api_docs/python/tf/function"
    fixable = True
    docs = """
    ## What it does
    Finds `tf.function(..., experimental_compile=...)`, the deprecated name of `jit_compile=`.

    ## Why is this slow
    It is not slower today: TensorFlow 2.21 still maps it to `jit_compile` and logs a
    deprecation warning. Deprecated arguments are removed in later releases, and
    `jit_compile` is the name the XLA documentation and tfperf's other XLA rules use.

    ## When it stays silent
    On `jit_compile=`. The retrace twin `experimental_relax_shapes=` is rule TFP106.

    ## Fix
    Renames the keyword to `jit_compile=`. Always safe: same behaviour. No fix when the call
    already passes `jit_compile` as well (the rename would repeat a keyword): delete one by hand.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf


            @tf.function(experimental_compile=True)
            def gelu(x):
                return 0.5 * x * (1.0 + tf.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


            out = gelu(tf.linspace(-3.0, 3.0, 32))
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf


            @tf.function(jit_compile=True)
            def square(x):
                return x * x
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if "experimental_compile" not in ctx.source.text:
            return
        for call in ctx.facts.calls_to(TF_FUNCTION):
            # No fix when jit_compile is passed too: the rename would repeat a keyword.
            renamable = not any(kw.arg == "jit_compile" for kw in call.keywords)
            for kw in call.keywords:
                if kw.arg == "experimental_compile":
                    yield self.finding(
                        ctx,
                        kw,
                        "`experimental_compile` is deprecated: use `jit_compile`",
                        label="deprecated",
                        fix=partial(_rename, ctx, call) if renamable else None,
                        fix_title=_FIX_TITLE if renamable else None,
                    )


def _rename(ctx: RuleContext, call: ast.Call) -> Fix | None:
    """``@tf.function(experimental_compile=True)`` -> ``@tf.function(jit_compile=True)``."""
    edit = rename_keyword_edit(ctx, call, "experimental_compile", "jit_compile")
    return Fix(_FIX_TITLE, (edit,)) if edit else None
