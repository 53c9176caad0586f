"""TFP606: the ``mixed_precision.experimental`` API (removed in TF 2.9) and its relatives."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator, Literal

from tfperf_lsp.analysis.astutil import keyword
from tfperf_lsp.analysis.imports import canonical
from tfperf_lsp.analysis.versions import version_gated
from tfperf_lsp.model import Edit, Finding, Fix, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext

EXPERIMENTAL = "keras.mixed_precision.experimental"
# Old name -> the name in tf.keras >= 2.4 and Keras 3 (same behaviour for these arguments).
_RENAMED = {"set_policy": "set_global_policy", "Policy": "Policy", "global_policy": "global_policy"}
_GRAPH_REWRITE = "tensorflow.train.experimental.enable_mixed_precision_graph_rewrite"


class RemovedMixedPrecisionApi(Rule):
    code = "TFP606"
    name = "removed-mixed-precision-api"
    category = "precision"
    severity = Severity.ERROR
    since_tf = (2, 4)  # set_global_policy, which the fix names, came in TensorFlow 2.4: on 2.1-2.3 the experimental API is the only one
    summary = "`mixed_precision.experimental` / `set_policy` were removed: use `set_global_policy`"
    doc_url = "https://www.tensorflow.org/guide/mixed_precision#setting_the_dtype_policy"
    fixable = True
    docs = """
    ## What it does
    Finds the Keras mixed precision API of TF 2.1-2.3, deprecated in TF 2.4 and removed in TF 2.9
    (and absent from Keras 3): `from tensorflow.keras.mixed_precision import experimental`,
    `tf.keras.mixed_precision.experimental.*`, `mixed_precision.set_policy(...)`, the
    experimental `LossScaleOptimizer(..., loss_scale=...)` (or its loss scale given by position), and
    `tf.train.experimental.enable_mixed_precision_graph_rewrite`.

    ## Why is this slow
    It does not run at all, so the mixed precision it was meant to enable is not there. Measured
    on TF 2.21: the import raises `ImportError: cannot import name 'experimental' from
    'tensorflow.keras.mixed_precision'`; `tf.keras.mixed_precision.set_policy` and
    `tf.train.experimental.enable_mixed_precision_graph_rewrite` raise `AttributeError`. Code
    that guards the import with `try`/`except` silently trains in float32.

    ## When it stays silent
    On the current API: `keras.mixed_precision.set_global_policy`, `Policy`, `LossScaleOptimizer`
    without `loss_scale=`. Calls made through a name imported from the experimental module
    (`Policy(...)` after `from ...experimental import Policy`) are covered by the import's finding.
    In a branch of an `if` on the TensorFlow version, or in the `except ImportError` /
    `AttributeError` fallback of a `try`: that code runs only on the old TensorFlow whose API it
    uses. In a project that pins TensorFlow below 2.4 (`tensorflow==2.3` in `requirements.txt`):
    there the experimental API is the only one.

    ## Fix
    Safe renames, each valid on its own: the module import becomes
    `from tensorflow.keras import mixed_precision` (keeping the local name), a names import keeps
    its names (`set_global_policy as set_policy`), `.experimental.` is dropped from attribute
    paths and `set_policy` becomes `set_global_policy`. No fix for the experimental
    `LossScaleOptimizer(loss_scale=...)` or `LossScaleOptimizer(opt, "dynamic")` (its arguments
    changed: `dynamic=`, `initial_scale=`), nor for a module import whose name reaches such a call
    or a name the new module lacks (rewriting the import would change what they mean), the graph
    rewrite (replace it with a Keras policy by hand), a multi-line import or names the
    new module lacks. The original code raises, so the fixed code is checked to run and to set
    the policy under TensorFlow, not compared with the original's outputs.
    """
    invalid = (
        Example(
            """
            from tensorflow.keras.mixed_precision import experimental as mixed_precision

            policy = mixed_precision.Policy('mixed_float16')
            mixed_precision.set_policy(policy)
            mixed_precision.set_policy('float32')
            """,
            count=3,
            changes_outputs=True,  # the original raises ImportError; tests/rules/tensorflow_claims/test_precision.py check it
            verify_fixed="assert policy.name == 'mixed_float16'",
        ),
    )
    valid = (
        Example(
            """
            import keras

            keras.mixed_precision.set_global_policy("mixed_float16")
            opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD())
            keras.mixed_precision.set_global_policy("float32")
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        text = ctx.source.text
        if "mixed_precision" not in text:
            return
        facts = ctx.facts
        if "experimental" in text:
            for stmt in facts.imports.statements:
                finding = self._import_finding(ctx, stmt) if not version_gated(facts, stmt) else None
                if finding is not None:
                    yield finding
        for qualname, calls in ctx.facts.calls_by_qualname.items():
            if not qualname.startswith(("keras.mixed_precision.", "tensorflow.train.experimental.")):
                continue
            for call in calls:
                if not version_gated(facts, call):  # the old API on the old TensorFlow it is right for
                    yield from self._check_call(ctx, call, qualname)

    def _check_call(self, ctx: RuleContext, call: ast.Call, qualname: str) -> Iterator[Finding]:
        if qualname == _GRAPH_REWRITE:
            yield self.finding(
                ctx, call.func,
                "`enable_mixed_precision_graph_rewrite` was removed from tf.train.experimental: "
                "set a Keras policy (`keras.mixed_precision.set_global_policy`) instead",
                label="removed API",
            )
        elif qualname == "keras.mixed_precision.set_policy" or (
            qualname.startswith(EXPERIMENTAL + ".") and isinstance(call.func, ast.Attribute)
        ):
            finding = self._call_finding(ctx, call, qualname)
            if finding is not None:
                yield finding

    def _import_finding(self, ctx: RuleContext, stmt: ast.Import | ast.ImportFrom) -> Finding | None:
        replacement = _import_replacement(stmt)
        if replacement is False:
            return None  # not the experimental module
        if isinstance(replacement, str) and not _uses_carry_over(ctx, stmt):
            replacement = None
        title = "Import the non-experimental mixed_precision"
        return self.finding(
            ctx, stmt,
            "`mixed_precision.experimental` was removed in TF 2.9 (ImportError on TF 2.21): import "
            "`mixed_precision` from `tensorflow.keras` (or `keras`) instead",
            label="removed API",
            fix=partial(_replace, ctx, stmt, replacement, title) if isinstance(replacement, str) else None,
            fix_title=title if isinstance(replacement, str) else None,
        )

    def _call_finding(self, ctx: RuleContext, call: ast.Call, qualname: str) -> Finding | None:
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None  # _check_call only passes attribute calls (``module.set_policy(...)``)
        old = qualname.rsplit(".", 1)[1]
        experimental = func.value if isinstance(func.value, ast.Attribute) and func.value.attr == "experimental" else None
        through_experimental = experimental is not None
        if not through_experimental and old != "set_policy":
            if old == "LossScaleOptimizer" and _loss_scale_given(call):
                given = "loss_scale=..." if keyword(call, "loss_scale") is not None else "optimizer, loss_scale"
                return self.finding(
                    ctx, func,
                    f"the experimental `LossScaleOptimizer({given})` was removed: use "
                    "`LossScaleOptimizer(optimizer)` (dynamic scaling is the default"
                    + ("; its second parameter is now `dynamic`, a bool)" if "=" not in given else ")"),
                    label="removed API",
                )
            return None  # a name from the experimental import: the import's finding covers it
        new = _RENAMED.get(old)
        if old == "LossScaleOptimizer" and len(call.args) == 1 and not call.keywords:
            new = old
        base = experimental.value if experimental is not None else func.value
        if old == "Policy" and (len(call.args) > 1 or keyword(call, "loss_scale") is not None):
            # The current Policy takes no loss scale (TypeError): renaming alone would break the call.
            return self.finding(
                ctx, func,
                f"`{ctx.source.segment(func)}` was removed (AttributeError on TF 2.21): use "
                f"`{ctx.source.segment(base)}.Policy(...)` without `loss_scale` (`compile` wraps the optimizer in a "
                f"`LossScaleOptimizer` for mixed_float16; a custom training loop wraps it itself)",
                label="removed API",
            )
        replacement = f"{ctx.source.segment(base)}.{new}" if new else None
        instead = f"`{replacement}`" if replacement else "the non-experimental `mixed_precision` API"
        title = f"Use {new}"
        return self.finding(
            ctx, func,
            f"`{ctx.source.segment(func)}` was removed (AttributeError on TF 2.21): use {instead}",
            label="removed API",
            fix=partial(_replace, ctx, func, replacement, title) if replacement else None,
            fix_title=title if replacement else None,
        )


def _loss_scale_given(call: ast.Call) -> bool:
    """``LossScaleOptimizer(opt, loss_scale=...)`` or ``LossScaleOptimizer(opt, 'dynamic')``: the
    experimental signature (the current one's second parameter is ``dynamic``, a bool)."""
    return keyword(call, "loss_scale") is not None or len(call.args) > 1


# The names a module import's alias may reach that the current module has, with the same arguments
# (``set_policy`` is renamed by its own finding's fix).
_CARRIED_OVER = {"Policy", "set_policy", "set_global_policy", "global_policy", "LossScaleOptimizer"}


def _uses_carry_over(ctx: RuleContext, stmt: ast.Import | ast.ImportFrom) -> bool:
    """Whether every ``alias.name`` reached through the module this import binds means the same
    after it imports the current module instead: each name exists there and takes the same
    arguments. ``prec.LossScaleOptimizer(opt, 'dynamic')`` would raise TypeError on the new module
    (its second parameter is ``dynamic=``, a bool): on a TensorFlow where the old import still
    works, rewriting the import would break the call."""
    facts = ctx.facts
    for alias in stmt.names:
        local = alias.asname or alias.name.split(".")[0]
        for name in facts.names.get(local, ()):
            parent = facts.parent(name)
            if not isinstance(parent, ast.Attribute):
                continue
            if parent.attr not in _CARRIED_OVER:
                return False
            call = facts.parent(parent)
            if not isinstance(call, ast.Call) or call.func is not parent:
                continue
            if parent.attr == "LossScaleOptimizer" and _loss_scale_given(call):
                return False
            if parent.attr == "Policy" and (len(call.args) > 1 or keyword(call, "loss_scale") is not None):
                return False
    return True


def _replace(ctx: RuleContext, node: ast.AST, text: str, title: str) -> Fix:
    """The node's text -> ``text``: ``tf.keras.mixed_precision.experimental.set_policy`` ->
    ``tf.keras.mixed_precision.set_global_policy``, ``from tensorflow.keras.mixed_precision
    import experimental as mp`` -> ``from tensorflow.keras import mixed_precision as mp``."""
    return Fix(title, (Edit(ctx.source.span(node), text),))


def _import_replacement(stmt: ast.Import | ast.ImportFrom) -> str | None | Literal[False]:
    """False: not the experimental API. None: it is, but no safe rewrite. Else the new import."""
    if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
        module = stmt.module
        names = [(a.name, a.asname) for a in stmt.names]
        if canonical(module) == "keras.mixed_precision" and any(n == "experimental" for n, _ in names):
            if len(names) != 1 or stmt.lineno != stmt.end_lineno:
                return None
            local = names[0][1] or "experimental"
            parent = module.rsplit(".", 1)[0]
            return f"from {parent} import mixed_precision" + ("" if local == "mixed_precision" else f" as {local}")
        if canonical(module) == EXPERIMENTAL:
            if stmt.lineno != stmt.end_lineno or any(n not in _RENAMED for n, _ in names):
                return None
            parts = [
                _RENAMED[n] + (f" as {a or n}" if _RENAMED[n] != (a or n) else "") for n, a in names
            ]
            return f"from {module.rsplit('.', 1)[0]} import {', '.join(parts)}"
        return False
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if canonical(alias.name) == EXPERIMENTAL:
                if len(stmt.names) != 1 or not alias.asname:
                    return None
                parent = alias.name.rsplit(".", 2)[0]  # tensorflow.keras
                return f"from {parent} import mixed_precision as {alias.asname}"
    return False
