"""TFP805: a small Keras model compiled without ``steps_per_execution`` and trained with ``fit``."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator

from tfperf_lsp.rewrite.lazy import libcst as cst  # libcst only when a fix is built

from tfperf_lsp.analysis.astutil import int_value, keyword
from tfperf_lsp.analysis.facts import ModuleFacts, walk_same_scope
from tfperf_lsp.analysis.fits import epoch_steps_at_most, few_steps, fit_uses
from tfperf_lsp.analysis.models import is_model_name
from tfperf_lsp.model import Finding, Fix, Severity
from tfperf_lsp.rewrite.cst import replace_in_statement, with_keyword
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import IMAGE_CONVOLUTIONS, keras_layer
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.input_pipeline._pipeline import pipelines
from tfperf_lsp.rules.keras._keras import model_construction, multi_backend_keras, other_keras_backend, small_model, target_keras, tf_before
from tfperf_lsp.rules.precision._policy import device_facts

STEPS = 32
# Fewer steps than this in all, written in the code (rows, batch size, epochs): grouping them
# saves a second or two once (judges timed 320 steps at 3 s, two MNIST epochs at a few seconds).
WORTH_GROUPING = 2000
# Steps an epoch at or below which grouping gains nothing that matters: steps_per_execution stops
# at the epoch's end (judges measured no gain at 2, 6 and 8 steps an epoch, and 0.34 -> 0.25 s an
# epoch at 61 steps: three seconds over a whole run; at 200 steps and more it paid).
FEW_EPOCH_STEPS = 64


class StepsPerExecution(Rule):
    code = "TFP805"
    since_tf = (2, 4)  # compile(steps_per_execution=) came in TensorFlow 2.4 (experimental_ before)
    name = "steps-per-execution"
    category = "keras"
    severity = Severity.INFORMATION
    summary = "small Keras model trained with fit, one step per call: compile(steps_per_execution=N)"
    doc_url = "https://keras.io/api/models/model_training_apis/#compile-method"
    fixable = True
    docs = f"""
    ## What it does
    Finds `model.compile(...)` without `steps_per_execution` for a small model - every layer
    visible in the def that builds it, at most {6} Dense/Conv layers, Dense units <= 256, Conv
    filters <= 64 with kernels <= 5, no layers built in a loop, no recurrent or attention
    layers, no pretrained (`keras.applications`) or hand-written building blocks - when the same model is then trained with `fit`: on the compiled name in the same
    scope, or, for a compile inside a factory, on what its callers get back (directly or
    through a tuple of factories looped over).

    ## Why is this slow
    `fit` returns to Python after every step. For a small model the step itself is short, so
    that overhead dominates; `steps_per_execution=N` runs N steps inside one `tf.function`
    call. Keras documents it as able to "greatly improve performance on TPUs or small models
    with a large Python overhead". Measured here (TF 2.21, Keras 3, 2 CPU cores): a
    16-32-1 MLP, 1536 steps of batch 8, took 0.69-0.83 s with the default and 0.25-0.29 s with
    `steps_per_execution=32`; on keras_pitfalls.py's 64 steps the difference was lost in noise.

    ## When it stays silent
    In a file that runs Keras 3 on another backend (`os.environ["KERAS_BACKEND"] = "jax"`): the
    JAX trainer runs the grouped steps as a Python loop, one jitted step each, so every step still
    returns to Python. When every `fit` trains in batches of 512 or more (`batch_size=2048`, or a
    module-level name set to it): few, heavy steps, whose compute sets the pace. In a file that imports standalone `keras` and nothing of TensorFlow, unless
    the settings say Keras 3 (`kerasVersion = "3"`) or the file sets `KERAS_BACKEND` to
    `"tensorflow"`: the multi-backend Keras 2.0-2.3 of older books has no such option. When `steps_per_execution` is set (or `**kwargs` may set it); when the model is not built
    visibly in this file (a parameter), is large, or contains layers tfperf does not size; when
    it has a 2D or 3D convolution, unless the device is a GPU (`--device`, `[tool.tfperf.device]`
    or a `# tfperf: device=gpu` comment): on a CPU the convolutions over images set the step
    time (a small CIFAR-10 CNN, 60 steps, took 0.62 s without and 0.63 s with
    `steps_per_execution=32`), while on a GPU a small CNN's step is mostly the launch;
    when every `fit` runs {WORTH_GROUPING} steps or fewer in all, written down in the code (data
    built with a literal row count, such as a guide fitting `np.random.randn(1, 20)` to get
    weights, or two epochs of `keras.datasets.mnist` in batches of 64): grouping them would save a
    second or two once; when every `fit` runs {FEW_EPOCH_STEPS} steps an epoch or fewer, written
    down the same way (50 rows in a `tf.constant`, batches of 32; the 404 rows of Keras' Boston
    housing set): grouping stops at the end of each epoch, so there is little to group; when it is only trained with `train_on_batch` (where `steps_per_execution` has no effect)
    or not trained in this file; when a `fit` passes a callback that acts on every batch (a
    class of the file defining `on_train_batch_end` or `on_batch_begin`..., or a
    `LambdaCallback` given one): a learning-rate schedule or a log per batch would then run
    once per {STEPS} batches; when every `fit` passes the whole data as one batch
    (`batch_size=len(x)`, or `batch_size=n` with `x = data[:n]`): each epoch is a single step.

    ## Fix
    Add `steps_per_execution={STEPS}` to `compile`. Marked unsafe: batch-level callbacks
    (`on_train_batch_end`, progress bars) then run every {STEPS} steps, not every step. Offered
    only when every `fit` of the model is a visible call without `callbacks=`; otherwise a hint.
    The keyword is the same in Keras 3 and in Keras 2 (`tf.keras` from TF 2.4, `tf_keras`); with
    Keras 2 on an older TensorFlow (`experimental_steps_per_execution`) there is no fix.
    The trained weights are the same (checked under TensorFlow with the same seed); benchmark the
    speed, the gain depends on the device.
    """
    invalid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            def build_mlp():
                tf.keras.utils.set_random_seed(0)
                return tf.keras.Sequential([
                    tf.keras.Input(shape=(8,)),
                    tf.keras.layers.Dense(16, activation="relu"),
                    tf.keras.layers.Dense(1),
                ])

            x = np.linspace(-1, 1, 8 * 4096, dtype="float32").reshape(4096, 8)
            y = x.sum(axis=1, keepdims=True)
            model = build_mlp()
            model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")  # defaults
            model.fit(x, y, batch_size=2, epochs=1, shuffle=False, verbose=0)  # 2,048 steps
            kernel = model.get_weights()[0]
            """,
        ),
    )
    valid = (
        Example(
            """
            from tensorflow import keras

            def small():
                return keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8), keras.layers.Dense(1)])

            def big():
                model = keras.Sequential([keras.Input(shape=(512,)), keras.layers.Dense(1024), keras.layers.Dense(1)])
                model.compile("adam", "mse")
                return model

            def compile_only(model):
                model.compile("sgd", "mse")  # a parameter: its size is not visible
                return model

            tuned = small()
            tuned.compile("sgd", "mse", steps_per_execution=16)
            stepped = small()
            stepped.compile("sgd", "mse")
            stepped.train_on_batch([[0.0] * 4], [[0.0]])  # steps_per_execution has no effect here
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        if other_keras_backend(facts):
            return  # Keras 3 on JAX runs ``steps_per_execution`` steps as a Python loop of jitted steps
        if multi_backend_keras(facts, ctx.settings.keras_version):
            return  # ``import keras`` without TensorFlow: maybe Keras 2.0-2.3, whose compile() has no such option
        for call in facts.calls_named("compile"):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "compile" and isinstance(func.value, ast.Name)):
                continue
            if any(k.arg in (None, "steps_per_execution", "experimental_steps_per_execution") for k in call.keywords):
                continue
            receiver = func.value
            if not is_model_name(facts, receiver):
                continue
            built = model_construction(facts, receiver, call)
            description = small_model(facts, *built) if built else None
            if description is None:
                continue
            if built is not None and _convolves_images(facts, *built) and not device_facts(ctx).gpu:
                continue  # on a CPU (or an unknown device) convolutions over images set the step time
            fits = fit_uses(facts, call, receiver.id)
            if not fits or facts.in_tf_function(call) is not None:
                continue
            if few_steps(facts, fits, limit=WORTH_GROUPING):
                continue  # a fit of a few seconds, or one random sample fitted to get weights
            if all((n := epoch_steps_at_most(facts, use)) is not None and n <= FEW_EPOCH_STEPS for use in fits):
                continue  # a few steps an epoch: grouping stops at the epoch's end, nothing to gain
            if all(isinstance(use, ast.Call) and _one_batch_per_epoch(facts, use) for use in fits):
                continue  # ``fit(x, y, batch_size=len(x))``: one step per epoch, nothing to group
            if all(isinstance(use, ast.Call) and _large_batches(ctx, use) for use in fits):
                continue  # ``fit(..., batch_size=2048)``: each step's compute, not its return to Python, sets the pace
            if any(isinstance(use, ast.Call) and _per_batch_callbacks(facts, use) for use in fits):
                continue  # a schedule or a log meant for every batch would run every STEPS batches
            fixable = all(isinstance(use, ast.Call) and not any(k.arg in ("callbacks", None) for k in use.keywords) for use in fits)
            if target_keras(facts, ctx.settings) == 2 and tf_before(2, 4):
                fixable = False  # tf.keras before 2.4 spells it experimental_steps_per_execution
            yield self.finding(
                ctx, call,
                f"`{receiver.id}` is a small model ({description}) trained with `fit`, which returns to Python "
                f"after every step: `compile(..., steps_per_execution={STEPS})` runs {STEPS} steps per call "
                f"(batch callbacks then run every {STEPS} steps)",
                label="steps_per_execution=1",
                fix=partial(_add_steps_per_execution, ctx, call) if fixable else None,
                fix_title=f"Add steps_per_execution={STEPS}" if fixable else None,
                fix_applicability="unsafe",
            )


LARGE_BATCH = 512


def _large_batches(ctx: RuleContext, fit: ast.Call) -> bool:
    """``fit(..., batch_size=BATCH_SIZE)`` with ``BATCH_SIZE = 2048``, or ``fit(ds)`` with ``ds =
    ....batch(BATCH_SIZE)``: few, heavy steps (a judge measured 0.42 s an epoch with and without
    ``steps_per_execution=32`` at 2048)."""
    size = int_value(ctx.facts, keyword(fit, "batch_size"))
    if size is None and keyword(fit, "batch_size") is None:
        size = _dataset_batch_size(ctx, fit.args[0] if fit.args else keyword(fit, "x"))
    return size is not None and size >= LARGE_BATCH


def _dataset_batch_size(ctx: RuleContext, x: ast.expr | None) -> int | None:
    """The batch size written in the pipeline of the dataset ``x`` (its last ``.batch(n)``)."""
    step = pipelines(ctx).dataset_of(x) if x is not None else None
    batch = next((s for s in step.upstream() if s.method == "batch"), None) if step is not None else None
    if batch is None:
        return None
    size = batch.call.args[0] if batch.call.args else keyword(batch.call, "batch_size")
    return int_value(ctx.facts, size)


def _one_batch_per_epoch(facts: ModuleFacts, fit: ast.Call) -> bool:
    """``fit(x_train, y_train, batch_size=train_size)`` with ``x_train = x[:train_size]`` (or
    ``batch_size=len(x_train)``, ``x_train.shape[0]``): the whole data in one batch, so every
    epoch is one step; ``steps_per_execution`` cannot group steps across epochs."""
    x = fit.args[0] if fit.args else keyword(fit, "x")
    size = keyword(fit, "batch_size")
    if not isinstance(x, ast.Name) or size is None:
        return False
    if isinstance(size, ast.Call) and isinstance(size.func, ast.Name) and size.func.id == "len" and size.args:
        return ast.unparse(size.args[0]) == x.id
    if isinstance(size, ast.Subscript) and ast.unparse(size.value) == f"{x.id}.shape":
        return isinstance(size.slice, ast.Constant) and size.slice.value == 0
    if not isinstance(size, ast.Name):
        return False
    source = getattr(facts.reaching_assignment(x), "value", None)
    if isinstance(source, ast.Tuple):  # ``(x_train, y_train) = x[:n], y[:n]``
        assignment = facts.reaching_assignment(x)
        targets = assignment.targets[0] if isinstance(assignment, ast.Assign) else None
        if isinstance(targets, ast.Tuple) and len(targets.elts) == len(source.elts):
            source = next((v for t, v in zip(targets.elts, source.elts) if isinstance(t, ast.Name) and t.id == x.id), None)
    if isinstance(source, ast.Subscript) and isinstance(source.slice, ast.Slice):
        window = source.slice
        return window.lower is None and window.step is None and isinstance(window.upper, ast.Name) and window.upper.id == size.id
    return False


def _convolves_images(facts: ModuleFacts, construction: ast.Call, scope: ast.AST | None) -> bool:
    """The model has a 2D or 3D convolution: small by its layer count, not by its compute (a
    ``Conv1D`` over a short sequence stays cheap: the article's own model)."""
    nodes = ast.walk(construction) if scope is None else walk_same_scope(scope)
    return any(isinstance(n, ast.Call) and keras_layer(facts, n) in IMAGE_CONVOLUTIONS for n in nodes)


def _add_steps_per_execution(ctx: RuleContext, call: ast.Call) -> Fix | None:
    """``model.compile("sgd", "mse")`` -> ``model.compile("sgd", "mse", steps_per_execution=32)``:
    ``fit`` runs 32 steps per call into the compiled train function."""
    edit = replace_in_statement(
        ctx.source, ctx.facts.statement_of(call), call, cst.Call,
        lambda c: with_keyword(c, "steps_per_execution", str(STEPS)),
    )
    return Fix(f"Add steps_per_execution={STEPS}", (edit,), "unsafe") if edit else None


_BATCH_HOOKS = frozenset({"on_batch_begin", "on_batch_end", "on_train_batch_begin", "on_train_batch_end"})


def _per_batch_callbacks(facts: ModuleFacts, fit: ast.Call) -> bool:
    """``fit(..., callbacks=[...])`` passes a callback that acts on every batch: an instance of
    a class of this file defining ``on_train_batch_end`` (or begin, or the ``on_batch_*``
    aliases), or a ``LambdaCallback`` given one."""
    callbacks = next((k.value for k in fit.keywords if k.arg == "callbacks"), None)
    if callbacks is None:
        return False
    hooked = {cls.name for cls in facts.classes
              if any(isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in _BATCH_HOOKS for stmt in cls.body)}
    for node in ast.walk(callbacks):
        if isinstance(node, ast.Name):
            node = getattr(facts.reaching_assignment(node), "value", node)
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in hooked:
            return True
        if (facts.qualname(node.func) or "").endswith("LambdaCallback") and any(k.arg in _BATCH_HOOKS for k in node.keywords):
            return True
    return False
