"""In-memory arrays and their dtypes, as written in the file (for TFP705)."""
from __future__ import annotations

import ast
from typing import Sequence

from tfperf_lsp.analysis.astutil import keyword
from tfperf_lsp.analysis.facts import ModuleFacts

_RNG = {"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"}
_SHAPE_METHODS = {"astype", "reshape", "copy", "squeeze", "transpose", "ravel", "flatten"}
_NUMPY_DTYPES = {
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "bool", "bool_", "complex64", "complex128", "str_", "bytes_",
}
_BUILTIN_DTYPES = {"float": "float64", "int": "int64", "bool": "bool"}


def _assignments(facts: ModuleFacts, name: str, user: ast.AST) -> Sequence[ast.AST] | None:
    """Where ``name`` (read in the def ``user``) is assigned: the enclosing def, else the module.
    None when ``user`` assigns it itself (computed per call, not an array held in memory)."""
    if name in facts.assignments_in(user):
        return None
    outer = facts.enclosing_function(user)
    if outer is not None and name in facts.assignments_in(outer):
        return facts.assignments_in(outer)[name]
    return facts.module_assignments.get(name, [])


def in_memory(facts: ModuleFacts, name: str, user: ast.AST) -> bool:
    """``name`` holds an array or list built in memory (NumPy, a Keras dataset, a literal)."""
    assigned = _assignments(facts, name, user)
    if not assigned:
        return False
    return all(isinstance(a, ast.Assign) and _builds_array(facts, a.value, 0) for a in assigned)


def _builds_array(facts: ModuleFacts, expr: ast.AST, depth: int) -> bool:
    if depth > 4:
        return False
    if isinstance(expr, (ast.List, ast.ListComp)):
        return True
    if isinstance(expr, ast.Tuple):
        return all(_builds_array(facts, e, depth + 1) for e in expr.elts)
    if isinstance(expr, ast.BinOp):
        return _builds_array(facts, expr.left, depth + 1) or _builds_array(facts, expr.right, depth + 1)
    if isinstance(expr, ast.Subscript):
        return _builds_array(facts, expr.value, depth + 1) or _array_name(facts, expr.value)
    if isinstance(expr, ast.Call):
        qualname = facts.qualname(expr.func) or ""
        if qualname.startswith("numpy.") or (qualname.startswith("keras.datasets.") and qualname.endswith("load_data")):
            return True
        func = expr.func
        if isinstance(func, ast.Attribute):
            if func.attr in _SHAPE_METHODS:
                return _builds_array(facts, func.value, depth + 1) or _array_name(facts, func.value)
            return _rng_name(facts, func.value)  # rng.integers(...), rng.normal(...)
    return False


def _array_name(facts: ModuleFacts, expr: ast.AST) -> bool:
    if not isinstance(expr, ast.Name):
        return False
    assigned = facts.module_assignments.get(expr.id, [])
    return len(assigned) == 1 and isinstance(assigned[0], ast.Assign) and isinstance(assigned[0].value, ast.Call) and (
        (facts.qualname(assigned[0].value.func) or "").startswith("numpy.")
    )


def _rng_name(facts: ModuleFacts, expr: ast.AST) -> bool:
    if isinstance(expr, ast.Call):
        return facts.qualname(expr.func) in _RNG
    if facts.qualname(expr) == "numpy.random":
        return True
    if isinstance(expr, ast.Name):
        assigned = facts.module_assignments.get(expr.id, [])
        return bool(assigned) and all(isinstance(a, ast.Assign) and isinstance(a.value, ast.Call) and facts.qualname(a.value.func) in _RNG for a in assigned)
    return False


def array_dtype(facts: ModuleFacts, name: str, user: ast.AST) -> str | None:
    """The dtype written where ``name`` is built (``dtype=np.uint8``, ``.astype("int64")``)."""
    assigned = _assignments(facts, name, user)
    if not assigned or len(assigned) != 1 or not isinstance(assigned[0], ast.Assign):
        return None
    value = assigned[0].value
    if not isinstance(value, ast.Call):
        return None
    if isinstance(value.func, ast.Attribute) and value.func.attr == "astype" and value.args:
        return dtype_name(facts, value.args[0])
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("reshape", "copy"):
        value = value.func.value  # ``np.arange(n, dtype=np.float32).reshape(...)``
    if isinstance(value, ast.Call):
        dtype = keyword(value, "dtype")
        if dtype is not None:
            return dtype_name(facts, dtype)
    return None


def dtype_name(facts: ModuleFacts, expr: ast.AST) -> str | None:
    """``"int64"``, ``np.int64``, ``tf.int64``, ``int`` -> ``"int64"``."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value if expr.value in _NUMPY_DTYPES else None
    if isinstance(expr, ast.Name) and expr.id in _BUILTIN_DTYPES and facts.qualname(expr) is None:
        return _BUILTIN_DTYPES[expr.id]
    qualname = facts.qualname(expr) or ""
    if qualname.startswith(("numpy.", "tensorflow.")):
        last = qualname.rsplit(".", 1)[1]
        return last.rstrip("_") if last in _NUMPY_DTYPES else None
    return None


class Declared(list):
    """The dtypes a from_generator call declares; ``is_tuple`` when its structure is a tuple."""

    is_tuple = False


def spec_dtypes(facts: ModuleFacts, call: ast.Call) -> Declared | None:
    signature = keyword(call, "output_signature")
    types = keyword(call, "output_types")
    if types is None and len(call.args) > 1:
        types = call.args[1]
    if signature is not None:
        items = signature.elts if isinstance(signature, ast.Tuple) else [signature]
        dtypes = [_spec_dtype(facts, item) for item in items]
    elif types is not None:
        items = types.elts if isinstance(types, ast.Tuple) else [types]
        dtypes = [dtype_name(facts, item) for item in items]
    else:
        return None
    if any(d is None for d in dtypes):
        return None
    result = Declared(dtypes)
    result.is_tuple = isinstance(signature if signature is not None else types, ast.Tuple)
    return result


def _spec_dtype(facts: ModuleFacts, spec: ast.AST) -> str | None:
    if not (isinstance(spec, ast.Call) and facts.qualname(spec.func) == "tensorflow.TensorSpec"):
        return None
    dtype = spec.args[1] if len(spec.args) > 1 else keyword(spec, "dtype")
    return "float32" if dtype is None else dtype_name(facts, dtype)


def indexed_arrays(facts: ModuleFacts, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """In-memory arrays a def indexes with its parameters (``table[index.numpy()]``)."""
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args}
    found: list[str] = []
    for node in ast.walk(fn):
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id not in found
                and any(isinstance(n, ast.Name) and n.id in params for n in ast.walk(node.slice))
                and in_memory(facts, node.value.id, fn)):
            found.append(node.value.id)
    return found
