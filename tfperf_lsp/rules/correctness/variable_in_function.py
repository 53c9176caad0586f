"""TFP203: ``tf.Variable`` created in a tf.function body on every trace."""
from __future__ import annotations

import ast
from typing import Iterator

from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import function_label
from tfperf_lsp.rules.context import RuleContext

_VARIABLE = "tensorflow.Variable"


class VariableInFunction(Rule):
    code = "TFP203"
    name = "variable-in-function"
    category = "correctness"
    severity = Severity.ERROR
    summary = "tf.Variable created in a tf.function body: raises ValueError (variables only on first call)"
    doc_url = "https://www.tensorflow.org/guide/function#creating_tfvariables"
    docs = """
    ## What it does
    Finds `tf.Variable(...)` calls in the body of a tf.function that are not guarded so they run
    only once (`if self.v is None:`).

    ## Why is this slow
    It fails. A tf.function may create variables only on its first call, and it traces that call
    twice to check that no new variables appear; an unguarded `tf.Variable` creates a new one
    each trace, so the call raises `ValueError: tf.function only supports singleton
    tf.Variables created on the first call` (measured on TF 2.21, even on the very first call).

    ## When it stays silent
    When the creation is inside an `if` that tests whether the variable exists yet
    (`is None`, `not self.built`, `hasattr`), or inside `with tf.init_scope():` (lifted out of
    the graph, as optimizers create their slots); outside tf.functions; and in a TensorFlow
    Federated computation, which is traced once in graph mode, not by tf.function.

    ## Fix
    Create variables outside the function (in `__init__`, or `build()` of a Keras layer) and
    pass or capture them. No automatic fix.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            @tf.function
            def scale(x):
                factor = tf.Variable(2.0)
                return x * factor
            """,
            verify="""
            try:
                scale(tf.ones([2]))
            except ValueError as error:
                assert "singleton tf.Variables" in str(error)
            else:
                raise AssertionError("expected ValueError")
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            class Scale(tf.Module):
                def __init__(self):
                    self.factor = None

                @tf.function
                def __call__(self, x):
                    if self.factor is None:
                        self.factor = tf.Variable(2.0)
                    return x * self.factor

            result = Scale()(tf.ones([2]))
            """,
            verify="""
            assert result.numpy().tolist() == [2.0, 2.0]
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for call in facts.calls_to(_VARIABLE):
            fn = facts.in_tf_function(call)
            if fn is None or not fn.is_tf_function or _guarded(facts, call):
                continue
            yield self.finding(
                ctx,
                call,
                f"`tf.Variable` created inside `{function_label(fn)}` on every trace: tf.function raises "
                f"ValueError; create it once outside (or guard it with `if ... is None`)",
                label="new variable per trace",
            )


def _guarded(facts: ModuleFacts, call: ast.Call) -> bool:
    for ancestor in facts.ancestors(call):
        if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        if isinstance(ancestor, ast.With) and any(
                isinstance(item.context_expr, ast.Call) and facts.qualname(item.context_expr.func) == "tensorflow.init_scope"
                for item in ancestor.items):
            return True  # lifted out of the graph into the eager context (how optimizers make slots)
        if isinstance(ancestor, ast.If) and _tests_creation(ancestor.test):
            return True
    return False


def _tests_creation(test: ast.expr) -> bool:
    """An ``if`` that asks whether something exists yet: ``x is None``, ``not self.built``,
    ``v is not None``, ``"w" not in slots``, ``hasattr(self, "w")``, ``self._built``."""
    for node in ast.walk(test):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return True
        if isinstance(node, ast.Compare) and any(
                isinstance(op, (ast.IsNot, ast.NotIn))
                or (isinstance(op, ast.Is) and isinstance(right, ast.Constant) and right.value is None)
                for op, right in zip(node.ops, node.comparators)):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr":
            return True
        if "built" in (getattr(node, "attr", None) or getattr(node, "id", None) or ""):
            return True
    return False
