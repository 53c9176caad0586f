"""Where a tf.function parameter's value goes, to tell a retrace bug from an intended static value.

A Python number passed to a tf.function keys its trace cache by value. That is a bug when the
value only feeds TensorFlow ops (a tensor would do), and intended when it shapes the graph:
``range(n)``, a shape, a Python ``if``, ``training=``, building a layer.

``classify_parameter`` follows the parameter (and names computed from it) through the body and
returns the kinds of use it finds:

- ``TENSOR``: an argument of a TensorFlow op, arithmetic on the way to one, or a return value;
- ``STATIC``: something that needs a Python value at trace time (see above);
- ``UNKNOWN``: anything else (an object's method, an unknown function, indexing a Python list...).
"""
from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field

from tfperf_lsp.analysis.facts import ModuleFacts, target_names, walk_same_scope


class Use(str, enum.Enum):
    TENSOR = "tensor"
    STATIC = "static"
    UNKNOWN = "unknown"


@dataclass
class ParameterUses:
    kinds: set[Use] = field(default_factory=set)
    static_reason: str | None = None  # e.g. "feeds range()" - shown in explanations and tests

    @property
    def only_tensor(self) -> bool:
        return self.kinds == {Use.TENSOR}

    @property
    def is_static(self) -> bool:
        return Use.STATIC in self.kinds


# Keyword arguments whose value must be known at trace time (or is graph structure).
STATIC_KEYWORDS = frozenset(
    {
        "shape", "axis", "depth", "num", "num_or_size_splits", "units", "filters", "kernel_size",
        "strides", "training", "perm", "dtype", "name", "num_classes", "batch_size", "seed",
        "keepdims", "transpose_a", "transpose_b", "output_shape", "pool_size", "rate",
    }
)
# TensorFlow functions whose positional argument at this index is a shape or a count.
SHAPE_POSITIONS = {
    "tensorflow.zeros": 0, "tensorflow.ones": 0, "tensorflow.fill": 0, "tensorflow.eye": 0,
    "tensorflow.random.uniform": 0, "tensorflow.random.normal": 0,
    "tensorflow.random.truncated_normal": 0, "tensorflow.reshape": 1, "tensorflow.one_hot": 1,
    "tensorflow.broadcast_to": 1, "tensorflow.split": 1, "tensorflow.unstack": 1,
    "keras.Input": 0, "keras.layers.Input": 0,
}
# Python builtins that need a Python value (or make one) at trace time.
STATIC_BUILTINS = frozenset({"range", "len", "bool", "str", "list", "tuple", "dict", "set", "enumerate", "zip", "isinstance", "print", "format"})
# Builtins that pass a number through: follow their result instead.
PASS_THROUGH_BUILTINS = frozenset({"int", "float", "min", "max", "abs", "round"})

MAX_HELPER_DEPTH = 3


def classify_parameter(facts: ModuleFacts, fn: ast.AST, param: str, _depth: int = 0) -> ParameterUses:
    result = ParameterUses()
    tracked = _names_derived_from(fn, param)
    for node in walk_same_scope(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in tracked:
            use, reason = _classify_position(facts, node, _depth)
            if use is not None:
                result.kinds.add(use)
                if use is Use.STATIC and result.static_reason is None:
                    result.static_reason = reason
    if not result.kinds:
        result.kinds.add(Use.UNKNOWN)  # never read: we cannot tell why it is there
    return result


def _names_derived_from(fn: ast.AST, param: str) -> set[str]:
    """The parameter plus local names assigned from expressions that read it (to a fixed point)."""
    tracked = {param}
    assignments = [n for n in walk_same_scope(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
    changed = True
    while changed:
        changed = False
        for stmt in assignments:
            value = stmt.value
            if value is None or not _reads_any(value, tracked):
                continue
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for name in target_names(target):
                    if name not in tracked:
                        tracked.add(name)
                        changed = True
    return tracked


def _reads_any(expr: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(expr))


def _classify_position(facts: ModuleFacts, expr: ast.AST, depth: int) -> tuple[Use | None, str | None]:
    """What the value of ``expr`` is used for, judged by where it sits."""
    child: ast.AST = expr
    for parent in facts.ancestors(expr):
        if isinstance(parent, ast.Call):
            if child is parent.func:
                return Use.UNKNOWN, None  # the parameter is called: an object, not a number
            return _classify_argument(facts, parent, child, depth)
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and child is parent.test:
            return Use.STATIC, "decides a Python `if`/`while`"
        if isinstance(parent, ast.comprehension) and child is parent.iter:
            return Use.STATIC, "is iterated over in Python"
        if isinstance(parent, (ast.For, ast.AsyncFor)) and child is parent.iter:
            return Use.STATIC, "is iterated over in Python"
        if isinstance(parent, ast.Subscript):
            if child is parent.value:
                return Use.UNKNOWN, None
            return Use.UNKNOWN, None  # indexing: a tensor index works, a Python list needs an int
        if isinstance(parent, ast.Attribute):
            return Use.UNKNOWN, None
        if isinstance(parent, (ast.Return, ast.Yield)):
            return Use.TENSOR, None
        if isinstance(parent, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            # Derived names are followed on their own; a store into an attribute/subscript
            # (self.x = n) keeps a Python value somewhere we cannot follow.
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            if all(isinstance(t, ast.Name) for t in targets):
                return None, None
            return Use.UNKNOWN, None
        if isinstance(parent, (ast.JoinedStr, ast.FormattedValue)):
            return Use.UNKNOWN, None
        if isinstance(parent, ast.keyword):
            if parent.arg in STATIC_KEYWORDS:
                return Use.STATIC, f"is passed as `{parent.arg}=`"
        if isinstance(parent, ast.stmt):
            return Use.UNKNOWN, None
        child = parent
    return Use.UNKNOWN, None


def _classify_argument(facts: ModuleFacts, call: ast.Call, arg: ast.AST, depth: int) -> tuple[Use | None, str | None]:
    for kw in call.keywords:
        if kw.value is arg and kw.arg in STATIC_KEYWORDS:
            return Use.STATIC, f"is passed as `{kw.arg}=`"
    callee = call.func
    if isinstance(callee, ast.Name) and callee.id in STATIC_BUILTINS and facts.imports.bindings.get(callee.id) is None:
        return Use.STATIC, f"feeds `{callee.id}()`"
    if isinstance(callee, ast.Name) and callee.id in PASS_THROUGH_BUILTINS:
        return _classify_position(facts, call, depth)  # follow the converted value
    qualname = facts.qualname(callee)
    if qualname is not None:
        if qualname.startswith(("numpy.", "math.", "random.")):
            return Use.STATIC, f"feeds `{qualname}` (computed in Python at trace time)"
        if qualname.startswith("keras.layers.") or qualname.startswith("keras.Sequential"):
            return Use.STATIC, "builds a Keras layer"
        if facts.imports.is_tensorflow(qualname) or facts.imports.is_keras(qualname):
            position = SHAPE_POSITIONS.get(qualname)
            if position is not None and position < len(call.args) and _contains(call.args[position], arg):
                return Use.STATIC, f"is a shape or count of `{qualname.replace('tensorflow.', 'tf.')}`"
            return Use.TENSOR, None
        return Use.UNKNOWN, None
    # A local helper: follow the argument into its body, a few levels deep.
    target = facts.resolve_def(callee, call)
    if target is not None and depth < MAX_HELPER_DEPTH:
        param = _parameter_for_argument(target, call, arg, facts)
        if param is not None:
            inner = classify_parameter(facts, target, param, depth + 1)
            if inner.is_static:
                return Use.STATIC, inner.static_reason
            return (Use.TENSOR, None) if inner.only_tensor else (Use.UNKNOWN, None)
    return Use.UNKNOWN, None


def _contains(tree: ast.AST, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(tree))


def _parameter_for_argument(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, call: ast.Call, arg: ast.AST, facts: ModuleFacts) -> str | None:
    """The parameter of ``fn`` that receives ``arg`` at ``call``."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    is_method = isinstance(facts.parent(fn), ast.ClassDef)
    if is_method and params:
        params = params[1:]
    for index, value in enumerate(call.args):
        if _contains(value, arg):
            return params[index] if index < len(params) and not isinstance(value, ast.Starred) else None
    for kw in call.keywords:
        if kw.arg and _contains(kw.value, arg):
            return kw.arg
    return None


def argument_for_parameter(call: ast.Call, params: list[str], param: str) -> ast.expr | None:
    """The expression a call site passes for ``param`` (positional or keyword), if it can be told."""
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if param in params:
        index = params.index(param)
        if index < len(call.args):
            return call.args[index]
    return None


def arithmetic_dtype(fn: ast.AST, param: str) -> str | None:
    """The dtype a tensor made from the Python int ``param`` needs in ``fn`` (it would be int32):
    ``float32`` when it meets non-integer arithmetic (TF does not mix int32 with floating-point
    tensors); ``int64`` when it is a summary's ``step=`` (``tf.summary.scalar(..., step=epoch)``
    takes int64 only)."""
    step = False
    for node in walk_same_scope(fn):
        if isinstance(node, ast.Call):
            step = step or any(k.arg == "step" and isinstance(k.value, ast.Name) and k.value.id == param
                               for k in node.keywords)
        if not isinstance(node, ast.BinOp):
            continue
        for mine, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(mine, ast.Name) and mine.id == param:
                if not (isinstance(other, ast.Constant) and isinstance(other.value, int)):
                    return "float32"
    return "int64" if step else None
