"""Facts several rules derive from ModuleFacts, computed once per analysis (cached on the context)."""
from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TypeGuard

from tfperf_lsp.analysis.astutil import call_arguments, first_line, int_value, keyword
from tfperf_lsp.analysis.dataflow import ParameterUses, argument_for_parameter, classify_parameter
from tfperf_lsp.analysis.facts import FunctionNode, ModuleFacts, TFFunction, argument_for, parameter_names, walk_same_scope
from tfperf_lsp.analysis.models import (calls_pretrained_model, creates_model, definition_builds_on_pretrained,
                                        holds_pretrained, is_model_name)
from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.model import Edit, Fix, Pos, Span
from tfperf_lsp.rules.context import RuleContext


@dataclass
class Callee:
    """A tf.function a call site reaches, and the module that defines it."""

    fn: TFFunction
    facts: ModuleFacts
    path: str | None  # None: the same file


@dataclass
class LoopCall:
    call: ast.Call
    loops: list[ast.AST]
    callee: Callee


def tf_function_called(ctx: RuleContext, call: ast.Call) -> Callee | None:
    local = ctx.facts.resolve_tf_function(call.func, call)
    if local is not None:
        return Callee(local, ctx.facts, None)
    if ctx.workspace is not None and isinstance(call.func, ast.Name):
        remote = ctx.workspace.resolve_imported_tf_function(ctx.facts, call.func, ctx.path)
        if remote is not None:
            ctx.dependencies.add(remote.path)
            return Callee(remote.fn, remote.facts, remote.path)
    return None


def tf_function_calls(ctx: RuleContext, fn: TFFunction) -> list[ast.Call]:
    """The calls in this file that name the local tf.function ``fn`` (``step(x)``,
    ``self.step(x)``), in source order; one index per analysis, shared by every rule."""
    return ctx.derived(_index_tf_function_calls).get(id(fn), [])


def _index_tf_function_calls(ctx: RuleContext) -> dict[int, list[ast.Call]]:
    found: dict[int, list[ast.Call]] = {}
    names = _local_tf_function_names(ctx.facts)
    for call in ctx.facts.calls_named(*names):
        if not _may_name(call.func, names, set()):
            continue
        fn = ctx.facts.resolve_tf_function(call.func, call)
        if fn is not None:
            found.setdefault(id(fn), []).append(call)  # keyed by identity: TFFunction is unhashable
    return found


def _local_tf_function_names(facts: ModuleFacts) -> set[str]:
    """The names a call can use for a tf.function of this file: its assigned name
    (``step = tf.function(f)``) or its def's name (``@tf.function def step``)."""
    return {fn.name for fn in facts.tf_functions if fn.name} | {fn.node.name for fn in facts.tf_functions if fn.node}


def _may_name(func: ast.AST, local: set[str], imported: set[str]) -> bool:
    """Whether a callee can resolve to a tf.function (see ``tf_function_called``): checking the
    name first skips the scope walks for the great majority of calls."""
    if isinstance(func, ast.Name):
        return func.id in local or func.id in imported
    return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls") and func.attr in local)


_KERAS_LAYER_MODULES = ("keras.layers.", "tensorflow.compat.v1.keras.layers.")


def calls_pretrained(ctx: RuleContext, body: ast.AST) -> bool:
    """``body`` (a step, a call) calls a model or a loss built on a pretrained network
    (``calls_pretrained_model``: in this file, through its helpers and its class's methods), or one
    that a def or class of another file of the project builds on one (``model =
    RetinaFaceModel(cfg)`` with ``from modules.models import RetinaFaceModel``, whose backbone is
    ``keras.applications``' ResNet50)."""
    also = partial(built_on_imported_pretrained, ctx) if ctx.workspace is not None else None
    return calls_pretrained_model(ctx.facts, body, also=also)


def holds_pretrained_model(ctx: RuleContext, expr: ast.expr, depth: int = 1) -> bool:
    """``expr`` (``model``, ``self.model``) holds a network that is or wraps a pretrained one,
    built in this file (``holds_pretrained``) or by a builder imported from the project; or
    ``expr`` is a parameter of a def that every call in the file passes such a network
    (``train_and_save_model(model, ...)`` with ``model`` built on DenseNet201)."""
    if holds_pretrained(ctx.facts, expr) or built_on_imported_pretrained(ctx, expr):
        return True
    if depth == 0 or not isinstance(expr, ast.Name):
        return False
    passed = passed_at_every_call(ctx.facts, ctx.facts.enclosing_function(expr), expr.id)
    return passed is not None and all(holds_pretrained_model(ctx, value, depth - 1) for _, value in passed)


def passed_at_every_call(facts: ModuleFacts, fn: ast.AST | None, name: str) -> list[tuple[ast.Call, ast.expr]] | None:
    """Each call of the def ``fn`` in this file with what it passes for the parameter ``name``,
    which ``fn`` never assigns itself; None when ``name`` is no such parameter, the file never
    calls ``fn``, or a call leaves the argument out (its default, or a ``*args``)."""
    if not isinstance(fn, FunctionNode) or name not in {a.arg for a in fn.args.posonlyargs + fn.args.args} \
            or name in facts.assignments_in(fn):
        return None
    passed: list[tuple[ast.Call, ast.expr]] = []
    for call in facts.calls_by_def.get(fn, []):
        value = argument_for(call, fn, name)
        if value is None:
            return None
        passed.append((call, value))
    return passed or None


def built_on_imported_pretrained(ctx: RuleContext, expr: ast.AST) -> bool:
    """``expr`` (``model``, ``self.model``) holds what an imported def or class of the project
    returns, and that builds on a pretrained network; or ``expr`` is such an imported name."""
    return built_by_imported(ctx, expr, definition_builds_on_pretrained)


def built_by_imported(ctx: RuleContext, expr: ast.AST, test: Callable[[ModuleFacts, ast.AST], bool]) -> bool:
    """``expr`` (``model``, ``self.model``) holds what a def or class imported from another file
    of the project returns (``model = ResNet18()``), directly or through a factory of this file
    that calls one (``model = get_model()``, whose body calls ``resnet_50()``), or ``expr`` is
    such an imported name; and ``test`` holds for that definition (its file's facts, its node)."""
    if ctx.workspace is None:
        return False
    facts = ctx.facts
    values: list[ast.AST] = [expr]
    if isinstance(expr, ast.Name):
        assignment = facts.reaching_assignment(expr)
        if isinstance(assignment, ast.Assign):
            values.append(assignment.value)
    elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        values += facts.self_attribute_values(expr)
    for value in list(values):
        factory = facts.resolve_def(value.func, value) if isinstance(value, ast.Call) else None
        if factory is not None:  # a factory of this file: the builders it calls
            values += [node.func for node in walk_same_scope(factory) if isinstance(node, ast.Call)]
    builders: set[tuple[str, str | None]] = set()
    for value in values:
        func = value.func if isinstance(value, ast.Call) else value
        if isinstance(func, ast.Name):
            builders.add((func.id, None))  # ``RetinaFaceModel(cfg)``
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            builders.add((func.value.id, func.attr))  # ``srgan.vgg_54()``, ``srgan`` a module of the project
    return any(_imported_definition_passes(ctx, name, attribute, test) for name, attribute in builders
               if name in facts.imports.bindings)


def _imported_definition_passes(ctx: RuleContext, name: str, attribute: str | None,
                                test: Callable[[ModuleFacts, ast.AST], bool]) -> bool:
    answers = ctx.derived(_imported_answers)
    key = (test, name, attribute)
    if key not in answers:
        found = _imported_node(ctx, name, attribute)  # the lookup, shared with the graph-blocker chain
        answers[key] = found is not None and test(found[0].facts, found[1])
    return answers[key]


def _imported_answers(ctx: RuleContext) -> dict[tuple[Callable[[ModuleFacts, ast.AST], bool], str, str | None], bool]:
    return {}


def keras_layer(facts: ModuleFacts, call: ast.Call) -> str | None:
    """The class name of the Keras layer ``call`` builds (``LSTM`` for ``tf.keras.layers.LSTM(8)``
    or ``tf.compat.v1.keras.layers.LSTM``), or makes a builder of (``functools.partial(LSTM,
    ...)``); None when it builds none."""
    func = call.func
    if facts.qualname(func) == "functools.partial" and call.args:
        func = call.args[0]  # ``LSTM = functools.partial(tf.keras.layers.LSTM, implementation=2)``
    qualname = facts.qualname(func) or ""
    if qualname.startswith(_KERAS_LAYER_MODULES):
        return qualname.rsplit(".", 1)[-1]
    return None


# Keras layers that convolve images: on a CPU they set a step's time (oneDNN's kernels), whatever
# is around them (TFP805 steps_per_execution).
IMAGE_CONVOLUTIONS = frozenset({"Conv2D", "Conv3D", "Conv2DTranspose", "Conv3DTranspose", "SeparableConv2D",
                                "DepthwiseConv2D"})


# Keras layers that loop over time steps: called eagerly, a model of them is slow on every call
# (a TimeGAN's 8-layer GRU: 35 eager calls 8.4 s, as a graph 0.4 s plus a 0.5 s trace).
RECURRENT_LAYERS = frozenset({"LSTM", "GRU", "SimpleRNN", "RNN", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D", "CuDNNLSTM",
                              "CuDNNGRU"})


def keras_layers_in_file(facts: ModuleFacts) -> set[str]:
    """The class names of every Keras layer the file builds somewhere (``keras_layer`` of all
    its calls, from the index of calls by name), or wraps in ``functools.partial`` to build."""
    layers = {name.rsplit(".", 1)[-1] for name in facts.calls_by_qualname if name.startswith(_KERAS_LAYER_MODULES)}
    partial_layers = (keras_layer(facts, call) for call in facts.calls_by_qualname.get("functools.partial", ()))
    return layers | {layer for layer in partial_layers if layer is not None}


def eager_loop_calls(ctx: RuleContext) -> list[LoopCall]:
    """Calls of tf.functions made from Python loops in eager code: where retracing costs."""
    return ctx.derived(_eager_loop_calls)


def _eager_loop_calls(ctx: RuleContext) -> list[LoopCall]:
    facts = ctx.facts
    local = _local_tf_function_names(facts)
    imported = set(facts.imports.bindings) if ctx.workspace is not None else set()
    found = []
    for call in facts.calls_named(*local, *imported):
        if not _may_name(call.func, local, imported):
            continue
        loops = facts.enclosing_loops(call)
        if not loops or facts.in_tf_function(call) is not None:
            continue
        callee = tf_function_called(ctx, call)
        if callee is not None:
            found.append(LoopCall(call, loops, callee))
    return found


@dataclass
class VaryingArgument:
    """An argument of a tf.function called in a loop that changes with the loop."""

    site: LoopCall
    param: str  # the parameter of the tf.function that receives it
    argument: ast.expr
    variable: str  # what it changes with (a loop variable, usually)
    uses: ParameterUses  # what the function does with the parameter

    @property
    def fn(self) -> TFFunction:
        return self.site.callee.fn


def varying_arguments(ctx: RuleContext, varies: Callable[[ModuleFacts, ast.expr, list[ast.AST]], str | None]
                      ) -> Iterator[VaryingArgument]:
    """Arguments of tf.functions called in eager loops (without an ``input_signature``) that change
    from one iteration to the next, ``varies`` says with what; left out: parameters the function
    needs as Python values (``if flag:`` in its body), which retrace by design."""
    for site in eager_loop_calls(ctx):
        fn = site.callee.fn
        if fn.node is None or "input_signature" in fn.options:
            continue
        for param in fn.params + fn.keyword_params:
            argument = argument_for_parameter(site.call, fn.params, param)
            variable = varies(ctx.facts, argument, site.loops) if argument is not None else None
            if argument is None or variable is None:
                continue
            uses = classify_parameter(site.callee.facts, fn.node, param)
            if not uses.is_static:
                yield VaryingArgument(site, param, argument, variable, uses)


def pass_as_tensor(ctx: RuleContext, argument: ast.expr, dtype: str | None, title: str | None = None) -> Fix:
    """``step(x, lr)`` -> ``step(x, tf.constant(lr, dtype=tf.float32))`` (a Python number or list
    of numbers): one trace for every value. The dtype is the one the function computes in (an
    int-typed ``tf.constant`` of a value the function uses as a float would change results)."""
    span = ctx.source.span(argument)
    text = ctx.source.slice(span)
    alias, extra = tf_alias(ctx, span.start.line)
    suffix = f", dtype={alias}.{dtype}" if dtype else ""
    return Fix(title or f"Pass {alias}.constant({text})", (Edit(span, f"{alias}.constant({text}{suffix})"), *extra))


def tf_alias(ctx: RuleContext, at_line: int) -> tuple[str, list[Edit]]:
    """How this file spells ``tensorflow`` (``tf``) for code a fix puts on ``at_line`` (0-based),
    and the import edit needed if the file imports it nowhere, or only further down (scripts
    often import as they go: module-level code above that import could not use it)."""
    imports = ctx.facts.imports
    # ``import tensorflow.compat.v1 as tf`` (or .v2) is how TF-1-era files spell TensorFlow:
    # everything a fix writes (tf.function, tf.data.AUTOTUNE, tf.einsum, ...) exists there too,
    # and adding ``import tensorflow as tf`` would shadow the file's own ``tf``.
    alias = next((a for a in (imports.alias_for(m) for m in _TF_MODULES) if a is not None), None)
    if alias is None:
        return "tf", [import_edit(ctx.source, ctx.facts.tree, "import tensorflow as tf")]
    node = ctx.facts.imports.import_nodes.get(alias)
    # The last import of the alias is remembered; a file that re-imports it block after block
    # already has one above this line (adding another each round never reached a fixed point).
    if node is not None and node.lineno - 1 >= at_line and not _imported_above(ctx.facts.tree, alias, at_line):
        return alias, [import_edit(ctx.source, ctx.facts.tree, f"import tensorflow as {alias}" if alias != "tensorflow" else "import tensorflow")]
    return alias, []


_TF_MODULES = ("tensorflow", "tensorflow.compat.v2", "tensorflow.compat.v1")


def _imported_above(tree: ast.Module, alias: str, at_line: int) -> bool:
    """Whether a module-level ``import tensorflow... as alias`` comes before ``at_line``."""
    for stmt in tree.body:
        if stmt.lineno - 1 >= at_line:
            return False
        if isinstance(stmt, ast.Import) and any(
            a.name in _TF_MODULES and (a.asname or a.name) == alias for a in stmt.names
        ):
            return True
    return False


def import_edit(source: SourceText, tree: ast.Module, statement: str) -> Edit:
    """Insert ``statement`` after the module docstring and ``__future__`` imports."""
    line = 0
    for stmt in tree.body:
        is_docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        is_future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        if (is_docstring and stmt is tree.body[0]) or is_future:
            line = stmt.end_lineno or stmt.lineno
        else:
            break
    return Edit(Span(Pos(line, 0), Pos(line, 0)), statement + "\n")


def function_label(fn: TFFunction) -> str:
    return fn.name or (fn.node.name if fn.node is not None else "tf.function")


def short(qualname: str) -> str:
    """``tensorflow.nn.relu`` -> ``tf.nn.relu`` for messages."""
    return "tf." + qualname[len("tensorflow."):] if qualname.startswith("tensorflow.") else qualname


@dataclass
class HotCall:
    """A place that calls a function many times: a call in a loop, or a ``timeit`` statement."""

    node: ast.AST  # the Call, or the string constant given to timeit
    name: str  # the called name


_TIMEIT = {"timeit.timeit", "timeit.repeat", "timeit.Timer"}


def hot_calls(ctx: RuleContext) -> list[HotCall]:
    """Eager calls by plain name made repeatedly: in loops, or in ``timeit`` statement strings."""
    return ctx.derived(_hot_calls)


def _hot_calls(ctx: RuleContext) -> list[HotCall]:
    facts = ctx.facts
    found: list[tuple[tuple[int, int, int], HotCall]] = []  # in the order of the calls they come from
    for call in facts.calls:
        if type(call.func) is ast.Name and facts.enclosing_loops(call) and facts.in_tf_function(call) is None:
            found.append(((call.lineno, call.col_offset, 0), HotCall(call, call.func.id)))
    for call in facts.calls_named("timeit", "repeat", "Timer"):
        if facts.qualname(call.func) not in _TIMEIT or facts.in_tf_function(call) is not None:
            continue
        statement = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "stmt"), None)
        if isinstance(statement, ast.Constant) and isinstance(statement.value, str):
            try:
                parsed = ast.parse(statement.value)
            except SyntaxError:
                continue
            for inner in ast.walk(parsed):
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name):
                    found.append(((call.lineno, call.col_offset, 1), HotCall(statement, inner.func.id)))
    found.sort(key=lambda item: item[0])  # stable: a timeit call's strings after the call itself
    return [hot for _, hot in found]


def graph_blockers(facts: ModuleFacts, fn: ast.AST, depth: int = 1) -> list[str]:
    """Why wrapping ``fn`` in tf.function would change what it does (empty: nothing seen),
    looking into the local helpers it calls (``depth`` levels)."""
    reasons = []
    local = set(facts.assignments_in(fn))
    if isinstance(fn, FunctionNode) and "parse_args" in facts.call_names():
        reasons += [f"takes `{name}`, an argparse.Namespace, which a tf.function cannot trace (pass what it holds)"
                    for name in (a.arg for a in fn.args.posonlyargs + fn.args.args) if _parsed_arguments(facts, fn, name)]
    changed = _python_state_changed_elsewhere(facts, fn)
    read: dict[str, str] = {}  # of those, the ones ``fn`` reads
    for node in walk_same_scope(fn):
        if not isinstance(node, ast.Call):
            if changed and self_attribute(node) and isinstance(node.ctx, ast.Load) and node.attr in changed:
                read.setdefault(node.attr, changed[node.attr])
            elif isinstance(node, ast.Global) and not _created_once(fn, node.names):
                reasons.append("assigns a global")
            elif isinstance(node, ast.AugAssign) and self_attribute(node.target) and isinstance(fn, FunctionNode):
                # ``self.train_steps += 1``: a trace runs it once, then the count stops
                reasons.append(f"counts in a Python attribute (`{_counting(node)}`: traced once, it stops counting)")
            continue
        func = node.func
        qualname = facts.qualname(func)
        # a local def, or a method of the same class (``self.compute_loss(...)``)
        helper = facts.resolve_def(func, node) if depth > 0 and (isinstance(func, ast.Name) or self_attribute(func)) else None
        passed = _passed_in(facts, fn, func.id) if depth > 0 and helper is None and isinstance(func, ast.Name) else []
        unsafe_passed = [h for h in passed if h is not fn and graph_blockers(facts, h, depth - 1)]
        if helper is not None and helper is not fn and graph_blockers(facts, helper, depth - 1):
            reasons.append(f"calls {ast.unparse(func)}() (not graph-safe)")
        elif unsafe_passed:
            reasons.append(f"calls {ast.unparse(func)}(), passed {unsafe_passed[0].name} (not graph-safe)")
        elif isinstance(func, ast.Attribute) and func.attr == "numpy":
            reasons.append("calls .numpy()")
        elif qualname in ("tensorflow.Variable", "tensorflow.compat.v2.Variable") and not _under_an_if(facts, node, fn):
            # ``Y = tf.Variable(tf.zeros(...))`` on every call (Dive into DL's corr2d): a tf.function
            # raises ValueError when a later trace creates variables
            reasons.append("creates a tf.Variable on every call (a tf.function allows it on its first trace only)")
        elif isinstance(func, ast.Attribute) and func.attr == "astype" and not qualname \
                and not _made_by_numpy(facts, fn, func.value):
            reasons.append("calls .astype() (a NumPy method: a tensor has none)")
        elif isinstance(func, ast.Attribute) and func.attr in ("reshape", "flatten") and not qualname \
                and isinstance(func.value, ast.Name) and func.value.id not in ("self", "cls") and isinstance(fn, FunctionNode) \
                and func.value.id in parameter_names(fn):
            # ``real_x.reshape(...)`` works eagerly only on a NumPy batch; a tf.function converts it to a tensor
            reasons.append(f"calls {func.value.id}.{func.attr}() on an argument (a NumPy method: a tensor has none)")
        elif isinstance(func, ast.Attribute) and func.attr in ("get_weights", "set_weights") and not qualname:
            reasons.append(f"calls .{func.attr}() (NumPy copies of the weights)")
        elif depth > 0 and helper is None and (isinstance(func, ast.Name) or self_attribute(func)) \
                and (inside := own_method_blockers(facts, func, ("call",), depth - 1)):
            # ``loss = model(batch)`` with ``model = NCFModel()``, whose call() runs np.unique
            reasons.append(f"calls {ast.unparse(func)}(), whose call() {inside[0]}")
        elif depth > 0 and isinstance(func, ast.Attribute) and (counter := _python_counter(facts, func.attr)):
            reasons.append(f"calls .{func.attr}(), which counts in a Python attribute (`{counter}`: traced once, it "
                           f"stops counting)")
        elif depth > 0 and isinstance(func, ast.Attribute) and (other := _other_object_method(facts, fn, func)) is not None \
                and (inside := graph_blockers(facts, other, depth - 1)):
            # ``self.experience.sample(batch_size)``: a replay buffer drawing with NumPy
            reasons.append(f"calls .{func.attr}(), which {inside[0]}")
        elif isinstance(func, ast.Attribute) and func.attr in _KERAS_LOOPS and not qualname:
            reasons.append(f"calls .{func.attr}() (fails in a tf.function)")
        elif isinstance(func, ast.Attribute) and func.attr == "step" and "env" in ast.unparse(func.value).lower():
            # a Gym environment steps in Python: the TensorFlow actor-critic tutorial wraps it in tf.numpy_function
            reasons.append(f"calls {ast.unparse(func)}() (a Python environment: wrap it in `tf.numpy_function`)")
        elif isinstance(func, ast.Name) and func.id in ("print", "input", "open"):
            reasons.append(f"calls {func.id}()")
        elif isinstance(func, ast.Name) and func.id in ("zip", "enumerate") \
                and (tensor := _tensor_iterated(facts, fn, node)) is not None:
            # ``for pb, t in zip(probs, adv)`` over a model's output: Python iterates the tensor,
            # which a graph refuses (OperatorNotAllowedInGraphError; AutoGraph converts only ``for x in t``)
            reasons.append(f"iterates the tensor `{tensor}` with {func.id}() (not allowed in a graph)")
        elif isinstance(func, ast.Name) and func.id in ("float", "int", "bool") and node.args \
                and not _static(facts, node.args[0]):
            reasons.append(f"converts a value with {func.id}()")
        elif qualname and qualname.split(".")[0] in ("numpy", "time", "random", "pandas") and not (
            qualname.startswith("numpy.") and not qualname.startswith("numpy.random.") and all(_static(facts, a) for a in call_arguments(node))
        ):
            reasons.append(f"calls {qualname}")
        elif isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and not (
            isinstance(func.value, ast.Name) and func.value.id in local
        ):
            reasons.append("appends to a list outside the function")
    if read:
        # ``self.fade_in_count / self.fade_in_step`` read by the step, ``self.fade_in_count += 1``
        # in step(): a trace reads the number once and keeps it
        names = " and ".join(f"`self.{name}`" for name in sorted(read))
        changers = "/".join(sorted({f"{method}()" for method in read.values()}))
        numbers = "Python numbers that" if len(read) > 1 else "a Python number that"
        reasons.append(f"reads {names}, {numbers} {changers} changes between calls (a trace keeps what it read)")
    return sorted(set(reasons))


def _made_by_numpy(facts: ModuleFacts, fn: ast.AST, value: ast.expr, depth: int = 3) -> bool:
    """``np.zeros((0, 4)).astype(...)``, or a name the function binds only to NumPy results: an
    array, whose ``astype`` works in a trace too (what NumPy computes there, it computes once).
    A few steps deep (``x = x.astype(...)`` would go round)."""
    if depth < 0:
        return False
    if isinstance(value, ast.Call):
        return (facts.qualname(value.func) or "").startswith("numpy.") or (
            isinstance(value.func, ast.Attribute) and value.func.attr == "astype"
            and _made_by_numpy(facts, fn, value.func.value, depth - 1))
    if not isinstance(value, ast.Name):
        return False
    bindings = facts.assignments_in(fn).get(value.id, [])
    return bool(bindings) and all(isinstance(b, ast.Assign) and _made_by_numpy(facts, fn, b.value, depth - 1) for b in bindings)


_NUMPY_CONSTANTS = frozenset({"numpy.pi", "numpy.e", "numpy.inf", "numpy.nan", "numpy.newaxis"})


def _static(facts: ModuleFacts, expr: ast.AST, depth: int = 2) -> bool:
    """``expr`` is known while tracing, so Python and NumPy may compute with it in a tf.function:
    a constant (``np.pi`` too), a static shape (``x.shape[1]``, ``len(x.shape)``, ``x.ndim``), arithmetic on
    those, or a name assigned one (``dims = len(t.shape)`` before ``np.arange(1, dims - 1)``)."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Attribute):
        return expr.attr in ("shape", "ndim") or facts.qualname(expr) in _NUMPY_CONSTANTS
    if isinstance(expr, ast.Subscript):
        return _static(facts, expr.value, depth)
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Name) and expr.func.id == "len":
            return True
        return isinstance(expr.func, ast.Attribute) and expr.func.attr == "as_list" and _static(facts, expr.func.value, depth)
    if isinstance(expr, ast.BinOp):
        return _static(facts, expr.left, depth) and _static(facts, expr.right, depth)
    if isinstance(expr, ast.UnaryOp):
        return _static(facts, expr.operand, depth)
    if isinstance(expr, (ast.Tuple, ast.List)):
        return all(_static(facts, e, depth) for e in expr.elts)
    if isinstance(expr, ast.Name) and depth > 0:
        # not a list or tuple through a name: ``rewards = []`` is then appended to
        assignment = facts.reaching_assignment(expr)
        return isinstance(assignment, ast.Assign) and len(assignment.targets) == 1 \
            and isinstance(assignment.targets[0], ast.Name) and not isinstance(assignment.value, (ast.List, ast.Tuple)) \
            and _static(facts, assignment.value, depth - 1)
    return False


def _under_an_if(facts: ModuleFacts, node: ast.AST, fn: ast.AST) -> bool:
    """``node`` sits under an ``if`` inside ``fn`` (``if self.v is None: self.v = tf.Variable(...)``:
    the create-once idiom a tf.function accepts)."""
    for ancestor in facts.ancestors(node):
        if ancestor is fn:
            return False
        if isinstance(ancestor, (ast.If, ast.IfExp)):
            return True
    return False


def _created_once(fn: ast.AST, names: list[str]) -> bool:
    """Every assignment in ``fn`` to the globals ``names`` is under ``if name is None:``: an object
    made on the first call and kept (``_b_acc = tf.keras.metrics.BinaryAccuracy()``), which a
    tf.function makes on its first trace, as it may."""
    for node in walk_same_scope(fn):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            if isinstance(target, ast.Name) and target.id in names and not _under_is_none(fn, node, target.id):
                return False
    return True


def _under_is_none(fn: ast.AST, assignment: ast.AST, name: str) -> bool:
    for node in walk_same_scope(fn):
        if isinstance(node, ast.If) and any(assignment is s for s in node.body):
            test = node.test
            return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == name \
                and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None
    return False


def imported_blockers(ctx: RuleContext, scope: ast.AST) -> list[str]:
    """What is not graph-safe (``graph_blockers``, in that file) in the defs of the project's other
    files that ``scope`` calls: an imported function (``monotonic_alignment_search(...)``,
    ``utils.sample(...)``), or a method of an object made from an imported class (``gt =
    GroundTruth(cfg, batch)`` before ``gt.get_ground_truth()``; ``pck(y, t)`` with ``pck = PCK()``
    runs its ``__call__``), and one file further (``post_process.training_procedure(...)`` whose
    module builds its ground truth with NumPy in a third file). A Keras step that hands its batch
    to a NumPy helper of another module cannot be traced as it is."""
    if ctx.workspace is None or ctx.path is None:
        return []
    return _blockers_through_imports(ctx, scope, _FILES_FOLLOWED)


# How many files an import chain is followed into (the step's file excluded).
_FILES_FOLLOWED = 2


def _blockers_through_imports(site: _Site, scope: ast.AST, files: int) -> list[str]:
    if not site.facts.imports.bindings:
        return []
    reasons = set()
    for node in walk_same_scope(scope):
        if isinstance(node, ast.Call) and (callee := _imported_callee(site, node)) is not None:
            other, fn = callee
            inside = graph_blockers(other.facts, fn, depth=1)
            if not inside and files > 1:
                inside = _blockers_through_imports(other, fn, files - 1)
            if inside:
                # a random draw first: a trace would freeze it (one minibatch, sampled once)
                shown = next((reason for reason in inside if "random" in reason), inside[0])
                reasons.add(f"calls {ast.unparse(node.func)}(), which {shown}")
    return sorted(reasons)


@dataclass(frozen=True)
class _Elsewhere:
    """Another file of the project, seen from the analysis ``ctx``: its facts and path; lookups
    from it are cached on ``ctx`` and the files they read are ``ctx``'s dependencies."""

    ctx: RuleContext
    facts: ModuleFacts
    path: str

    @property
    def workspace(self):
        return self.ctx.workspace

    @property
    def dependencies(self) -> set[str]:
        return self.ctx.dependencies

    def derived(self, compute):
        return self.ctx.derived(compute)


_Site = RuleContext | _Elsewhere


def _imported_callee(ctx: _Site, call: ast.Call) -> tuple[_Elsewhere, ast.AST] | None:
    """The def of another file of the project that ``call`` runs (with that file's facts)."""
    facts = ctx.facts
    bindings = facts.imports.bindings
    func = call.func
    if isinstance(func, ast.Name):
        if func.id in bindings:
            return _imported_def(ctx, func.id, None)
        cls = _imported_class_of(ctx, func)  # ``pck(y, t)`` with ``pck = PCK()``
        return _method(cls, "__call__") or _method(cls, "call")
    if not isinstance(func, ast.Attribute):
        return None
    holder = func.value
    if isinstance(holder, ast.Name) and holder.id in bindings:
        return _imported_def(ctx, holder.id, func.attr)  # ``utils.sample(...)``
    if self_attribute(func) and (layers := _imported_classes_held(ctx, func)):
        # ``self.hist_at(query, keys)`` with ``self.hist_at = attention(...)``: its ``call``
        return _the_same([_method(cls, "__call__") or _method(cls, "call") for cls in layers])
    classes = _imported_classes_held(ctx, holder)  # ``self.replay_buffer.get_minibatch(n)``, ``gt.get_gt_values()``
    return _the_same([_method(cls, func.attr) for cls in classes or []])


def _the_same(methods: list[tuple[_Elsewhere, ast.AST] | None]) -> tuple[_Elsewhere, ast.AST] | None:
    """The one method every class that may be held defines, else None."""
    first = methods[0] if methods else None
    return first if first is not None and all(m is not None and m[1] is first[1] for m in methods) else None


def _imported_def(ctx: _Site, name: str, attribute: str | None) -> tuple[_Elsewhere, ast.AST] | None:
    found = _imported_node(ctx, name, attribute)
    return found if found is not None and isinstance(found[1], FunctionNode) else None


def imported_class_defines(ctx: RuleContext, holder: ast.expr, method: str) -> bool:
    """``holder`` (``net``, ``self.q_network``) holds an object of a class imported from another
    file of the project whose body defines ``method`` (a model class with its own ``predict``)."""
    if ctx.workspace is None or ctx.path is None:
        return False
    classes = _imported_classes_held(ctx, holder)
    return bool(classes) and all(_method(cls, method) is not None for cls in classes or [])


def _imported_classes_held(ctx: _Site, holder: ast.expr) -> list[tuple[_Elsewhere, ast.ClassDef]] | None:
    """The imported class of each object ``holder`` may hold: ``gt`` after ``gt = GT(...)``, the
    call itself (``GT(labels).get_gt_values()``), or ``self.buffer`` from every assignment of it in
    the class (``self.buffer = ReplayBuffer(...)``); None when any of them is not one."""
    if isinstance(holder, (ast.Name, ast.Call)):
        found = _imported_class_of(ctx, holder)
        return [found] if found is not None else None
    if not self_attribute(holder):
        return None
    classes = [_imported_class_of(ctx, value) if isinstance(value, ast.Call) else None
               for value in ctx.facts.self_attribute_values(holder)]
    return [cls for cls in classes if cls is not None] if classes and None not in classes else None


def _imported_class_of(ctx: _Site, holder: ast.Name | ast.Call) -> tuple[_Elsewhere, ast.ClassDef] | None:
    """The imported class whose object ``holder`` holds: ``gt`` after ``gt = GroundTruth(...)``, or
    the call itself (``GroundTruth(cfg, batch).get_ground_truth()``)."""
    value: ast.AST | None = holder
    if isinstance(holder, ast.Name):
        value = getattr(ctx.facts.reaching_assignment_at(holder.id, holder), "value", None)
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    bindings = ctx.facts.imports.bindings
    if isinstance(func, ast.Name) and func.id in bindings:
        found = _imported_node(ctx, func.id, None)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in bindings:
        found = _imported_node(ctx, func.value.id, func.attr)
    else:
        return None
    return (found[0], found[1]) if found is not None and isinstance(found[1], ast.ClassDef) else None


def _method(cls: tuple[_Elsewhere, ast.ClassDef] | None, name: str) -> tuple[_Elsewhere, ast.AST] | None:
    """The method ``name`` written in the class body (not one it inherits)."""
    if cls is None:
        return None
    home, node = cls
    method = next((s for s in node.body if isinstance(s, FunctionNode) and s.name == name), None)
    return (home, method) if method is not None else None


def _imported_node(ctx: _Site, name: str, attribute: str | None) -> tuple[_Elsewhere, ast.AST] | None:
    """The top-level def or class of another workspace file that the imported ``name`` (or its
    ``attribute``) binds, looked up once per analysis (per file asking)."""
    answers = ctx.derived(_imported_nodes)
    key = (ctx.path or "", name, attribute)
    if key not in answers:
        found = ctx.workspace.imported_definition(ctx.facts, name, ctx.path, attribute) if ctx.workspace else None
        answers[key] = None
        if found is not None:
            target, node, target_path = found
            ctx.dependencies.add(target_path)
            home = ctx.ctx if isinstance(ctx, _Elsewhere) else ctx
            answers[key] = (_Elsewhere(home, target, target_path), node)
    return answers[key]


def _imported_nodes(ctx: RuleContext) -> dict[tuple[str, str, str | None], tuple[_Elsewhere, ast.AST] | None]:
    return {}


def _tensor_iterated(facts: ModuleFacts, fn: ast.AST, call: ast.Call) -> str | None:
    """The name of an argument of ``zip(...)`` / ``enumerate(...)`` in ``fn`` that holds a tensor:
    assigned in ``fn`` from a TensorFlow op or a model call, or a parameter every call of ``fn``
    in the file passes such a value (a step passing its model's output to a loss helper)."""
    for argument in call.args:
        if isinstance(argument, ast.Name) and _holds_tensor(facts, fn, argument.id, depth=1):
            return argument.id
    return None


def _holds_tensor(facts: ModuleFacts, fn: ast.AST, name: str, depth: int) -> bool:
    assigned = facts.assignments_in(fn).get(name, [])
    if assigned:
        values = [a.value if isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)
                  else None for a in assigned]
        return all(value is not None and _makes_tensor(facts, fn, value, depth) for value in values)
    passed = passed_at_every_call(facts, fn, name) if depth > 0 else None
    return passed is not None and all(
        _makes_tensor(facts, facts.enclosing_function(call) or facts.tree, value, depth - 1) for call, value in passed)


# Where TensorFlow's ops are (``tf.nest``, ``tf.io.gfile``, ``tf.saved_model`` give Python values).
_OP_NAMESPACES = {"math", "nn", "image", "linalg", "random", "signal", "strings", "bitwise", "audio"}
# TensorFlow calls that give a Python list or tuple of tensors, which Python iterates as it is.
_LIST_RESULTS = {"unstack", "split", "gradients", "meshgrid", "dynamic_partition", "unique", "unique_with_counts",
                 "top_k", "moments", "shape_n", "py_function", "numpy_function"}


def _makes_tensor(facts: ModuleFacts, scope: ast.AST, value: ast.expr, depth: int) -> bool:
    """``value`` is a tensor: a TensorFlow op's result, a model's output (``self.actor(states)``),
    or a name of ``scope`` that holds one (``depth`` more parameter hops allowed)."""
    if isinstance(value, ast.Name):
        return _holds_tensor(facts, scope, value.id, depth)
    if not isinstance(value, ast.Call):
        return False
    parts = (facts.qualname(value.func) or "").split(".")
    if parts[0] == "tensorflow" and len(parts) in (2, 3):
        op = parts[-1]
        return (len(parts) == 2 or parts[1] in _OP_NAMESPACES) and op not in _LIST_RESULTS \
            and not op[:1].isupper()  # not tf.GradientTape(), tf.TensorArray()
    func = value.func
    if self_attribute(func):
        return any(creates_model(facts, made) for made in facts.self_attribute_values(func))
    return isinstance(func, ast.Name) and is_model_name(facts, func)


def own_method_blockers(facts: ModuleFacts, holder: ast.expr, names: tuple[str, ...], depth: int = 1) -> list[str]:
    """What is not graph-safe (``graph_blockers``) in the methods ``names`` (``call``,
    ``train_step``) of the file's class whose object ``holder`` holds: a Keras model or layer
    subclassed here (``model = NCFModel()``)."""
    for cls in facts.classes:
        methods = [s for s in cls.body if isinstance(s, FunctionNode) and s.name in names]
        if methods and facts.built_from_class(holder, cls):
            return sorted({reason for method in methods for reason in graph_blockers(facts, method, depth)})
    return []


def self_attribute(node: ast.AST) -> TypeGuard[ast.Attribute]:
    """``self.x``."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _counting(node: ast.AugAssign) -> str:
    """``self.t += ...``: how a message names a Python counter."""
    return f"{ast.unparse(node.target)} {_OPERATORS.get(type(node.op), '')}= ..."


def _other_object_method(facts: ModuleFacts, fn: ast.AST, func: ast.Attribute) -> ast.AST | None:
    """The method ``func`` names on another object (``self.experience.sample``, ``buffer.sample``):
    the one method of that name among the file's classes, not one of ``fn``'s own class."""
    if isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
        return None  # the class's own method: resolve_def follows it
    methods = facts.methods_named(func.attr)
    if len(methods) != 1:
        return None
    cls, method = methods[0]
    return None if method is fn or facts.enclosing_class(fn) is cls else method


def _python_counter(facts: ModuleFacts, method: str) -> str | None:
    """``self.t += 1.`` in the one method of this file's classes named ``method`` (a hand-written
    optimizer's ``apply_gradients``), on an attribute that is not a ``tf.Variable``: Python
    state that a tf.function updates only while tracing (its bias correction freezes)."""
    methods = facts.methods_named(method)
    if len(methods) != 1:
        return None
    cls, fn = methods[0]
    variables = _variable_attributes(facts, cls)
    for node in walk_same_scope(fn):
        if isinstance(node, ast.AugAssign) and self_attribute(node.target) and node.target.attr not in variables:
            return _counting(node)
    return None


def _variable_attributes(facts: ModuleFacts, cls: ast.ClassDef) -> set[str]:
    """The attributes ``cls`` sets to a ``tf.Variable`` (``self.t = tf.Variable(0.)``): state a
    trace updates on every call, unlike a Python number."""
    return {target.attr for node in ast.walk(cls) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call) and facts.qualname(node.value.func) == "tensorflow.Variable"
            for target in node.targets if isinstance(target, ast.Attribute)}


def _parsed_arguments(facts: ModuleFacts, fn: ast.AST | None, name: str, depth: int = 3) -> bool:
    """Every call of ``fn`` passes for ``name`` what ``parser.parse_args()`` returned, directly or
    through parameters of the defs around the calls (``train(args)`` -> ``train_step(args)``):
    an argparse.Namespace, which has no hash, so a tf.function raises on it (a judge measured it)."""
    passed = passed_at_every_call(facts, fn, name) if depth > 0 else None
    if not passed:
        return False
    for call, value in passed:
        if not isinstance(value, ast.Name):
            return False
        assignment = facts.reaching_assignment(value)
        made = getattr(assignment, "value", None)
        if isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute) and made.func.attr == "parse_args":
            continue
        if assignment is not None or not _parsed_arguments(facts, facts.enclosing_function(call), value.id, depth - 1):
            return False
    return True


def _python_state_changed_elsewhere(facts: ModuleFacts, fn: ast.AST) -> dict[str, str]:
    """The attributes of ``fn``'s class that another method of it (not ``__init__`` or ``build``)
    sets to a Python number between calls: ``self.count += 1``, ``self.layer = min(self.layer
    + 1, 3)``, ``self.count = 0``. Attribute -> the method that changes it."""
    cls = facts.enclosing_class(fn) if isinstance(fn, FunctionNode) else None
    if cls is None or facts.parent(fn) is not cls:
        return {}
    cache = facts.__dict__.setdefault("_tfperf_python_state", {})  # lives as long as one analysis
    if (cls, fn) not in cache:
        cache[(cls, fn)] = _python_state_of(facts, cls, fn)
    return cache[(cls, fn)]


def _python_state_of(facts: ModuleFacts, cls: ast.ClassDef, fn: ast.AST) -> dict[str, str]:
    variables = _variable_attributes(facts, cls)
    changed: dict[str, str] = {}
    for method in cls.body:
        if not isinstance(method, FunctionNode) or method is fn or method.name in ("__init__", "build"):
            continue
        for node in walk_same_scope(method):
            if isinstance(node, ast.AugAssign) and self_attribute(node.target) and isinstance(node.op, _NUMBER_OPERATORS):
                target = node.target
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and self_attribute(node.targets[0]) \
                    and _python_number(node.value):
                target = node.targets[0]
            else:
                continue
            if target.attr not in variables:
                changed.setdefault(target.attr, method.name)
    return changed


def _python_number(value: ast.expr) -> bool:
    """A number literal, or ``min``/``max``/``int``/``float``/``round`` of something: Python state."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (int, float)) and not isinstance(value.value, bool)
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("min", "max", "int", "float", "round")


_NUMBER_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def _passed_in(facts: ModuleFacts, fn: ast.AST, parameter: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The defs of this file that ``fn``'s callers pass as its parameter ``parameter`` (a callback:
    ``step(..., acc=accuracy)``)."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or parameter not in {
            a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}:
        return []  # ``print``, ``range``...: not a parameter, nothing passed in
    found = []
    for call in facts.calls_by_def.get(fn, []):
        value = argument_for(call, fn, parameter)
        target = facts.resolve_def(value, call) if isinstance(value, ast.Name) else None
        if target is not None:
            found.append(target)
    return found


# Keras 3 Model.predict inside a tf.function raises (AttributeError on a SymbolicTensor, measured).
_KERAS_LOOPS = frozenset({"predict", "fit", "evaluate"})


def tf_op_count(facts: ModuleFacts, fn: ast.AST) -> int:
    return sum(
        1 for n in walk_same_scope(fn)
        if isinstance(n, ast.Call) and (facts.imports.is_tensorflow(facts.qualname(n.func)) or facts.imports.is_keras(facts.qualname(n.func)))
    )


# Calls that place or name ops but run none (``with tf.device('/gpu:%i' % i):`` in a tower loop).
_PLACEMENT = frozenset({"tensorflow.device", "tensorflow.name_scope"})


def has_python_loop_with_tf_ops(facts: ModuleFacts, fn: ast.AST) -> bool:
    for node in walk_same_scope(fn):
        if isinstance(node, (ast.For, ast.While)):
            if any(isinstance(n, ast.Call) and facts.imports.is_tensorflow(q := facts.qualname(n.func)) and q not in _PLACEMENT
                   for n in ast.walk(node)):
                return True
    return False


def decorator_edit(ctx: RuleContext, fn_node: ast.FunctionDef | ast.AsyncFunctionDef, decorator: str) -> Edit:
    """Insert ``@decorator`` above a def (and above its existing decorators)."""
    first = first_line(fn_node) - 1
    indent = ctx.source.indent_of(fn_node.lineno - 1)
    return Edit(Span(Pos(first, 0), Pos(first, 0)), f"{indent}@{decorator}\n")


def tf_function_option_edit(ctx: RuleContext, fn: TFFunction, name: str, value: str) -> Edit | None:
    """``@tf.function`` -> ``@tf.function(name=value)``; ``tf.function(f, ...)`` gains ``name=value``."""
    import libcst as cst

    from tfperf_lsp.rewrite.cst import replace_in_statement, with_keyword

    if isinstance(fn.wrapper, ast.Call):
        return replace_in_statement(ctx.source, fn.stmt, fn.wrapper, cst.Call, lambda c: with_keyword(c, name, value))
    return replace_in_statement(  # a bare decorator becomes a call
        ctx.source, fn.stmt, fn.wrapper, (cst.Attribute, cst.Name), lambda d: with_keyword(cst.Call(func=d), name, value)
    )


def rename_keyword_edit(ctx: RuleContext, call: ast.Call, old: str, new: str) -> Edit | None:
    """Rename keyword ``old`` of ``call`` (a decorator's statement is its def)."""
    import libcst as cst

    from tfperf_lsp.rewrite.cst import rename_keyword, replace_in_statement

    stmt = ctx.facts.statement_of(call)
    return replace_in_statement(ctx.source, stmt, call, cst.Call, lambda c: rename_keyword(c, old, new))


# ------------------------------------------------------------------ batches of varying length
VARYING_BATCHES = ("padded_batch", "bucket_by_sequence_length", "ragged_batch")


def batches_vary_in_length(ctx: RuleContext) -> bool:
    """This file (or a module of its own folder that it imports: ``dataset.py`` beside
    ``train.py``) batches with ``padded_batch`` & co: each batch has its own length, so a
    tf.function step gets a new shape per batch."""
    return ctx.derived(_batches_vary_in_length)


def _batches_vary_in_length(ctx: RuleContext) -> bool:
    return any(
        isinstance(call.func, ast.Attribute) and not _pads_to_fixed_shapes(ctx.facts, call)
        for call in ctx.facts.calls_named(*VARYING_BATCHES)
    ) or _imported_modules_pad(ctx.facts, ctx.path)


def _pads_to_fixed_shapes(facts: ModuleFacts, call: ast.Call) -> bool:
    """``padded_batch(64, padded_shapes=([40], [40]))``: every dimension written as a number
    (or a module-level name set to one: ``padded_shapes=(AUDIO_MAXLEN, LABEL_MAXLEN)``), so
    every full batch has the same shape (the last, smaller one adds one more)."""
    if call.func.attr != "padded_batch":  # type: ignore[attr-defined]
        return False
    shapes = next((k.value for k in call.keywords if k.arg == "padded_shapes"), None)
    if shapes is None and len(call.args) >= 2:
        shapes = call.args[1]
    return shapes is not None and _literal_dimensions(facts, shapes) or _padded_to_maxlen_first(facts, call)


def _padded_to_maxlen_first(facts: ModuleFacts, call: ast.Call) -> bool:
    """The def (or module) around ``padded_batch`` pads the sequences to one length first
    (``pad_sequences(sequences, maxlen=SEQ_MAX_LEN)``): every element is that long already, so
    every batch has the same shape."""
    scope = facts.enclosing_function(call)
    nodes = walk_same_scope(scope) if scope is not None else (n for stmt in facts.tree.body for n in ast.walk(stmt))
    return any(isinstance(node, ast.Call) and (facts.qualname(node.func) or "").endswith("pad_sequences")
               and keyword(node, "maxlen") is not None for node in nodes)


def _literal_dimensions(facts: ModuleFacts, node: ast.expr) -> bool:
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_literal_dimensions(facts, e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(v is not None and _literal_dimensions(facts, v) for v in node.values)
    value = int_value(facts, node)
    return value is not None and value >= 0


_PADDING_CACHE: dict[tuple[str, float], bool] = {}


def _imported_modules_pad(facts, path: str | None) -> bool:
    """A module of this file's own folder that this file imports batches with ``padded_batch``
    (the dataset is often built in a ``dataset.py`` beside ``train.py``)."""
    if not path:
        return False
    folder = os.path.dirname(os.path.abspath(path))
    for qualname in set(facts.imports.bindings.values()):
        parts = qualname.lstrip(".").split(".")
        for depth in range(len(parts), 0, -1):
            candidate = os.path.join(folder, *parts[:depth]) + ".py"
            if os.path.isfile(candidate):
                if _pads(candidate):
                    return True
                break
    return False


def _pads(path: str) -> bool:
    try:
        key = (path, os.path.getmtime(path))
        if key not in _PADDING_CACHE:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read(2_000_000)
            _PADDING_CACHE[key] = any(word in text for word in VARYING_BATCHES)
        return _PADDING_CACHE[key]
    except OSError:
        return False


# ------------------------------------------------------------------ clocks
# Python clocks: read while tracing, a tf.function freezes their value (TFP202); read on every
# iteration around a call, they mark a benchmark of that call (TFP801).
CLOCKS = frozenset({
    "time.time", "time.time_ns", "time.perf_counter", "time.perf_counter_ns", "time.monotonic",
    "time.monotonic_ns", "time.process_time", "time.process_time_ns", "timeit.default_timer",
    "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
})


def reads_a_clock(facts: ModuleFacts, node: ast.AST) -> bool:
    """``node`` (a function, a loop, a statement) calls one of ``CLOCKS`` in its own scope."""
    return any(isinstance(n, ast.Call) and facts.qualname(n.func) in CLOCKS for n in walk_same_scope(node))


# ------------------------------------------------------------------ tf.data
# Methods of a tf.data dataset that return a new dataset (its transformations).
DATASET_TRANSFORMATIONS = frozenset({
    "map", "batch", "padded_batch", "shuffle", "filter", "prefetch", "cache", "repeat", "take", "skip", "unbatch",
    "interleave", "flat_map", "apply", "with_options", "shard", "rebatch", "ragged_batch", "bucket_by_sequence_length",
})
# Dataset constructors called as methods (``tf.data.Dataset.from_tensor_slices(...)``).
DATASET_SOURCES = frozenset({"from_tensor_slices", "from_generator"})
# Methods whose result is a dataset, or a distributed one: a loop over it runs once per batch.
# ``range`` and ``zip`` are left out: ``tf.range`` and the builtin share those names, so a
# caller checks ``tf.data.Dataset.range``/``zip`` by their qualified names.
DATASET_MAKERS = DATASET_TRANSFORMATIONS | DATASET_SOURCES | frozenset({
    "from_tensors", "list_files", "experimental_distribute_dataset", "distribute_datasets_from_function",
})


def initialised_once(facts: ModuleFacts, node: ast.AST, name: str) -> bool:
    """``node`` (an assignment to ``name``, or an ``append`` to it) sits under ``if name is
    None:`` or ``if not name:`` in its own function: the create-once idiom (the TensorFlow guide
    sets a generator or variable on the first trace only; a module fills a table lazily before
    its first use). The value is set once and never changes after."""
    for ancestor in facts.ancestors(node):
        if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        if isinstance(ancestor, ast.If) and _tests_unset(ancestor.test, name):
            return True
    return False


def _tests_unset(test: ast.expr, name: str) -> bool:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return isinstance(test.operand, ast.Name) and test.operand.id == name
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == name
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is)
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)


_COMMENTED_OUT_TF_FUNCTION = re.compile(r"^\s*#\s*@\s*(?:tf\.)?function\b")


def tf_function_commented_out(ctx: RuleContext, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A ``# @tf.function`` comment in the comment lines right above the def or its decorators:
    the author tried it and turned it off (``# @tf.function  # not working, issue 27086``), so
    "decorate it" is advice they already rejected."""
    line = first_line(fn) - 2  # 0-based, the line above
    lines = ctx.source.lines
    while line >= 0 and lines[line].lstrip().startswith("#"):
        if _COMMENTED_OUT_TF_FUNCTION.match(lines[line]):
            return True
        line -= 1
    return False
