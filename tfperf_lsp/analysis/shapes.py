"""Tensors whose shape changes from one loop iteration to the next (retrace and XLA recompiles).

Narrow on purpose: a slice with exactly one moving bound (``x[:i]``), a tensor built with a
shape that uses a loop variable (``tf.zeros([n, 3])``), a name assigned from one of these in the
loop, or the items of a Python list of tensors of different shapes (``for seq in sequences``).
"""
from __future__ import annotations

import ast

from tfperf_lsp.analysis.dataflow import SHAPE_POSITIONS, argument_for_parameter
from tfperf_lsp.analysis.facts import target_names, walk_same_scope
from tfperf_lsp.analysis.loopvalues import varying_scalar


def ragged_iteration(facts, expr: ast.AST, loops: list[ast.AST]) -> str | None:
    """``for seq in sequences: f(seq)`` where ``sequences`` holds tensors of different shapes."""
    if not isinstance(expr, ast.Name):
        return None
    for loop in loops:
        if (
            isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and loop.target.id == expr.id
            and isinstance(loop.iter, ast.Name) and _is_ragged_list(facts, loop.iter, 0)
        ):
            return loop.iter.id
    return None


def _is_ragged_list(facts, name: ast.Name, depth: int) -> bool:
    """A list built (here, or by every caller passing it in) from tensors of different shapes."""
    assignment = facts.reaching_assignment(name)
    if isinstance(assignment, ast.Assign):
        return _ragged_display(facts, assignment.value)
    fn = facts.enclosing_function(name)
    if fn is None or depth > 1:
        return False
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if name.id not in params:
        return False
    for call in facts.calls_by_def.get(fn, []):
        argument = argument_for_parameter(call, params, name.id)
        if isinstance(argument, ast.Name) and _is_ragged_list(facts, argument, depth + 1):
            return True
        if argument is not None and _ragged_display(facts, argument):
            return True
    return False


def _ragged_display(facts, value: ast.AST) -> bool:
    if isinstance(value, ast.ListComp) and len(value.generators) == 1:
        return varying_shape(facts, value.elt, [value]) is not None
    if isinstance(value, (ast.List, ast.Tuple)):
        shapes = {ast.dump(s) for s in (_literal_shape(facts, e) for e in value.elts) if s is not None}
        return len(shapes) > 1
    return False


def _literal_shape(facts, expr: ast.AST) -> ast.AST | None:
    if isinstance(expr, ast.Call):
        position = SHAPE_POSITIONS.get(facts.qualname(expr.func) or "")
        if position is not None and position < len(expr.args):
            return expr.args[position]
    return None


def varying_shape(facts, expr: ast.AST, loops: list[ast.AST], depth: int = 0) -> str | None:
    """The loop variable that changes ``expr``'s shape, if we can see one."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice):
        lower, upper = expr.slice.lower, expr.slice.upper
        if _fixed_window(lower, upper):
            return None  # ``x[i:i + size]``: the same length on every iteration but the last
        low = varying_scalar(facts, lower, loops) if lower is not None else None
        high = varying_scalar(facts, upper, loops) if upper is not None else None
        if bool(low) != bool(high):  # exactly one bound moves: the length changes
            return low or high
        return None
    if isinstance(expr, ast.Call):
        qualname = facts.qualname(expr.func)
        position = SHAPE_POSITIONS.get(qualname or "")
        shape = expr.args[position] if position is not None and position < len(expr.args) else None
        for kw in expr.keywords:
            if kw.arg == "shape":
                shape = kw.value
        if shape is not None and qualname not in ("tensorflow.reshape",):
            elements = shape.elts if isinstance(shape, (ast.List, ast.Tuple)) else [shape]
            for element in elements:
                variable = _loop_dependent(facts, element, loops)
                if variable:
                    return variable
        return None
    if isinstance(expr, ast.Name) and depth < 3:
        for loop in loops:
            for stmt in getattr(loop, "body", []):
                for node in walk_same_scope(stmt):
                    if isinstance(node, ast.Assign) and any(expr.id in target_names(t) for t in node.targets):
                        return varying_shape(facts, node.value, loops, depth + 1)
    return None


def _fixed_window(lower: ast.expr | None, upper: ast.expr | None) -> bool:
    """``i:i + size`` (or ``size + i``): both bounds move together, so the slice keeps its length
    (a window of a long array, chunk by chunk), whatever ``size`` is."""
    if lower is None or not isinstance(upper, ast.BinOp) or not isinstance(upper.op, ast.Add):
        return False
    start = ast.dump(lower)
    return ast.dump(upper.left) == start or ast.dump(upper.right) == start


def _loop_dependent(facts, expr: ast.AST, loops: list[ast.AST]) -> str | None:
    """A shape element that changes per iteration. A loop target used as a dimension needs no
    proof that it is a number (a dimension is one), so ``for length in lengths`` counts too."""
    if isinstance(expr, ast.Name) and any(expr.id in facts.loop_targets(loop) for loop in loops):
        return expr.id
    if isinstance(expr, ast.BinOp):
        return _loop_dependent(facts, expr.left, loops) or _loop_dependent(facts, expr.right, loops)
    return varying_scalar(facts, expr, loops)
