"""TFP303: a TensorFlow-heavy Python function called over and over in eager mode."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator, cast

from tfperf_lsp.analysis.astutil import call_arguments
from tfperf_lsp.analysis.facts import ModuleFacts, walk_same_scope
from tfperf_lsp.analysis.hotness import HotCode
from tfperf_lsp.analysis.loopvalues import varying_scalar
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import calls_pretrained, graph_blockers, has_python_loop_with_tf_ops, imported_blockers, hot_calls, tf_op_count
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.graph.eager_train_step import decorate_with_tf_function
from tfperf_lsp.rules.input_pipeline._pipeline import pipelines

MANY_OPS = 6  # TF calls in the body; below this, dispatch overhead rarely matters
_TAPE = "tensorflow.GradientTape"


class CostlyEagerFunction(Rule):
    code = "TFP303"
    name = "costly-eager-function"
    category = "graph"
    severity = Severity.INFORMATION
    summary = "TensorFlow-heavy function called repeatedly in eager mode: tf.function may run it faster"
    doc_url = "https://www.tensorflow.org/guide/function"
    fixable = True
    benchmark = "graph"
    docs = """
    ## What it does
    Finds plain Python functions that do a lot of TensorFlow work (a Python loop of TF ops, or
    at least six TF calls) and are called repeatedly in eager mode: in a loop, or in a
    `timeit` statement.

    ## Why is this slow
    Eager execution dispatches every op from Python, one at a time, with its overhead each
    time. As a tf.function, the body is traced once into a graph that TensorFlow optimises and
    runs without returning to Python between ops. We measured ~0.12 s eager vs
    ~0.025 s as a tf.function for 10 calls of a 99-matmul loop. The gain depends on the work per
    op, so this is an opportunity, not a promise: benchmark it.

    ## When it stays silent
    For training steps (TFP301), functions already wrapped (also by another module's alias of
    `tf.function`: `@tf_utils.function`), functions called once, and
    functions that would behave differently in a graph (`.numpy()`, `print`, NumPy, `time`,
    `float()` of tensors, appends to outer lists): tf.function would change what they do.
    Also when the repeated call is not in code this file runs eagerly itself (module-level code,
    `main()` and what they call): a library function's callers may well run it inside a graph
    (a `tf.function`, a `Dataset.map`, a Keras loss), where the "loop" runs only while tracing;
    likewise for a call in a function this file passes to `Dataset.map` (`ds.map(cutmix)`, whose
    loop over the batch calls `get_clip_box`), or in a def such a function calls.
    When a repeated call passes a Python number that changes per iteration (`run(step / n,
    step)`), or a new Python string (`read_img(str(path))` in a loop over `path.iterdir()`, a file
    name from `os.listdir`): as a tf.function it would trace again on every call, slower than
    eager (TFP101 says how to pass a number as a tensor once it is a tf.function).
    For loops over a handful of literal items (`for c in range(3)`), for calls the code writes
    down 20 times or fewer in all (`for _ in range(5)` in a def called once), for calls that do not run
    every step (under `if step % 100 == 0:`, once per epoch), for helpers that call no
    real ops (`tf.compat.as_bytes`, `tf.io.gfile`, `tf.nest`, `tf.train.Example` protos), and for functions that build
    Keras layers (`Dense(8)(x)`): they run on symbolic tensors, once. For helpers called from an
    eager training step: TFP301 compiles the whole step, the helper with it. For functions the
    file also hands to other code (`layers.Lambda(fn)`, `ds.map(fn)`): a decorator would change
    those uses too. For functions that build a `tf.data` pipeline (its work runs later, in the
    tf.data runtime) or whose work is a pretrained network loaded from TF Hub, a SavedModel or
    `keras.applications` (its restored functions already run as graphs). For loops that plot
    each iteration (`ax.plot(...)`): drawing sets their pace.

    ## Fix
    Decorate the function with `@tf.function` (quick fix, marked unsafe), or keep the eager
    version and call `tf.function(fn)` where speed matters.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            def costly(x):
                aux = tf.eye(10)
                result = tf.zeros([10, 10])
                for i in range(1, 20):
                    aux = tf.matmul(x, aux) / i
                    result = result + aux
                return result

            x = tf.random.uniform([10, 10])
            for _ in range(100):
                y = costly(x)
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            def small(x):
                return tf.nn.relu(x) + 1.0  # little work per call: not worth a graph

            for _ in range(100):
                small(tf.ones([3]))
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        sites: dict[str, int] = {}  # name -> line of its first repeated call
        retraced: set[str] = set()  # names called with a Python number that changes per iteration
        hot = ctx.hot
        module_defs = {fn.name for fn in facts.functions if facts.scope_of(fn) is None}
        mapped: set[ast.AST] | None = None
        for call in hot_calls(ctx):
            if call.name not in module_defs or call.name in sites:
                continue  # only calls of this file's own functions matter (cheap test first)
            if isinstance(call.node, ast.Call):
                mapped = _run_by_tf_data(ctx) if mapped is None else mapped
                if facts.enclosing_function(call.node) in mapped:
                    continue  # in a function ``Dataset.map`` runs: tf.data traces it, the loop runs once
            if isinstance(call.node, ast.Call) and not (hot.repeats(call.node) and hot.per_step(call.node)
                                                        and hot.runs_eagerly_in_script(call.node)):
                continue  # a short loop, or a library function whose callers may run it in a graph
            if isinstance(call.node, ast.Call) and hot.runs_few_times([call.node], _FEW_CALLS):
                continue  # ``for _ in range(5): reply = inference(reply)`` once after training: a trace would not pay
            if isinstance(call.node, ast.Call) and _in_training_step(facts, hot, call.node):
                continue  # TFP301 wraps the whole step, this helper with it
            if isinstance(call.node, ast.Call) and (_passes_loop_numbers(facts, call.node) or _passes_loop_strings(facts, call.node)
                                                  or _passes_a_list_built_here(call.node)):
                retraced.add(call.name)  # as a tf.function it would trace again on every call
            sites.setdefault(call.name, cast(ast.expr, call.node).lineno)  # a Call or a timeit string
        for fn in facts.functions:
            if fn.name not in sites or fn.name in retraced or facts.scope_of(fn) is not None:
                continue
            if any(facts.qualname(d.func if isinstance(d, ast.Call) else d) == "tensorflow.function" for d in fn.decorator_list):
                continue
            if fn in facts.traced_helpers or facts.traced_elsewhere(fn) or _has_tape(facts, fn):
                continue
            if not (has_python_loop_with_tf_ops(facts, fn) or tf_op_count(facts, fn) >= MANY_OPS):
                continue
            if graph_blockers(facts, fn) or imported_blockers(ctx, fn) or hot.why_cold(fn.body[0]) or hot.is_layer_application_builder(fn):
                continue
            if not _runs_tensorflow_ops(facts, fn):
                continue  # tf.compat.as_bytes, tf.io.gfile, ...: Python helpers, nothing to graph
            if _handed_to_other_code(facts, fn) or _builds_a_pipeline(facts, fn):
                continue
            if calls_pretrained(ctx, fn):
                continue  # a TF Hub / SavedModel / keras.applications network does the work: its functions are graphs
            wrapped_elsewhere = facts.tf_function_for_def(fn) is not None
            yield self.finding(
                ctx, fn,
                f"`{fn.name}` runs eagerly, op by op, each time it is called (line {sites[fn.name]}): "
                f"as a `tf.function` it would run as one graph",
                label="eager, called repeatedly",
                head_only=True,
                cites=(sites[fn.name],),
                fix=None if wrapped_elsewhere else partial(decorate_with_tf_function, ctx, fn),
                fix_title=None if wrapped_elsewhere else "Decorate with @tf.function",
                fix_applicability="unsafe",
            )


def _run_by_tf_data(ctx: RuleContext) -> set[ast.AST]:
    """The functions ``Dataset.map`` runs (``ds.map(cutmix)``), and the defs of this file they call,
    two calls deep: tf.data traces them into its graph, so a loop in them runs once, at trace time
    (round 62: cutmix's per-image ``get_clip_box`` reported as eager)."""
    facts = ctx.facts
    found: set[ast.AST] = set()
    todo: list[tuple[ast.AST, int]] = [(fn, 0) for fn in pipelines(ctx).mapped_functions()]
    # ``ds.map(cutmix, num_parallel_calls=2)`` on a dataset handed in as a parameter, which the
    # pipeline model (built from the datasets this file makes) does not see
    todo += [(mapped, 0) for call in facts.calls_named("map") if _maps_a_dataset(facts, call)
             and isinstance(call.args[0], ast.Name) and (mapped := facts.resolve_def(call.args[0], call)) is not None]
    while todo:
        fn, depth = todo.pop()
        if fn in found:
            continue
        found.add(fn)
        if depth >= 2:
            continue
        for node in walk_same_scope(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and (callee := facts.resolve_def(node.func, node)) is not None:
                todo.append((callee, depth + 1))
    return found


# Dataset methods: a ``.map`` on what they return maps a tf.data pipeline.
_DATASET_METHODS = frozenset({"batch", "padded_batch", "shuffle", "prefetch", "repeat", "map", "filter", "cache",
                              "unbatch", "take", "skip", "interleave", "from_tensor_slices", "from_generator"})


def _maps_a_dataset(facts: ModuleFacts, call: ast.Call) -> bool:
    """``x.map(fn, ...)`` on a tf.data dataset as far as the code shows: tf.data's own keywords
    (``num_parallel_calls``, ``deterministic``), or ``x`` made by a dataset method (``ds =
    ds.batch(16)`` above, or ``ds.batch(16).map(fn)``); not pandas' ``Series.map``."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "map" and call.args):
        return False
    if any(k.arg in ("num_parallel_calls", "deterministic") for k in call.keywords):
        return True
    receiver: ast.AST | None = func.value
    if isinstance(receiver, ast.Name):
        receiver = getattr(facts.reaching_assignment(receiver), "value", None)
    return isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) \
        and receiver.func.attr in _DATASET_METHODS


def _passes_loop_numbers(facts: ModuleFacts, call: ast.Call) -> bool:
    """``run(step / float(n), step)`` in ``for step in range(n)``: a Python number that changes
    per iteration. A tf.function traces once per distinct Python value: one trace per call."""
    loops = facts.enclosing_loops(call)
    arguments = call_arguments(call)
    return any(varying_scalar(facts, argument, loops) is not None for argument in arguments)


def _passes_a_list_built_here(call: ast.Call) -> bool:
    """``nll(labels, current_logits + [logits])``: a Python list made at the call. A tf.function
    traces once per list length and element shapes, so an ensemble grown one model at a time
    traces again on every size (Hyperparameter_Ensembles' greedy selection)."""
    def built(node: ast.expr) -> bool:
        return isinstance(node, (ast.List, ast.ListComp)) or isinstance(node, ast.BinOp) and (built(node.left) or built(node.right))
    return any(built(argument) for argument in call_arguments(call))


def _passes_loop_strings(facts: ModuleFacts, call: ast.Call) -> bool:
    """``read_img_and_resize(str(img_path), shape)`` in ``for img_path in p.iterdir()``: a Python
    string made from the loop's item (``str(x)``, an f-string, ``os.path.join(d, x)``), or the
    item of a loop over file names (``os.listdir``, ``glob``, ``iterdir``). A tf.function traces
    once per distinct Python string: one trace per call."""
    targets: set[str] = set()  # the items of the loops around the call
    over_files: set[str] = set()  # of those, the ones a loop over file names gives
    for loop in facts.enclosing_loops(call):
        if isinstance(loop, (ast.For, ast.AsyncFor)):
            names = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
            targets |= names
            if _lists_files(facts, loop.iter):
                over_files |= names
    for argument in call_arguments(call):
        if isinstance(argument, ast.Name) and argument.id in over_files:
            return True
        made = isinstance(argument, ast.JoinedStr) or isinstance(argument, ast.Call) and (
            isinstance(argument.func, ast.Name) and argument.func.id == "str"
            or facts.qualname(argument.func) == "os.path.join")
        if made and any(isinstance(n, ast.Name) and n.id in targets for n in ast.walk(argument)):
            return True
    return False


def _lists_files(facts: ModuleFacts, iterable: ast.expr) -> bool:
    """``os.listdir(d)``, ``glob.glob(pattern)``, ``path.iterdir()`` / ``path.glob(...)`` (also
    through a name bound to one, or ``sorted(...)`` of one): Python strings or paths, one per file."""
    if isinstance(iterable, ast.Name):
        iterable = getattr(facts.reaching_assignment(iterable), "value", None) or iterable
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id in ("sorted", "list") \
            and iterable.args:
        return _lists_files(facts, iterable.args[0])
    if isinstance(iterable, ast.IfExp):
        return _lists_files(facts, iterable.body)
    if not isinstance(iterable, ast.Call):
        return False
    qualname = facts.qualname(iterable.func) or ""
    return qualname in ("os.listdir", "glob.glob", "glob.iglob") or isinstance(iterable.func, ast.Attribute) \
        and iterable.func.attr in ("iterdir", "glob", "rglob") and not qualname.startswith("tensorflow.")


def _handed_to_other_code(facts: ModuleFacts, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``layers.Lambda(fn)``, ``ds.map(fn)``, ``tf.map_fn(fn, x)``: the file also passes the
    function itself to other code, which may run it on symbolic tensors or trace it; a decorator
    would change those uses too."""
    for name in facts.names.get(fn.name, ()):
        parent = facts.parent(name)
        if not isinstance(name.ctx, ast.Load) or isinstance(parent, ast.Call) and parent.func is name:
            continue
        if isinstance(parent, ast.keyword):
            parent = facts.parent(parent)
        if isinstance(parent, ast.Call) and (facts.qualname(parent.func) or "").startswith(_TIMERS):
            continue  # ``tf.function(fn)`` beside the eager calls, ``timeit.timeit(fn)``: the comparison this rule suggests
        if isinstance(parent, (ast.Call, ast.List, ast.Tuple, ast.Dict)):
            return True
    return False


_TIMERS = ("tensorflow.function", "timeit.")
_FEW_CALLS = 20  # calls the code writes down in all (loop counts, calls of the defs around)


def _builds_a_pipeline(facts: ModuleFacts, fn: ast.AST) -> bool:
    """``tf.data.Dataset.from_tensor_slices(...)`` ... ``return ds``: it builds an input pipeline,
    whose work runs later in the tf.data runtime, not in this call."""
    return any(isinstance(n, ast.Call) and (facts.qualname(n.func) or "").startswith("tensorflow.data.")
               for n in walk_same_scope(fn))


def _has_tape(facts: ModuleFacts, fn: ast.AST) -> bool:
    return any(
        isinstance(n, ast.withitem) and isinstance(n.context_expr, ast.Call) and facts.qualname(n.context_expr.func) == _TAPE
        for n in ast.walk(fn)
    )


# Modules of the tensorflow namespace whose functions are Python utilities, not graph ops.
_NOT_OPS = ("tensorflow.compat.as_", "tensorflow.io.gfile.", "tensorflow.compat.v1.logging.", "tensorflow.nest.",
            "tensorflow.get_logger", "tensorflow.config.", "tensorflow.errors.", "tensorflow.TensorSpec",
            "tensorflow.dtypes.", "tensorflow.is_tensor", "tensorflow.executing_eagerly", "tensorflow.print",
            # shape and conversion ops: near free, a graph saves nothing on them
            "tensorflow.expand_dims", "tensorflow.squeeze", "tensorflow.reshape", "tensorflow.shape",
            "tensorflow.convert_to_tensor", "tensorflow.constant", "tensorflow.cast", "tensorflow.identity",
            # protocol buffers and writers: Python objects, a graph cannot even return them
            "tensorflow.train.Example", "tensorflow.train.SequenceExample", "tensorflow.train.Feature",
            "tensorflow.train.Int64List", "tensorflow.train.FloatList", "tensorflow.train.BytesList",
            "tensorflow.io.TFRecordWriter", "tensorflow.io.TFRecordOptions")


def _runs_tensorflow_ops(facts: ModuleFacts, fn: ast.AST) -> bool:
    """At least a few calls that are TensorFlow ops (not string, file or structure utilities)."""
    ops = 0
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            qualname = facts.qualname(node.func) or ""
            if facts.imports.is_tensorflow(qualname) and not qualname.startswith(_NOT_OPS):
                ops += 1
    return ops >= 2


def _in_training_step(facts: ModuleFacts, hot: HotCode, node: ast.AST) -> bool:
    """Called from a training step: a def that records a tape and applies gradients, or a loop
    body that does (the step TFP301 reports)."""
    fn = facts.enclosing_function(node)
    if fn is not None and hot.is_training_step(fn):
        return True
    return any(hot.is_training_step(loop) for loop in facts.enclosing_loops(node))
