"""TFP802: ``train_on_batch`` (or ``fit`` on one small batch) called over and over in a loop."""
from __future__ import annotations

import ast
from typing import Iterator

from tfperf_lsp.analysis.facts import ModuleFacts, walk_same_scope
from tfperf_lsp.analysis.models import OPTIMIZER_STEPS, assigned_in
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.keras._keras import other_keras_backend, plain_class, receiver_kind, uses_keras


class TrainOnBatchLoop(Rule):
    code = "TFP802"
    name = "train-on-batch-loop"
    category = "keras"
    severity = Severity.INFORMATION
    summary = "opt-in: train_on_batch / fit on small batches in a Python loop: one fit call may be faster - benchmark it"
    doc_url = "https://keras.io/api/models/model_training_apis/#trainonbatch-method"
    opt_in = True  # a low-confidence hint: every finding judged on real code was wrong (38 of 38)
    docs = """
    ## What it does
    Finds `model.train_on_batch(...)` called inside a Python loop, and `model.fit(...)` called
    inside a loop, for one epoch, on a slice whose bounds move with the loop (`x[i:i + b]`: one
    small batch per call), in eager code, for a Keras model.

    ## Why is this slow
    Each call returns to Python and converts its NumPy inputs; `fit` over the whole data keeps
    the loop in its own iterator and `tf.function`. tensorflow/tensorflow#46165 measured the
    `train_on_batch` loop 3x slower than `fit` (GPU, TF 2.4), and a Stack Overflow benchmark found
    `fit` per small batch the slowest option of all. But measured on Keras 3 CPU, a
    `train_on_batch` loop took 0.116 s and `fit` 0.234 s, and tensorflow/tensorflow#35124 used
    `train_on_batch` as the *fast* replacement for per-sample `fit`. So
    this is a low-confidence hint: benchmark both on your device.

    ## When it stays silent
    Unless selected (`select`/`extend-select` naming `TFP802`, `train-on-batch-loop`, `TFP8` or
    `keras`; `tfperf check --extend-select TFP802`): on real code every finding of it was judged
    wrong (38 of 38: GAN and RL loops that interleave other work, a model class's own
    `train_on_batch`, tutorials that show the loop on purpose), and on Keras 3 the loop is often
    the faster one. When selected: in a file that runs Keras 3 on another backend (`os.environ["KERAS_BACKEND"] = "jax"`):
    Keras compiles `train_on_batch` with that backend.
    Outside loops, inside a `tf.function`, when the model is re-created in the loop (a warm-up
    call per new model), when the loop also trains another model with `train_on_batch` (a GAN's
    alternating discriminator and generator updates, which `fit` cannot interleave) or by hand
    (`apply_gradients` in the loop, or in a function or method it calls: a critic step written with
    a tape), for `fit` on the whole data (a per-epoch
    `fit(x, y, epochs=1)` loop), for `fit` on index arrays or loop targets (cross-validation folds
    look like that), and for objects that are not visibly Keras models.

    ## Fix
    No automatic fix: the rewrite changes more than speed. The candidate is one
    `model.fit(x, y, batch_size=b, epochs=n, shuffle=False)` (`fit` shuffles by default; with
    `shuffle=False` and the same batches the weights match the loop, checked under TensorFlow),
    or a `tf.function` train step (TFP301). Per-step Python logic and callbacks differ.
    """
    invalid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            def build():
                tf.keras.utils.set_random_seed(1)
                model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(1)])
                model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
                return model

            x = np.linspace(-1, 1, 64, dtype="float32").reshape(16, 4)
            y = x.sum(axis=1, keepdims=True)
            model = build()
            for epoch in range(2):
                for start in range(0, len(x), 4):
                    loss = model.train_on_batch(x[start:start + 4], y[start:start + 4])
            """,
            verify="""
            other = build()
            other.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
            for a, b in zip(model.get_weights(), other.get_weights()):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)  # the fit(shuffle=False) rewrite
            """,
        ),
    )
    valid = (
        Example(
            """
            import numpy as np
            from tensorflow import keras

            def make():
                return keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(1)])

            x, y = np.zeros((8, 4)), np.zeros((8, 1))
            for size in (8, 16):
                model = make()
                model.compile(optimizer="sgd", loss="mse")
                model.train_on_batch(x, y)  # warm-up of a new model
            for epoch in range(3):
                model.fit(x, y, epochs=1, verbose=0)  # the whole data each time

            def cross_validate(model, folds):
                for train_idx, _ in folds:
                    model.fit(x[train_idx], y[train_idx], epochs=5, verbose=0)  # folds, not small batches
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        if not uses_keras(facts):
            return
        if other_keras_backend(facts):
            return  # Keras on JAX or PyTorch compiles train_on_batch itself
        for call in facts.calls_named("train_on_batch", "fit"):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr in ("train_on_batch", "fit")):
                continue
            loops = facts.enclosing_loops(call)
            if not loops or facts.in_tf_function(call) is not None:
                continue
            receiver = func.value
            if isinstance(receiver, ast.Name) and assigned_in(loops[0], receiver.id):
                continue  # a new model on each iteration
            if isinstance(receiver, ast.Name) and (_built_by_another_library(facts, receiver)
                                                   or _self_of_a_plain_class(facts, receiver)):
                continue  # tl.distributed.Trainer(...).train_on_batch: not a Keras model
            name = ast.unparse(receiver)
            if func.attr == "train_on_batch" and any(_alternates_models(facts, loop, call) for loop in loops):
                continue  # a GAN step: fit cannot alternate two models batch by batch
            if func.attr == "train_on_batch":
                yield self.finding(
                    ctx, call,
                    f"`{name}.train_on_batch` runs once per batch from a Python loop: one "
                    f"`{name}.fit(x, y, batch_size=..., shuffle=False)` may be faster, or slower (Keras 3 on "
                    f"CPU measured train_on_batch faster): benchmark it",
                    label="train_on_batch loop",
                )
            elif receiver_kind(facts, call) in ("model", "keywords") and _per_batch(facts, call, loops):
                yield self.finding(
                    ctx, call,
                    f"`{name}.fit` is called once per small batch from a Python loop: each call sets up "
                    f"its data adapter and loop; one `fit` over all the data (`shuffle=False` keeps the order) "
                    f"or `train_on_batch` may be faster: benchmark it",
                    label="fit per batch",
                )


def _built_by_another_library(facts: ModuleFacts, receiver: ast.Name) -> bool:
    """``trainer = tl.distributed.Trainer(...)``: built by another library and never compiled
    here, as a Keras model must be before it trains (TensorLayer's session-based trainer has a
    ``train_on_batch`` and no ``fit``; a model from keras-unet-collection is compiled)."""
    if any(isinstance(c.func, ast.Attribute) and c.func.attr == "compile" and isinstance(c.func.value, ast.Name)
           and c.func.value.id == receiver.id for c in facts.calls):
        return False
    value = getattr(facts.reaching_assignment(receiver), "value", None)
    if not isinstance(value, ast.Call):
        return False
    root = value.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or root.id not in facts.imports.bindings:
        return False  # a class of this file, or a factory it calls: may well build a Keras model
    package = (facts.qualname(value.func) or "").split(".")[0]
    return package not in _KERAS_PACKAGES


_KERAS_PACKAGES = frozenset({"keras", "tensorflow", "tf_keras", ""})


def _self_of_a_plain_class(facts: ModuleFacts, receiver: ast.Name) -> bool:
    """``self.train_on_batch`` in a class with no base but ``object``: its own method, not Keras'."""
    if receiver.id != "self":
        return False
    cls = facts.enclosing_class(receiver)
    return cls is not None and plain_class(cls)


def _alternates_models(facts: ModuleFacts, loop: ast.AST, call: ast.Call) -> bool:
    """The loop body also trains another model batch by batch (``discriminator.train_on_batch``
    then ``adversarial.train_on_batch``, a GAN's alternating updates, the critic's perhaps in an
    inner loop of its own, or written by hand with a tape and ``apply_gradients``): one ``fit``
    per model cannot interleave them."""
    mine = ast.unparse(call.func.value) if isinstance(call.func, ast.Attribute) else None
    for node in walk_same_scope(loop):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr == "train_on_batch" \
                and ast.unparse(node.func.value) != mine:
            return True
        if _steps_by_hand(node) or _steps_by_hand_in(facts, node):
            return True  # the other model's step written with a tape (``self.train_discriminator(...)``)
    return False


def _steps_by_hand(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr in OPTIMIZER_STEPS


def _steps_by_hand_in(facts: ModuleFacts, call: ast.Call) -> bool:
    """``call`` runs a def of this file (a function, or a method through ``self.``) that applies
    gradients itself."""
    target = facts.resolve_def(call.func, call)
    return target is not None and any(isinstance(n, ast.Call) and _steps_by_hand(n) for n in walk_same_scope(target))


def _per_batch(facts, call: ast.Call, loops) -> bool:
    """``fit(x[a:b], ...)`` with slice bounds that move with the loop, for one epoch: one small
    batch per call. (Loop targets and index arrays are left alone: cross-validation folds look
    the same and are not small batches.)"""
    x = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "x"), None)
    epochs = next((k.value for k in call.keywords if k.arg == "epochs"), None)
    if epochs is not None and not (isinstance(epochs, ast.Constant) and epochs.value == 1):
        return False
    if not (isinstance(x, ast.Subscript) and isinstance(x.slice, ast.Slice)):
        return False
    targets = set()
    for loop in loops:
        targets |= facts.loop_targets(loop)
    return any(isinstance(n, ast.Name) and n.id in targets for n in ast.walk(x.slice))
