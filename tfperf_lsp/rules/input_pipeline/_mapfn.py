"""What the function given to ``Dataset.map`` does, as far as the source shows.

- ``random``: it draws random numbers (``tf.random.*``, ``tf.image.random_*``, stateless ones too,
  Keras ``Random*`` layers): parallel or batched calls change the draws, caching freezes them.
- ``stateful``: its results depend on state or order (stateful random ops, ``py_function``,
  Python side effects, variable updates).
- ``unknown``: it calls something we cannot see into (an imported function, a method, a layer
  object): no rewrite, since it may be either of the above.
- ``cost``: TF ops plus arithmetic; ``expensive``: a decode/parse/resize op (the first seen).
- ``identity``: it only passes or re-packs its arguments (``lambda x, y: (x, y)``).
- ``elementwise``: provably batch-safe: one parameter, elementwise TF ops, arithmetic and scalar
  literals only, so ``f(batch)`` equals the batch of ``f(element)``.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tfperf_lsp.analysis.facts import FunctionNode, ModuleFacts, parameter_defaults

_EXPENSIVE_PREFIXES = (
    "tensorflow.io.decode_", "tensorflow.io.parse_", "tensorflow.io.read_file", "tensorflow.image.decode_",
    "tensorflow.image.resize", "tensorflow.image.crop_and_resize", "tensorflow.audio.decode_", "tensorflow.signal.",
    "tensorflow.strings.split", "tensorflow.strings.to_number", "tensorflow.image.extract_",
)
EXPENSIVE_COST = 6
# Ops that take one element (a scalar string): a batch cannot go through them.
_PER_ELEMENT_PREFIXES = (
    "tensorflow.io.read_file", "tensorflow.io.decode_", "tensorflow.image.decode_", "tensorflow.io.parse_single_",
    "tensorflow.audio.decode_", "tensorflow.io.encode_", "tensorflow.image.encode_",
)
PY_OPS = {"tensorflow.py_function", "tensorflow.numpy_function", "tensorflow.compat.v1.py_func", "tensorflow.py_func"}
_PURE_BUILTINS = {"int", "float", "bool", "len", "tuple", "list", "dict", "range", "zip", "min", "max", "abs",
                  "isinstance", "print", "round", "sum", "str", "enumerate"}
_PURE_METHODS = {"set_shape", "get_shape", "get", "items", "keys", "values"}
_STATE_METHODS = {"assign", "assign_add", "assign_sub", "append", "extend", "update", "add", "pop", "insert"}
_RANDOM_LAYERS = ("keras.layers.Random", "keras.layers.GaussianNoise", "keras.layers.GaussianDropout",
                  "keras.layers.AlphaDropout", "keras.layers.Dropout", "keras.layers.SpatialDropout")
_ELEMENTWISE = {
    "tensorflow." + name
    for name in (
        "cast", "abs", "exp", "sqrt", "square", "sigmoid", "tanh", "floor", "round", "sign", "negative",
        "maximum", "minimum", "pow", "add", "subtract", "multiply", "divide", "truediv", "clip_by_value",
        "math.abs", "math.exp", "math.log", "math.log1p", "math.sqrt", "math.rsqrt", "math.square",
        "math.sigmoid", "math.tanh", "math.sin", "math.cos", "math.floor", "math.ceil", "math.round",
        "math.sign", "math.negative", "math.reciprocal", "math.maximum", "math.minimum", "math.pow",
        "math.add", "math.subtract", "math.multiply", "math.divide", "math.truediv", "math.floordiv",
        "nn.relu", "nn.relu6", "nn.sigmoid", "nn.tanh", "nn.softplus", "nn.elu", "nn.selu", "nn.leaky_relu",
        "image.convert_image_dtype", "dtypes.cast",
    )
}
_ELEMENTWISE_KEYWORDS = {"dtype", "name", "saturate", "clip_value_min", "clip_value_max", "alpha", "x", "y"}
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
# What a map function can be when tfperf sees it: a def or a lambda.
Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass
class MapFunction:
    node: Function | None
    params: list[str]
    random: str | None = None
    stateful: str | None = None
    unknown: str | None = None
    cost: int = 0
    expensive: str | None = None
    expensive_ops: set[str] = field(default_factory=set)  # every decode/parse/resize op seen
    identity: bool = False
    elementwise: bool = False
    per_element: str | None = None  # an op that only takes one element (read_file, decode_jpeg)
    python_op: str | None = None  # tf.py_function / numpy_function: Python code, under the GIL

    @property
    def pure(self) -> bool:
        """Visible, deterministic, no state: safe to run in parallel and to cache."""
        return self.node is not None and not (self.random or self.stateful or self.unknown)

    @property
    def is_expensive(self) -> bool:
        return bool(self.expensive) or self.cost >= EXPENSIVE_COST


def function_argument(call: ast.Call) -> ast.AST | None:
    return call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in ("map_func", "func")), None)


def function_label(call: ast.Call) -> str:
    """How messages name a map function: ``augment``, ``self.parse``, or ``the lambda``."""
    expr = function_argument(call)
    if isinstance(expr, (ast.Name, ast.Attribute)):
        return ast.unparse(expr)
    return "the lambda" if isinstance(expr, ast.Lambda) else "the function"


def map_function(facts: ModuleFacts, call: ast.Call, cache: dict[ast.AST, MapFunction]) -> MapFunction:
    """The function argument of a ``.map(...)`` call, analysed (memoised in ``cache``)."""
    fn_expr = function_argument(call)
    node = resolve_function(facts, fn_expr, call)
    if node is None:
        label = ast.unparse(fn_expr) if fn_expr is not None else "the function"
        return MapFunction(None, [], unknown=label)
    if node not in cache:
        cache[node] = _analyse(facts, node, depth=0)
    return cache[node]


def resolve_function(facts: ModuleFacts, expr: ast.AST | None, at: ast.AST) -> Function | None:
    if isinstance(expr, ast.Lambda):
        return expr
    if isinstance(expr, (ast.Name, ast.Attribute)):
        found = facts.resolve_def(expr, at)
        if found is not None:
            return found
        if isinstance(expr, ast.Name):  # ``normalize = lambda x: ...`` at module level
            assigned = facts.module_assignments.get(expr.id, [])
            if len(assigned) == 1 and isinstance(assigned[0], ast.Assign) and isinstance(assigned[0].value, ast.Lambda):
                return assigned[0].value
    return None


def _analyse(facts: ModuleFacts, fn: Function, depth: int) -> MapFunction:
    args = fn.args
    result = MapFunction(fn, [a.arg for a in args.posonlyargs + args.args])
    local = set(result.params) | set(facts.assignments_in(fn)) if isinstance(fn, FunctionNode) else set(result.params)
    # ast.walk, not walk_same_scope: a lambda nested in f runs as part of f.
    off = _switched_off(fn) if depth == 0 else set()
    for node in ast.walk(fn):
        if off and id(node) in off:
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            result.stateful = result.stateful or "a global variable"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
            result.cost += 1
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, (ast.Attribute, ast.Subscript)) and _root_name(target) not in local:
                    result.stateful = result.stateful or "a Python side effect"
        elif isinstance(node, ast.Call):
            _call(facts, node, result, local, depth)
        elif isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            result.unknown = result.unknown or "a generator"
    result.identity = _is_identity(fn, result)
    result.elementwise = not (result.random or result.stateful or result.unknown) and _elementwise(facts, fn)
    return result


def _switched_off(fn: Function) -> set[int]:
    """Nodes under ``if flag:`` where ``flag`` is a parameter defaulting to False/None/0: given
    to ``map`` directly, the function gets the element's components only, so the flag keeps its
    default and that branch is never traced (``read_and_preprocess(img, label,
    random_augment=False)``: its random crops run only when a wrapper passes True)."""
    flags = {name for name, d in parameter_defaults(fn).items() if isinstance(d, ast.Constant) and not d.value}
    skipped: set[int] = set()
    if not flags or not isinstance(fn, FunctionNode):
        return skipped
    flags -= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}  # rebound: not the default
    for node in ast.walk(fn):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id in flags:
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skipped


def _call(facts: ModuleFacts, call: ast.Call, result: MapFunction, local: set[str], depth: int) -> None:
    func = call.func
    qualname = facts.qualname(func) or ""
    short = _short(qualname)
    if qualname in PY_OPS:
        result.stateful = result.stateful or short
        result.python_op = result.python_op or short
    elif qualname.startswith("tensorflow."):
        if ".random." in qualname or qualname.startswith(("tensorflow.image.random_", "tensorflow.image.stateless_random_")):
            result.random = result.random or short
            if "stateless" not in qualname:
                result.stateful = result.stateful or short
        elif qualname.startswith(("tensorflow.Variable", "tensorflow.print")):
            result.stateful = result.stateful or short
        else:
            result.cost += 1
            if qualname.startswith(_EXPENSIVE_PREFIXES):
                result.expensive = result.expensive or short
                result.expensive_ops.add(short)
            if qualname.startswith(_PER_ELEMENT_PREFIXES):
                result.per_element = result.per_element or short
    elif qualname.startswith("keras."):
        if qualname.startswith(_RANDOM_LAYERS):
            result.random = result.stateful = result.random or short
        else:
            result.cost += 1
    elif isinstance(func, ast.Name):
        target = facts.resolve_def(func, call)
        if target is not None and depth < 3:
            inner = _analyse(facts, target, depth + 1)
            result.random = result.random or inner.random
            result.stateful = result.stateful or inner.stateful
            result.unknown = result.unknown or inner.unknown
            result.expensive = result.expensive or inner.expensive
            result.expensive_ops |= inner.expensive_ops
            result.per_element = result.per_element or inner.per_element
            result.cost += inner.cost
        elif func.id in ("next", "open", "input"):
            result.stateful = result.stateful or f"{func.id}()"
        elif func.id not in _PURE_BUILTINS:
            layer = _layer_object(facts, func.id)
            if layer is None:
                result.unknown = result.unknown or f"{func.id}()"
            elif layer.startswith(_RANDOM_LAYERS):
                result.random = result.stateful = result.random or func.id
            else:
                result.cost += 1
    elif isinstance(func, ast.Attribute):
        if func.attr in _STATE_METHODS and _root_name(func.value) not in local:
            result.stateful = result.stateful or f".{func.attr}()"
        elif func.attr not in _PURE_METHODS:
            result.unknown = result.unknown or f".{func.attr}()"
    else:
        result.unknown = result.unknown or "a computed function"


def _layer_object(facts: ModuleFacts, name: str) -> str | None:
    """``flip = keras.layers.RandomFlip(...)`` at module level: the layer class's qualname."""
    assigned = facts.module_assignments.get(name, [])
    if len(assigned) == 1 and isinstance(assigned[0], ast.Assign) and isinstance(assigned[0].value, ast.Call):
        qualname = facts.qualname(assigned[0].value.func) or ""
        if qualname.startswith("keras.layers."):
            return qualname
        if qualname in ("keras.Sequential", "keras.models.Sequential"):
            inner = [facts.qualname(e.func) or "" for e in ast.walk(assigned[0].value) if isinstance(e, ast.Call)]
            return next((q for q in inner if q.startswith(_RANDOM_LAYERS)), "keras.layers.Sequential")
    return None


def _is_identity(fn: Function, result: MapFunction) -> bool:
    """Returns its arguments unchanged or re-packed: no op, no call, no arithmetic."""
    if result.cost or result.random or result.stateful or result.unknown:
        return False
    if isinstance(fn, ast.Lambda):
        return all(isinstance(n, _REPACKING) for n in ast.walk(fn.body))
    # a def: assignments that build a dict or tuple of the element's parts (``x = {"ids":
    # record["input_ids"]}``, ``x["label"] = record["y"]``), ifs on flags, returns of them
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    if not returns or any(r.value is None for r in returns):
        return False
    body = fn.body[1:] if ast.get_docstring(fn) is not None else fn.body
    return all(isinstance(n, (*_REPACKING, ast.Store, ast.Assign, ast.If, ast.Return))
               for stmt in body for n in ast.walk(stmt))


_REPACKING = (ast.Name, ast.Tuple, ast.List, ast.Dict, ast.Constant, ast.Subscript, ast.Load, ast.Slice)


def _elementwise(facts: ModuleFacts, fn: Function) -> bool:
    args = fn.args
    if len(args.posonlyargs + args.args) != 1 or args.vararg or args.kwarg or args.kwonlyargs or args.defaults:
        return False
    names = {(args.posonlyargs + args.args)[0].arg}
    if isinstance(fn, ast.Lambda):
        return _elementwise_expr(facts, fn.body, names)
    *assignments, last = fn.body
    for stmt in assignments:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            return False
        if not _elementwise_expr(facts, stmt.value, names):
            return False
        names.add(stmt.targets[0].id)
    return isinstance(last, ast.Return) and last.value is not None and _elementwise_expr(facts, last.value, names)


def _elementwise_expr(facts: ModuleFacts, expr: ast.AST, names: set[str]) -> bool:
    if isinstance(expr, ast.Name):
        return expr.id in names or _scalar(facts, expr)
    if isinstance(expr, ast.Constant):
        return _scalar(facts, expr)
    if isinstance(expr, ast.BinOp):
        return isinstance(expr.op, _ARITHMETIC) and _elementwise_expr(facts, expr.left, names) and _elementwise_expr(facts, expr.right, names)
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, (ast.USub, ast.UAdd)) and _elementwise_expr(facts, expr.operand, names)
    if isinstance(expr, ast.Call) and facts.qualname(expr.func) in _ELEMENTWISE and expr.args:
        others = list(expr.args[1:]) + [k.value for k in expr.keywords]
        if any(k.arg not in _ELEMENTWISE_KEYWORDS for k in expr.keywords):
            return False
        return _elementwise_expr(facts, expr.args[0], names) and all(
            _dtype(facts, a) or _elementwise_expr(facts, a, names) for a in others
        )
    return False


def _scalar(facts: ModuleFacts, expr: ast.AST) -> bool:
    """A Python number literal, or a module-level name assigned once from one."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.Name):
        assigned = facts.module_assignments.get(expr.id, [])
        return (len(assigned) == 1 and isinstance(assigned[0], ast.Assign) and len(assigned[0].targets) == 1
                and isinstance(assigned[0].targets[0], ast.Name) and _scalar(facts, assigned[0].value))
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return _scalar(facts, expr.operand)
    return False


def _dtype(facts: ModuleFacts, expr: ast.AST) -> bool:
    qualname = facts.qualname(expr) or ""
    return qualname.startswith("tensorflow.") and qualname.rsplit(".", 1)[1] in {
        "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "bool",
    }


def _root_name(expr: ast.AST) -> str | None:
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _short(qualname: str) -> str:
    return "tf." + qualname[len("tensorflow."):] if qualname.startswith("tensorflow.") else qualname
