"""TFP103: a tf.function fed tensors whose shape changes from one loop iteration to the next."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator

from tfperf_lsp.analysis.facts import ModuleFacts, TFFunction
from tfperf_lsp.analysis.shapes import ragged_iteration, varying_shape
from tfperf_lsp.model import Finding, Fix, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import batches_vary_in_length, eager_loop_calls, function_label, tf_function_option_edit
from tfperf_lsp.rules.context import RuleContext

_FIX_TITLE = "Add reduce_retracing=True to the tf.function"


class VaryingShapeArgument(Rule):
    code = "TFP103"
    name = "varying-shape-argument"
    category = "retrace"
    severity = Severity.WARNING
    summary = "tf.function fed tensors whose shape changes every iteration: one trace per shape"
    doc_url = "https://www.tensorflow.org/guide/function#controlling_retracing"
    fixable = True
    docs = """
    ## What it does
    Finds calls of a `tf.function` in a loop where a tensor argument's shape depends on the loop
    variable: a growing slice `x[:i]`, or a tensor built with a shape that uses the loop variable
    (`tf.zeros([i, 3])`, `tf.random.normal([n])`). Also, across methods, a `tf.function` called
    with `self.x` where another method grows `self.x` (`self.x = tf.concat([self.x, new], 0)`):
    an index or a buffer that gets a new size after every `add`. And a step called on every batch
    of a dataset padded per batch (`padded_batch`, `bucket_by_sequence_length`, in this file or
    in a module of its folder that it imports): each batch length is a new shape.

    ## Why is this slow
    A tf.function traces once per new input shape (and dtype). With a shape that changes every
    iteration, every call traces. Measured: batches of 4, 4, 2 gave 2 traces; a growing slice
    traces on every call.

    ## When it stays silent
    When the function has an `input_signature` or already uses `reduce_retracing=True`, and when
    the slice has a fixed length (`x[i:i + 32]`, `x[i:i + batch_size]`: a last partial batch adds one
    trace, no more). For `padded_batch` with `padded_shapes` written
    as numbers, or over sequences that `pad_sequences(..., maxlen=...)` made one length first:
    every batch has one shape.

    ## Fix
    `reduce_retracing=True` on the tf.function: after the second new shape, TensorFlow traces a
    graph with unknown dimensions (`None`) that serves every later shape, so the whole loop
    traces twice. The results are unchanged. Alternatives when the shapes are known: an
    `input_signature` with `None` dimensions (strict about dtypes), or padding/bucketing.
    A function defined in another file gets the hint without a fix. A function whose Python loop
    runs over an argument's static length (`_, n = tgt.shape; for t in range(n - 1)`) gets
    padding or bucketing as the advice, without a fix: with `None` dimensions that loop fails.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            @tf.function
            def total(x):
                return tf.reduce_sum(x)

            data = tf.range(10.0)
            for i in range(1, 6):
                total(data[:i])
            """,
            traced="total",
            traces_after=2,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            @tf.function
            def total(x):
                return tf.reduce_sum(x)

            data = tf.range(64.0)
            for i in range(0, 64, 16):
                total(data[i:i + 16])  # same length every time
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in eager_loop_calls(ctx):
            fn = site.callee.fn
            if _generalises_shapes(fn):
                continue
            for argument in list(site.call.args) + [kw.value for kw in site.call.keywords]:
                variable = varying_shape(ctx.facts, argument, site.loops) or ragged_iteration(ctx.facts, argument, site.loops)
                if variable is None:
                    continue
                yield self._retraces(
                    ctx, argument, fn, f"every new shape of this argument, which changes with `{variable}`:",
                    f"retraces per shape (varies with {variable})", local=site.callee.path is None)
                break

        yield from self._growing_attributes(ctx)
        yield from self._padded_batches(ctx)

    def _retraces(self, ctx: RuleContext, argument: ast.expr, fn: TFFunction, why: str, label: str, local: bool) -> Finding:
        """The finding: ``fn`` is traced again for ``why`` (ending in its own ":" or " -"); a fix
        only for a local tf.function whose body can take a dimension of unknown size."""
        static = _loops_over_a_static_length(fn.node) if fn.node is not None else None
        if static is not None:
            # ``_, n = tgt.shape; for t in range(n - 1)``: with ``None`` dimensions ``range(None)`` raises
            return self.finding(
                ctx, argument,
                f"`{function_label(fn)}` is traced again for {why} pad or bucket the inputs to a few lengths "
                f"(its Python loop over `{static}` needs each length known while tracing: `reduce_retracing` "
                f"or `None` dimensions would make it unknown, and the loop fails)",
                label=label,
            )
        return self.finding(
            ctx, argument,
            f"`{function_label(fn)}` is traced again for {why} use `reduce_retracing=True` or an "
            f"`input_signature` with `None` dimensions",
            label=label,
            fix=partial(_reduce_retracing, ctx, fn) if local else None,
            fix_title=_FIX_TITLE if local else None,
        )

    def _padded_batches(self, ctx: RuleContext) -> Iterator[Finding]:
        """A step called on every batch of a dataset padded per batch (``padded_batch``, here or
        in a module of this folder that this file imports): one trace per batch length."""
        sites = eager_loop_calls(ctx)
        if not sites or not batches_vary_in_length(ctx):
            return
        for site in sites:
            fn = site.callee.fn
            if _generalises_shapes(fn):
                continue
            loop = site.loops[0]
            if not isinstance(loop, (ast.For, ast.AsyncFor)) or _is_range(loop.iter):
                continue
            items = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
            argument = next((a for a in site.call.args if isinstance(a, ast.Name) and a.id in items), None)
            if argument is None:
                continue
            yield self._retraces(
                ctx, argument, fn,
                f"every batch length: the batches are padded per batch (`padded_batch`), so `{argument.id}` "
                f"has a new shape each time -", "retraces per batch length", local=site.callee.path is None)

    def _growing_attributes(self, ctx: RuleContext) -> Iterator[Finding]:
        """``self.index`` grows in one method (``self.index = tf.concat([self.index, x], 0)``) and
        is passed to a tf.function in another: a new shape, so a new trace, after every growth."""
        facts = ctx.facts
        growing = _growing_attributes(facts)
        if not growing:
            return
        for call in facts.calls:
            fn = facts.resolve_tf_function(call.func, call)
            if fn is None or _generalises_shapes(fn) or facts.in_tf_function(call) is not None:
                continue
            for argument in list(call.args) + [kw.value for kw in call.keywords]:
                attribute = _self_attribute(argument)
                if attribute not in growing:
                    continue
                yield self._retraces(
                    ctx, argument, fn, f"every new size of `self.{attribute}`, which grows in `{growing[attribute]}()`:",
                    f"retraces per size of self.{attribute}", local=True)
                break


def _loops_over_a_static_length(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """``range(...)`` in a Python ``for`` of ``fn`` reads a parameter's static shape, directly
    (``range(x.shape[1])``) or through a name the def binds to it (``_, n = tgt.shape``): the
    parameter's name, else None."""
    parameters = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}

    def shape_of(node: ast.AST) -> str | None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and sub.attr == "shape" and isinstance(sub.value, ast.Name) \
                    and sub.value.id in parameters:
                return sub.value.id
        return None

    lengths = {}  # names bound to a parameter's static shape
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and (owner := shape_of(node.value)) is not None:
            for target in node.targets:
                lengths.update(dict.fromkeys((n.id for n in ast.walk(target) if isinstance(n, ast.Name)), owner))
    for node in ast.walk(fn):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name) \
                and node.iter.func.id == "range":
            for argument in node.iter.args:
                owner = shape_of(argument) or next((lengths[n.id] for n in ast.walk(argument)
                                                   if isinstance(n, ast.Name) and n.id in lengths), None)
                if owner is not None:
                    return owner
    return None


def _reduce_retracing(ctx: RuleContext, fn: TFFunction) -> Fix | None:
    """``@tf.function`` -> ``@tf.function(reduce_retracing=True)`` (``tf.function(f)`` gains the
    keyword too): from the second new shape on, one trace with ``None`` dimensions serves all."""
    edit = tf_function_option_edit(ctx, fn, "reduce_retracing", "True")
    return Fix(_FIX_TITLE, (edit,)) if edit else None


_GROWTH = {"tensorflow.concat", "tensorflow.stack", "numpy.concatenate", "numpy.vstack", "numpy.hstack", "numpy.append"}


def _self_attribute(expr: ast.AST) -> str | None:
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        return expr.attr
    return None


def _growing_attributes(facts: ModuleFacts) -> dict[str, str]:
    """``self.x`` attributes that a method reassigns to a concatenation of themselves: name ->
    the method that grows it."""
    found: dict[str, str] = {}
    for call in facts.calls_to(*_GROWTH):
        statement = facts.parent(call)
        if not (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1):
            continue
        attribute = _self_attribute(statement.targets[0])
        if attribute is None:
            continue
        if any(_self_attribute(n) == attribute for n in ast.walk(call) if n is not statement.targets[0]):
            method = facts.enclosing_function(call)
            found[attribute] = method.name if method is not None else "?"
    return found


def _is_range(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "range"


def _generalises_shapes(fn: TFFunction) -> bool:
    """An ``input_signature`` or ``reduce_retracing`` already keeps one trace for many shapes."""
    return ("input_signature" in fn.options or fn.option_is_true("reduce_retracing")
            or fn.option_is_true("experimental_relax_shapes"))
