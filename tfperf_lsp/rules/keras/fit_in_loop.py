"""TFP806: ``model.fit(x, y)`` called again and again in a Python loop on the same data."""
from __future__ import annotations

import ast
from typing import Iterator

from tfperf_lsp.analysis.hotness import is_short_loop
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.keras._keras import FIT_KEYWORDS, receiver_kind

# Statements a loop around ``fit`` may hold and still be "only fit": logging and keeping history.
_HARMLESS_CALLS = {"print", "append", "info", "debug", "write", "extend", "update", "log"}


class FitInLoop(Rule):
    code = "TFP806"
    name = "fit-in-loop"
    category = "keras"
    severity = Severity.INFORMATION
    summary = "`fit` called on the same data in every iteration of a Python loop: one `fit(epochs=N)` call does it"
    doc_url = "https://www.tensorflow.org/guide/keras/training_with_built_in_methods"
    docs = """
    ## What it does
    Finds `model.fit(...)` called in a Python loop whose body does nothing else (logging and
    keeping the history aside), with the same data on every iteration: no argument of `fit`
    changes from one iteration to the next.

    ## Why is this slow
    Every `fit` call builds its input pipeline again from the arrays (a copy into a `tf.data`
    dataset), its callbacks and progress bar, and its iterator, before the first step; with few
    steps per call, that setup dominates (tensorflow/tensorflow#35124: per-sample `fit` calls
    were many times slower than one call). `fit(x, y, epochs=N)` pays it once.

    ## When it stays silent
    When the loop does other work between the calls (evaluates, saves, changes the learning
    rate or the data, builds a new model), when an argument of `fit` changes with the loop (new
    data each iteration, `initial_epoch=i`), for loops over a handful of literal items (a
    hyperparameter sweep), when `fit` gets a keyword Keras' `fit` does not take (`nb_epoch=`:
    DeepChem's or Keras 1's `fit`, whose epochs work otherwise), and in test code.

    ## Fix
    `model.fit(x, y, epochs=N * epochs_per_call)`; per-epoch work goes into a callback
    (`keras.callbacks.LambdaCallback(on_epoch_end=...)`). No quick fix: the loop's other uses
    of its counter and the callbacks' behaviour need the author's eye.
    """
    invalid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            x, y = np.ones((32, 4), "float32"), np.ones((32, 1), "float32")
            history = []
            for round_ in range(5):
                result = model.fit(x, y, epochs=1, verbose=0)
                history.append(result.history["loss"][-1])
            """,
        ),
    )
    valid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            x, y = np.ones((32, 4), "float32"), np.ones((32, 1), "float32")
            for stage in range(5):
                model.fit(x, y, epochs=stage + 1, initial_epoch=stage, verbose=0)
                model.save(f"stage{stage}.keras")  # work between the calls
            for part in np.array_split(np.arange(32), 4):
                model.fit(x[part], y[part], verbose=0)  # new data each time
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for call in facts.calls_named("fit"):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "fit") or receiver_kind(facts, call) is None:
                continue
            if any(k.arg is not None and k.arg not in FIT_KEYWORDS for k in call.keywords):
                continue  # not Keras' fit (``model.fit(data, nb_epoch=1)``: DeepChem): its epochs are its own
            loops = facts.enclosing_loops(call)
            if not loops or facts.in_tf_function(call) is not None:
                continue
            loop = loops[0]
            if not isinstance(loop, (ast.For, ast.While)) or (isinstance(loop, ast.For) and is_short_loop(loop)):
                continue
            changing = facts.names_changed_by(loop)
            used = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)}
            if used & changing or not _only_fit(loop, call):
                continue
            yield self.finding(
                ctx, call,
                f"`{ast.unparse(func)}` is called on the same data in every iteration: each call rebuilds its "
                f"input pipeline and callbacks - one call with `epochs=` does the same training once",
                label="fit in a loop",
            )


def _only_fit(loop: ast.For | ast.While, call: ast.Call) -> bool:
    """The loop body is the ``fit`` call plus logging / history keeping."""
    for stmt in loop.body:
        value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
        if value is call or (isinstance(value, ast.Call) and call in list(ast.walk(value))):
            continue
        if isinstance(value, ast.Call):
            name = value.func.attr if isinstance(value.func, ast.Attribute) else getattr(value.func, "id", "")
            if name in _HARMLESS_CALLS:
                continue
        return False
    return True
