"""Helpers the vectorize rules share: what a loop iterates over, what a name holds, whether a
name is read after some statements, and replacing several statements by one (comments kept).

Everything here looks at a handful of nodes around a candidate loop; nothing walks the whole
module, so the rules stay within the analysis budget.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Sequence

from tfperf_lsp.analysis.facts import ModuleFacts, ScopeNode, neighbour, siblings
from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.model import Edit
from tfperf_lsp.rewrite.edits import whole_lines
from tfperf_lsp.analysis.astutil import dotted, int_literal, keyword

_SHAPED_CONSTRUCTORS = {
    # qualname: default dtype (None: depends on a value we do not read)
    "tensorflow.random.uniform": "float32",
    "tensorflow.random.normal": "float32",
    "tensorflow.random.truncated_normal": "float32",
    "tensorflow.random.stateless_normal": "float32",
    "tensorflow.random.stateless_uniform": "float32",
    "tensorflow.zeros": "float32",
    "tensorflow.ones": "float32",
    "numpy.zeros": "float64",
    "numpy.ones": "float64",
    "numpy.random.uniform": "float64",
    "numpy.random.normal": "float64",
}
_DTYPE_NAMES = {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "complex64", "complex128", "bool"}


# --------------------------------------------------------------------------- expressions


def indexed(expr: ast.AST, var: str) -> str | None:
    """``X[var]`` with a plain ``X``: the dotted name of ``X``."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Name) and expr.slice.id == var:
        return dotted(expr.value)
    return None


def is_number(expr: ast.AST | None) -> bool:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float)


# --------------------------------------------------------------------------- loops
@dataclass
class Iteration:
    """How a loop walks over the leading axis of a tensor."""

    var: str  # the loop variable (an index for ``range``, an element for ``for row in x``)
    over_index: bool  # True: ``for i in range(...)`` and the body uses ``x[i]``
    bound: ast.AST | None  # the ``range`` stop expression, when over_index
    measured: str | None  # the tensor whose leading dimension ``bound`` is (len(x), x.shape[0], ...)
    tensor: str | None = None  # for ``for row in x``: x


def iteration(facts: ModuleFacts, target: ast.AST, iterable: ast.AST) -> Iteration | None:
    """``for i in range(N)`` from 0 with step 1, or ``for row in x``; None for anything else."""
    if not isinstance(target, ast.Name):
        return None
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range":
        args = iterable.args
        if iterable.keywords or not 1 <= len(args) <= 3 or any(isinstance(a, ast.Starred) for a in args):
            return None
        if len(args) >= 2 and int_literal(args[0]) != 0:
            return None  # starts elsewhere: not the whole axis
        if len(args) == 3 and int_literal(args[2]) != 1:
            return None  # strided
        stop = args[-1] if len(args) > 1 else args[0]
        return Iteration(target.id, True, stop, measured_tensor(facts, stop))
    name = dotted(iterable)
    if name is not None:
        return Iteration(target.id, False, None, None, tensor=name)
    return None


def measured_tensor(facts: ModuleFacts, expr: ast.AST) -> str | None:
    """The ``X`` of ``len(X)``, ``X.shape[0]``, ``tf.shape(X)[0]`` (optionally in ``int(...)``)."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and len(expr.args) == 1 and not expr.keywords:
        if expr.func.id == "len":
            return dotted(expr.args[0])
        if expr.func.id == "int":
            return measured_tensor(facts, expr.args[0])
        return None
    if isinstance(expr, ast.Subscript) and int_literal(expr.slice) == 0:
        shape = expr.value
        if isinstance(shape, ast.Attribute) and shape.attr == "shape":
            return dotted(shape.value)
        if isinstance(shape, ast.Call) and facts.qualname(shape.func) == "tensorflow.shape" and len(shape.args) == 1:
            return dotted(shape.args[0])
    return None


def covers_axis(facts: ModuleFacts, it: Iteration, tensor: str, at: ast.stmt) -> bool:
    """True when the loop provably visits every item of ``tensor``'s leading axis, in order."""
    if not it.over_index:
        return it.tensor == tensor
    if it.measured == tensor:
        return True
    literal = int_literal(it.bound)
    if literal is None:
        return False
    info = tensor_info(facts, tensor, at, strict=True)
    return info is not None and info.shape is not None and len(info.shape) > 0 and info.shape[0] == literal


def loop_is_plain(loop: ast.AST) -> bool:
    """A ``for`` loop without ``else`` (see ``plain_for``)."""
    return plain_for(loop) is not None


def plain_for(loop: ast.AST) -> ast.For | None:
    """``loop`` if it is a ``for`` loop without ``else``."""
    return loop if isinstance(loop, ast.For) and not loop.orelse else None


# --------------------------------------------------------------------------- what a name holds
@dataclass
class TensorInfo:
    shape: tuple[int, ...] | None
    dtype: str | None


def tensor_info(facts: ModuleFacts, name: str, at: ast.stmt, strict: bool = False) -> TensorInfo | None:
    """Shape and dtype of ``name`` from the constructor that last assigned it before ``at``.

    ``strict`` (when a rewrite relies on the answer): only trust an assignment made directly in
    the scope's body (not in an ``if``), with ``at`` in no loop (a later iteration could see a
    value assigned further down).
    """
    if "." in name or (strict and facts.enclosing_loops(at)):
        return None
    scope = facts.scope_of(at)
    assignments: Sequence[ast.AST]
    if scope is None:
        assignments = facts.module_assignments.get(name, [])
    elif isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        assignments = facts.assignments_in(scope).get(name, [])
        if any(a.arg == name for a in ast.walk(scope.args) if isinstance(a, ast.arg)) and not assignments:
            return None
    else:
        return None
    # comprehension targets (no lineno) are local to the comprehension: not this name's binding
    before = [a for a in assignments if isinstance(a, (ast.stmt, ast.expr)) and a.lineno < at.lineno]
    if not before:
        return None
    last = max(before, key=lambda a: (a.lineno, a.col_offset))
    if not isinstance(last, ast.Assign) or len(last.targets) != 1 or not isinstance(last.targets[0], ast.Name):
        return None
    if strict and facts.parent(last) is not (scope or facts.tree):
        return None
    return _constructed(facts, last.value, depth=0)


def _constructed(facts: ModuleFacts, value: ast.AST, depth: int) -> TensorInfo | None:
    if not isinstance(value, ast.Call) or depth > 2:
        return None
    qualname = facts.qualname(value.func) or ""
    if qualname == "tensorflow.cast" and len(value.args) == 2:
        inner = _constructed(facts, value.args[0], depth + 1)
        return TensorInfo(inner.shape if inner else None, dtype_name(facts, value.args[1]))
    if qualname not in _SHAPED_CONSTRUCTORS:
        return None
    shape_expr = value.args[0] if value.args else keyword(value, "shape") or keyword(value, "size")
    shape = None
    if isinstance(shape_expr, (ast.List, ast.Tuple)):
        dims = [d for d in (int_literal(e) for e in shape_expr.elts) if d is not None]
        shape = tuple(dims) if len(dims) == len(shape_expr.elts) else None
    dtype_expr = keyword(value, "dtype")
    dtype = dtype_name(facts, dtype_expr) if dtype_expr is not None else _SHAPED_CONSTRUCTORS[qualname]
    return TensorInfo(shape, dtype)


def dtype_name(facts: ModuleFacts, expr: ast.AST | None) -> str | None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str) and expr.value in _DTYPE_NAMES:
        return expr.value
    qualname = facts.qualname(expr) if expr is not None else None
    if qualname:
        tail = qualname.rsplit(".", 1)[-1]
        if tail in _DTYPE_NAMES and qualname.split(".")[0] in ("tensorflow", "numpy"):
            return tail
    return None


# --------------------------------------------------------------------------- statements
def names_read_after(facts: ModuleFacts, source: SourceText, region: Sequence[ast.stmt], names: set[str]) -> set[str]:
    """Which of ``names`` may be read once the statements ``region`` (consecutive, to be
    replaced) have run, in their scope; conservative.

    A plain ``name = ...`` statement at the same level ends the search for that name. Inside a
    loop, the whole loop body (but the region) counts as "after": the next iteration runs it.
    """
    last = region[-1]
    # A quick text search first: most names never appear again (this runs on candidates only).
    start = source.offset(source.span(last).end)
    loop_text = _loop_text(facts, last, source)
    names = {
        name for name in names
        if _mentioned(source.text, name, start) or name in loop_text
    }
    if not names:
        return set()
    found: set[str] = set()
    live = set(names)
    node: ast.AST = last
    while live:
        place = siblings(facts, node)
        if place is not None:
            block, index = place
            for stmt in block[index + 1:]:
                for name in list(live):
                    if _reads(stmt, name):
                        found.add(name)
                        live.discard(name)
                    elif _rebinds(stmt, name):
                        live.discard(name)
        parent = facts.parent(node)
        if parent is None or isinstance(parent, (ast.Module, *ScopeNode)):
            break
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.While)):
            for name in list(live):
                if _reads(parent, name, skip=region):
                    found.add(name)
                    live.discard(name)
        node = parent
    return found


def _mentioned(text: str, name: str, start: int) -> bool:
    """``name`` as a whole word in ``text`` after ``start`` (a literal-prefix regex is fast)."""
    for match in re.compile(re.escape(name) + r"\b").finditer(text, start):
        before = text[match.start() - 1] if match.start() else " "
        if not (before.isalnum() or before == "_"):
            return True
    return False


def _loop_text(facts: ModuleFacts, last: ast.stmt, source: SourceText) -> str:
    loops = facts.enclosing_loops(last)
    return source.segment(loops[-1]) if loops else ""


def _reads(node: ast.AST, name: str, skip: Sequence[ast.AST] = ()) -> bool:
    """``name`` loaded (or declared global) anywhere in ``node``, nested scopes included,
    except inside the ``skip`` subtrees."""
    stack = [node]
    while stack:
        child = stack.pop()
        if any(child is s for s in skip):
            continue
        if isinstance(child, ast.Name) and child.id == name and not isinstance(child.ctx, ast.Store):
            return True
        if isinstance(child, (ast.Global, ast.Nonlocal)) and name in child.names:
            return True
        stack.extend(ast.iter_child_nodes(child))
    return False


def _rebinds(stmt: ast.stmt, name: str) -> bool:
    return (
        isinstance(stmt, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)
        and not _reads(stmt.value, name)
    )


def reads_name(node: ast.AST, name: str) -> bool:
    return _reads(node, name)


def fresh_name(facts: ModuleFacts, base: str) -> str:
    name, n = base, 2
    while name in facts.names:
        name, n = f"{base}{n}", n + 1
    return name


# --------------------------------------------------------------------------- edits
def statements_alone(source: SourceText, first: ast.stmt, last: ast.stmt, prev: ast.stmt | None, nxt: ast.stmt | None) -> bool:
    """``first``..``last`` occupy whole lines: no other statement shares their first/last line."""
    if source.indent_of(first.lineno - 1) != source.line(first.lineno - 1)[: first.col_offset]:
        return False
    if prev is not None and end_line(prev) >= first.lineno:
        return False
    return nxt is None or nxt.lineno > end_line(last)


def end_line(stmt: ast.stmt) -> int:
    """The last line of ``stmt`` (1-based; parsed nodes always have one)."""
    return stmt.end_lineno if stmt.end_lineno is not None else stmt.lineno


def replace_statements(source: SourceText, first: ast.stmt, last: ast.stmt, new_code: str) -> Edit | None:
    """Replace the lines of ``first``..``last`` by ``new_code``, keeping their comments above it.

    LibCST parses just those lines (dedented) to find the comments, whatever their position.
    """
    import libcst as cst  # only when a fix is built

    start, end = first.lineno - 1, end_line(last) - 1
    indent = source.indent_of(start)
    lines = source.lines[start : end + 1]
    if any(line.strip() and not line.startswith(indent) for line in lines):
        return None
    text = "\n".join(line[len(indent):] for line in lines) + "\n"
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return None
    comments: list[str] = []

    class _Comments(cst.CSTVisitor):
        def visit_Comment(self, node: cst.Comment) -> None:
            comments.append(node.value)

    module.visit(_Comments())
    new_lines = [indent + c for c in comments] + [indent + line for line in new_code.split("\n")]
    return Edit(whole_lines(source, start, end), "\n".join(new_lines))


# --------------------------------------------------------------------------- stacking after a loop
@dataclass
class Stack:
    stmt: ast.Assign | ast.Return  # the statement that stacks the list
    target: str | None  # assigned name; None for ``return tf.stack(...)``
    problems: list[str]


def stack_of(facts: ModuleFacts, stmt: ast.stmt | None, listname: str) -> Stack | None:
    """``X = tf.stack(C, ...)`` or ``return tf.stack(C, ...)`` right after the loop."""
    call: ast.expr | None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        call, target = stmt.value, stmt.targets[0].id
    elif isinstance(stmt, ast.Return):
        call, target = stmt.value, None
    else:
        return None
    if not isinstance(call, ast.Call) or facts.qualname(call.func) != "tensorflow.stack":
        return None
    values = call.args[0] if call.args else keyword(call, "values")
    if not (isinstance(values, ast.Name) and values.id == listname):
        return None
    return Stack(stmt, target, stack_problems(call, values))


def stack_problems(call: ast.Call, values: ast.expr) -> list[str]:
    axis = call.args[1] if len(call.args) > 1 else keyword(call, "axis")
    if axis is not None and int_literal(axis) != 0:
        return ["the items are stacked on another axis than 0"]
    extra = [kw.arg for kw in call.keywords if kw.arg not in ("values", "axis")]
    if extra or len(call.args) > 2:
        return ["`tf.stack` has other arguments"]
    return []


# --------------------------------------------------------------------------- collect-then-stack loops
def appended(loop: ast.AST) -> tuple[ast.For, str, ast.expr] | None:
    """``(loop, name, value)`` when ``loop`` is a ``for`` loop whose body is the single statement
    ``name.append(value)``."""
    plain = plain_for(loop)
    if plain is None or len(plain.body) != 1 or not isinstance(plain.body[0], ast.Expr):
        return None
    call = plain.body[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append"
            and isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords):
        return None
    return plain, call.func.value.id, call.args[0]


def collector_problems(facts: ModuleFacts, source: SourceText, loop: ast.For, listname: str, it: Iteration,
                       stack: Stack) -> list[str]:
    """Why ``listname = []``, the loop and the ``tf.stack`` after it cannot be replaced by one
    statement: the list is not created empty right before, the statements share lines, or the
    list or the loop variable is read afterwards."""
    init = neighbour(facts, loop, -1)
    after = stack.stmt  # right after the loop
    if not (isinstance(init, ast.Assign) and len(init.targets) == 1 and isinstance(init.targets[0], ast.Name)
            and init.targets[0].id == listname and isinstance(init.value, ast.List) and not init.value.elts):
        return [f"`{listname}` is not created empty right before the loop"]
    if not statements_alone(source, init, after, neighbour(facts, init, -1), neighbour(facts, after, 1)):
        return ["the statements share lines with others"]
    later = {it.var} | ({listname} if stack.target != listname else set())
    used = names_read_after(facts, source, [init, loop, after], later)
    return [f"`{sorted(used)[0]}` is used after the loop"] if used else []
