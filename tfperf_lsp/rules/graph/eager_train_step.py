"""TFP301: a training step (GradientTape + apply_gradients) that runs eagerly, step after step."""
from __future__ import annotations

import ast
import builtins
from functools import partial
from typing import Iterator, Sequence

from tfperf_lsp.analysis.astutil import keyword
from tfperf_lsp.analysis.facts import ModuleFacts, argument_for, parameter_names, walk_same_scope
from tfperf_lsp.analysis.models import OPTIMIZER_STEPS
from tfperf_lsp.model import Finding, Fix, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import calls_pretrained, decorator_edit, graph_blockers, hot_calls, imported_blockers, tf_alias, tf_function_commented_out
from tfperf_lsp.rules.context import RuleContext

_TAPE = "tensorflow.GradientTape"


class EagerTrainStep(Rule):
    code = "TFP301"
    name = "eager-train-step"
    category = "graph"
    severity = Severity.WARNING
    summary = "Training step (GradientTape + apply_gradients) runs eagerly: wrap it in tf.function"
    doc_url = "https://www.tensorflow.org/guide/intro_to_graphs"
    fixable = True
    benchmark = "graph"
    docs = """
    ## What it does
    Finds training steps that run op by op in eager mode: a function with a
    `tf.GradientTape` and an optimizer update (`apply_gradients` / `minimize`, or one written by
    hand from the tape's gradients: `v.assign_sub(learning_rate * g)`, as the core-API guides
    train) that is not a tf.function and is called in a loop, or the same pattern written inline
    in a loop body.

    ## Why is this slow
    Eagerly, every op of the forward pass, the gradient and the update is dispatched from
    Python, one at a time. A tf.function traces the step once into a graph that TensorFlow
    optimises (pruning, constant folding, op fusion) and runs without the Python overhead.
    Measured on CPU: 9x for a small MLP step, 6x on the guide's example; little for steps
    dominated by large convolutions.

    ## When it stays silent
    When the step is already a tf.function (or called from one, or decorated with another
    module's alias of it, `@tf_utils.function`), and when it is not called
    repeatedly. When the loop reads a name the file never defines (`for x, y in main_dataset:`, a
    guide's snippet that cannot run as it is), or its def has `# @tf.function` commented out.
    When the step is library code that this file does not run itself (a method of
    an agent or trainer class, not reached from module-level code or `main()`): its callers may
    trace it (tf_agents wraps `_train` in a tf.function); but a library def whose own loop runs
    the step and reads values back to Python (`loss.numpy()` or `print` for a progress bar, as
    alibi-detect's `trainer()`) is reported: no caller can trace it, so every step runs eagerly
    wherever it is called. When it sits in a branch that chooses
    eager execution on purpose (`if FLAGS.mode == "eager_tf":`). A step with several tapes
    (`with tf.GradientTape() as g, tf.GradientTape() as d:`), or a tape opened inside another
    tape's block (a gradient penalty), gets one finding. When the code
    visibly runs the step at most 500 times (module-level loops with literal counts:
    `for step in range(50)`): a trace costs more than a demo loop saves. When the step calls a
    model that is or wraps a pretrained network (`from_pretrained`, TF Hub, `keras.applications`,
    also built by a builder imported from another file of the project): fine-tuning it, its compute sets the pace, not the dispatch of ops. When a `# @tf.function`
    comment sits right above the def: the author turned it off on purpose. When every call
    runs once per episode, after an inner loop that plays the episode (`env.step(...)`, itself or
    through a def) without training (`for episode ...: for step ...: play_one_step(...)`, then
    `training_step(...)`), or in the branch that ends the episode (`if done: train_step(...);
    break`, or `if steps >= 500 or done:` with a tape written in it): the environment steps set
    the pace. (An inner loop that only gathers a batch before
    each step is part of the step loop: reported.) The fix is withheld
    when the step does things a graph runs differently: `.numpy()`, `print`, NumPy or `time`
    calls, `float()` of tensors, appends to outer lists, Keras' `.predict()`/`.fit()`, or a call
    of a local helper that does, or of a function or method imported from another file of the
    project that does (`gt = GroundTruth(cfg, batch); gt.get_ground_truth()`); the message then
    says what to make graph-safe first (for a step written in the loop body too). NumPy and
    `int()` on what is known while tracing (`np.arange(1, len(x.shape))`, `int(x.shape[1])`,
    `np.log(2.)`) are graph-safe, and so is a global metric made on the first call (`if _acc is
    None: _acc = ...`); NumPy's random draws are not (a trace freezes them).

    ## Fix
    Decorate the step with `@tf.function` (quick fix, marked unsafe: Python side effects now run
    once per trace; see TFP201-TFP203). Pass batches as tensors, not Python numbers (TFP101).
    When the loop reads a dataset batched by `padded_batch` without fixed `padded_shapes`, every
    batch has its own length: the decorator is `@tf.function(reduce_retracing=True)`, which traces
    once or twice instead of once per length (checked under TensorFlow). When each batch is another
    library's object made by a Python generator of the file (`yield tfg.BatchGraph.from_graphs(...)`),
    the message says to pass the function the object's tensors (a tf.function traces again for every
    new Python object), and there is no quick fix.
    Build the model and optimizer before the first call. A step that receives its optimizer as
    an argument from a caller that makes it (`trainer_D = Adam(lr)` in `train(...)`) gets no quick
    fix when that caller may run again (called from several places or a loop, or in a notebook,
    whose cells are run again): the next run's new optimizer would create its variables on a
    later trace of the same tf.function, and that raises (verified); the message says to make
    `tf.function(step)` once per run instead.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            w = tf.Variable([[1.0], [2.0]])
            optimizer = tf.keras.optimizers.SGD(0.1)
            x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
            y = tf.constant([[1.0], [0.0]])

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((tf.matmul(x, w) - y) ** 2)
                grads = tape.gradient(loss, [w])
                optimizer.apply_gradients(zip(grads, [w]))
                return loss

            batches = tf.data.Dataset.from_tensors((x, y)).repeat(5)  # a dataset: any length
            for x_batch, y_batch in batches:
                loss = train_step(x_batch, y_batch)
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            w = tf.Variable([[1.0], [2.0]])
            optimizer = tf.keras.optimizers.SGD(0.1)

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((tf.matmul(x, w) - y) ** 2)
                grads = tape.gradient(loss, [w])
                optimizer.apply_gradients(zip(grads, [w]))
                return loss
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        hot_names = {call.name for call in hot_calls(ctx)}
        for fn in sorted(_defs_with_steps(ctx), key=lambda f: f.lineno):
            if facts.tf_function_for_def(fn) is not None or fn in facts.traced_helpers:
                continue
            called_in_loop = fn.name in hot_names and facts.scope_of(fn) is None
            if not (called_in_loop or facts.is_called_repeatedly(fn)):
                continue
            if not ctx.hot.runs_eagerly_in_script(fn.body[0]):
                continue  # library code: its callers (a trainer, an agent base class) may trace it
            if ctx.hot.runs_few_times(facts.calls_by_def.get(fn, [])):
                continue  # a demo loop of a few dozen steps: the trace would cost more than it saves
            if calls_pretrained(ctx, fn):
                continue  # fine-tuning a pretrained network: its compute, not op dispatch, sets the pace
            if _after_each_rollout(ctx, facts.calls_by_def.get(fn, [])):
                continue  # once per episode, on that episode's steps: the rollout sets the pace
            if tf_function_commented_out(ctx, fn):
                continue  # ``# @tf.function  # not working``: the author turned it off on purpose
            blockers = sorted({*graph_blockers(facts, fn), *imported_blockers(ctx, fn)})
            # what the step is fed, from the loops that call it: batches padded each to its own
            # length, or another library's objects (each a new trace of a plain tf.function)
            call_loops = [loop for call in facts.calls_by_def.get(fn, []) for loop in facts.enclosing_loops(call)[:1]]
            varying = _padded_to_each_batch(ctx, call_loops)
            objects = next((kind for loop in call_loops if (kind := _python_objects_per_step(facts, loop))), None)
            optimizer = _optimizer_passed_in(fn)
            if optimizer is not None and not _made_per_run(ctx, fn, optimizer):
                optimizer = None  # one optimizer for the program (made at module level, or in a main() run once)
            if optimizer is not None:
                # One tf.function for every run: a second run's new optimizer would make its
                # variables on a later trace, which raises (verified on TF 2.21).
                message = (f"`{fn.name}` runs eagerly, op by op, on every training step: make `tf.function({fn.name})` "
                           f"once per training run, where `{optimizer}` is created, and call that (not `@tf.function` "
                           f"on the def: a new optimizer passed to the same tf.function creates its variables on a "
                           f"later trace, which raises)")
            else:
                decorator = "@tf.function(reduce_retracing=True)" if varying or objects else "@tf.function"
                message = f"`{fn.name}` runs eagerly, op by op, on every training step: decorate it with `{decorator}`"
                message += _VARYING_NOTE if varying else (_objects_note(objects) if objects else "")
            if blockers:
                message += _graph_safe_first(blockers)
            fixable = not blockers and optimizer is None and not objects
            title = "Decorate with @tf.function(reduce_retracing=True)" if varying else "Decorate with @tf.function"
            yield self.finding(
                ctx, fn, message,
                label="eager train step",
                head_only=True,
                fix=partial(decorate_with_tf_function, ctx, fn, reduce_retracing=varying) if fixable else None,
                fix_title=title if fixable else None,
                fix_applicability="unsafe",
            )
        yield from self._inline_steps(ctx)

    def _inline_steps(self, ctx: RuleContext) -> Iterator[Finding]:
        """The step written directly in a loop body, not in a function."""
        facts = ctx.facts
        reported: set[ast.AST] = set()  # one finding per step: ``with tf.GradientTape() as g, tf.GradientTape() as d:``
        # and one per loop: a GAN's discriminator and generator tapes one after the other in the
        # loop body are one training iteration, moved into one tf.function together
        reported_loops: set[ast.AST] = set()
        items = sorted(_tape_items(facts), key=lambda item: (item.context_expr.lineno, item.context_expr.col_offset))
        tape_blocks = {facts.parent(item) for item in items}
        for item in items:
            call = item.context_expr
            block = facts.parent(item)
            if block in reported:
                continue
            if any(ancestor in tape_blocks for ancestor in facts.ancestors(item) if ancestor is not block):
                continue  # a tape inside another tape's block (a gradient penalty): part of that step
            if facts.in_tf_function(item) is not None or (
                facts.enclosing_function(item) in _defs_with_steps(ctx) and not _in_own_loop(facts, item)
            ):
                continue
            with_stmt = facts.parent(item)
            if not isinstance(with_stmt, (ast.With, ast.AsyncWith)):
                continue  # never: a withitem is part of a with statement
            loops = facts.enclosing_loops(with_stmt)
            if not loops or not _updates_in(facts, loops[0]) or loops[0] in reported_loops:
                continue
            if _deliberately_eager(facts, with_stmt) or not (ctx.hot.runs_eagerly_in_script(with_stmt)
                                                             or _library_loop_no_caller_can_trace(ctx, loops[0])):
                continue  # a debugging branch; or library code its callers may trace (tf_agents' _train)
            if ctx.hot.runs_few_times([with_stmt]):
                continue  # a demo loop of a few dozen steps
            if calls_pretrained(ctx, with_stmt):
                continue  # fine-tuning a pretrained network (``TFDistilBert...from_pretrained``)
            if _after_each_rollout(ctx, [with_stmt]):
                continue  # the tape of the branch that ends an episode: once per episode, on its steps
            around = facts.enclosing_function(with_stmt)
            if around is not None and tf_function_commented_out(ctx, around):
                continue  # ``# @tf.function`` above the def that holds the loop: turned off on purpose
            if _iterates_an_undefined_name(facts, loops[0]):
                continue  # ``for x, y in main_dataset:`` with ``main_dataset`` defined nowhere: an illustration
            reported.add(with_stmt)
            reported_loops.add(loops[0])
            blockers = sorted({*graph_blockers(facts, with_stmt), *imported_blockers(ctx, with_stmt)})
            varying = _padded_to_each_batch(ctx, loops)
            objects = _python_objects_per_step(facts, loops[0])
            doubles = _float64_operand(facts, with_stmt)
            yield self.finding(
                ctx, call,
                "This training step runs eagerly, op by op, on every iteration: move it into a function "
                f"decorated with `@tf.function{'(reduce_retracing=True)' if varying or objects else ''}` and call that in the loop"
                + (_VARYING_NOTE if varying else "")
                + (_objects_note(objects) if objects else "")
                + (_float64_note(doubles) if doubles else "")
                + (_graph_safe_first(blockers) if blockers else ""),
                label="eager train step",
            )


def _graph_safe_first(blockers: list[str], shown: int = 3) -> str:
    """What to change before the step can be traced: the first few reasons, and how many more."""
    more = len(blockers) - shown
    return f" (first make it graph-safe: it {', '.join(blockers[:shown])}" + (f", and {more} more" if more > 0 else "") + ")"


# A plain tf.function traces again for every new input shape (checked in the fixture).
_VARYING_NOTE = (" (its batches come from `padded_batch`, padded to each batch's longest element: a plain "
                 "`@tf.function` would trace again for every new length)")


def _float64_note(name: str) -> str:
    # verified in the fixture: eagerly ``x * w`` converts the float64 array to the variable's
    # float32; passed to a tf.function, ``x`` is a float64 tensor and the product raises
    return (f" (pass it `{name}` as float32, `{name}.astype('float32')`: NumPy makes float64, which an eager op "
            f"converts to its float32 variables' dtype, but a tf.function takes as a float64 tensor and then fails)")


def _float64_operand(facts: ModuleFacts, step: ast.AST) -> str | None:
    """A name the step's arithmetic reads (``y_pred = x * w + b``) whose value is a float64 NumPy
    array (``x = x_data[idx]`` with ``x_data = np.linspace(0.0, 10.0, n)``), made without a dtype,
    beside a TensorFlow value (``w = tf.Variable([0.])``)."""
    for node in walk_same_scope(step):
        if isinstance(node, ast.BinOp):
            for operand, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(operand, ast.Name) and _made_by_tensorflow(facts, other) and _float64_array(facts, operand, 3):
                    return operand.id
    return None


def _made_by_tensorflow(facts: ModuleFacts, expr: ast.expr) -> bool:
    assignment = facts.reaching_assignment(expr) if isinstance(expr, ast.Name) else None
    value = assignment.value if isinstance(assignment, ast.Assign) else expr
    return isinstance(value, ast.Call) and (facts.qualname(value.func) or "").startswith("tensorflow.")


def _float64_array(facts: ModuleFacts, expr: ast.expr, depth: int) -> bool:
    if isinstance(expr, ast.Subscript):
        return _float64_array(facts, expr.value, depth)
    if isinstance(expr, ast.BinOp):
        return any(_float64_array(facts, side, depth) for side in (expr.left, expr.right))
    if isinstance(expr, ast.Call):
        return facts.qualname(expr.func) in _FLOAT64_MAKERS and keyword(expr, "dtype") is None
    if isinstance(expr, ast.Name) and depth > 0:
        assignment = facts.reaching_assignment(expr)
        value = assignment.value if isinstance(assignment, ast.Assign) and len(assignment.targets) == 1 else None
        return value is not None and _float64_array(facts, value, depth - 1)
    return False


_FLOAT64_MAKERS = frozenset({"numpy.linspace", "numpy.random.randn", "numpy.random.rand", "numpy.random.normal",
                             "numpy.random.uniform", "numpy.random.random"})


def _objects_note(kind: str) -> str:
    return (f" (each batch is a new `{kind}` object from a Python generator: pass the function its tensors, not the "
            f"object, which a tf.function would trace again on every call)")


def _python_objects_per_step(facts: ModuleFacts, loop: ast.AST) -> str | None:
    """The class of the objects a Python generator of this file hands the loop on every step, when
    it builds them with another library's class (``yield tfg.BatchGraph.from_graphs(graphs)``): a
    tf.function given such an object traces once per new object (a judge measured 5 calls, 5
    traces), so the step must take the object's tensors. Read through ``for b in gen(...)`` or
    ``b = next(train_batches)`` with ``train_batches = gen(...)``."""
    sources: list[ast.expr] = []
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        sources.append(loop.iter)
    for node in walk_same_scope(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "next" and node.args:
            sources.append(node.args[0])
    for expr in sources:
        source = getattr(facts.reaching_assignment(expr), "value", None) if isinstance(expr, ast.Name) else expr
        if not (isinstance(source, ast.Call) and isinstance(source.func, ast.Name)):
            continue
        generator = facts.resolve_def(source.func, source)
        yields = [n.value for n in walk_same_scope(generator) if isinstance(n, ast.Yield)] if generator is not None else []
        for value in yields:
            if isinstance(value, ast.Name):
                value = getattr(facts.reaching_assignment(value), "value", None)
            kind = _foreign_class(facts, value)
            if kind is not None:
                return kind
    return None


def _foreign_class(facts: ModuleFacts, value: ast.AST | None) -> str | None:
    """``tfg.BatchGraph.from_graphs(...)`` or ``BatchGraph(...)``: a class (a capitalised name)
    of a package other than TensorFlow, Keras or NumPy; its name."""
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    parts = (facts.qualname(func) or "").split(".")
    if not parts[0] or parts[0] in ("tensorflow", "keras", "tf_keras", "numpy", "builtins"):
        return None
    classes = [p for p in parts[1:] if p[:1].isupper()]
    return classes[-1] if classes else None


def _padded_to_each_batch(ctx: RuleContext, loops: Sequence[ast.AST]) -> bool:
    """One of ``loops`` iterates a dataset batched by ``padded_batch`` without fixed
    ``padded_shapes`` (or with the dataset's own ``output_shapes``, whose lengths are unknown): each
    batch is padded to its longest element, so the step's input shape changes from batch to batch
    (a judge measured 20 shapes, 20 traces, on IMDB reviews). Followed through the names the
    chain is built in (``ds = ds.shuffle(n).padded_batch(64, ds.output_shapes)``), whatever its source."""
    from tfperf_lsp.rules.input_pipeline._astutil import iterated

    facts = ctx.facts
    for loop in loops:
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            continue
        todo: list[ast.AST] = list(iterated(loop.iter))
        for _ in range(8):  # a few names back
            if not todo:
                break
            expr = todo.pop()
            while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
                if expr.func.attr == "padded_batch" and not _fixed_shapes(expr):
                    return True
                expr = expr.func.value
            if isinstance(expr, ast.Name):
                assignment = facts.reaching_assignment(expr)
                if isinstance(assignment, ast.Assign) and len(assignment.targets) == 1:
                    todo.append(assignment.value)
    return False


def _fixed_shapes(call: ast.Call) -> bool:
    """``padded_batch(32, padded_shapes=([100], []))``: every length written as a number."""
    shapes = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "padded_shapes"), None)
    if shapes is None:
        return False
    dims = [n for n in ast.walk(shapes) if not isinstance(n, (ast.Tuple, ast.List, ast.Load))]
    return bool(dims) and all(isinstance(n, ast.Constant) and isinstance(n.value, int) and n.value >= 0 for n in dims)


def _iterates_an_undefined_name(facts: ModuleFacts, loop: ast.AST) -> bool:
    """A module-level loop over a name the file never binds (no assignment, import, def or star
    import): a snippet copied from a guide to show the idea (``for x, y in main_dataset:`` with
    ``loss_fn_head1`` and ``optimizer`` undefined too), which cannot run as it is."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)) or facts.enclosing_function(loop) is not None:
        return False
    root = loop.iter
    while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
        root = root.func if isinstance(root, ast.Call) else root.value
    if not isinstance(root, ast.Name) or root.id in dir(builtins):
        return False
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in facts.imports.statements):
        return False
    bound = root.id in facts.imports.bindings or root.id in facts.module_defs \
        or any(not isinstance(use.ctx, ast.Load) for use in facts.names.get(root.id, []))
    return not bound


def _library_loop_no_caller_can_trace(ctx: RuleContext, loop: ast.AST) -> bool:
    """A library def's own step loop (``trainer()`` of alibi-detect: ``for step, data in
    enumerate(dataset)``, the tape in its body) that also reads values back to Python
    (``loss.numpy()`` for a progress bar), so no caller can trace the def: its every step runs
    eagerly wherever it is called. A judge measured such a loop at 5.15 s eager against 1.3 s
    with the step in a tf.function, for 200 steps."""
    facts = ctx.facts
    if ctx.hot.tf1_graph_mode or facts.in_tf_function(loop) is not None or facts.enclosing_function(loop) is None:
        return False
    return any(reason in ("calls .numpy()", "calls print()") for reason in graph_blockers(facts, loop))


def decorate_with_tf_function(ctx: RuleContext, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                              reduce_retracing: bool = False) -> Fix:
    """``def step(x): ...`` -> ``@tf.function`` above it (and above its other decorators); the
    import of TensorFlow too if the file has none above. TFP303 uses it as well.
    ``reduce_retracing``: ``@tf.function(reduce_retracing=True)``, for inputs whose shape varies."""
    alias, extra = tf_alias(ctx, fn.lineno - 1)
    decorator = f"{alias}.function(reduce_retracing=True)" if reduce_retracing else f"{alias}.function"
    title = "Decorate with @tf.function(reduce_retracing=True)" if reduce_retracing else "Decorate with @tf.function"
    return Fix(title, (decorator_edit(ctx, fn, decorator), *extra))


def _tape_items(facts: ModuleFacts) -> list[ast.withitem]:
    return [
        item for item in facts.with_items
        if isinstance(item.context_expr, ast.Call) and facts.qualname(item.context_expr.func) == _TAPE
    ]


def _updates_in(facts: ModuleFacts, scope: ast.AST) -> bool:
    """``scope`` applies an update: an optimizer's (``apply_gradients``, ``minimize``), or one
    written by hand from the tape's gradients (``grads = tape.gradient(...)``, then
    ``v.assign_sub(learning_rate * g)``, as the core-API guides train)."""
    methods = {node.func.attr for node in walk_same_scope(scope)
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    return bool(methods & OPTIMIZER_STEPS) or ("gradient" in methods and "assign_sub" in methods)


def _defs_with_steps(ctx: RuleContext) -> set[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Defs that open a GradientTape and apply an optimizer update (once per analysis)."""
    return ctx.derived(_find_defs_with_steps)


def _find_defs_with_steps(ctx: RuleContext) -> set[ast.FunctionDef | ast.AsyncFunctionDef]:
    facts = ctx.facts
    # A def whose tape sits inside its own loop is a training *loop* (``main()`` with the
    # step written in its ``for`` body): its step is reported inline, not the def.
    candidates = {facts.enclosing_function(item) for item in _tape_items(facts)
                  if not _in_own_loop(facts, item)}
    return {fn for fn in candidates if fn is not None and _updates_in(facts, fn)}


def _after_each_rollout(ctx: RuleContext, calls: Sequence[ast.AST]) -> bool:
    """Every call (or a step written in place, its ``with`` statement) runs once per iteration
    of a loop whose body first runs an inner loop that
    does not train (``for episode ...: while not done: env.step(...)``, or a def of the file
    that plays the episode: ``generate_trajectory(env)``; then ``train_step(...)``
    on a batch from the episode or a replay buffer): an update per episode, beside hundreds of
    environment steps that set the pace (and where the batch is the episode's own steps, its
    length changes every episode, so a ``tf.function`` would trace again for most of them)."""
    if not calls:
        return False
    facts, hot = ctx.facts, ctx.hot
    for call in calls:
        loops = facts.enclosing_loops(call)
        if not loops or not isinstance(loops[0], (ast.For, ast.While, ast.AsyncFor)):
            return False
        last = _branch_that_breaks(facts, call, loops[0])
        if last is not None:  # ``while True: step the env; if done: train_step(...); break``
            if hot.trains(loops[0], skip=last) or not _steps_an_environment(facts, loops[0]):
                return False
            continue
        body = loops[0].body
        statement = next((stmt for stmt in body if _holds(stmt, call)), None)
        if statement is None:
            return False
        before = body[: body.index(statement)]
        rollouts = [stmt for stmt in before if isinstance(stmt, (ast.For, ast.While, ast.AsyncFor))]
        # ``states, actions, rewards = generate_trajectory(env)``: a def of the file plays the episode
        rollouts += [loop for stmt in before for node in ast.walk(stmt) if isinstance(node, ast.Call)
                     and (helper := facts.resolve_def(node.func, node)) is not None
                     for loop in walk_same_scope(helper) if isinstance(loop, (ast.For, ast.While, ast.AsyncFor))]
        if not rollouts or any(hot.trains(loop) for loop in rollouts) \
                or not any(_steps_an_environment(facts, loop) for loop in rollouts):
            return False  # (an inner loop that only gathers a batch is part of every step)
    return True


def _steps_an_environment(facts: ModuleFacts, loop: ast.AST) -> bool:
    """The loop plays an episode: it steps an environment (``env.step(action)``,
    ``car.step_dynamics(...)``), itself or through a def of the file (``play_one_step(env, obs,
    epsilon)``, ``vista_step(action)``)."""
    for node in walk_same_scope(loop):
        if not isinstance(node, ast.Call):
            continue
        if _an_environment_step(node):
            return True
        helper = facts.resolve_def(node.func, node) if isinstance(node.func, (ast.Name, ast.Attribute)) else None
        if helper is not None and any(isinstance(inner, ast.Call) and _an_environment_step(inner)
                                      for inner in walk_same_scope(helper)):
            return True
    return False


def _an_environment_step(call: ast.Call) -> bool:
    """``env.step(action)`` (Gym's convention) or ``car.step_dynamics(...)``."""
    return isinstance(call.func, ast.Attribute) and (call.func.attr == "step" or call.func.attr.startswith("step_"))


def _holds(stmt: ast.stmt, node: ast.AST) -> bool:
    return any(inner is node for inner in ast.walk(stmt))


def _branch_that_breaks(facts: ModuleFacts, call: ast.AST, loop: ast.AST) -> ast.If | None:
    """The ``if`` of ``loop``'s body (not of a loop inside it) that holds ``call`` and ends with
    ``break``: it runs once, when the loop ends (an episode's last step)."""
    for ancestor in facts.ancestors(call):
        if ancestor is loop:
            return None
        if isinstance(ancestor, ast.If) and ancestor.body and isinstance(ancestor.body[-1], ast.Break) \
                and any(_holds(stmt, call) for stmt in ancestor.body):
            loops = facts.enclosing_loops(ancestor)
            return ancestor if loops and loops[0] is loop else None
    return None


def _in_own_loop(facts: ModuleFacts, node: ast.AST) -> bool:
    """``node`` is inside a loop of its own function (not only a loop around a call of it)."""
    return bool(facts.enclosing_loops(node))


def _optimizer_passed_in(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The parameter that ``fn`` applies gradients with (``def update_D(X, net_D, trainer_D):
    trainer_D.apply_gradients(...)``): each caller may pass a new optimizer."""
    params = parameter_names(fn)
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in OPTIMIZER_STEPS \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in params:
            return node.func.value.id
    return None


def _made_per_run(ctx: RuleContext, fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> bool:
    """A caller of ``fn`` passes, as ``param``, an optimizer it creates itself (``trainer_D =
    Adam(lr)`` in ``train(...)``), and that caller may run more than once: it is called from
    several places or a loop, or it lives in a notebook, whose cells are run again."""
    facts = ctx.facts
    for call in facts.calls_by_def.get(fn, []):
        arg = argument_for(call, fn, param)
        caller = facts.enclosing_function(call)
        if not isinstance(arg, ast.Name) or caller is None or arg.id not in facts.assignments_in(caller):
            continue
        if (ctx.path or "").endswith(".ipynb") or len(facts.calls_by_def.get(caller, [])) > 1 \
                or facts.is_called_repeatedly(caller):
            return True
    return False


def _deliberately_eager(facts: ModuleFacts, node: ast.AST) -> bool:
    """Inside an ``if`` that chooses eager execution on purpose (``if FLAGS.mode == "eager_tf":``,
    ``if run_eagerly:``): a debugging path beside a graph one."""
    for ancestor in facts.ancestors(node):
        if isinstance(ancestor, ast.If) and "eager" in ast.unparse(ancestor.test).lower():
            return True
    return False
