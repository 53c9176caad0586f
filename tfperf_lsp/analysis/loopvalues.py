"""Which expressions hold a Python number (or list of them) that changes from one loop iteration
to the next: loop counters, ``enumerate`` indices, epochs, values computed from them.

Deliberately narrow: a value is "varying" only when we can see that it is a Python number built
from a loop variable. A tensor, a value from an unknown call, or a constant is never varying.
"""
from __future__ import annotations

import ast

from tfperf_lsp.analysis.facts import ModuleFacts, target_names, walk_same_scope

_COUNTING_ITERABLES = {"range", "itertools.count"}


def varying_scalar(facts: ModuleFacts, expr: ast.AST, loops: list[ast.AST]) -> str | None:
    """The loop variable behind ``expr`` if it is a Python number that changes per iteration."""
    return _varying(facts, expr, loops, depth=0)


def _varying(facts: ModuleFacts, expr: ast.AST, loops: list[ast.AST], depth: int) -> str | None:
    if depth > 6:
        return None
    if isinstance(expr, ast.Name):
        for loop in loops:
            if _is_numeric_loop_target(facts, loop, expr.id):
                return expr.id
            source = _assigned_in_loop(loop, expr.id)
            if source is not None:
                if isinstance(source, ast.AugAssign) and _numeric_start(facts, loop, expr.id):
                    return expr.id
                if isinstance(source, ast.Assign) and _varying(facts, source.value, loops, depth + 1):
                    return expr.id
        return None
    if isinstance(expr, ast.BinOp):
        left = _varying(facts, expr.left, loops, depth + 1)
        right = _varying(facts, expr.right, loops, depth + 1)
        if (left or right) and _python_number(facts, expr.left, loops, depth) and _python_number(facts, expr.right, loops, depth):
            return left or right
        return None
    if isinstance(expr, ast.UnaryOp):
        return _varying(facts, expr.operand, loops, depth + 1)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("int", "float") and len(expr.args) == 1:
        return _varying(facts, expr.args[0], loops, depth + 1)
    return None


def varying_number_list(facts: ModuleFacts, expr: ast.AST, loops: list[ast.AST], depth: int = 0) -> str | None:
    """A list/tuple display of Python numbers in which some element changes per iteration
    (directly at the call, or assigned to a name in the loop body). A chain of names is followed
    a few steps, not round a cycle (``x = x`` in the loop body)."""
    if isinstance(expr, ast.Name):
        if depth > 6:
            return None
        for loop in loops:
            source = _assigned_in_loop(loop, expr.id)
            if isinstance(source, ast.Assign):
                return varying_number_list(facts, source.value, loops, depth + 1)
        return None
    if not isinstance(expr, (ast.List, ast.Tuple)) or not expr.elts:
        return None
    varying = None
    for element in expr.elts:
        name = _varying(facts, element, loops, 0)
        if name:
            varying = varying or name
        elif not (isinstance(element, ast.Constant) and _is_number(element.value)):
            return None
    return varying


def _python_number(facts: ModuleFacts, expr: ast.AST, loops: list[ast.AST], depth: int) -> bool:
    if isinstance(expr, ast.Constant):
        return _is_number(expr.value)
    return _varying(facts, expr, loops, depth + 1) is not None or _constant_name(facts, expr)


def _constant_name(facts: ModuleFacts, expr: ast.AST) -> bool:
    """A module-level name assigned exactly once, from a number literal (``EPOCHS = 10``)."""
    if not isinstance(expr, ast.Name):
        return False
    assignments = facts.module_assignments.get(expr.id, [])
    return (
        len(assignments) == 1
        and isinstance(assignments[0], ast.Assign)
        and isinstance(assignments[0].value, ast.Constant)
        and _is_number(assignments[0].value.value)
    )


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_numeric_loop_target(facts: ModuleFacts, loop: ast.AST, name: str) -> bool:
    generators = []
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        generators = [(loop.target, loop.iter)]
    elif hasattr(loop, "generators"):
        generators = [(g.target, g.iter) for g in loop.generators]
    for target, iterable in generators:
        if name not in target_names(target):
            continue
        if isinstance(iterable, ast.Call):
            callee = iterable.func.id if isinstance(iterable.func, ast.Name) else facts.qualname(iterable.func)
            if callee in _COUNTING_ITERABLES and isinstance(target, ast.Name):
                return True
            if callee == "enumerate" and isinstance(target, ast.Tuple) and target.elts:
                first = target.elts[0]
                return isinstance(first, ast.Name) and first.id == name
        if isinstance(iterable, (ast.List, ast.Tuple)) and iterable.elts and isinstance(target, ast.Name):
            return all(isinstance(e, ast.Constant) and _is_number(e.value) for e in iterable.elts)
    return False


def _assigned_in_loop(loop: ast.AST, name: str) -> ast.stmt | None:
    body = getattr(loop, "body", None)
    if not isinstance(body, list):
        return None
    for stmt in body:
        for node in walk_same_scope(stmt):
            if isinstance(node, ast.Assign) and any(name in target_names(t) for t in node.targets):
                return node
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                return node
    return None


def _numeric_start(facts: ModuleFacts, loop: ast.AST, name: str) -> bool:
    """``step = 0`` before a loop that does ``step += 1``."""
    scope = facts.scope_of(loop) or facts.tree
    for stmt in walk_same_scope(scope) if scope is not facts.tree else ast.walk(facts.tree):
        if (
            isinstance(stmt, ast.Assign)
            and stmt.lineno < getattr(loop, "lineno", 0)
            and any(name in target_names(t) for t in stmt.targets)
            and isinstance(stmt.value, ast.Constant)
            and _is_number(stmt.value.value)
        ):
            return True
    return False
