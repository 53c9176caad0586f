"""TFP402: per-row reductions added up in a Python loop: one reduction over an axis does it."""
from __future__ import annotations

import ast
import re
from functools import partial
from typing import Iterator, Sequence

from tfperf_lsp.analysis.astutil import int_literal
from tfperf_lsp.analysis.facts import ModuleFacts, neighbour
from tfperf_lsp.model import Finding, Fix, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import DATASET_MAKERS, tf_alias
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.vectorize import _loops as L

_REDUCTIONS = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"}
_DATASET_NAME = re.compile(r"(^|_)(ds|dataset|datasets|loader|iterator|batches|generator|gen)($|_)", re.IGNORECASE)
# Collections of tensors of different shapes (a model's weights, gradients): summing per item is
# the only way, so a loop over them is not a missed vectorisation.
_COLLECTION_NAME = re.compile(r"variables|weights|vars$|params|parameters|grads|gradients|kernels|layers|tensors|list",
                              re.IGNORECASE)


class LoopReduceAccumulate(Rule):
    code = "TFP402"
    name = "loop-reduce-accumulate"
    category = "vectorize"
    severity = Severity.WARNING
    summary = "per-row tf.reduce_* added up in a Python loop: one reduction over an axis does it"
    doc_url = "https://www.tensorflow.org/guide/function#loops"
    fixable = True
    docs = """
    ## What it does
    Finds loops over the rows of a tensor that add up one reduction per row:
    `s = 0; for row in x: s += tf.reduce_mean(row)`, `s = s + tf.reduce_max(x[i])` for
    `i in range(len(x))`, inside or outside a tf.function.

    ## Why is this slow
    One `reduce_*` op (and one slice, one add) per row, dispatched from Python in eager code or
    run as an AutoGraph `tf.while_loop` iteration in a graph. Measured: 322 ms for
    the loop vs 0.23 ms for `tf.reduce_sum(tf.reduce_mean(x, axis=1))`.

    ## When it stays silent
    Loops over datasets (`for batch in ds`, a name assigned from `tf.data`, tuple targets), over
    Python collections of tensors that may differ in shape (a list display or comprehension, names
    like `weights`, `trainable_variables`, `grads`), loops that do anything else, and accumulations other than `+`. It never suggests
    `n * tf.reduce_mean(x)`: that is wrong for ragged rows (measured: 6.0 vs 2.5).

    ## Fix
    `tf.reduce_sum(tf.reduce_mean(x, axis=1))` (the row reduction over every axis of a row, then
    a sum over rows); `tf.reduce_sum(x)` for a sum of row sums. When the rank of `x` is not
    known, the axes are `tf.range(1, tf.rank(x))`, which is right for any rank. A row reduction
    with `axis=k` becomes `axis=k+1` followed by `tf.reduce_sum(..., axis=0)`.
    Offered only when: the accumulator starts as a number literal (`0`, `0.0`, `float(0)`) right
    before the loop (a non-zero start is kept: `s = 1.0 + ...`); the loop covers every row in order
    (`for row in x`, `range(len(x))`, `range(x.shape[0])`, or a literal equal to `x`'s
    constructor's first dimension); the body is only that statement; the loop variable is not
    used afterwards. The fix is marked unsafe: the sum's order changes, so results differ in the
    last bits (relative 1e-6 for float32; checked with rtol=1e-5), and an empty `x` gives a
    tensor `0.` instead of the Python number.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            def mean_of_row_means(x):
                total = 0.0
                for row in x:
                    total += tf.reduce_mean(row)
                return total

            m = mean_of_row_means(tf.random.uniform([20, 7]))
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            def checksum(dataset):
                s = 0.0
                for batch in dataset:  # a tf.data pipeline, not a tensor
                    s += tf.reduce_sum(batch)
                return s
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for node in facts.loops:
            loop = L.plain_for(node)
            if loop is None or len(loop.body) != 1:
                continue
            found = _accumulation(facts, loop.body[0])
            if found is None:
                continue
            acc, reduce_call, reduction = found
            it = L.iteration(facts, loop.target, loop.iter)
            if it is None:
                continue
            row = reduce_call.args[0]
            x = L.indexed(row, it.var) if it.over_index else (it.tensor if isinstance(row, ast.Name) and row.id == it.var else None)
            if x is None or x == acc or _maybe_dataset(facts, x, loop):
                continue
            axis, problems = _row_axis(reduce_call)
            init = neighbour(facts, loop, -1)
            start = _start_value(ctx, init, acc)
            if start is None or init is None:
                problems.append(f"`{acc}` does not start at a number right before the loop")
            elif not L.statements_alone(ctx.source, init, loop, neighbour(facts, init, -1), neighbour(facts, loop, 1)):
                problems.append("the statements share lines with others")
            if not L.covers_axis(facts, it, x, loop):
                problems.append(f"the loop may not cover every row of `{x}`")
            if not problems and init is not None and L.names_read_after(facts, ctx.source, [init, loop], {it.var}):
                problems.append(f"`{it.var}` is used after the loop")
            alias = facts.imports.alias_for("tensorflow") or "tf"
            info = L.tensor_info(facts, x, loop, strict=True)  # the rank picks the fix's axes
            rank = len(info.shape) if info and info.shape is not None else None
            vectorised = _vectorised(alias, reduction, x, axis, rank)
            where = "inside a graph loop" if facts.in_tf_function(loop) else "dispatched from Python"
            message = (f"`{acc}` adds up `tf.{reduction}` of each row of `{x}`, one op per row ({where}): "
                       f"use `{vectorised}`")
            title = f"Replace the loop with {vectorised}"
            code = f"{acc} = {vectorised}" if start in (None, "0") else f"{acc} = {start} + {vectorised}"
            yield self.finding(
                ctx, loop, message + (f" ({problems[0]})" if problems else ""),
                label="one reduction per row",
                head_only=True,
                fix=None if problems or init is None else partial(_replace_the_loop, ctx, init, loop, code, alias, title),
                fix_title=None if problems else title,
                fix_applicability="unsafe",
            )


def _replace_the_loop(ctx: RuleContext, init: ast.stmt, loop: ast.For, code: str, alias_used: str, title: str) -> Fix | None:
    """``total = 0.0`` / ``for row in x: total += tf.reduce_mean(row)`` ->
    ``total = tf.reduce_sum(tf.reduce_mean(x, axis=1))`` (``code``, written with ``alias_used``
    for TensorFlow; respelled if the file needs another, or the import)."""
    alias, extra = tf_alias(ctx, loop.lineno - 1)
    if alias != alias_used:
        code = code.replace(alias_used + ".", alias + ".")
    edit = L.replace_statements(ctx.source, init, loop, code)
    return Fix(title, (edit, *extra)) if edit else None


def _accumulation(facts: ModuleFacts, stmt: ast.stmt) -> tuple[str, ast.Call, str] | None:
    """``acc += tf.reduce_X(e)`` / ``acc = acc + tf.reduce_X(e)``: (acc, the call, X)."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and isinstance(stmt.target, ast.Name):
        acc, value = stmt.target.id, stmt.value
    elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
          and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Add)):
        acc = stmt.targets[0].id
        left, right = stmt.value.left, stmt.value.right
        if isinstance(left, ast.Name) and left.id == acc:
            value = right
        elif isinstance(right, ast.Name) and right.id == acc:
            value = left
        else:
            return None
    else:
        return None
    if not isinstance(value, ast.Call) or not value.args:
        return None
    qualname = facts.qualname(value.func) or ""
    reduction = qualname.rsplit(".", 1)[-1]
    if qualname not in (f"tensorflow.{reduction}", f"tensorflow.math.{reduction}") or reduction not in _REDUCTIONS:
        return None
    if L.reads_name(value, acc):
        return None
    return acc, value, reduction


def _row_axis(call: ast.Call) -> tuple[int | None, list[str]]:
    """The row reduction's ``axis`` (None: all axes of the row), and what blocks the fix."""
    keywords: dict[str | None, ast.expr | None] = {kw.arg: kw.value for kw in call.keywords}
    axis_expr = call.args[1] if len(call.args) > 1 else keywords.pop("axis", None)
    keepdims = keywords.pop("keepdims", None)
    problems = []
    if len(call.args) > 2 or keywords or (keepdims is not None and not (isinstance(keepdims, ast.Constant) and keepdims.value is False)):
        problems.append("the reduction has other arguments")
    axis = None
    if axis_expr is not None:
        axis = int_literal(axis_expr)
        if axis is None and isinstance(axis_expr, ast.UnaryOp) and isinstance(axis_expr.op, ast.USub):
            inner = int_literal(axis_expr.operand)
            axis = -inner if inner is not None else None
        if axis is None:
            problems.append("the row axis is not a literal")
    return axis, problems


def _start_value(ctx: RuleContext, init: ast.stmt | None, acc: str) -> str | None:
    """The accumulator's starting number (source text; "0" for any zero), if set right before."""
    if not (isinstance(init, ast.Assign) and len(init.targets) == 1 and isinstance(init.targets[0], ast.Name)
            and init.targets[0].id == acc):
        return None
    value = init.value
    convert: type[float] | type[int] | None = None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("float", "int") and len(value.args) == 1:
        convert = float if value.func.id == "float" else int
        value = value.args[0]
    if not L.is_number(value) or value.__class__ is ast.Call:
        return None
    number = ast.literal_eval(value)
    if number == 0:
        return "0"
    return repr(convert(number)) if convert else ctx.source.segment(value)


def _vectorised(alias: str, reduction: str, x: str, axis: int | None, rank: int | None) -> str:
    if axis is not None:
        return f"{alias}.reduce_sum({alias}.{reduction}({x}, axis={axis + 1 if axis >= 0 else axis}), axis=0)"
    if reduction == "reduce_sum" or rank == 1:
        return f"{alias}.reduce_sum({x})"
    if rank == 2:
        axes = "1"
    elif rank is not None:
        axes = str(list(range(1, rank)))
    else:
        axes = f"{alias}.range(1, {alias}.rank({x}))"
    return f"{alias}.reduce_sum({alias}.{reduction}({x}, axis={axes}))"


def _maybe_dataset(facts: ModuleFacts, name: str, loop: ast.For) -> bool:
    """Iterating a tf.data pipeline, an iterator or a Python collection of tensors (of possibly
    different shapes), not one tensor: those cannot be reduced in one op."""
    last = name.rsplit(".", 1)[-1]
    if _DATASET_NAME.search(last) or _COLLECTION_NAME.search(last):
        return True
    if "." in name:
        return False
    scope = facts.scope_of(loop)
    assignments: Sequence[ast.AST] = facts.assignments_in(scope).get(name, []) if scope is not None else []
    if not assignments:  # not bound in the function: a global it reads
        assignments = facts.module_assignments.get(name, [])
    for stmt in assignments:
        value = getattr(stmt, "value", None)
        if isinstance(value, ast.Call):
            qualname = facts.qualname(value.func) or ""
            if qualname.startswith("tensorflow.data") or qualname in ("iter", "zip", "enumerate"):
                return True
            if isinstance(value.func, ast.Attribute) and value.func.attr in DATASET_MAKERS:
                return True
            if isinstance(value.func, ast.Name) and value.func.id in ("iter", "zip", "map", "filter"):
                return True
        elif isinstance(value, (ast.GeneratorExp, ast.List, ast.ListComp, ast.Tuple)):
            return True
    return False
