"""TFP705: ``Dataset.from_generator`` (or a ``py_function`` map) over arrays already in memory."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator

from tfperf_lsp.analysis.astutil import keyword
from tfperf_lsp.analysis.facts import ModuleFacts, walk_same_scope
from tfperf_lsp.model import Edit, Finding, Fix, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.input_pipeline._arrays import array_dtype, in_memory, indexed_arrays, spec_dtypes
from tfperf_lsp.rules.input_pipeline._mapfn import PY_OPS, resolve_function
from tfperf_lsp.rules.input_pipeline._pipeline import Step, pipelines

FunctionDef = ast.FunctionDef | ast.AsyncFunctionDef


class GeneratorOverArrays(Rule):
    code = "TFP705"
    name = "generator-over-arrays"
    category = "input-pipeline"
    severity = Severity.WARNING
    summary = "from_generator or py_function feeding in-memory arrays through Python, element by element"
    doc_url = "https://www.tensorflow.org/guide/data#consuming_numpy_arrays"
    fixable = True
    benchmark = "pipeline"
    docs = """
    ## What it does
    Finds `tf.data.Dataset.from_generator(gen, ...)` where `gen` (a def in this file) only loops
    over NumPy arrays or lists that are already in memory (`for i in range(len(x)): yield x[i],
    y[i]`, `for a, b in zip(x, y)`, `for row in x`), and `Dataset.map` functions that call
    `tf.py_function`/`tf.numpy_function` on a local def that indexes such an array.

    ## Why is this slow
    Every element goes through the Python interpreter, holding the GIL, one at a time: the
    pipeline cannot run in parallel and its throughput is Python's (tf.data guide).
    `from_tensor_slices((x, y))` slices the same arrays inside TensorFlow.

    ## When it stays silent
    When the generator reads files, computes its elements, takes arguments (`args=`), or is a
    lambda; when the arrays are built inside the generator; and for `from_tensor_slices`.

    ## Fix
    `tf.data.Dataset.from_tensor_slices((x, y))` in place of the `from_generator(...)` call,
    offered only in the clear case:
    - the generator is one `for` loop whose body is one `yield`: of `x[i], y[i]` over
      `range(len(x))`, of the loop targets over `zip(x, y)`, or of the element over `x`;
    - the arrays are module-level (or enclosing-function) names built by NumPy, and each array's
      dtype is written in the file (`dtype=np.uint8`, `.astype("int64")`) and equals the dtype of
      its `tf.TensorSpec`/`output_types` entry (`from_generator` converts to the declared dtype,
      `from_tensor_slices` keeps the array's).
    Marked unsafe: the arrays become constants of the dataset's graph, which fails beyond the
    2 GB GraphDef limit (for big arrays keep a generator, or read files with
    `TFRecordDataset`); arrays of different lengths raise an error instead of being truncated;
    and the element shapes become fully known. The `py_function` case is a hint only (slice the
    arrays with `from_tensor_slices` or `tf.gather` on a tensor).
    """
    invalid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            features = np.arange(20, dtype=np.float32).reshape(10, 2)
            targets = (np.arange(10) % 2).astype("int64")

            def samples():
                for i in range(len(features)):
                    yield features[i], targets[i]

            ds = tf.data.Dataset.from_generator(
                samples,
                output_signature=(tf.TensorSpec(shape=(2,), dtype=tf.float32),
                                  tf.TensorSpec(shape=(), dtype=tf.int64)))
            xs = np.concatenate([x.numpy() for x, _ in ds.batch(4).prefetch(1)])
            ys = np.concatenate([y.numpy() for _, y in ds.batch(4).prefetch(1)])
            """,
        ),
    )
    valid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            def read_lines():
                with open("data.txt") as handle:
                    for line in handle:
                        yield line.strip()

            def noise():
                for _ in range(100):
                    yield np.random.normal(size=3)  # computed per element

            text = tf.data.Dataset.from_generator(read_lines, output_signature=tf.TensorSpec((), tf.string))
            noisy = tf.data.Dataset.from_generator(noise, output_signature=tf.TensorSpec((3,), tf.float64))
            arrays = tf.data.Dataset.from_tensor_slices(np.zeros((10, 3)))
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        model = pipelines(ctx)
        for step in model.steps:
            if step.qualname == "tensorflow.data.Dataset.from_generator":
                finding = self._generator(ctx, step)
                if finding is not None:
                    yield finding
        for step in model.maps():
            fn = resolve_function(facts, step.call.args[0] if step.call.args else None, step.call)
            if fn is None:
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Call) and facts.qualname(node.func) in PY_OPS and node.args:
                    helper = facts.resolve_def(node.args[0], node)
                    arrays = indexed_arrays(facts, helper) if helper is not None else []
                    if helper is not None and arrays:
                        names = ", ".join(f"`{a}`" for a in arrays)
                        yield self.finding(
                            ctx, node,
                            f"`{ast.unparse(node.func)}({helper.name})` indexes the in-memory array(s) {names} in "
                            f"Python, one call at a time under the GIL: slice them in TensorFlow instead "
                            f"(`from_tensor_slices` or `tf.gather`)",
                            label="Python indexing in tf.data",
                        )

    def _generator(self, ctx: RuleContext, step: Step) -> Finding | None:
        facts = ctx.facts
        call = step.call
        gen_expr = call.args[0] if call.args else keyword(call, "generator")
        gen = facts.resolve_def(gen_expr, call) if isinstance(gen_expr, ast.Name) else None
        if gen is None or keyword(call, "args") is not None or gen.args.args or gen.args.posonlyargs:
            return None
        loop, arrays = _array_loop(facts, gen)
        if loop is None:
            return None
        names = ", ".join(f"`{a}`" for a in arrays)
        replacement = _replacement(facts, call, gen, loop)
        slices = replacement or (f"({', '.join(arrays)})" if len(arrays) > 1 else arrays[0])
        title = f"Use from_tensor_slices({replacement})" if replacement else None
        return self.finding(
            ctx, step.method_node(),
            f"`from_generator({gen.name})` feeds the in-memory array(s) {names} through Python one element at a "
            f"time: `from_tensor_slices({slices})` slices them in TensorFlow (arrays over 2 GB hit the GraphDef limit)",
            label="Python generator over arrays",
            fix=partial(_use_tensor_slices, ctx, step, replacement, title) if replacement and title else None,
            fix_title=title,
            fix_applicability="unsafe",
        )


def _use_tensor_slices(ctx: RuleContext, step: Step, slices: str, title: str) -> Fix:
    """``Dataset.from_generator(gen, output_signature=...)`` -> ``Dataset.from_tensor_slices((x, y))``:
    TensorFlow slices the arrays instead of Python yielding one element at a time."""
    span = ctx.source.span(step.method_node())
    return Fix(title, (Edit(span, f".from_tensor_slices({slices})"),), "unsafe")


def _array_loop(facts: ModuleFacts, gen: FunctionDef) -> tuple[ast.For | None, list[str]]:
    """The loop of a generator that only yields elements of in-memory arrays, and those arrays."""
    yields = [n for n in walk_same_scope(gen) if isinstance(n, (ast.Yield, ast.YieldFrom))]
    if not yields:
        return None, []
    loops = [n for n in walk_same_scope(gen) if isinstance(n, ast.For)]
    for loop in loops:
        arrays = _loop_arrays(facts, gen, loop)
        if not arrays:
            continue
        inside = {id(n) for stmt in loop.body for n in ast.walk(stmt)}
        if all(id(y) in inside and _plain_yield(y, loop, arrays) for y in yields):
            return loop, arrays
    return None, []


def _loop_arrays(facts: ModuleFacts, gen: FunctionDef, loop: ast.For) -> list[str]:
    it = loop.iter
    names: list[ast.AST] = []
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("zip", "enumerate"):
        names = list(it.args)
    elif isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and len(it.args) == 1:
        bound = it.args[0]
        if isinstance(bound, ast.Call) and isinstance(bound.func, ast.Name) and bound.func.id == "len" and bound.args:
            names = [bound.args[0]]
        else:
            return _subscripted(facts, gen, loop)
    else:
        names = [it]
    found = [n.id for n in names if isinstance(n, ast.Name)]
    if names and len(found) == len(names) and all(in_memory(facts, name, gen) for name in found):
        return found + [a for a in _subscripted(facts, gen, loop) if a not in found]
    return []


def _subscripted(facts: ModuleFacts, gen: FunctionDef, loop: ast.For) -> list[str]:
    """In-memory arrays indexed by the loop variable in the loop body (``x[i]``)."""
    targets = {t.id for t in ast.walk(loop.target) if isinstance(t, ast.Name)}
    found = []
    for stmt in loop.body:
        for node in ast.walk(stmt):
            if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                    and any(isinstance(n, ast.Name) and n.id in targets for n in ast.walk(node.slice))
                    and in_memory(facts, node.value.id, gen) and node.value.id not in found):
                found.append(node.value.id)
    return found


def _plain_yield(node: ast.Yield | ast.YieldFrom, loop: ast.For, arrays: list[str]) -> bool:
    """The yielded value is made only of loop targets and subscripts of the arrays."""
    targets = {t.id for t in ast.walk(loop.target) if isinstance(t, ast.Name)}
    value = node.value
    if value is None or isinstance(node, ast.YieldFrom):
        return False
    for part in ast.walk(value):
        if isinstance(part, ast.Name) and part.id not in targets and part.id not in arrays:
            return False
        if isinstance(part, (ast.Call, ast.BinOp, ast.Attribute)):
            return False
    return True


def _replacement(facts: ModuleFacts, call: ast.Call, gen: FunctionDef, loop: ast.For) -> str | None:
    """``(x, y)`` for from_tensor_slices, when the rewrite is exact (see the docs' preconditions)."""
    body = [s for s in gen.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if body != [loop] or len(loop.body) != 1 or not isinstance(loop.body[0], ast.Expr) or loop.orelse:
        return None
    value = loop.body[0].value.value if isinstance(loop.body[0].value, ast.Yield) else None
    parts = list(value.elts) if isinstance(value, ast.Tuple) else [value] if value is not None else []
    it = loop.iter
    arrays: list[str] = []
    if isinstance(it, ast.Call) and getattr(it.func, "id", None) == "range":
        index = loop.target.id if isinstance(loop.target, ast.Name) else None
        for part in parts:
            if not (isinstance(part, ast.Subscript) and isinstance(part.value, ast.Name) and isinstance(part.slice, ast.Name) and part.slice.id == index):
                return None
            arrays.append(part.value.id)
        bound = it.args[0] if it.args else None
        length_of = bound.args[0] if isinstance(bound, ast.Call) and bound.args else None
        if not (isinstance(length_of, ast.Name) and length_of.id in arrays):
            return None  # the loop's length is not ``len()`` of an array that is yielded
    elif isinstance(it, ast.Call) and getattr(it.func, "id", None) == "zip" and isinstance(loop.target, ast.Tuple):
        sources = dict(zip([getattr(t, "id", None) for t in loop.target.elts], [a.id for a in it.args if isinstance(a, ast.Name)]))
        if len(sources) != len(it.args) or any(not isinstance(p, ast.Name) or p.id not in sources for p in parts):
            return None
        arrays = [sources[p.id] for p in parts if isinstance(p, ast.Name)]
    elif isinstance(it, ast.Name) and isinstance(loop.target, ast.Name):
        if len(parts) != 1 or not (isinstance(parts[0], ast.Name) and parts[0].id == loop.target.id):
            return None
        arrays = [it.id]
    else:
        return None
    declared = spec_dtypes(facts, call)
    if declared is None or len(declared) != len(arrays) or not isinstance(value, ast.Tuple) and declared.is_tuple:
        return None
    if any(array_dtype(facts, name, gen) != dtype for name, dtype in zip(arrays, declared)):
        return None
    return f"({', '.join(arrays)})" if isinstance(value, ast.Tuple) else arrays[0]
