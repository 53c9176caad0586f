"""TFP502: a tf-keras (Keras 2) ``model.compile(...)`` without ``jit_compile``."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator, Sequence

from tfperf_lsp.rewrite.lazy import libcst as cst  # libcst only when a fix is built

from tfperf_lsp.analysis import environment
from tfperf_lsp.analysis.facts import FunctionNode, ModuleFacts, walk_same_scope
from tfperf_lsp.analysis.fits import few_steps, fit_uses
from tfperf_lsp.analysis.models import creates_model
from tfperf_lsp.config import Settings
from tfperf_lsp.model import Finding, Fix, Severity
from tfperf_lsp.rewrite.cst import replace_in_statement, with_keyword
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.keras._keras import model_construction, small_model
from tfperf_lsp.rules.precision._policy import device_facts
from tfperf_lsp.rules.xla._common import EXTENSION_LIBRARIES, targets_tpu, uses_sparse_tensors

_SOURCES = ("tensorflow.python.keras", "tensorflow.keras", "tf_keras", "keras")
_FIX_TITLE = "Add jit_compile=True (benchmark it)"


class KerasCompileWithoutJit(Rule):
    code = "TFP502"
    name = "keras-compile-without-jit"
    category = "xla"
    severity = Severity.HINT
    summary = "tf-keras 2 `compile()` without `jit_compile` (Keras 3 already defaults to \"auto\")"
    doc_url = "https://www.tensorflow.org/xla#explicit_compilation_with_tffunctionjit_compiletrue"
    fixable = True
    docs = """
    ## What it does
    Finds `model.compile(...)` calls of a Keras 2 model (`tf_keras`, or `tf.keras` / `keras` when
    the environment runs Keras 2: TensorFlow < 2.16, `TF_USE_LEGACY_KERAS=1`, or
    `kerasVersion = "2"` in `[tool.tfperf]`) that do not pass `jit_compile`.

    ## Why is this slow
    Keras 2 compiles `fit`/`evaluate`/`predict` steps without XLA unless `jit_compile=True` is
    passed. XLA fuses the step's operations (about 1.15x on Google's internal
    benchmarks) but can also be slower (measured: 14 -> 33 ms on a 2-core CPU), so this
    is a hint to try it and benchmark.

    ## When it stays silent
    When the model is not then trained with `fit` in this file (compiled to evaluate, or
    trained elsewhere), when every `fit` runs 500 steps or fewer, written down in the code (a
    guide fitting one random sample to get weights), on a small model (at most 6 small
    Dense/Conv layers: its step is Python overhead that `steps_per_execution`, TFP805, cuts,
    with little for XLA to fuse), in a file that sets up a TPU (XLA compiles every step
    there already), and in a file that imports a TensorFlow extension library
    (`tensorflow_probability`, `tensorflow_addons`...: whether their layers compile is their own
    business, as for TFP501), or that uses sparse tensors (`tf.sparse.*`, `Input(sparse=True)`:
    XLA has no kernel for sparse ops). On Keras 3 models: Keras 3 `compile()` defaults to `jit_compile="auto"`, which enables XLA on
    the TensorFlow backend where it can. On the private legacy
    `tensorflow.python.keras` package, whose `compile()` has no `jit_compile` argument. When
    `jit_compile` or `**kwargs` is passed, and when the receiver cannot be traced to a Keras 2
    model: built by another library's wrapper (a Model Optimization `quantize_model(model)`,
    whose ops XLA may compile differently) or a parameter, unless, for a parameter or an
    attribute, the file imports no Keras but `tf_keras`. In files
    that build recurrent or text models (`LSTM`, `GRU`, `Bidirectional`, `TextVectorization`,
    TensorFlow Hub layers): variable-length sequences compile again for each length, and string
    ops do not compile at all.

    On a CPU (`--device cpu`, a `# tfperf: device=cpu` comment, or the editor's device
    setting), as TFP501: XLA was slower or no faster there on most steps judges measured (a small
    depthwise-convolution CIFAR network, 21-26 ms a step without it, 115-128 ms with it).

    ## Fix
    Adds `jit_compile=True`. Marked unsafe: results move within float tolerance, a model with an
    op XLA cannot compile then fails in `fit`, and it can be slower - benchmark it. Checked with
    tf-keras 2.21 (installed outside the project's environment): a Dense regressor trained with
    and without it agreed to rtol 1e-5, atol 1e-6.
    """
    invalid = (
        Example(
            """
            import tf_keras

            model = tf_keras.Sequential([
                tf_keras.layers.Dense(512, activation="relu", input_shape=(32,)),
                tf_keras.layers.Dense(1),
            ])
            model.compile(optimizer="adam", loss="mse")
            model.fit(train_ds, epochs=20)
            """,
            runnable=False,  # tf_keras is not installed where the TensorFlow tests run
        ),
    )
    valid = (
        Example(
            """
            import keras

            model = keras.Sequential([keras.Input(shape=(32,)), keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")  # Keras 3: jit_compile="auto"
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if ".compile(" not in ctx.source.text:
            return
        if device_facts(ctx).gpu is False:
            return  # on a CPU XLA was slower or no faster on most steps measured (as TFP501)
        facts = ctx.facts
        if targets_tpu(facts):
            return  # on a TPU every step is compiled with XLA already
        if _sequence_models(facts):
            return  # recurrent or text layers: variable lengths, dynamic loops, hub layers
        if any(q.startswith(EXTENSION_LIBRARIES) for q in facts.imports.bindings.values()):
            return  # tensorflow_probability, addons...: their layers' XLA support is their own (as TFP501)
        if uses_sparse_tensors(facts):
            return  # sparse ops have no XLA kernel (as TFP501)
        file_sources = facts.imports.keras_sources
        for call in facts.calls_named("compile"):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "compile" and isinstance(func.value, ast.Name)):
                continue
            if any(kw.arg in ("jit_compile", None) for kw in call.keywords):
                continue
            if facts.imports.bindings.get(func.value.id) or func.value.id in ("self", "cls"):
                continue  # re.compile, a module's compile(), a Model's own internals
            source = _receiver_source(facts, func.value, call)
            if source is None and file_sources == {"tf_keras"} and _looks_like_keras_compile(call) \
                    and not _assigned_visibly(facts, func.value, call):
                source = "tf_keras"  # a parameter or a global of a tf_keras-only file
            if source is None or _keras_major(ctx.settings, source) != 2:
                continue
            if not _trained_at_length(facts, call, func.value):
                continue
            yield self.finding(
                ctx,
                call,
                f"`{func.value.id}.compile()` runs without XLA on Keras 2: try `jit_compile=True` "
                f"and benchmark it",
                label="try jit_compile=True?",
                fix=partial(_add_jit_compile, ctx, call),
                fix_title=_FIX_TITLE,
                fix_applicability="unsafe",
                head_only=True,
            )


def _assigned_visibly(facts: ModuleFacts, name: ast.Name, at: ast.AST) -> bool:
    """``name`` is bound by an assignment this file shows (its source then was not Keras: a
    wrapper of another library, such as a Model Optimization ``quantize_model(model)``)."""
    scope = facts.enclosing_function(at)
    local = facts.assignments_in(scope).get(name.id, []) if scope is not None else []
    return bool(local or facts.module_assignments.get(name.id))


def _trained_at_length(facts: ModuleFacts, call: ast.Call, name: ast.Name) -> bool:
    """The compiled model is then trained with ``fit`` (not only evaluated), not a small model
    (its step is Python overhead, which steps_per_execution, TFP805, addresses; XLA has little
    to fuse), and not only for a handful of steps written down in the code."""
    fits = fit_uses(facts, call, name.id)
    if not fits:
        return False
    built = model_construction(facts, name, call)
    if built is not None and small_model(facts, *built, listed=True) is not None:
        return False
    return not few_steps(facts, fits)


def _add_jit_compile(ctx: RuleContext, call: ast.Call) -> Fix | None:
    """``model.compile(optimizer="adam", loss="mse")`` ->
    ``model.compile(optimizer="adam", loss="mse", jit_compile=True)``."""
    edit = replace_in_statement(
        ctx.source, ctx.facts.statement_of(call), call, cst.Call, lambda c: with_keyword(c, "jit_compile", "True")
    )
    return Fix(_FIX_TITLE, (edit,)) if edit else None


def _keras_major(settings: Settings, source: str) -> int | None:
    """The Keras major version behind a model built from ``source`` (an import spelling)."""
    if source == "tf_keras":
        return 2
    if source == "tensorflow.python.keras":
        return None  # the private legacy package: its compile() has no jit_compile
    configured = getattr(settings, "keras_version", None)
    if configured and str(configured)[0] in "23":
        return int(str(configured)[0])
    if source == "keras":
        installed = environment.major_minor(environment.installed_version("keras"))
        return None if installed is None else (3 if installed[0] >= 3 else 2)
    return environment.tf_keras_major()


def _source_of(raw: str | None) -> str | None:
    for source in _SOURCES:
        if raw and (raw == source or raw.startswith(source + ".")):
            return source
    return None


def _receiver_source(facts: ModuleFacts, name: ast.Name, at: ast.AST) -> str | None:
    """Which Keras built the model ``name`` holds: every assignment must agree."""
    scope = facts.enclosing_function(at)
    candidates: Sequence[ast.AST] = facts.assignments_in(scope).get(name.id, []) if scope is not None else []
    if not candidates:
        candidates = facts.module_assignments.get(name.id, [])
    sources = {_model_source(facts, c.value) if isinstance(c, ast.Assign) else None for c in candidates}
    return sources.pop() if len(sources) == 1 else None


def _model_source(facts: ModuleFacts, expr: ast.AST, depth: int = 0) -> str | None:
    if not isinstance(expr, ast.Call) or depth > 3:
        return None
    raw = facts.imports.raw_qualname(expr.func)
    if raw is not None:
        return _source_of(raw) if creates_model(facts, expr) else None
    if not isinstance(expr.func, ast.Name):
        return None
    target = facts.module_defs.get(expr.func.id)
    if isinstance(target, ast.ClassDef):  # a Model subclass: the Keras of its base
        for base in target.bases:
            source = _source_of(facts.imports.raw_qualname(base))
            if source:
                return source
        return None
    if isinstance(target, FunctionNode):  # a factory: what it returns
        assigned = facts.assignments_in(target)
        for node in walk_same_scope(target):
            if isinstance(node, ast.Return) and node.value is not None:
                values = [node.value]
                if isinstance(node.value, ast.Name):
                    values = [a.value for a in assigned.get(node.value.id, []) if isinstance(a, ast.Assign)]
                for value in values:
                    source = _model_source(facts, value, depth + 1)
                    if source:
                        return source
    return None


def _looks_like_keras_compile(call: ast.Call) -> bool:
    return any(kw.arg in ("optimizer", "loss") for kw in call.keywords)


# Layers whose models XLA often cannot help: recurrent loops over variable-length sequences
# (each new length compiles again), text preprocessing (string ops), TensorFlow Hub layers.
_SEQUENCE_LAYERS = {"LSTM", "GRU", "SimpleRNN", "RNN", "Bidirectional", "TextVectorization", "LSTMCell", "GRUCell",
                    "ConvLSTM2D", "KerasLayer", "StringLookup"}


def _sequence_models(facts: ModuleFacts) -> bool:
    return any(qualname.startswith(("keras.layers.", "tensorflow_hub.")) and qualname.rsplit(".", 1)[-1] in _SEQUENCE_LAYERS
               for qualname in facts.calls_by_qualname)
