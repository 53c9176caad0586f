"""TFP703: ``.map(f).batch(b)`` where ``f`` could run once per batch instead of once per element."""
from __future__ import annotations

import ast
import re
from functools import partial
from typing import Iterator, Literal

from tfperf_lsp.analysis.astutil import keyword
from tfperf_lsp.analysis.facts import neighbour
from tfperf_lsp.model import Edit, Finding, Fix, Severity
from tfperf_lsp.rewrite.edits import whole_lines
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.input_pipeline._mapfn import MapFunction, function_label
from tfperf_lsp.rules.input_pipeline._pipeline import Pipelines, Step, pipelines

# How the swap of ``map`` and ``batch`` is written: one chain (``.map(f).batch(b)``) or two
# statements (``ds = ds.map(f)`` then ``ds = ds.batch(b)``).
Form = Literal["chain", "statements"]


class MapBeforeBatch(Rule):
    code = "TFP703"
    name = "map-before-batch"
    category = "input-pipeline"
    severity = Severity.WARNING
    summary = "Dataset.map(f) right before batch: a vectorised f could run once per batch"
    doc_url = "https://www.tensorflow.org/guide/data_performance#vectorizing_mapping"
    fixable = True
    benchmark = "pipeline"
    docs = """
    ## What it does
    Finds a tf.data `.map(f)` whose result goes straight into `.batch(b)`, in one chain
    (`ds.map(f).batch(b)`) or in consecutive statements (`ds = ds.map(f)` then `ds = ds.batch(b)`).

    ## Why is this slow
    Each call of `f` costs a fixed overhead (about 10 microseconds, tf.data guide, "Vectorizing
    mapping") on top of its ops. Batching first calls `f` once per batch, and its ops work on
    whole batches. Measured: 1.48 s per element vs 0.066 s per batch.

    ## When it stays silent
    When every loop that reads the pipeline sleeps on each iteration (`time.sleep(5)` to watch
    images appear in TensorBoard): the sleep sets the pace, not the pipeline.
    For identity/re-packing functions, for functions not defined in this file, for functions with ops that take a single element
    (`tf.io.read_file`, `decode_jpeg`/`decode_png`, `encode_jpeg`, `parse_single_example`: there
    the batched form needs different ops, such as `parse_example`), after a map that decodes
    images or audio (the elements differ in shape until a later map resizes them), before `padded_batch`/`ragged_batch` (elements of
    different shapes), and when another step than a `shuffle` sits between the map and the batch
    (`map(f).shuffle(n).batch(b)` is reported, without a fix: the shuffle does not look at the
    elements, so `.shuffle(n).batch(b).map(f)` gives the same batches, its buffer holding the
    elements before the map). When `f` is
    not provably batch-safe and calls code tfperf cannot see, or the batch is small (a literal
    below 8: `.batch(1)` saves almost nothing), or `f` indexes its element or a value made from
    it (`window[:-1]`, `x[0]`, `tf.strings.split(row)[0]`, `tf.gather(columns, [3, 5])`: on a
    batch that would index the batch axis), it stays silent too. When `f` is otherwise not
    provably batch-safe (it has several parameters, resizes, parses), the finding is
    information only, without a fix: such an `f` may not accept batches, and ragged elements
    cannot be batched before mapping. When `f` draws random numbers it is silent: per-element
    randomness would become per-batch randomness (`x + tf.random.uniform([])` on a batch adds
    the same noise to every element; checked under TensorFlow). Silent too when a `.cache()`
    follows the batch: the map then runs in the first epoch only. Silent on a pipeline nothing
    reads (bound to a name the file never uses again, in a def or a script that trains at its
    top level): it never runs; and on one read in a single pass, not to train (`evaluate`,
    `predict`, a few batches taken to look at): the per-element calls are paid once. Silent on a
    pipeline handed to a def of the file that times it (`fast_benchmark(ds.map(f).batch(256))`
    with `time.perf_counter()` inside): the slow form measured on purpose, as the tf.data
    performance guide does. Silent when
    the map already runs in parallel (`num_parallel_calls`): tf.data spreads its calls over cores,
    ahead of the step that reads the batches, so batching first saves CPU time but rarely wall
    time (TFP704 asks for `num_parallel_calls` where it pays).

    ## Fix
    Swap the two steps: `.batch(b).map(f)`. Offered only when all of these hold:
    - `f` is a lambda or local def with exactly one parameter (a single tensor element), made of
      arithmetic, scalar number literals and elementwise TF ops (`tf.cast`, `tf.math.*`
      elementwise functions, `tf.nn.relu`, `tf.image.convert_image_dtype`, `tf.clip_by_value`...),
      with no randomness: then `f(batch)` is exactly the batch of `f(element)`;
    - the map's result is used only by the batch;
    - in the two-statement form, both statements are exactly `ds = ds.map(...)` and
      `ds = ds.batch(...)`, one right after the other (the whole lines are swapped).
    The outputs are identical (checked under TensorFlow by the examples).
    """
    invalid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            pixels = np.arange(48, dtype=np.uint8).reshape(12, 4)
            ds = tf.data.Dataset.from_tensor_slices(pixels)
            ds = ds.map(lambda x: (tf.cast(x, tf.float32) / 255.0 - 0.5) * 2.0)  # to [-1, 1]
            ds = ds.batch(5)
            batches = np.concatenate([b.numpy() for b in ds.prefetch(2)])
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10)
            ds = ds.batch(4).map(lambda x: x * 2, num_parallel_calls=tf.data.AUTOTUNE)
            words = tf.data.Dataset.from_tensor_slices(["a b", "c"])
            words = words.map(tf.strings.split).padded_batch(2)  # ragged elements: must map first
            pairs = ds.map(lambda x: (x, x)).batch(2)  # re-packing only
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        model = pipelines(ctx)
        for step in model.maps():
            used = [c for c in step.children if not _discarded(ctx, c)]
            batch = next((c for c in used if c.method == "batch"), None)
            shuffle = None
            if batch is None:  # ``map(f).shuffle(n).batch(b)``: the shuffle does not look at the elements
                shuffle = next((c for c in used if c.method == "shuffle" and len(c.children) == 1), None)
                batch = next((c for c in shuffle.children if c.method == "batch"), None) if shuffle else None
            if batch is None:
                continue
            fn = model.map_function(step)
            if fn.identity or fn.per_element or fn.python_op or fn.node is None:
                continue  # nothing to vectorise, ops that take one element only (decode_jpeg; a
                # ``tf.py_function`` whose Python loads one file), or unseen
            if model.never_read(step) or model.evaluated_once(step) or model.benchmarked(step) or model.paced_by_sleep(step):
                continue  # built and never used, or evaluated or looked at once: the calls are paid once;
                # or timed by a benchmark of this file: the slow form shown on purpose
            if _runs_in_parallel(step.call):
                continue  # its calls are spread over cores and overlap the step: vectorising saves CPU, rarely time
            if _decoded_upstream(model, step):
                continue  # decoded images differ in size: this map makes them batchable, it must come first
            label = function_label(step.call)
            b = ctx.source.segment(batch.call.args[0]) if batch.call.args else "..."
            form = _form(ctx, model, step, batch) if fn.elementwise and shuffle is None else None
            if form:
                title = f"Batch first: .batch({b}).map({label})"
                yield self.finding(
                    ctx, step.method_node(),
                    f"`map({label})` runs once per element before `.batch({b})`: {label} is elementwise, so "
                    f"`.batch({b}).map({label})` gives the same batches with one call per batch",
                    label="map before batch",
                    fix=partial(_batch_first, ctx, step, batch, form, title),
                    fix_title=title,
                    fix_applicability="unsafe",
                )
                continue
            if fn.unknown or _small_batch(batch.call) or _indexes_its_element(fn) or _reshapes_one_element(fn) \
                    or fn.random or batch.downstream_has({"cache"}):
                continue  # cannot tell whether it accepts batches; a batch too small to gain; it
                # slices its element (``window[:-1]``), which on a batch would slice the batch axis;
                # it draws per-element random numbers (a call per batch would not); or a cache
                # after the batch keeps the result, so the map runs in the first epoch only
            if shuffle is not None:
                n = ctx.source.segment(shuffle.call.args[0]) if shuffle.call.args else "..."
                message = (f"`map({label})` runs once per element before `.shuffle({n}).batch({b})`: if {label} accepts "
                           f"batches, `.shuffle({n}).batch({b}).map({label})` makes one call per batch (and the shuffle "
                           f"buffer holds the elements before the map)")
            elif fn.random:
                message = (f"`map({label})` runs once per element before `.batch({b})`; mapping whole batches would be "
                           f"faster, but {label} draws random numbers per element ({fn.random}), which a call on a "
                           f"batch would draw once per batch")
            else:
                message = (f"`map({label})` runs once per element before `.batch({b})`: if {label} accepts batches, "
                           f"`.batch({b}).map({label})` makes one call per batch")
            yield self.finding(
                ctx, step.method_node(), message,
                label="map before batch",
                severity=Severity.INFORMATION,
            )



def _discarded(ctx: RuleContext, step: Step) -> bool:
    """``ds.batch(32)`` written as a statement of its own: a new dataset, dropped (the pipeline
    that trains is another child, ``ds.cache().shuffle(n).batch(32)``, whose cache keeps the map's
    results: judged wrong on the Coursera U-Net notebook)."""
    return not step.children and isinstance(ctx.facts.parent(step.call), ast.Expr)


def _batch_first(ctx: RuleContext, step: Step, batch: Step, form: Form, title: str) -> Fix:
    """``ds.map(scale).batch(32)`` -> ``ds.batch(32).map(scale)`` (or the two statements
    ``ds = ds.map(scale)`` / ``ds = ds.batch(32)`` swapped): one call of the function per batch."""
    source = ctx.source
    if form == "chain":
        map_span = source.span(step.method_node())
        batch_span = source.span(batch.method_node())
        edits = (Edit(map_span, source.slice(batch_span)), Edit(batch_span, source.slice(map_span)))
    else:
        first, second = ctx.facts.statement_of(step.call), ctx.facts.statement_of(batch.call)
        first_span = whole_lines(source, first.lineno - 1, _end_line(first) - 1)
        second_span = whole_lines(source, second.lineno - 1, _end_line(second) - 1)
        edits = (Edit(first_span, source.slice(second_span)), Edit(second_span, source.slice(first_span)))
    return Fix(title, edits, "unsafe")


def _end_line(stmt: ast.stmt) -> int:
    return stmt.end_lineno if stmt.end_lineno is not None else stmt.lineno


def _form(ctx: RuleContext, model: Pipelines, step: Step, batch: Step) -> Form | None:
    """How the swap is written ("chain" or "statements"), or None when it would not be exact."""
    if len(step.children) != 1 or any(c.step is step for c in model.consumers):
        return None
    if not isinstance(batch.call.func, ast.Attribute):
        return None
    receiver = batch.call.func.value
    if receiver is step.call:
        return "chain"
    first, second = ctx.facts.statement_of(step.call), ctx.facts.statement_of(batch.call)
    if not (_is_self_update(first, step.call) and _is_self_update(second, batch.call)):
        return None
    return "statements" if neighbour(ctx.facts, first, 1) is second else None


def _is_self_update(stmt: ast.AST, call: ast.Call) -> bool:
    """``ds = ds.method(...)``: one name, updated by exactly this call."""
    return (
        isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name) and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name) and call.func.value.id == stmt.targets[0].id
    )


def _runs_in_parallel(call: ast.Call) -> bool:
    """``map(f, num_parallel_calls=AUTOTUNE)`` (or a number above 1): tf.data already runs ``f``
    on several cores, ahead of the step that reads the batches."""
    workers = keyword(call, "num_parallel_calls")
    if workers is None and len(call.args) > 1:
        workers = call.args[1]
    if workers is None or isinstance(workers, ast.Constant) and (workers.value is None or workers.value == 1):
        return False
    return True


SMALL_BATCH = 8


def _small_batch(call: ast.Call) -> bool:
    """``.batch(1)``, ``.batch(2)``: one call per batch would save almost nothing."""
    size = call.args[0] if call.args else keyword(call, "batch_size")
    return isinstance(size, ast.Constant) and isinstance(size.value, int) and size.value < SMALL_BATCH


def _indexes_its_element(fn: MapFunction) -> bool:
    """The function subscripts a parameter or a value made from it (``w[:-1]``, ``x[0]``,
    ``tf.strings.split(row)[0]``, ``tf.shape(tokens)[0]``, ``tf.gather(columns, [3, 5])``), or
    reads its shape (``tf.shape(x)``, ``x.shape``, ``len(x)``): on a batch that indexes the
    batch axis, or gives the batch's shape, instead, so ``batch`` then ``map`` would not give
    the same result. (A string key, ``features["image"]``, reads a dict the same way on a batch.)"""
    if fn.node is None:
        return False
    element = _derived_from(fn.node, set(fn.params))
    for node in ast.walk(fn.node):
        if isinstance(node, ast.Subscript) and _reads(node.value, element):
            if not (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
                return True
        if isinstance(node, ast.Call) and _called(node) == "gather" and node.args and not any(k.arg in ("axis", "batch_dims") for k in node.keywords) \
                and isinstance(node.args[0], ast.Name) and node.args[0].id in element:
            return True  # tf.gather(columns, [3, 5]): axis 0, the batch axis once batched
        if isinstance(node, ast.Call) and _called(node) in _SHAPE_READS and node.args and _reads(node.args[0], element):
            return True  # tf.shape(tokens): one sequence's length, the batch's shape once batched
        if isinstance(node, ast.Attribute) and node.attr == "shape" and _reads(node.value, element):
            return True
    return False


_SHAPE_READS = frozenset({"shape", "size", "rank", "len", "shape_n"})


def _reads(expr: ast.AST, names: set[str]) -> bool:
    return any(isinstance(node, ast.Name) and node.id in names for node in ast.walk(expr))


def _reshapes_one_element(fn: MapFunction) -> bool:
    """``tf.reshape(x, [28 * 28])`` or ``tf.reshape(x, [-1])``: a shape for one element, with no
    batch axis; on a batch it would fail, or flatten the whole batch into one vector."""
    if fn.node is None:
        return False
    for node in ast.walk(fn.node):
        if isinstance(node, ast.Call) and _called(node) == "reshape" and len(node.args) >= 2:
            shape = node.args[1]
            # ``[-1, 28, 28]`` keeps a batch axis; ``[-1]`` and ``[784]`` do not
            if isinstance(shape, (ast.List, ast.Tuple)) and shape.elts and not (
                    len(shape.elts) > 1 and isinstance(shape.elts[0], ast.UnaryOp) and isinstance(shape.elts[0].op, ast.USub)):
                return True
    return False


def _derived_from(fn: ast.AST, params: set[str]) -> set[str]:
    """The parameters and the names assigned from them in the function, in order
    (``columns = tf.strings.split(row, ",")``: a value of the element, indexed like it)."""
    derived = set(params)
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and any(isinstance(n, ast.Name) and n.id in derived for n in ast.walk(node.value)):
            derived.update(n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name))
    return derived


def _called(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


_VARIABLE_SHAPE_DECODERS = re.compile(r"decode_(jpeg|png|gif|bmp|image|webp)|audio\.decode_")


def _decoded_upstream(model, step) -> bool:
    """An earlier map of the pipeline decodes (``decode_jpeg``...): its elements can differ in
    shape until a later map resizes them, so no map between them can move after the batch."""
    for before in step.upstream():
        if before is not step and before.method == "map":
            per_element = model.map_function(before).per_element or ""
            if _VARIABLE_SHAPE_DECODERS.search(per_element):
                return True
    return False
