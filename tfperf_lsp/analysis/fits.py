"""Where a compiled Keras model is trained, and how long a visible ``fit`` runs.

``fit_uses``: the ``model.fit`` calls (or ``model.fit`` passed on) that train the model a
``model.compile(...)`` call compiled: in the same scope after it, until the name is bound to
another model, or in the callers of the factory that returns it.

``fit_steps_at_most``: the optimizer steps of a ``fit`` whose training data is an array built
with a literal row count (``x = np.random.randn(1, 20)``; ``fit(x, y, epochs=2)``), else None. A
fit of a handful of steps (a guide fitting one random sample to get weights) is setup, not
training: advice about the speed of its steps does not matter there.
"""
from __future__ import annotations

import ast
import math

from tfperf_lsp.analysis.astutil import int_literal, int_value
from tfperf_lsp.analysis.dataflow import argument_for_parameter
from tfperf_lsp.analysis.facts import ModuleFacts, walk_same_scope
from tfperf_lsp.analysis.hotness import FEW_RUNS

# A use of ``x.fit`` (a call, or the method passed on), the name ``x`` and the def it is in.
FitUse = tuple[ast.expr, str, ast.AST | None]


def fit_uses(facts: ModuleFacts, compile_call: ast.Call, name: str) -> list[ast.expr]:
    """``name.fit`` uses (calls, or references passed on) for the model compiled by ``compile_call``:
    in the same scope after it, or in the callers of the factory that returns it."""
    every = _all_fit_uses(facts)
    scope = facts.enclosing_function(compile_call)
    uses = _fits_in(facts, every, scope, name, compile_call.lineno)
    if scope is not None and _returns_name(scope, name):
        for caller, target in _factory_results(facts, scope):
            uses += _fits_in(facts, every, facts.enclosing_function(caller), target, caller.lineno)
    return uses


def fit_steps_at_most(facts: ModuleFacts, fit: ast.expr) -> int | None:
    """Steps a ``fit(...)`` call runs, when its data rows, batch size and epochs are written
    down (literals or module-level numbers; ``batch_size`` defaults to 32, ``epochs`` to 1); None
    when any is unknown."""
    per_epoch = epoch_steps_at_most(facts, fit)
    if per_epoch is None or not isinstance(fit, ast.Call):
        return None
    epochs = _int_or_default(facts, argument_for_parameter(fit, _FIT_PARAMS, "epochs"), 1)
    initial = _int_or_default(facts, _keyword(fit, "initial_epoch"), 0)
    if epochs is None or initial is None:
        return None
    return per_epoch * max(epochs - initial, 0)


_FIT_PARAMS = ["x", "y", "batch_size", "epochs"]


def epoch_steps_at_most(facts: ModuleFacts, fit: ast.expr) -> int | None:
    """Steps one epoch of a ``fit(...)`` call runs, when ``steps_per_epoch`` or its data rows and
    batch size are written down; None when unknown."""
    if not isinstance(fit, ast.Call) or any(k.arg is None for k in fit.keywords):
        return None
    steps_per_epoch = _keyword(fit, "steps_per_epoch")
    if steps_per_epoch is not None:
        return int_literal(steps_per_epoch)
    batch_size = _int_or_default(facts, argument_for_parameter(fit, _FIT_PARAMS, "batch_size"), 32)
    data = argument_for_parameter(fit, _FIT_PARAMS, "x")
    rows = literal_rows(facts, data) if data is not None else None
    if rows is None or not batch_size:
        return None
    return math.ceil(rows / batch_size)


def few_steps(facts: ModuleFacts, fits: list[ast.expr], limit: int = FEW_RUNS) -> bool:
    """Every fit runs a number of steps the code writes down, ``limit`` or fewer in all."""
    steps = [fit_steps_at_most(facts, fit) for fit in fits]
    return bool(steps) and all(n is not None for n in steps) and sum(n for n in steps if n is not None) <= limit


# Array constructors whose first argument is the shape (an int or a tuple/list of ints).
_SHAPE_FIRST = frozenset({
    "numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.random.random", "numpy.random.random_sample",
    "numpy.random.sample", "numpy.random.ranf", "tensorflow.zeros", "tensorflow.ones", "tensorflow.fill",
    "tensorflow.random.normal", "tensorflow.random.uniform",
})
# Constructors whose positional arguments are the dimensions.
_DIMENSIONS = frozenset({"numpy.random.randn", "numpy.random.rand"})
# Constructors with a ``size=`` keyword.
_SIZED = frozenset({"numpy.random.normal", "numpy.random.uniform", "numpy.random.randint", "numpy.random.choice",
                    "numpy.random.binomial", "numpy.random.poisson"})


# Array and tensor constructors whose first argument may be the rows written out as a list.
_FROM_LISTS = frozenset({"numpy.array", "numpy.asarray", "tensorflow.constant", "tensorflow.convert_to_tensor"})

# Rows of the train and test splits that Keras' small built-in datasets load (``load_data()``).
_KERAS_DATASET_ROWS = {"boston_housing": (404, 102), "mnist": (60000, 10000), "fashion_mnist": (60000, 10000),
                       "cifar10": (50000, 10000), "cifar100": (50000, 10000), "imdb": (25000, 25000),
                       "reuters": (8982, 2246)}
# Rows of scikit-learn's small toy datasets, in all (a split of them has fewer).
_SKLEARN_ROWS = {"load_iris": 150, "load_wine": 178, "load_diabetes": 442, "load_breast_cancer": 569}


def literal_rows(facts: ModuleFacts, expr: ast.AST, depth: int = 0) -> int | None:
    """The leading dimension of an array built with literal sizes (``np.random.randn(1, 20)``,
    ``np.zeros((8, 3)).astype("f")``, ``np.array([1.0, 2.0, 3.0])``), at most, for the first
    rows of any array (``X_train[:64]``: 64, or fewer if it has fewer), or loaded from a small
    built-in dataset (``(x, y), _ = keras.datasets.boston_housing.load_data()``: 404 rows; at most
    150 for scikit-learn's ``load_iris()``), directly or through the name it is assigned to."""
    if depth > 3:
        return None
    if isinstance(expr, (ast.Tuple, ast.List)) and expr.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, (int, float)) for e in expr.elts):
        return len(expr.elts)  # ``fit([1, 2, 3], [0.0, 0.0, 1.0])``: three samples
    if isinstance(expr, (ast.Tuple, ast.List)) and expr.elts:  # several inputs: the first one's rows
        return literal_rows(facts, expr.elts[0], depth + 1)
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice) and expr.slice.step is None \
            and (start := 0 if expr.slice.lower is None else int_literal(expr.slice.lower)) is not None and start >= 0 \
            and (stop := int_literal(expr.slice.upper)) is not None and stop >= start:
        return stop - start  # ``X_train[:64]``, ``x[0:160]``: at most that many rows, whatever X_train holds
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Tuple) and expr.slice.elts \
            and isinstance(first := expr.slice.elts[0], ast.Slice) and first.lower is None and first.upper is None and first.step is None:
        return literal_rows(facts, expr.value, depth + 1)  # ``data[:, 0]``: a column, every row
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        # ``x[:1000] / 255.0``, ``(x - mean) / std`` with statistics of its columns: the same rows
        return literal_rows(facts, expr.left, depth + 1)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "reshape" \
            and (_keeps_rows(expr) or _own_rows_first(facts, expr)):
        return literal_rows(facts, expr.func.value, depth + 1)  # ``x.reshape(-1, 28 * 28)``: one row per sample
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "reshape" \
            and (rows := _leading_dimension(expr)) is not None:
        return rows  # ``x.reshape(60000, 784)``: the rows written down
    if isinstance(expr, ast.Name):
        assignment = facts.reaching_assignment(expr)
        if isinstance(assignment, ast.Assign) and len(assignment.targets) == 1 and isinstance(assignment.targets[0], ast.Name):
            return literal_rows(facts, assignment.value, depth + 1)
        if isinstance(assignment, ast.Assign) and len(assignment.targets) == 1 and (
                part := _unpacked(assignment.targets[0], assignment.value, expr.id)) is not None:
            return literal_rows(facts, part, depth + 1)  # ``x_train, y_train = x[0:160], y[0:160]``
        if isinstance(assignment, ast.Assign) and len(assignment.targets) == 1:
            return _loaded_rows(facts, assignment.targets[0], assignment.value, expr.id, depth)
        return None
    if isinstance(expr, ast.Call) and facts.qualname(expr.func) in _FROM_LISTS and expr.args \
            and isinstance(expr.args[0], (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in expr.args[0].elts):
        return len(expr.args[0].elts)  # ``np.array([-1.0, 0.0, 1.0, 2.0])``
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    if isinstance(func, ast.Attribute) and func.attr == "astype" and isinstance(func.value, ast.Call):
        return literal_rows(facts, func.value, depth + 1)
    qualname = facts.qualname(func) or ""
    if qualname in _DIMENSIONS:
        return int_literal(expr.args[0]) if expr.args else None
    if qualname in _SHAPE_FIRST:
        shape = expr.args[0] if expr.args else _keyword(expr, "shape")
    elif qualname in _SIZED:
        shape = _keyword(expr, "size")
    else:
        return None
    if isinstance(shape, (ast.Tuple, ast.List)):
        shape = shape.elts[0] if shape.elts else None
    return int_literal(shape) if shape is not None else None


def _leading_dimension(reshape: ast.Call) -> int | None:
    """``x.reshape(60000, 784)`` / ``x.reshape((60000, 28, 28, 1))``: a literal leading
    dimension, with more after it."""
    dims = _reshape_dims(reshape)
    first = int_literal(dims[0]) if len(dims) >= 2 else None
    return first if first is not None and first > 0 else None


def _unpacked(target: ast.expr, value: ast.expr, name: str) -> ast.expr | None:
    """The element of the tuple ``value`` that ``name`` receives from ``target = value``
    (``a, b = x[:10], y[:10]``), element for element."""
    if not (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts)):
        return None
    return next((v for t, v in zip(target.elts, value.elts) if isinstance(t, ast.Name) and t.id == name), None)


def _own_rows_first(facts: ModuleFacts, reshape: ast.Call) -> bool:
    """``x.reshape(x.shape[0], 13, 1)``, or with ``n = x.shape[0]`` first: the rows it had."""
    array = reshape.func.value  # type: ignore[attr-defined]
    dims = _reshape_dims(reshape)
    first = dims[0] if len(dims) >= 2 else None
    if isinstance(first, ast.Name):
        assignment = facts.reaching_assignment(first)
        first = assignment.value if isinstance(assignment, ast.Assign) and len(assignment.targets) == 1 else None
    return isinstance(first, ast.Subscript) and int_literal(first.slice) == 0 and isinstance(first.value, ast.Attribute) \
        and first.value.attr == "shape" and ast.dump(first.value.value) == ast.dump(array)


def _keeps_rows(reshape: ast.Call) -> bool:
    """``x.reshape(-1, 784)`` / ``x.reshape((-1, 28, 28, 1))``: the leading dimension left to
    NumPy, with more after it - the idiom that flattens or shapes each sample, one row each."""
    dims = _reshape_dims(reshape)
    first = dims[0] if dims else None
    return len(dims) >= 2 and isinstance(first, ast.UnaryOp) and isinstance(first.op, ast.USub) \
        and int_literal(first.operand) == 1


def _loaded_rows(facts: ModuleFacts, target: ast.expr, value: ast.expr, name: str, depth: int = 0) -> int | None:
    """Rows of ``name`` unpacked from a small built-in dataset's loader: ``(x_train, y_train),
    (x_test, y_test) = boston_housing.load_data()``, or ``X, y = load_iris(return_X_y=True)``;
    also through a def of the file that returns what it loaded (``make_dataset()``)."""
    if not isinstance(value, ast.Call):
        return None
    returned = _returned_part(facts, target, value, name)
    if returned is not None:
        return literal_rows(facts, returned, depth + 1)
    qualname = facts.qualname(value.func) or _through_alias(facts, value.func)
    parts = qualname.split(".")
    if len(parts) >= 2 and parts[-1] == "load_data" and parts[-2] in _KERAS_DATASET_ROWS \
            and isinstance(target, (ast.Tuple, ast.List)):
        for split, rows in zip(target.elts, _KERAS_DATASET_ROWS[parts[-2]]):
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(split)):
                return rows
        return None
    if qualname.startswith("sklearn.datasets.") and parts[-1] in _SKLEARN_ROWS and isinstance(target, (ast.Tuple, ast.List)):
        return _SKLEARN_ROWS[parts[-1]]
    return None


def _through_alias(facts: ModuleFacts, func: ast.expr) -> str:
    """``boston_housing.load_data`` after ``boston_housing = tf.keras.datasets.boston_housing``."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return ""
    assignment = facts.reaching_assignment(func.value)
    if not (isinstance(assignment, ast.Assign) and len(assignment.targets) == 1 and isinstance(assignment.value, ast.Attribute)):
        return ""
    module = facts.qualname(assignment.value)
    return f"{module}.{func.attr}" if module else ""


def _returned_part(facts: ModuleFacts, target: ast.expr, call: ast.Call, name: str) -> ast.expr | None:
    """What ``name`` receives from ``target = call`` when ``call`` is a def of the file with one
    ``return`` of the same shape: ``(x, y), _ = make_dataset()`` with ``return (x_train, y_train),
    (x_test, y_test)`` gives ``x_train``, read in that def."""
    fn = facts.resolve_def(call.func, call) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    returns = [node for node in walk_same_scope(fn) if isinstance(node, ast.Return)]
    if len(returns) != 1 or returns[0].value is None:
        return None

    def part(pattern: ast.expr, value: ast.expr) -> ast.expr | None:
        if isinstance(pattern, ast.Name):
            return value if pattern.id == name else None
        if isinstance(pattern, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(pattern.elts) == len(value.elts):
            return next((found for p, v in zip(pattern.elts, value.elts) if (found := part(p, v)) is not None), None)
        return None

    return part(target, returns[0].value)


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _reshape_dims(reshape: ast.Call) -> list[ast.expr]:
    """The dimensions ``x.reshape`` is given: ``reshape(60000, 784)`` or ``reshape((60000, 784))``."""
    args = reshape.args
    return list(args[0].elts) if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else list(args)


def _int_or_default(facts: ModuleFacts, expr: ast.AST | None, default: int) -> int | None:
    return default if expr is None else int_value(facts, expr)


def _all_fit_uses(facts: ModuleFacts) -> list[FitUse]:
    """Every ``x.fit(...)`` call and ``x.fit`` passed as an argument: (node, x, scope). From the
    call list, not a tree walk (memoised on the facts object, which lives for one analysis)."""
    cached: list[FitUse] | None = facts.__dict__.get("_tfperf_fit_uses")
    if cached is None:
        cached = []
        for call in facts.calls_named("fit"):
            func = call.func
            if type(func) is ast.Attribute and func.attr == "fit" and type(func.value) is ast.Name:
                cached.append((call, func.value.id, facts.enclosing_function(call)))
            for arg in call.args:
                if type(arg) is ast.Attribute and arg.attr == "fit" and type(arg.value) is ast.Name:
                    cached.append((arg, arg.value.id, facts.enclosing_function(call)))
        facts.__dict__["_tfperf_fit_uses"] = cached
    return cached


def _fits_in(facts: ModuleFacts, every: list[FitUse], scope: ast.AST | None, name: str, after: int) -> list[ast.expr]:
    """Fits of ``name`` in ``scope`` from line ``after`` until ``name`` is bound to another
    model (a notebook builds, compiles and fits a new ``model`` in every section)."""
    assignments = facts.module_assignments.get(name, []) if scope is None else facts.assignments_in(scope).get(name, [])
    rebound = min((getattr(a, "lineno", 0) for a in assignments if getattr(a, "lineno", 0) > after), default=None)
    return [node for node, target, where in every
            if target == name and where is scope and node.lineno >= after and (rebound is None or node.lineno < rebound)]


def _returns_name(fn: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Return) and isinstance(n.value, ast.Name) and n.value.id == name for n in walk_same_scope(fn))


def _factory_results(facts: ModuleFacts, factory: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.Call, str]]:
    """``m = factory(...)`` calls, also through ``for fn in (factory, ...)`` / ``zip(fns, ...)``."""
    aliases: dict[str, ast.For | None] = {factory.name: None}
    for loop in facts.loops:
        if not isinstance(loop, ast.For):
            continue
        pairs = [(loop.target, loop.iter)]
        if isinstance(loop.iter, ast.Call) and getattr(loop.iter.func, "id", None) == "zip" and isinstance(loop.target, ast.Tuple):
            pairs = list(zip(loop.target.elts, loop.iter.args))
        for target, iterable in pairs:
            if isinstance(target, ast.Name) and factory.name in _listed(facts, iterable):
                aliases[target.id] = loop
    results = []
    named = set(facts.calls_named(*aliases))
    for call in facts.calls:  # in the facts' order, as callers have always seen them
        if call in named and isinstance(call.func, ast.Name):
            alias_loop = aliases[call.func.id]
            if alias_loop is not None and not any(a is alias_loop for a in facts.ancestors(call)):
                continue
            stmt = facts.statement_of(call)
            if isinstance(stmt, ast.Assign) and stmt.value is call and isinstance(stmt.targets[0], ast.Name):
                results.append((call, stmt.targets[0].id))
    return results


def _listed(facts: ModuleFacts, iterable: ast.AST | None) -> set[str]:
    """Names in a tuple/list display, or in the one a module-level name is assigned."""
    if isinstance(iterable, ast.Name):
        assigned = facts.module_assignments.get(iterable.id, [])
        iterable = assigned[0].value if len(assigned) == 1 and isinstance(assigned[0], ast.Assign) else None
    if isinstance(iterable, (ast.Tuple, ast.List)):
        return {e.id for e in iterable.elts if isinstance(e, ast.Name)}
    return set()
