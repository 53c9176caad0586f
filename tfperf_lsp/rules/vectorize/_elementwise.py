"""What a per-element function does, for TFP403: provably elementwise (then ``f(x)`` is the
vectorised form), plain TensorFlow without data-dependent shapes or state (``tf.vectorized_map``
candidate), or unknown (silent)."""
from __future__ import annotations

import ast
from typing import Callable, Sequence

from tfperf_lsp.analysis.facts import ModuleFacts

ELEMENTWISE = {
    f"tensorflow.{name}" for name in (
        "abs", "exp", "sqrt", "square", "sin", "cos", "tanh", "sigmoid", "negative", "sign", "floor",
        "ceil", "round", "reciprocal", "rsqrt", "erf", "add", "subtract", "multiply", "divide", "maximum",
        "minimum", "pow", "cast", "clip_by_value", "identity", "nn.relu", "nn.relu6", "nn.elu", "nn.selu",
        "nn.softplus", "nn.sigmoid", "nn.tanh", "nn.silu", "nn.swish", "nn.leaky_relu", "nn.gelu",
        "math.abs", "math.exp", "math.log", "math.log1p", "math.sqrt", "math.rsqrt", "math.square",
        "math.sin", "math.cos", "math.tanh", "math.sigmoid", "math.negative", "math.sign", "math.floor",
        "math.ceil", "math.round", "math.reciprocal", "math.erf", "math.add", "math.subtract",
        "math.multiply", "math.divide", "math.maximum", "math.minimum", "math.pow", "math.softplus",
        "math.expm1", "math.log_sigmoid", "math.truediv",
    )
}
# Data-dependent output shapes, state or host callbacks: pfor cannot vectorise them (or it would
# change random draws / side effects), so no vectorized_map hint either. TensorFlow 1's random
# ops (``tf.random_crop``, ``tf.random_normal``, ``tf.multinomial``) count as random too.
_BLOCKERS = ("unique", "boolean_mask", "random.", "random_", "multinomial", "py_function", "py_func", "numpy_function", "print", "Variable",
             "assign", "decode", "io.", "data.", "ragged.", "sparse.", "while_loop", "TensorArray",
             "strings.", "nonzero", "where", "dynamic_partition", "map_fn", "vectorized_map", "cond",
             "case", "switch_case", "histogram", "image.")
_ELEMENTWISE_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv, ast.Mod)


def _number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _dtype(facts: ModuleFacts, node: ast.AST) -> bool:
    qualname = facts.qualname(node) or ""
    return qualname.startswith("tensorflow.") and qualname.rsplit(".", 1)[-1] in (
        "float16", "bfloat16", "float32", "float64", "int32", "int64", "bool", "uint8", "int8", "int16")


def is_elementwise(facts: ModuleFacts, expr: ast.AST, is_param: Callable[[ast.AST], bool], tensors: bool = False) -> bool:
    """``expr`` depends on the item (``is_param(node)``) only through elementwise ops with literal numbers.

    Operands other than ``param`` must be number literals (or dtypes): an invariant tensor could
    broadcast differently against the whole batch than against one item. ``tensors``: the items
    are known to be tensors (not Python lists), so ``item * 2`` multiplies, not repeats.
    """
    if is_param(expr):
        return True
    if _number(expr):
        return True
    if isinstance(expr, ast.BinOp):
        if not tensors and isinstance(expr.op, ast.Mult) and any(
            is_param(a) and isinstance(b, ast.Constant) and type(b.value) is int
            for a, b in ((expr.left, expr.right), (expr.right, expr.left))
        ):
            return False  # on a Python list of items, `x * 2` would repeat the list
        return isinstance(expr.op, _ELEMENTWISE_OPS) and is_elementwise(facts, expr.left, is_param, tensors) and is_elementwise(facts, expr.right, is_param, tensors)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return is_elementwise(facts, expr.operand, is_param, tensors)
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], (ast.Gt, ast.Lt, ast.GtE, ast.LtE)):
        return is_elementwise(facts, expr.left, is_param, tensors) and is_elementwise(facts, expr.comparators[0], is_param, tensors)
    if isinstance(expr, ast.Call) and facts.qualname(expr.func) in ELEMENTWISE:
        values = list(expr.args) + [kw.value for kw in expr.keywords if kw.arg != "name"]
        if any(kw.arg is None for kw in expr.keywords):
            return False
        return all(is_elementwise(facts, v, is_param, tensors) or _dtype(facts, v) for v in values)
    return False


def elementwise_function(facts: ModuleFacts, fn: ast.AST, at: ast.AST) -> tuple[str, ast.expr] | None:
    """(parameter, body expression) when ``fn`` is an elementwise lambda or one-line def."""
    body: ast.expr | None
    if isinstance(fn, ast.Lambda):
        params = fn.args
        body = fn.body
    else:
        target = facts.resolve_def(fn, at) if isinstance(fn, ast.Name) else None
        if target is None or target.decorator_list or len(target.body) != 1 or not isinstance(target.body[0], ast.Return):
            return None
        params, body = target.args, target.body[0].value
    if params.posonlyargs or params.kwonlyargs or params.vararg or params.kwarg or len(params.args) != 1 or body is None:
        return None
    param = params.args[0].arg
    return (param, body) if is_elementwise(facts, body, lambda n: isinstance(n, ast.Name) and n.id == param) else None


def vectorizable(facts: ModuleFacts, fn: ast.AST, at: ast.AST, depth: int = 0) -> bool:
    """A lambda or local def built only from TensorFlow ops and arithmetic, none of them a blocker."""
    if depth > 2:
        return False
    if isinstance(fn, ast.Lambda):
        body: Sequence[ast.AST] = [fn.body]
        arguments = fn.args
    elif isinstance(fn, ast.Name):
        target = facts.resolve_def(fn, at)
        if target is None or target.decorator_list:
            return False
        if not all(isinstance(s, (ast.Assign, ast.Return, ast.Expr)) for s in target.body):
            return False  # Python control flow: often data-dependent
        body = target.body
        arguments = target.args
    else:
        qualname = facts.qualname(fn) or ""
        return qualname.startswith("tensorflow.") and not _blocked(qualname) and qualname not in _SHAPE_DEPENDENT
    params = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.Yield, ast.YieldFrom, ast.Await, ast.IfExp, ast.ListComp, ast.GeneratorExp)):
                return False
            if isinstance(node, ast.Slice) and _reads(node, params):
                return False  # ``tf.argsort(x[:-1])[:tf.cast(x[-1], tf.int32)]``: a length from the item (pfor raises)
            if isinstance(node, ast.Subscript) and isinstance(node.slice, (ast.Compare, ast.BoolOp)) and _reads(node.slice, params):
                return False  # ``weights[row > 0]``: a boolean mask from the item, so each result has its own length
                # (vectorized_map raises "Incompatible shapes during merge", with or without its fallback)
            if isinstance(node, ast.Expr) and not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                return False  # a bare call is a side effect
            if isinstance(node, ast.Call):
                qualname = facts.qualname(node.func) or ""
                if qualname.startswith("tensorflow."):
                    if _blocked(qualname):
                        return False
                    if qualname in _SHAPE_DEPENDENT and len(node.args) < 2 and not any(k.arg == "axis" for k in node.keywords):
                        return False
                elif not (isinstance(node.func, ast.Name) and vectorizable(facts, node.func, at, depth + 1)):
                    return False
    return True


def _reads(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


# Without an axis, ``tf.squeeze`` drops every dimension of size 1: under pfor it also drops
# the batch dimension when the loop has one item (measured: shape (2,) instead of (1, 2), and
# ``fallback_to_while_loop=False`` does not catch it).
_SHAPE_DEPENDENT = frozenset({"tensorflow.squeeze", "tensorflow.compat.v1.squeeze"})


def _blocked(qualname: str) -> bool:
    name = qualname[len("tensorflow."):]
    return any(b in name for b in _BLOCKERS) and not name.startswith("random.stateless")
