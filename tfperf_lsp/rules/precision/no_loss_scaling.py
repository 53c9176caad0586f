"""TFP603: a custom GradientTape loop under mixed_float16 whose optimizer does not scale the loss."""
from __future__ import annotations

import ast
from typing import Iterator, Sequence

from tfperf_lsp.analysis.environment import keras_major
from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.precision._policy import policy_at, policy_events

_SCALING_CALLS = frozenset({"scale_loss", "get_scaled_loss", "get_unscaled_gradients"})
_API = {
    3: "wrap it in `keras.optimizers.LossScaleOptimizer` and take gradients of `optimizer.scale_loss(loss)`",
    2: "wrap it in `tf.keras.mixed_precision.LossScaleOptimizer` and use `get_scaled_loss` / "
    "`get_unscaled_gradients`",
    None: "wrap it in `LossScaleOptimizer` (Keras 3: `scale_loss(loss)`; tf-keras 2: "
    "`get_scaled_loss` / `get_unscaled_gradients`)",
}


class NoLossScaling(Rule):
    code = "TFP603"
    name = "no-loss-scaling"
    category = "precision"
    severity = Severity.WARNING
    summary = "Custom training loop under mixed_float16 without a LossScaleOptimizer: gradients underflow"
    doc_url = "https://www.tensorflow.org/guide/mixed_precision#training_the_model_with_a_custom_training_loop"
    docs = """
    ## What it does
    Finds an optimizer built under the `mixed_float16` policy whose `apply_gradients` is called in
    a function with a `tf.GradientTape`, where nothing scales the loss (`scale_loss`,
    `get_scaled_loss`, `get_unscaled_gradients`) and the optimizer is not a `LossScaleOptimizer`.
    The finding sits on the optimizer's construction.

    ## Why is this slow
    float16 gradients of small losses underflow to zero, so the model trains slowly or not at all. `examples/mixed_precision.py` shows every kernel gradient exactly 0 without
    scaling and none with it. The API depends on the Keras version: Keras 3's
    `LossScaleOptimizer` has `scale_loss` and unscales in `apply_gradients`; tf-keras 2 has
    `get_scaled_loss` / `get_unscaled_gradients`.

    ## When it stays silent
    Under `mixed_bfloat16` (bfloat16 has float32's exponent range: no scaling needed), for
    `model.fit` (Keras `compile()` wraps the optimizer itself: Keras 3 `auto_scale_loss=True`),
    when the loop scales the loss, and when tfperf cannot see where the optimizer was built.

    ## Fix
    No automatic fix: the loss scaling touches the optimizer construction, the loss inside the
    tape and (on tf-keras 2) the gradients, which is more than tfperf rewrites safely. The message
    names the API for the Keras version in use (`kerasVersion` in `[tool.tfperf]` overrides it).
    """
    invalid = (
        Example(
            """
            import tensorflow as tf
            from tensorflow import keras

            keras.mixed_precision.set_global_policy("mixed_float16")
            model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8)])
            optimizer = keras.optimizers.SGD(learning_rate=0.01)


            @tf.function
            def train_step(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x)) * 1e-5
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf
            from tensorflow import keras

            keras.mixed_precision.set_global_policy("mixed_float16")
            model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8)])
            optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(learning_rate=0.01))


            @tf.function
            def train_step(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x)) * 1e-5
                    scaled = optimizer.scale_loss(loss)
                grads = tape.gradient(scaled, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if not any(e.policy == "mixed_float16" for e in policy_events(ctx)):
            return
        facts = ctx.facts
        tapes = {facts.scope_of(item) for item in facts.with_items if facts.qualname(_callee(item.context_expr)) == "tensorflow.GradientTape"}
        scaling = {facts.scope_of(c) for c in facts.calls_named(*_SCALING_CALLS) if isinstance(c.func, ast.Attribute)}
        reported: set[ast.Call] = set()
        for call in facts.calls_named("apply_gradients"):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "apply_gradients" and isinstance(func.value, ast.Name)):
                continue
            scope = facts.scope_of(call)
            if scope not in tapes or scope in scaling:
                continue
            construction = _construction(facts, func.value, call)
            if construction is None or construction in reported:
                continue
            if "mixed_float16" not in (policy_at(ctx, construction.lineno), policy_at(ctx, call.lineno)):
                continue
            reported.add(construction)
            api = _API[keras_major(facts, ctx.settings)]
            yield self.finding(
                ctx,
                construction,
                f"`{func.value.id}` applies float16 gradients without loss scaling (they can "
                f"underflow to zero under `mixed_float16`): {api}",
                label="no loss scaling",
                head_only=True,
            )


def _callee(expr: ast.AST) -> ast.AST | None:
    return expr.func if isinstance(expr, ast.Call) else None


def _construction(facts: ModuleFacts, name: ast.Name, at: ast.AST) -> ast.Call | None:
    """The ``keras.optimizers.X(...)`` call that every assignment of ``name`` makes, if any."""
    scope = facts.enclosing_function(at)
    candidates: Sequence[ast.AST] = facts.assignments_in(scope).get(name.id, []) if scope is not None else []
    candidates = candidates or facts.module_assignments.get(name.id, [])
    if len(candidates) != 1 or not isinstance(candidates[0], ast.Assign):
        return None
    value = candidates[0].value
    if not isinstance(value, ast.Call):
        return None
    qualname = facts.qualname(value.func)
    if not qualname or not qualname.startswith("keras.optimizers.") or qualname.endswith("LossScaleOptimizer"):
        return None
    return value
