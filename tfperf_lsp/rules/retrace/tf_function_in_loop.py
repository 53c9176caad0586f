"""TFP102: a tf.function created inside a loop, or inside a function that is called repeatedly."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator

from tfperf_lsp.analysis.astutil import call_arguments
from tfperf_lsp.analysis.facts import ModuleFacts, TFFunction
from tfperf_lsp.analysis.hotness import is_short_loop
from tfperf_lsp.model import Edit, Finding, Fix, Pos, Severity, Span
from tfperf_lsp.rewrite.edits import whole_lines
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import function_label, tf_function_calls
from tfperf_lsp.rules.context import RuleContext

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
Loop = ast.For | ast.AsyncFor | ast.While


class TfFunctionInLoop(Rule):
    code = "TFP102"
    name = "tf-function-in-loop"
    category = "retrace"
    severity = Severity.WARNING
    summary = "tf.function created in a loop (or in a function called repeatedly): every call traces"
    doc_url = "https://www.tensorflow.org/guide/function#controlling_retracing"
    fixable = True
    docs = """
    ## What it does
    Finds `tf.function(...)` calls and `@tf.function` definitions that run once per loop
    iteration: directly in a loop body, or inside a function that is called from a loop.

    ## Why is this slow
    Each `tf.function(...)` call makes a new `Function` object with an empty trace cache, so its
    first call always traces. Created per iteration, the function is traced every iteration and
    never reuses a graph. This is cause (1) of TensorFlow's "triggered tf.function retracing"
    warning. Measured: 8 iterations gave 8 traces.

    ## When it stays silent
    Outside loops, and in functions called only once. A function defined inside a factory that
    runs once per model is fine. A tf.function created inside a function that is called
    repeatedly is reported only when this file itself runs that function eagerly (from
    module-level code or `main()`): a library method may be called while its caller is traced,
    and then the inner function is traced once, as part of the caller; nor when the function
    that creates it also calls it in a loop of its own (an epoch function that wraps its step
    and runs every batch through it: one trace per epoch, paid back by the epoch's steps).
    The same holds for a loop that creates the function and then runs it in an inner loop of its
    own body (a benchmark that wraps each augmentation layer and times it over several batch
    sizes: the new trace per layer cannot be avoided and is reused by the inner loop), and for a
    loop that never calls the function it creates but hands it on (`server.bind(fn)`,
    `fns.append(fn)`: one function per host or model, each traced once by its later callers).
    Silent too for a function built to be exported: a method of a `tf.Module` class, or made
    in a def that asks for its concrete function or saves a SavedModel (an export once per
    checkpoint): the trace is the point, and a new object traces its own methods wherever its
    class is defined.
    Silent in a loop over a handful of literal items whose every call of the function passes a
    value the loop makes anew (`for n in (10, 250):` building a model per `n` and sampling it):
    created once, the function would trace as often.
    Test code is silent (a loop of `get_concrete_function` per shape is a test's purpose).

    ## Fix
    Create the function once, before the loop. The quick fix moves a `name = tf.function(f)`
    statement out of the loop when nothing it uses changes inside the loop. When the function
    closes over per-iteration values, hoisting would freeze them: pass those values as arguments
    (tensors) instead; no automatic fix is offered then.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            traces = []

            def square(x):
                traces.append(1)  # runs once per trace
                return x * x

            x = tf.ones([4])
            for step in range(3):
                fast_square = tf.function(square)
                y = fast_square(x)
            """,
            trace_counter="traces",
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            @tf.function
            def step(x):
                return x * 2.0

            for epoch in range(3):
                step(tf.ones([4]))
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for fn in facts.tf_functions:
            if facts.in_tf_function(fn.stmt) is not None:
                continue  # created while tracing another function: traced as part of it
            loops = facts.enclosing_loops(fn.stmt)
            name = function_label(fn)
            if loops:
                loop, stmt = loops[0], fn.stmt
                if _loops_over_it(facts, fn.name, loop):
                    continue  # one trace per iteration, paid back by the inner loop's calls
                if _handed_on_uncalled(facts, fn.name, loop):
                    continue  # one function per host or model, bound or stored for later calls
                if is_short_loop(loop) and _called_with_new_arguments(ctx, fn, loop):
                    continue  # a handful of iterations, each with arguments of its own (``for n in (10, 250)``
                    # building a model per n): created once, it would trace as often
                title = f"Move `{name} = tf.function(...)` before the loop"
                hoist = None
                if isinstance(loop, _LOOPS) and isinstance(stmt, ast.Assign) and _hoistable(facts, stmt, fn.wrapper, loop):
                    hoist = partial(_hoist, ctx, stmt, loop, title)
                yield self.finding(
                    ctx,
                    fn.wrapper if isinstance(fn.wrapper, ast.Call) else fn.stmt,
                    f"`{name}` is a new tf.function on every loop iteration, so every call traces it "
                    f"again: create it once, before the loop",
                    label="new tf.function each iteration",
                    fix=hoist,
                    fix_title=title if hoist is not None else None,
                    head_only=True,
                )
                continue
            outer = facts.enclosing_function(fn.stmt)
            # Only where this file runs `outer` eagerly itself: a library method may be called
            # while its caller is traced (then the inner function is traced once, as part of it).
            if (outer is not None and fn.stmt is not outer and facts.is_called_repeatedly(outer)
                    and ctx.hot.runs_eagerly_in_script(outer.body[0]) and not _loops_over_it(facts, fn.name, outer)
                    and not _traced_for_export(facts, fn, outer)):
                yield self.finding(
                    ctx,
                    fn.node if fn.node is not None and fn.stmt is fn.node else fn.stmt,
                    f"`{name}` is a new tf.function each time `{outer.name}` runs, and `{outer.name}` "
                    f"is called repeatedly: define it once outside `{outer.name}`",
                    label=f"new tf.function per {outer.name}() call",
                    head_only=True,
                )


def _called_with_new_arguments(ctx: RuleContext, fn: TFFunction, loop: ast.AST) -> bool:
    """Every call of ``fn`` in ``loop`` passes a value the loop makes anew on each iteration."""
    facts = ctx.facts
    parent = facts.parent(fn.wrapper)
    calls = [parent] if isinstance(parent, ast.Call) and parent.func is fn.wrapper else []
    calls += [call for call in tf_function_calls(ctx, fn) if loop in facts.ancestors(call)]
    if not calls:
        return False
    changed = facts.names_changed_by(loop)
    return all(any(isinstance(node, ast.Name) and node.id in changed
                   for arg in call_arguments(call) for node in ast.walk(arg))
               for call in calls)


def _traced_for_export(facts: ModuleFacts, fn: TFFunction, outer: ast.AST) -> bool:
    """``outer`` builds the function to export it: the function is a method of a ``tf.Module``
    class (an exported signature), or ``outer`` asks for a concrete function or saves a
    SavedModel (simclr's ``build_saved_model``, run once per checkpoint): the trace is the
    point, and a new object traces its own methods wherever the class is defined."""
    cls = facts.enclosing_class(fn.stmt)
    if cls is not None and any(facts.qualname(base) in _MODULE_CLASSES for base in cls.bases):
        return True
    return any(isinstance(node, ast.Call) and (
        isinstance(node.func, ast.Attribute) and node.func.attr == "get_concrete_function"
        or facts.qualname(node.func) in _SAVERS) for node in ast.walk(outer))


_MODULE_CLASSES = frozenset({"tensorflow.Module", "tensorflow.compat.v2.Module"})
_SAVERS = frozenset({"tensorflow.saved_model.save", "tensorflow.compat.v2.saved_model.save"})


def _loops_over_it(facts: ModuleFacts, name: str | None, outer: ast.AST) -> bool:
    """``outer`` (a function, or a loop's body) calls the function it created in a loop of its
    own (``def train_epoch(): step = tf.function(step_fn); for batch in ds: step(batch)``, or
    the same in an ``for epoch`` loop): one trace per ``outer`` run, paid back by the steps of
    that inner loop."""
    if name is None:
        return False
    for use in facts.names.get(name, []):
        call = facts.parent(use)
        if not (isinstance(call, ast.Call) and call.func is use):
            continue
        loops = facts.enclosing_loops(call)
        if isinstance(outer, _LOOPS):
            if outer in loops[1:]:
                return True  # an inner loop of ``outer``'s body runs it
        elif facts.enclosing_function(call) is outer and loops:
            return True
    return False


def _handed_on_uncalled(facts: ModuleFacts, name: str | None, loop: ast.AST) -> bool:
    """The loop never calls the function it creates but hands it on (``server.bind(fn)``,
    ``fns.append(fn)``, ``self.step = fn``): one function per item, each traced once when
    its later callers first run it, and each may close over its own item (a host, a device)."""
    if name is None:
        return False
    uses = [use for use in facts.names.get(name, []) if loop in facts.ancestors(use)]
    loaded = [use for use in uses if isinstance(use.ctx, ast.Load)]
    called = any(isinstance(parent := facts.parent(use), ast.Call) and parent.func is use for use in loaded)
    return bool(loaded) and not called


def _hoist(ctx: RuleContext, stmt: ast.Assign, loop: ast.stmt, title: str) -> Fix | None:
    """``for ...:`` / ``    fast = tf.function(f)`` -> ``fast = tf.function(f)`` / ``for ...:``:
    the statement moves (re-indented) above the outermost loop that changes nothing it uses."""
    if stmt.end_lineno is None:
        return None
    loop = _outermost(ctx.facts, stmt, loop)  # out of every loop at once: one --fix round
    source = ctx.source
    moved = source.slice(whole_lines(source, stmt.lineno - 1, stmt.end_lineno - 1))
    moved_lines = moved.split("\n")
    body_indent = source.indent_of(stmt.lineno - 1)
    loop_indent = source.indent_of(loop.lineno - 1)
    reindented = "\n".join(loop_indent + line[len(body_indent):] if line.strip() else line for line in moved_lines)
    remove = Edit(Span(Pos(stmt.lineno - 1, 0), Pos(stmt.end_lineno, 0)), "")
    insert = Edit(Span(Pos(loop.lineno - 1, 0), Pos(loop.lineno - 1, 0)), reindented + "\n")
    return Fix(title, (insert, remove))


def _hoistable(facts: ModuleFacts, stmt: ast.Assign, wrapper: ast.AST, loop: Loop) -> bool:
    """``name = tf.function(...)`` directly in the loop body, using nothing the loop changes."""
    if stmt.value is not wrapper or facts.parent(stmt) is not loop:
        return False
    if len(loop.body) < 2 or stmt.end_lineno is None:
        return False  # moving the only statement would leave an empty loop
    changed = facts.names_changed_by(loop, skip=stmt)
    used = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
    return not (used & changed)


def _outermost(facts: ModuleFacts, stmt: ast.Assign, loop: ast.stmt) -> ast.stmt:
    """The outermost enclosing loop that changes nothing the hoisted statement uses (90 nested
    loops took 90 rounds of one level each)."""
    used = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
    while True:
        outer = facts.parent(loop)
        if not isinstance(outer, _LOOPS) or loop not in outer.body:
            return loop
        if used & facts.names_changed_by(outer, skip=stmt):
            return loop
        loop = outer

