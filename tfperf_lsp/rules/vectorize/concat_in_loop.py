"""TFP404: a tensor grown with tf.concat on every loop iteration (quadratic copying)."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator

from tfperf_lsp.analysis.astutil import int_literal, keyword
from tfperf_lsp.analysis.facts import ModuleFacts, neighbour
from tfperf_lsp.analysis.models import keras_classes
from tfperf_lsp.model import Edit, Finding, Fix, Pos, Severity, Span
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.vectorize import _loops as L

_CONCAT = {"tensorflow.concat"}
_EXITS = (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal, ast.Await)


class ConcatInLoop(Rule):
    code = "TFP404"
    name = "concat-in-loop"
    category = "vectorize"
    severity = Severity.WARNING
    summary = "acc = tf.concat([acc, t]) in a loop: quadratic copying; collect a list, concat once"
    doc_url = "https://www.tensorflow.org/api_docs/python/tf/TensorArray"
    fixable = True
    docs = """
    ## What it does
    Finds `acc = tf.concat([acc, t], axis)` (or `[t, acc]`) inside a loop: a tensor that grows by
    one piece per iteration.

    ## Why is this slow
    Every concat copies everything gathered so far: n pieces cost O(n²) copying and n ops.
    Measured on this project's 2-core CPU (eager, 500 pieces of 16x64 float32, median of 15):
    37 ms for the loop vs 0.31 ms for a list and one `tf.concat`, with identical results. In a `tf.function` loop over a tensor, the loop variable changes
    shape, which `tf.while_loop` rejects unless given `shape_invariants`.

    ## When it stays silent
    When the loop reads `acc` anywhere else (its shape in a `while` condition, an `if`), or the
    concat is not `acc = tf.concat([acc, t], ...)` exactly. When the piece is token ids picked in
    the loop (`tf.argmax(logits, -1)`, `tf.random.categorical`): a decoding loop grows a sequence
    by a few integers per step, a copy far smaller than the model step that picks each one. In a
    method of a Keras layer or model, for a loop over `range(self.num_levels)` (or
    `self.options.sub_levels`): a loop over the architecture, a handful of levels fixed when the
    layer is made, not a loop over data.

    ## Fix
    Outside a tf.function: a list started with the initial `acc`, `append(t)` in the loop, and one
    `acc = tf.concat(parts, axis)` after it: the same pieces in the same order, so the result is
    exactly equal (empty loop: `tf.concat([acc])` returns `acc`'s values). Offered only when the
    concat statement sits directly in the loop body, `acc` is a plain name not read anywhere else
    in the loop, the axis is a literal or a name not assigned in the loop, the loop has no `else`
    and no `return`/`yield` (which would skip the final concat) and `acc` is not `global`.
    `[t, acc]` (prepending) gets no fix. Inside a tf.function, no fix: use a `tf.TensorArray`
    (`ta = ta.write(i, t)` then `ta.concat()`), which a graph loop can carry.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            def collect(chunks, dim):
                acc = tf.zeros([0, dim])
                for chunk in chunks:
                    # grow by one chunk
                    acc = tf.concat([acc, chunk], axis=0)
                return acc

            out = collect([tf.random.normal([3, 4]) for _ in range(5)], 4)
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            def grow_until(chunks, limit):
                acc = chunks[0]
                i = 1
                while acc.shape[0] < limit:  # reads acc: each step depends on the size so far
                    acc = tf.concat([acc, chunks[i]], axis=0)
                    i += 1
                return acc
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for call in facts.calls_named("concat"):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "concat" or isinstance(func, ast.Name) and func.id == "concat"):
                continue
            if facts.qualname(func) not in _CONCAT:
                continue
            stmt = facts.parent(call)
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                continue
            acc = stmt.targets[0].id
            values = call.args[0] if call.args else keyword(call, "values")
            if not (isinstance(values, ast.List) and len(values.elts) == 2):
                continue
            first, piece = values.elts
            appended = isinstance(first, ast.Name) and first.id == acc
            if not appended and not (isinstance(piece, ast.Name) and piece.id == acc):
                continue
            piece = piece if appended else first
            loops = facts.enclosing_loops(stmt)
            loop = loops[0] if loops else None
            if not isinstance(loop, (ast.For, ast.While)) or L.reads_name(piece, acc):
                continue
            if _reads_elsewhere(loop, stmt, acc):
                continue  # the loop needs the grown tensor itself
            if _is_a_picked_token(facts, loop, piece):
                continue  # a decoding loop: a few ids per step, copied beside a model step each
            if _over_the_architecture(facts, loop):
                continue  # ``for j in range(self.options.sub_levels)`` in a layer: a few levels, fixed at construction
            axis = call.args[1] if len(call.args) > 1 else keyword(call, "axis")
            # ``for idx in tf.range(n)``: a loop written for AutoGraph, which a caller traces
            # (``tf.function(self.mock_stream)``); a Python list there would not survive the graph
            graph = facts.in_tf_function(loop) is not None or isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) \
                and facts.qualname(loop.iter.func) == "tensorflow.range"
            problems = []
            if graph:
                problems.append("in a graph: use a tf.TensorArray")
            elif not appended:
                problems.append("it prepends")
            elif stmt not in loop.body or loop.orelse or len(call.args) + len(call.keywords) != 2:
                problems.append("the loop's shape is not simple enough")
            elif not (int_literal(axis) is not None or _negative(axis) or isinstance(axis, ast.Name) and not _assigned_in(loop, axis.id)):
                problems.append("the axis changes in the loop")
            elif any(isinstance(n, _EXITS) for n in ast.walk(loop)) or _declared_global(facts, loop, acc):
                problems.append("the loop can exit past the final concat")
            elif not L.statements_alone(ctx.source, loop, loop, neighbour(facts, loop, -1), neighbour(facts, loop, 1)) or \
                    not L.statements_alone(ctx.source, stmt, stmt, neighbour(facts, stmt, -1), neighbour(facts, stmt, 1)):
                problems.append("the statements share lines with others")
            advice = "collect the pieces in a Python list and `tf.concat` once after the loop" if not graph else \
                "use a `tf.TensorArray` (`ta.write(i, t)`, then `ta.concat()`)"
            title = f"Collect the pieces of {acc} in a list, concat once"
            yield self.finding(
                ctx, loop,
                f"`{acc}` is grown with `tf.concat` on every iteration, copying everything gathered so far "
                f"(quadratic): {advice}",
                label="quadratic concat",
                head_only=True,
                fix=None if problems or axis is None else partial(_collect_then_concat, ctx, loop, stmt, call, acc, piece, axis, title),
                fix_title=None if problems else title,
            )


def _over_the_architecture(facts: ModuleFacts, loop: ast.AST) -> bool:
    """``for j in range(1, self.options.sub_levels)`` in a method of a Keras layer or model: a loop
    over the architecture (its levels, blocks or heads), whose count is a setting fixed when the
    layer is made, a handful in practice (FILM's feature pyramid: 3 concats a level), not a loop
    over data."""
    if not (isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name)
            and loop.iter.func.id == "range" and loop.iter.args):
        return False
    cls = facts.enclosing_class(loop)
    if cls is None or cls.name not in keras_classes(facts):
        return False
    bounds = [n for arg in loop.iter.args for n in ast.walk(arg) if isinstance(n, (ast.Name, ast.Call, ast.Subscript))]
    return any(_self_setting(arg) for arg in loop.iter.args) and all(
        isinstance(n, ast.Name) and n.id == "self" for n in bounds)


def _self_setting(expr: ast.AST) -> bool:
    """``self.num_levels`` or ``self.options.sub_levels``: an attribute path from ``self``."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name) and expr.id == "self"


def _collect_then_concat(ctx: RuleContext, loop: ast.For | ast.While, stmt: ast.Assign, call: ast.Call, acc: str,
                         piece: ast.expr, axis: ast.expr, title: str) -> Fix:
    """``for t in ts: acc = tf.concat([acc, t], axis=0)`` -> ``acc_parts = [acc]`` before the loop,
    ``acc_parts.append(t)`` in it and ``acc = tf.concat(acc_parts, axis=0)`` after it."""
    source = ctx.source
    parts = L.fresh_name(ctx.facts, f"{acc}_parts")
    indent = source.indent_of(loop.lineno - 1)
    top = loop.lineno - 1
    while top > 0 and source.line(top - 1).strip().startswith("#") and source.indent_of(top - 1) == indent:
        top -= 1  # above the comments that introduce the loop
    axis_text = source.segment(axis)
    axis_arg = f"axis={axis_text}" if keyword(call, "axis") is not None else axis_text
    before = Edit(Span(Pos(top, 0), Pos(top, 0)), f"{indent}{parts} = [{acc}]\n")
    inside = Edit(source.span(stmt), f"{parts}.append({source.segment(piece)})")
    end = L.end_line(loop) - 1
    after = Edit(Span(Pos(end, len(source.line(end))), Pos(end, len(source.line(end)))),
                 f"\n{indent}{acc} = {source.segment(call.func)}({parts}, {axis_arg})")
    return Fix(title, (before, inside, after))


# Ops that pick token ids from a model's scores: a decoding loop appends what they return.
_PICKS = frozenset({"argmax", "categorical", "multinomial", "choice", "top_k"})


def _is_a_picked_token(facts: ModuleFacts, loop: ast.AST, piece: ast.expr) -> bool:
    """The piece is ids picked in this loop (``tf.argmax(logits, -1)``, ``tf.random.categorical``,
    ``np.random.choice``), directly or through names assigned from them: a decoding loop that
    grows a sequence by one token per step. The copy is a few integers per step, beside the model
    step that picks each one."""
    picked: set[str] = set()
    assignments = [n for n in ast.walk(loop) if isinstance(n, ast.Assign)]

    def derives(expr: ast.AST) -> bool:
        for node in ast.walk(expr):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if name in _PICKS:
                    return True
            if isinstance(node, ast.Name) and node.id in picked:
                return True
        return False

    changed = True
    while changed:
        changed = False
        for assignment in assignments:
            if derives(assignment.value):
                for target in assignment.targets:
                    for node in ast.walk(target):
                        if isinstance(node, ast.Name) and node.id not in picked:
                            picked.add(node.id)
                            changed = True
    return derives(piece)


def _reads_elsewhere(loop: ast.AST, stmt: ast.stmt, acc: str) -> bool:
    """Whether ``acc`` appears in the loop outside the concat statement."""
    stack = [loop]
    while stack:
        node = stack.pop()
        if node is stmt:
            continue
        if isinstance(node, ast.Name) and node.id == acc:
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def _assigned_in(loop: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(loop))


def _negative(axis: ast.expr | None) -> bool:
    return isinstance(axis, ast.UnaryOp) and isinstance(axis.op, ast.USub) and int_literal(axis.operand) is not None


def _declared_global(facts: ModuleFacts, loop: ast.AST, acc: str) -> bool:
    scope = facts.scope_of(loop)
    if scope is None:
        return False
    return any(isinstance(n, (ast.Global, ast.Nonlocal)) and acc in n.names for n in ast.walk(scope))
