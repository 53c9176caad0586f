"""TFP302: a Keras model called eagerly (``model(x)``) in a loop."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator, cast

from tfperf_lsp.analysis.astutil import call_arguments
from tfperf_lsp.analysis.facts import TF_FUNCTION, FunctionNode, ModuleFacts, siblings, walk_same_scope
from tfperf_lsp.analysis.loopcarry import LoopFlow
from tfperf_lsp.analysis.loopvalues import varying_number_list, varying_scalar
from tfperf_lsp.analysis.models import OPTIMIZER_STEPS, assigned_in, is_model_name, one_call_per_model
from tfperf_lsp.model import Edit, Finding, Fix, Pos, Severity, Span
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import CLOCKS, RECURRENT_LAYERS, holds_pretrained_model, keras_layers_in_file, tf_alias
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.keras._keras import other_keras_backend, outputs_distribution, traced_call

_TAPE = "tensorflow.GradientTape"


class EagerModelCall(Rule):
    code = "TFP302"
    name = "eager-model-call"
    category = "graph"
    severity = Severity.INFORMATION
    summary = "Keras model called eagerly in a loop: tf.function(model) runs it as one graph"
    doc_url = "https://www.tensorflow.org/guide/function#usage"
    fixable = True
    benchmark = "graph-call"
    docs = """
    ## What it does
    Finds a Keras model (built with `Sequential`/`Model`, a subclass of `keras.Model`, or a
    function returning one) called as `model(x)` inside a Python loop in eager code.

    ## Why is this slow
    Called eagerly, the model runs layer by layer, each op dispatched from Python. Wrapped in
    `tf.function`, the forward pass is traced once into a graph and replayed. We
    measured 1.28 s eager vs 0.58 s graph for 1000 calls of a small MLP. Small models and small
    batches gain the most; large convolutions gain little (benchmark it: this is a hint).

    ## When it stays silent
    In a file that runs Keras 3 on another backend (`os.environ["KERAS_BACKEND"] = "jax"`):
    a `tf.function` cannot run its models.
    When the loop's body also runs Keras' own `train_on_batch`, `evaluate` or `predict`: those
    set the pace of each iteration, not this call's dispatch.
    When the call is already inside a tf.function, when the model's class decorates its own
    `call` with `@tf.function` (each call is one graph already), when the model is re-created in the loop
    or is what a single loop iterates over (`for m in models: m(x)`: one call per model), or
    when the code wraps the same model in `tf.function` after the loop (`net = tf.function(net)`:
    the eager loop is the baseline of a comparison, as in the TensorFlow guide's timings) or
    reads a clock just before and after the loop (`t = time.perf_counter()`: it times the eager
    calls on purpose), when an argument is a Python number or list of numbers that changes every
    iteration (`model(image, [width])`: a `tf.function` would trace again on every call),
    in a file that builds TensorFlow Probability layers (its models return distributions, which a
    `tf.function` cannot return), under a `GradientTape` in the loop, or in a loop whose epoch loop also runs an eager training
    step (an evaluation pass over the test set beside it: TFP301 reports the step; likewise in a
    helper that only such loops call, `perform_validation()` after the epoch's steps), in one
    evaluation pass over the test set right after the training loop or a `fit` (it runs once; unless the
    model has recurrent layers, which are slow eagerly on every call), and for
    `model.predict` (TFP801). When the call does not run every step: under `if step % N == 0`
    (periodic) or `if step == loader.steps_per_epoch` (a counter the loop adds one to), or once per epoch beside the inner loop that does the steps (also in a def the
    epoch loop calls there: `predict(encoder, decoder, ...)` decoding one sample); in loops over a
    handful of literal items (`for training in (False, True)`), and when the code writes down
    that the call runs 500 times or fewer in all (`for i in range(10)` at module level; a
    decoding loop that stops at its end token, `if word == '<end>': return`, counts as 100 calls
    per sentence when its bound comes from the data, so three sentences translated by hand stay
    silent, a whole test set does not). When the
    loop is an eager training step (`optimizer.apply_gradients` in it, or a helper it calls opens
    a `GradientTape`): the step is what to compile (TFP301), not this extra forward pass. When the loop also runs a
    TensorFlow Lite interpreter (`interpreter.invoke()`): it checks a conversion, once. In a
    function this file never runs itself (dead code, or library code whose callers may trace it).
    When the model is or wraps a pretrained network (`keras.applications`, TF Hub, a
    `from_pretrained` or `from_preset` loader; also when a builder imported from another file of
    the project makes it): such a network's compute, not the dispatch of its ops, sets the pace,
    and a graph gains little.

    ## Fix
    Create `model_graph = tf.function(model)` once, before the loop, and call it in the loop
    (quick fix). The outputs are the same tensors; inputs of new shapes trace again, so keep
    the batch shape fixed (or see TFP103). When the loop feeds the model its own output
    (`output = tf.concat([output, predicted_id], -1)`, a greedy decoder), the input is longer
    every call: the fix writes `tf.function(model, reduce_retracing=True)`, which relaxes the
    growing dimension after a second trace (verified: at most 3 traces for 12 lengths, where a
    plain `tf.function` traced once per length).
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            net = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(2)])
            batches = tf.data.Dataset.from_tensor_slices(tf.random.normal([64, 8], seed=1)).batch(8)
            outputs = []
            for x in batches:
                outputs.append(net(x))
            result = tf.concat(outputs, axis=0)
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            net = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            net = tf.function(net)
            x = tf.ones([1, 8])
            for i in range(10):
                net(x)
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        if other_keras_backend(facts):
            return  # Keras on JAX or PyTorch: a tf.function cannot run its models
        reported: set[tuple[str, ast.AST]] = set()  # one finding per model and loop: ``d(real)``, ``d(fake)`` are one hint
        for call in facts.calls:
            func = call.func
            if not isinstance(func, ast.Name) or facts.in_tf_function(call) is not None:
                continue
            loops = facts.enclosing_loops(call)
            if not loops or _under_tape(facts, call):
                continue  # not in a loop; a train step (TFP301)
            if not is_model_name(facts, func) or facts.resolve_tf_function(func, call) is not None:
                continue
            if traced_call(facts, func):
                continue  # the model's class decorates its own ``call`` with ``@tf.function``: already a graph
            if not ctx.hot.per_step(call) or not ctx.hot.repeats(call) or ctx.hot.runs_beside_training(call):
                continue  # periodic, once per epoch (a sample decoded beside the step loop), or a handful of iterations
            if not ctx.hot.runs_eagerly_in_script(call):
                continue  # a function this file never runs (dead code, or a library's)
            if ctx.hot.runs_few_times([call]):
                continue  # the code writes down 100 calls or fewer: the dispatch saved is a blink
            if _runs_keras_loops(facts, loops[0]):
                continue  # each iteration also runs Keras' own train_on_batch / evaluate / predict,
                # which cost far more than this call's eager dispatch
            if any(_trains_eagerly(facts, loop) for loop in loops):
                continue  # an eager training step in this loop or the epoch loop around it (an evaluation
                # pass beside it): TFP301's hint, not this extra forward pass
            if len(loops) == 1 and _after_training(ctx, loops[0]):
                continue  # one evaluation pass after the training loop: it runs once
            if _evaluates_beside_eager_training(facts, call):
                continue  # a validation helper the epoch loop calls beside the eager step (TFP301's)
            if _checks_a_converted_model(loops[0]):
                continue  # comparing with a TensorFlow Lite interpreter: a check, run once
            if any(assigned_in(loop, func.id) for loop in loops) or one_call_per_model(facts, loops, func.id):
                continue
            if outputs_distribution(facts, func, call):
                continue  # TFP layers: the model returns a distribution, which tf.function cannot return
            if _wrapped_after(facts, func.id, loops[-1]) or _timed(facts, loops[-1]):
                continue  # `net = tf.function(net)` next, or a clock read around the loop: it measures eager calls
            if any(varying_scalar(facts, a, loops) or varying_number_list(facts, a, loops) for a in call_arguments(call)):
                continue  # a Python number that changes every iteration (``model(image, [width])``): a graph
                # would be traced again on every call
            if holds_pretrained_model(ctx, func):
                continue  # a pretrained backbone: its compute, not per-op dispatch, sets the pace
            if (func.id, loops[-1]) in reported:
                continue
            reported.add((func.id, loops[-1]))
            new_name = f"{func.id}_graph"
            taken = new_name in facts.names
            # A decoder fed its own output (``output = tf.concat([output, predicted_id], -1)``) sees a
            # new length every iteration: a plain tf.function would trace for each one.
            # any input: a transformer's decoder is called ``model(enc_input, output, masks...)``, and
            # only its second input grows
            flow = LoopFlow(facts, loops[0]) if isinstance(loops[0], (ast.For, ast.While)) else None
            grows = flow is not None and any(flow.carry(argument).grows for argument in call_arguments(call))
            options = ", reduce_retracing=True" if grows else ""
            title = f"Call {new_name} = tf.function({func.id}{options}) in the loop"
            why = ("its input grows every iteration: with `reduce_retracing` its length becomes a dimension of "
                   "unknown size, instead of a new trace for every length") if grows else "one graph, traced once"
            yield self.finding(
                ctx, call,
                f"The model `{func.id}` runs eagerly, layer by layer, on every iteration: call "
                f"`tf.function({func.id}{options})` instead ({why})",
                label="eager model call",
                fix=None if taken else partial(_call_a_graph, ctx, loops[-1], func.id, title, options),
                fix_title=None if taken else title,
                fix_applicability="unsafe",
            )


def _call_a_graph(ctx: RuleContext, loop: ast.AST, model: str, title: str, options: str = "") -> Fix | None:
    """``for x in xs: net(x)`` -> ``net_graph = tf.function(net)`` before the loop and
    ``for x in xs: net_graph(x)`` (every eager call of the model in the loop, not under a tape)."""
    if not isinstance(loop, (ast.For, ast.While)):
        return None  # a comprehension or an ``async for``: no line to put the wrapper on
    facts = ctx.facts
    alias, extra = tf_alias(ctx, loop.lineno - 1)
    indent = ctx.source.indent_of(loop.lineno - 1)
    edits = [Edit(Span(Pos(loop.lineno - 1, 0), Pos(loop.lineno - 1, 0)), f"{indent}{model}_graph = {alias}.function({model}{options})\n")]
    for node in walk_same_scope(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == model and not _under_tape(facts, node):
            edits.append(Edit(ctx.source.span(node.func), f"{model}_graph"))
    return Fix(title, (*edits, *extra))


def _trains_eagerly(facts: ModuleFacts, loop: ast.AST) -> bool:
    """The loop runs an optimizer step eagerly: ``optimizer.apply_gradients`` in its body, or a
    local def it calls opens a ``GradientTape`` (``loss, grads = grad(model, x, y)``: the
    TensorFlow guide's custom training walkthrough), or calls one that does (an epoch loop that
    calls ``train_data_for_one_epoch()``, whose batch loop calls the step)."""
    return _runs_a_step(facts, loop, depth=2)


def _runs_a_step(facts: ModuleFacts, code: ast.AST, depth: int) -> bool:
    for node in walk_same_scope(code):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr in OPTIMIZER_STEPS:
            return True
        if isinstance(code, FunctionNode) and facts.qualname(node.func) == _TAPE:
            return True
        target = facts.resolve_def(node.func, node)
        if target is not None and target is not code and depth > 0 and facts.tf_function_for_def(target) is None \
                and _runs_a_step(facts, target, depth - 1):
            return True
    return False


def _evaluates_beside_eager_training(facts: ModuleFacts, call: ast.Call) -> bool:
    """``call`` is in a top-level def run only from loops that also train eagerly (an epoch loop
    that calls ``perform_validation()`` after the epoch's steps): an evaluation pass beside the
    step, which TFP301 reports."""
    fn = facts.enclosing_function(call)
    if fn is None or facts.enclosing_function(fn) is not None:
        return False
    sites = facts.calls_by_def.get(fn, [])
    return bool(sites) and all(any(_trains_eagerly(facts, loop) for loop in facts.enclosing_loops(site)) for site in sites)


def _after_training(ctx: RuleContext, loop: ast.AST) -> bool:
    """``loop`` is a single pass (no loop around it) that follows, in the same block, a loop
    that trains (eagerly or through a compiled step), or a ``fit``: the test-set evaluation
    after training, run once."""
    found = siblings(ctx.facts, loop)
    if found is None:
        return False
    block, index = found
    # An eager recurrent model is slow on every call, even in one pass: only an eager training
    # loop before it (TFP301 names its step) silences that.
    recurrent = bool(keras_layers_in_file(ctx.facts) & RECURRENT_LAYERS)
    if not recurrent and any(_fits(s) for s in block[:index]):
        return True  # ``model.fit(...)``, then one pass over the test set
    return any(isinstance(s, (ast.For, ast.AsyncFor, ast.While))
               and (_trains_eagerly(ctx.facts, s) or not recurrent and ctx.hot.trains(s)) for s in block[:index])


def _fits(stmt: ast.stmt) -> bool:
    """A statement that trains with Keras' ``fit`` (``history = model.fit(...)``), outside a loop."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "fit"


def _under_tape(facts: ModuleFacts, node: ast.AST) -> bool:
    for ancestor in facts.ancestors(node):
        if isinstance(ancestor, (ast.With, ast.AsyncWith)):
            if any(isinstance(i.context_expr, ast.Call) and facts.qualname(i.context_expr.func) == _TAPE for i in ancestor.items):
                return True
        if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
    return False


def _checks_a_converted_model(loop: ast.AST) -> bool:
    """The loop also runs a TensorFlow Lite interpreter (``interpreter.invoke()``): it compares
    the converted model with the original, once, on a few inputs."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "invoke"
               and not n.args for n in ast.walk(loop))


def _wrapped_after(facts: ModuleFacts, name: str, loop: ast.AST) -> bool:
    """``name = tf.function(name)`` after ``loop``, in the same scope."""
    scope = facts.enclosing_function(loop)
    assignments = facts.assignments_in(scope).get(name, []) if scope is not None else facts.module_assignments.get(name, [])
    statement = cast("ast.stmt", loop)  # a for or while loop
    end = statement.end_lineno or statement.lineno
    for stmt in assignments:
        value = getattr(stmt, "value", None)
        if isinstance(stmt, ast.Assign) and stmt.lineno > end and isinstance(value, ast.Call) \
                and facts.qualname(value.func) == TF_FUNCTION and value.args \
                and isinstance(value.args[0], ast.Name) and value.args[0].id == name:
            return True
    return False


def _timed(facts: ModuleFacts, loop: ast.AST) -> bool:
    """``t = time.perf_counter()`` just before the loop and ``time.perf_counter() - t`` just after:
    a micro-benchmark of the eager calls, which a graph would stop measuring."""
    place = siblings(facts, loop)
    if place is None:
        return False
    block, index = place
    before = block[index - 1] if index > 0 else None
    if not (isinstance(before, ast.Assign) and len(before.targets) == 1 and isinstance(before.targets[0], ast.Name)
            and isinstance(before.value, ast.Call) and facts.qualname(before.value.func) in CLOCKS):
        return False
    start = before.targets[0].id
    return any(isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and isinstance(node.right, ast.Name)
               and node.right.id == start for stmt in block[index + 1:index + 3] for node in ast.walk(stmt))


_KERAS_LOOPS = frozenset({"train_on_batch", "test_on_batch", "predict_on_batch", "evaluate", "predict", "fit"})


def _runs_keras_loops(facts: ModuleFacts, loop: ast.AST) -> bool:
    """The loop's body calls Keras' own ``train_on_batch`` / ``evaluate`` / ``predict`` (a
    hand-written epoch loop that vectorises its labels with a ``TextVectorization`` model, then
    trains on the batch): those set the pace of each iteration."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _KERAS_LOOPS
               and node.args for node in walk_same_scope(loop))
