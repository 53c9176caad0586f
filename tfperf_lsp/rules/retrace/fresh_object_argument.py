"""TFP104: a tf.function called in a loop with a fresh Python object (instance, lambda) each time."""
from __future__ import annotations

import ast
from typing import Iterator

from tfperf_lsp.analysis.facts import ModuleFacts, target_names, walk_same_scope
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import eager_loop_calls, function_label
from tfperf_lsp.rules.context import RuleContext


class FreshObjectArgument(Rule):
    code = "TFP104"
    name = "fresh-object-argument"
    category = "retrace"
    severity = Severity.WARNING
    summary = "tf.function called in a loop with a new Python object each time: one trace per object"
    doc_url = "https://www.tensorflow.org/guide/function#depending_on_python_objects"
    docs = """
    ## What it does
    Finds calls of a `tf.function` in a loop that pass an object created for that call: an
    instance of a class defined in this file (`Config(...)`) or a `lambda`.

    ## Why is this slow
    tf.function matches a generic Python object argument by identity (then equality) through a
    weak reference. A fresh object never matches a previous trace, so every call traces again.
    Measured: 3 instances gave 3 traces.

    ## When it stays silent
    When the object is created once, outside the loop; for TensorFlow, Keras and NumPy objects;
    for instances of a `tf.experimental.ExtensionType` (or of a class with its own
    `__tf_tracing_type__`), which trace by their fields; for functions with an `input_signature`.

    ## Fix
    Create the object once and reuse it (immutable, so the trace stays valid), pass its numeric
    fields as tensors, or make it a `tf.experimental.ExtensionType`. Beware: reusing one object
    and *mutating* it does not retrace, so the function silently keeps the old values. No
    automatic fix is offered.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            class Scale:
                def __init__(self, factor):
                    self.factor = factor

            @tf.function
            def apply(x, scale):
                return x * scale.factor

            for i in range(3):
                apply(tf.ones([2]), Scale(2.0))
            """,
            traced="apply",
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            class Scale:
                def __init__(self, factor):
                    self.factor = factor

            @tf.function
            def apply(x, scale):
                return x * scale.factor

            scale = Scale(2.0)
            for i in range(3):
                apply(tf.ones([2]), scale)
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        # A class whose instances trace by value (an ExtensionType, a class with its own tracing
        # type) is what the docs recommend: a new instance of it does not retrace.
        local_classes = {cls.name for cls in facts.classes
                         if facts.scope_of(cls) is None and not _traces_by_value(facts, cls)}
        for site in eager_loop_calls(ctx):
            fn = site.callee.fn
            if "input_signature" in fn.options:
                continue
            for argument in list(site.call.args) + [kw.value for kw in site.call.keywords]:
                what = _fresh_object(argument, site.loops, local_classes)
                if what is None:
                    continue
                yield self.finding(
                    ctx,
                    argument,
                    f"`{function_label(fn)}` is traced again on every call: {what} is a new object each "
                    f"iteration and tf.function matches objects by identity; create it once outside the loop",
                    label="retraces per new object",
                )
                break


def _fresh_object(expr: ast.AST, loops: list[ast.AST], classes: set[str], depth: int = 0) -> str | None:
    if isinstance(expr, ast.Lambda):
        return "the lambda"
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in classes:
        return f"`{expr.func.id}(...)`"
    if isinstance(expr, ast.Name) and depth == 0:
        for loop in loops:
            for stmt in getattr(loop, "body", []):
                for node in walk_same_scope(stmt):
                    if isinstance(node, ast.Assign) and any(expr.id in target_names(t) for t in node.targets):
                        inner = _fresh_object(node.value, loops, classes, depth + 1)
                        return f"`{expr.id}` ({inner})" if inner else None
    return None


def _traces_by_value(facts: ModuleFacts, cls: ast.ClassDef) -> bool:
    """``class Scale(tf.experimental.ExtensionType)``, or a class defining ``__tf_tracing_type__``:
    tf.function matches its instances by their fields, not by identity."""
    if any((facts.qualname(base) or "").endswith("ExtensionType") for base in cls.bases):
        return True
    return any(isinstance(stmt, ast.FunctionDef) and stmt.name == "__tf_tracing_type__" for stmt in cls.body)
