"""Small questions about syntax nodes that many rules ask: a call's keyword, an integer written
in the code, a dotted name. One definition each (like ruff's ``ruff_python_ast::helpers``)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfperf_lsp.analysis.facts import ModuleFacts


def first_line(stmt: ast.AST) -> int:
    """The 1-based line a statement starts on, its decorators included."""
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])  # type: ignore[attr-defined]


def keyword(call: ast.Call | None, name: str) -> ast.expr | None:
    """The value given to keyword ``name`` in ``call`` (None: not given)."""
    if call is None:
        return None
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def call_arguments(call: ast.Call) -> list[ast.expr]:
    """What ``call`` passes: its positional arguments, then its keywords' values."""
    return [*call.args, *(k.value for k in call.keywords)]


def keywords_of(call: ast.Call | None) -> dict[str, ast.expr]:
    """Every named keyword of ``call`` (``**kwargs`` left out)."""
    if call is None:
        return {}
    return {kw.arg: kw.value for kw in call.keywords if kw.arg}


def is_true(expr: ast.AST | None) -> bool:
    """The literal ``True``."""
    return isinstance(expr, ast.Constant) and expr.value is True


def keyword_is_true(call: ast.Call, name: str) -> bool:
    """``call(..., name=True)`` with the literal ``True``."""
    return is_true(keyword(call, name))


def int_literal(expr: ast.AST | None) -> int | None:
    """An integer written as a literal (``bool`` is not one)."""
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return expr.value
    return None


def int_value(facts: ModuleFacts, expr: ast.AST | None) -> int | None:
    """An integer literal, or a module-level name assigned from one (``EPOCHS = 10``,
    ``BATCH, EPOCHS = 32, 10``): once, or always to the same number (a notebook that sets
    ``BATCH_SIZE = 16`` again in each section)."""
    literal = int_literal(expr)
    if literal is not None or not isinstance(expr, ast.Name):
        return literal
    assigned = facts.module_assignments.get(expr.id, [])
    values = {_assigned_int(a, expr.id) for a in assigned}
    return values.pop() if len(values) == 1 else None


def _assigned_int(assignment: ast.stmt, name: str) -> int | None:
    if not isinstance(assignment, ast.Assign) or len(assignment.targets) != 1:
        return None
    value = assignment.value
    target = assignment.targets[0]
    if isinstance(value, ast.Tuple) and isinstance(target, ast.Tuple):
        names = [t.id if isinstance(t, ast.Name) else None for t in target.elts]
        if name in names and len(names) == len(value.elts):
            value = value.elts[names.index(name)]
    elif not isinstance(target, ast.Name):
        return None
    return int_literal(value)


def dotted(expr: ast.AST | None) -> str | None:
    """``A`` / ``self.w``: a plain reference without calls or subscripts, else None."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = dotted(expr.value)
        return f"{base}.{expr.attr}" if base else None
    return None


def root_name(expr: ast.AST) -> str | None:
    """The name an attribute chain starts from: ``a`` for ``a.b.c``."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def enumerated(iterable: ast.expr) -> ast.expr | None:
    """``x`` of ``enumerate(x)`` (one argument, no start), else None."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate" \
            and len(iterable.args) == 1 and not iterable.keywords:
        return iterable.args[0]
    return None
