"""Small AST helpers for the pipeline model (_pipeline.py): return statements, parameters,
what a def does with a dataset parameter, Keras inputs, integer constants."""
from __future__ import annotations

import ast
import re
from typing import Iterator

from tfperf_lsp.analysis.astutil import int_value, keyword
from tfperf_lsp.analysis.facts import FunctionNode, ModuleFacts, walk_same_scope

KERAS_CONSUMERS = {"fit", "evaluate", "predict"}


def option_set_false(text: str, pattern: re.Pattern[str], words: tuple[str, ...]) -> bool:
    """Whether ``text`` turns a tf.data optimisation off (``pattern``: ``<option> = False``).
    The words are looked for first: the regex alone stops at every word boundary of the file
    (2 ms at 2k lines)."""
    return any(word in text for word in words) and pattern.search(text) is not None
# A def: a pipeline factory, a function that consumes a dataset.
Def = ast.FunctionDef | ast.AsyncFunctionDef


def return_statements(body: list[ast.stmt]) -> Iterator[ast.Return]:
    """``return`` statements of a def, without walking expressions (fast)."""
    for stmt in body:
        if isinstance(stmt, ast.Return):
            yield stmt
        elif isinstance(stmt, (FunctionNode, ast.ClassDef)):
            continue
        else:
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, name, None)
                if isinstance(inner, list):
                    yield from return_statements(inner)
            for handler in getattr(stmt, "handlers", []):
                yield from return_statements(handler.body)
            for case in getattr(stmt, "cases", []):
                yield from return_statements(case.body)


def last_name(func: ast.AST) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return func.attr
    return None


def line_of(node: ast.AST) -> int:
    """Line of an assigning node; ``withitem`` and ``comprehension`` have none of their own."""
    if isinstance(node, ast.withitem):
        return node.context_expr.lineno
    if isinstance(node, ast.comprehension):
        return node.target.lineno
    line: int = getattr(node, "lineno")
    return line


def is_parameter(fn: ast.AST, name: str) -> bool:
    args = getattr(fn, "args", None)
    if args is None:
        return False
    every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
    return any(a.arg == name for a in every)


def parameter(fn: Def, position: int | str) -> str | None:
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    if isinstance(position, int):
        return params[position] if position < len(params) else None
    return position if position in params or any(a.arg == position for a in fn.args.kwonlyargs) else None


def consumed_parameter(facts: ModuleFacts, fn: ast.AST, param: str) -> tuple[str, bool] | None:
    """How a def uses a dataset parameter: ("for"/"fit", several epochs?) if it only consumes it."""
    result: tuple[str, bool] | None = None
    for node in walk_same_scope(fn):
        if isinstance(node, ast.Name) and node.id == param and isinstance(node.ctx, ast.Store):
            return None
        if isinstance(node, (ast.For, ast.AsyncFor)) and any(is_name(e, param) for e in iterated(node.iter)):
            epochs = bool(facts.enclosing_loops(node))
            result = ("for", epochs or (result[1] if result else False))
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in KERAS_CONSUMERS and any(is_name(e, param) for e, _ in keras_inputs(node)):
                epochs = func.attr == "fit" and more_than_one(facts, keyword(node, "epochs"))
                result = ("fit", epochs or bool(facts.enclosing_loops(node)) or (result[1] if result else False))
            elif any(is_name(a, param) for a in node.args) or any(is_name(k.value, param) for k in node.keywords):
                if not (isinstance(func, ast.Name) and func.id in ("iter", "enumerate", "len")):
                    return None  # passed on: we do not follow further
            elif isinstance(func, ast.Attribute) and is_name(func.value, param) and func.attr != "as_numpy_iterator":
                return None  # transformed (``ds.map(...)``) or used in a way we do not model
        elif isinstance(node, ast.Return) and node.value is not None and any(is_name(n, param) for n in ast.walk(node.value)):
            return None
    return result


def iterated(expr: ast.AST) -> list[ast.AST]:
    """The iterables a ``for`` loop really walks: through ``enumerate``/``zip``/``tqdm``."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("enumerate", "zip", "tqdm", "iter"):
        return list(expr.args[:1] if expr.func.id != "zip" else expr.args)
    return [expr]


def keras_inputs(call: ast.Call) -> Iterator[tuple[ast.expr, bool]]:
    """Dataset arguments of ``fit``/``evaluate``/``predict``: ``x`` and ``validation_data``."""
    if call.args:
        yield call.args[0], True
    for kw in call.keywords:
        if kw.arg == "x":
            yield kw.value, True
        elif kw.arg == "validation_data":
            yield kw.value, False


def more_than_one(facts: ModuleFacts, expr: ast.AST | None) -> bool:
    value = int_value(facts, expr)
    return value is not None and value > 1


def is_name(expr: ast.AST, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name


def inside(facts: ModuleFacts, node: ast.AST, container: ast.AST) -> bool:
    return any(a is container for a in facts.ancestors(node))
