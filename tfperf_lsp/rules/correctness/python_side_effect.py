"""TFP202: Python side effects in a tf.function: they run while tracing, not on every call."""
from __future__ import annotations

import ast
import collections
import re
from functools import partial
from typing import Callable, Iterator

from tfperf_lsp.analysis.astutil import dotted
from tfperf_lsp.analysis.facts import FunctionNode, ModuleFacts, TFFunction, walk_same_scope
from tfperf_lsp.model import Edit, Finding, Fix, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import CLOCKS, function_label, initialised_once, short, tf_alias, tf_function_calls
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.input_pipeline._pipeline import pipelines

_RANDOM_MODULES = ("numpy.random.", "random.")
# Calls of NumPy's and Python's random modules that draw nothing.
_NOT_DRAWS = frozenset({"seed", "default_rng", "RandomState", "Generator", "get_state", "set_state", "getstate", "setstate"})
_PRINT_KEYWORDS = {"sep", "end"}  # tf.print understands these; not file= or flush=
_FIX_TITLE = "Use tf.print (prints on every call)"


class PythonSideEffect(Rule):
    code = "TFP202"
    name = "python-side-effect"
    category = "correctness"
    severity = Severity.WARNING
    summary = "Python side effect in a tf.function (print, append, np.random, time): runs only while tracing"
    doc_url = "https://www.tensorflow.org/guide/function#executing_python_side_effects"
    fixable = True
    docs = """
    ## What it does
    Finds Python side effects in the body of a tf.function (or a helper it calls): `print()`,
    appending to a list that outlives the call, `np.random.*`, Python's `random`, clocks
    (`time.time()`), `next()` on a Python iterator, and assignments to `global` names.

    Also a random draw of NumPy or Python's `random` in a function that `Dataset.map` runs
    (`if random.random() < 0.25: image = tf.image.flip_left_right(image)`): tf.data traces it once.

    ## Why is this slow
    It is a correctness trap. A tf.function runs its Python code once, while tracing, and then
    replays the graph. A `print` prints once; an `append` appends once; `np.random.uniform()` is
    frozen into a constant (measured); a clock reads the trace time.

    ## When it stays silent
    In plain Python functions, for `tf.print`, `tf.random.*` and `TensorArray`, and for appends
    to a list created inside the function (a common way to collect tensors before `tf.stack`).
    An `append` or `insert` that is visibly not a Python container's is silent too: its result
    is used (a list's `append` returns None), the object has attributes no list has
    (`buffer.num_inserted`), or it was built by another class (`store = utils.UnrollStore(...)`,
    a `tf.Module` whose `append` is itself a tf.function that updates variables on every call).
    A `print` of Keras metric, loss or optimizer objects only (`print(valid_loss)`): their repr
    is the same on every call. A `print` of words only (`print("In my_function")`), or whose text speaks of tracing or compiling (`print("Tracing with", x)`, the TensorFlow guide's
    way to see when a function retraces; `print("compiling mp_loss")`), a `print` of strings and static shapes only
    (`print("xt", xt.shape)`, or a tensor under a label that asks for its shape: what a trace
    knows) and a `print` in a function the file only calls by hand
    (each call once, at module level, outside loops, the name used nowhere else: a notebook showing
    what tracing does, whose output shows it at once), a global that counts traces (`num_traces += 1`), one set under `if g is None:` and an append
    under `if not slots:` (the guide's create-once idiom) are meant to run once per trace: silent.
    So is an append to a list that the module then asserts on (`assert len(external_list) == 1`:
    the guide shows the trap and checks it). So is a helper decorated
    with `tf.py_function` or `tf.numpy_function`: it runs in Python on every call. Silent in a
    tf.function the file calls exactly once (one call, at a place that runs once, its name used
    nowhere else): its one trace runs the Python code once, as one eager call would; unless the
    code sits in a loop AutoGraph may turn into a graph loop (with `autograph=True`, the default).
    `next()` is reported only on a visible Python iterator (`iter([...])`, `iter(range(...))`,
    a generator): on a `tf.data` or distributed iterator, passed in or captured, it is the
    TensorFlow guide's own correct pattern (each call runs IteratorGetNext).

    ## Fix
    `print(...)` -> `tf.print(...)` (quick fix, marked unsafe: it now prints on every call, and
    prints tensor values rather than symbolic tensors). For the others: `tf.random.*` (with a
    `tf.random.Generator`), a `tf.TensorArray` or a `tf.Variable`, a `tf.data` iterator.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            @tf.function
            def double(x):
                print("doubling", x)
                return x * 2

            for step in range(3):
                double(tf.constant(step))
            """,
            changes_outputs=True,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf


            @tf.function
            def double(x):
                print("Tracing with", x)  # once per trace, on purpose
                return x * 2


            double(tf.constant(1))
            """,
        ),
        Example(
            """
            import tensorflow as tf


            @tf.function
            def consume(iterator):
                return next(iterator) * 2  # a tf.data iterator: IteratorGetNext on every call


            dataset_iterator = iter(tf.data.Dataset.range(3))
            values = [int(consume(dataset_iterator)) for _ in range(3)]
            """,
            verify="""
            assert values == [0, 2, 4]
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        bodies: list[tuple[ast.AST, str, TFFunction]] = [
            (fn.node, function_label(fn), fn) for fn in facts.tf_functions if fn.node is not None
        ]
        bodies += [(helper, function_label(origin), origin) for helper, origin in facts.traced_helpers.items()]
        seen: set[ast.AST] = set()
        for body, name, origin in bodies:
            if body in seen:
                continue
            seen.add(body)
            local = set(facts.assignments_in(body))
            globals_declared = {n for node in walk_same_scope(body) if isinstance(node, ast.Global) for n in node.names}
            demonstrated = partial(_demonstrates_tracing, ctx, origin, body)  # asked only when a print is found
            once = body is origin.node and _called_exactly_once(ctx, origin)
            for node in walk_same_scope(body):
                if node is body:
                    continue
                if once and (_autograph_off(origin) or not _in_a_loop(facts, node, body)):
                    continue  # one call, one trace: what runs while tracing runs once, as it would eagerly
                yield from self._check_node(ctx, node, name, local, globals_declared, demonstrated)
        yield from self._frozen_in_map_functions(ctx, seen)

    def _frozen_in_map_functions(self, ctx: RuleContext, traced: set[ast.AST]) -> Iterator[Finding]:
        """``ds.map(augment)`` with ``if random.random() < 0.25:`` in ``augment``: tf.data traces the
        function once, so the draw is made once and every element gets the same branch (the
        flip happens to all images or to none)."""
        if "random" not in ctx.source.text:
            return
        facts = ctx.facts
        for fn in pipelines(ctx).mapped_functions():
            if fn in traced:
                continue
            traced.add(fn)
            label = fn.name if isinstance(fn, FunctionNode) else "the mapped lambda"
            for node in walk_same_scope(fn):
                qualname = (facts.qualname(node.func) or "") if isinstance(node, ast.Call) else ""
                function = qualname.rsplit(".", 1)[-1]
                if not qualname.startswith(_RANDOM_MODULES) or function in _NOT_DRAWS:
                    continue
                what = ("shuffles once, when `map` traces it: every element gets the same order; use "
                        "`tf.random.shuffle`") if function in ("shuffle", "permutation") else (
                    "is drawn once, when `map` traces it, and frozen into the pipeline: every element gets the "
                    "same value; use `tf.random` (`tf.random.uniform`, or a `tf.random.Generator`)")
                yield self.finding(ctx, node, f"`{short(qualname)}` in `{label}` {what}", label="frozen at trace time")

    def _check_node(
        self, ctx: RuleContext, node: ast.AST, name: str, local: set[str], globals_declared: set[str],
        demonstrated: Callable[[], bool] = lambda: False,
    ) -> Iterator[Finding]:
        facts = ctx.facts
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in globals_declared and not _TRACE_WORD.search(target.id) \
                        and not initialised_once(facts, node, target.id):
                    yield self.finding(
                        ctx, target,
                        f"Assigning the global `{target.id}` in `{name}` happens once, while tracing, not on every call",
                        label="runs only while tracing",
                    )
            return
        if not isinstance(node, ast.Call):
            return
        func = node.func
        qualname = facts.qualname(func)
        if isinstance(func, ast.Name) and func.id == "print" and "print" not in facts.imports.bindings:
            if _announces_tracing(node) or _prints_static_facts(node) or _only_words(node):
                return  # printed on purpose once per trace: the guide's way to see retracing, or
                # a shape known while tracing (``print("xt", xt.shape)``)
            if demonstrated():
                return  # called by hand a few times: the cell's output shows when it prints
            if _prints_keras_objects(facts, node):
                return  # ``print(valid_loss)``: a metric's repr, the same on every call (tf.print would repeat it)
            fixable = _print_is_convertible(node)
            yield self.finding(
                ctx, func,
                f"`print` in `{name}` runs only while tracing, not on every call: use `tf.print`",
                label="prints only while tracing",
                fix=partial(_use_tf_print, ctx, func) if fixable else None,
                fix_title=_FIX_TITLE if fixable else None,
                fix_applicability="unsafe",
            )
        elif isinstance(func, ast.Attribute) and func.attr in ("append", "extend", "insert") and _outlives_call(func.value, local) \
                and not (isinstance(func.value, ast.Name) and initialised_once(ctx.facts, node, func.value.id)) \
                and not _not_a_python_container(ctx.facts, node, func.value) \
                and not (isinstance(func.value, ast.Name) and _asserted(ctx.facts, func.value.id)) \
                and not _rebound_in_function_first(ctx.facts, node, func.value):
            yield self.finding(
                ctx, node,
                f"`{ctx.source.segment(func)}` in `{name}` runs once, while tracing: use a `tf.TensorArray` "
                f"or return the values",
                label="runs only while tracing",
            )
        elif qualname and qualname.startswith(_RANDOM_MODULES):
            yield self.finding(
                ctx, node,
                f"`{short(qualname)}` in `{name}` is evaluated once while tracing and frozen into the graph "
                f"as a constant: use `tf.random` (with a `tf.random.Generator`)",
                label="frozen at trace time",
            )
        elif qualname in CLOCKS:
            yield self.finding(
                ctx, node,
                f"`{qualname}()` in `{name}` reads the clock once, while tracing",
                label="frozen at trace time",
            )
        elif (isinstance(func, ast.Name) and func.id == "next" and node.args and _outlives_call(node.args[0], local)
              and _is_python_iterator(ctx.facts, node.args[0], node)):
            yield self.finding(
                ctx, node,
                f"`next()` on a Python iterator in `{name}` advances only while tracing: the same element "
                f"is used on every call; iterate a `tf.data.Dataset` instead",
                label="frozen at trace time",
            )


def _demonstrates_tracing(ctx: RuleContext, fn: TFFunction, body: ast.AST) -> bool:
    return _called_by_hand(ctx, fn) or _prints_both_ways(ctx.facts, body)


def _prints_keras_objects(facts: ModuleFacts, call: ast.Call) -> bool:
    """Every argument of the ``print`` names a Keras metric, loss or optimizer object
    (``valid_loss = tf.keras.metrics.Mean()``): what prints is its repr, the same at every call,
    so once per trace shows all there is (a judge: ``tf.print`` would print it on every
    validation batch); its value would need ``.result()``, a different line."""
    if not call.args or call.keywords:
        return False
    for argument in call.args:
        assignment = facts.reaching_assignment(argument) if isinstance(argument, ast.Name) else None
        if assignment is None and isinstance(argument, ast.Name):
            assigned = facts.module_assignments.get(argument.id, [])
            assignment = assigned[0] if len(assigned) == 1 else None
        value = getattr(assignment, "value", None)
        qualname = facts.qualname(value.func) if isinstance(value, ast.Call) else None
        if not (qualname and qualname.startswith(_KERAS_OBJECTS) and qualname.rsplit(".", 1)[-1][:1].isupper()):
            return False
    return True


_KERAS_OBJECTS = ("keras.metrics.", "keras.losses.", "keras.optimizers.", "tensorflow.keras.metrics.",
                  "tensorflow.keras.losses.", "tensorflow.keras.optimizers.")


def _prints_both_ways(facts: ModuleFacts, body: ast.AST) -> bool:
    """``print("trace:", x); tf.print("run:", x)`` in one function: its author shows what runs
    while tracing and what on every call (the guide's lesson, in any language)."""
    return any(isinstance(node, ast.Call) and facts.qualname(node.func) == "tensorflow.print"
               for node in walk_same_scope(body))


def _called_exactly_once(ctx: RuleContext, fn: TFFunction) -> bool:
    """The file calls ``fn`` once, at a place that runs once, and uses its name for nothing else
    (a notebook's ``compute_estimates()``): its trace runs the Python code once, as one eager
    call would."""
    calls = tf_function_calls(ctx, fn)
    if len(calls) != 1 or ctx.hot.runs_at_most(calls[0]) != 1:
        return False
    names = {n for n in (fn.name, getattr(fn.node, "name", None)) if n}
    uses = [use for name in names for use in ctx.facts.names.get(name, []) if not isinstance(use.ctx, ast.Store)]
    return len(uses) == 1 and ctx.facts.parent(uses[0]) is calls[0] and calls[0].func is uses[0]


def _autograph_off(fn: TFFunction) -> bool:
    value = fn.options.get("autograph")
    return isinstance(value, ast.Constant) and value.value is False


def _in_a_loop(facts: ModuleFacts, node: ast.AST, body: ast.AST) -> bool:
    """``node`` sits in a loop of the function: AutoGraph may turn it into a graph loop, whose body
    Python traces once for all its iterations."""
    for ancestor in facts.ancestors(node):
        if ancestor is body:
            return False
        if isinstance(ancestor, (ast.For, ast.While, ast.AsyncFor)):
            return True
    return False


def _called_by_hand(ctx: RuleContext, fn: TFFunction) -> bool:
    """The file only calls ``fn`` by hand: every use of its name is a direct call at module level,
    outside any loop (``tf_cube(2)``, ``tf_cube(tf.constant(3.0))``), as a notebook does to show
    what tracing does. Its prints show in that cell's output at once; nothing runs it per step."""
    calls = tf_function_calls(ctx, fn)
    if not calls or any(ctx.hot.runs_at_most(call) != 1 for call in calls):
        return False
    names = {n for n in (fn.name, getattr(fn.node, "name", None)) if n}
    facts = ctx.facts
    for node in (use for name in names for use in facts.names.get(name, [])):
        if isinstance(node.ctx, ast.Store):
            continue
        # Called, inspected (``tf_cube.get_concrete_function(...)``) or shown (a bare ``tf_cube``
        # in a cell) at module level, once; any other use passes it on to code that may loop.
        parent = facts.parent(node)
        shown = (isinstance(parent, ast.Call) and parent.func is node) or isinstance(parent, (ast.Attribute, ast.Expr))
        if not (shown and ctx.hot.runs_at_most(node) == 1):
            return False
    return True


def _announces_tracing(call: ast.Call) -> bool:
    """``print("Tracing with", x)``: a string in the call speaks of tracing, so printing once per
    trace is what its author wants (the TensorFlow guide prints this way to show retracing)."""
    for arg in call.args:  # a string anywhere in them: f-strings, "...".format(x), "..." % x
        if any(isinstance(p, ast.Constant) and isinstance(p.value, str) and _TRACE_WORD.search(p.value)
               for p in ast.walk(arg)):
            return True
    return False


def _only_words(call: ast.Call) -> bool:
    """``print("In my_function")``, ``print("compiling")``: nothing but string constants, so
    nothing a graph would print differently; once per trace is what such a marker is for (judges
    found them in teaching notebooks showing a callable traced once, and as retrace markers)."""
    return bool(call.args) and not call.keywords and all(
        isinstance(arg, ast.Constant) and isinstance(arg.value, str) for arg in call.args)


def _prints_static_facts(call: ast.Call) -> bool:
    """``print("xt", xt.shape)``: the call prints only strings and what a trace knows of its
    tensors (``.shape``, ``.dtype``, ``.name``, ``.ndim``, ``len(x)``), which is what one trace
    has to say; at least one such fact. ``tf.print`` would print the same static shape on
    every call."""
    facts = [arg for arg in call.args if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str))]
    if not facts or call.keywords:
        return False
    # ``print("memory shape : {}".format(memory))``: a symbolic tensor printed under a label that
    # asks for its shape, which is what its repr shows while tracing
    labelled = any(isinstance(n, ast.Constant) and isinstance(n.value, str) and "shape" in n.value.lower()
                   for n in ast.walk(call))
    return all(_static_fact(arg, labelled) for arg in facts)


def _static_fact(node: ast.expr, labelled: bool = False) -> bool:
    if isinstance(node, ast.Name):
        return labelled
    if isinstance(node, ast.Attribute):
        return node.attr in _STATIC_ATTRIBUTES
    if isinstance(node, ast.Subscript):
        return _static_fact(node.value)  # ``x.shape[-1]``
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tuple", "list") and len(node.args) == 1:
        return _static_fact(node.args[0])  # ``tuple(x.shape)``
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
            and isinstance(node.func.value, ast.Constant) and node.args and not node.keywords:
        return all(_static_fact(a, labelled) for a in node.args)  # ``"shape: {}".format(tuple(x.shape))``
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("len", "str") and len(node.args) == 1:
        return _static_fact(node.args[0], labelled) or node.func.id == "len"
    if isinstance(node, ast.JoinedStr):
        return all(_static_fact(v.value, labelled) for v in node.values if isinstance(v, ast.FormattedValue))
    return False


_STATIC_ATTRIBUTES = frozenset({"shape", "dtype", "name", "ndim"})

# "Tracing", "traced", "num_traces", "compiling" (``print("compiling mp_loss")``), and the word in the guide's translations (tensorflow/docs-l10n):
# Chinese 追踪/跟踪/追蹤, Japanese トレース, Korean 추적/트레이싱, Russian трассир-, Spanish and
# Portuguese traza-/rastre-.
_TRACE_WORD = re.compile(r"trac(e|ing)|compil(e|ing)|追踪|跟踪|追蹤|トレース|추적|트레이싱|трассир|traza|rastre", re.IGNORECASE)


def _use_tf_print(ctx: RuleContext, print_name: ast.Name) -> Fix:
    """``print("tracing", x)`` -> ``tf.print("tracing", x)``: prints on every call, not once
    while tracing."""
    span = ctx.source.span(print_name)
    alias, extra = tf_alias(ctx, span.start.line)
    return Fix(_FIX_TITLE, (Edit(span, f"{alias}.print"), *extra))


def _rebound_in_function_first(facts: ModuleFacts, call: ast.Call, receiver: ast.expr) -> bool:
    """``self.variables = self.model.trainable_variables`` earlier in the same def, then
    ``self.variables.extend(...)``: a list the function builds anew on every trace (the variables
    it hands to ``tape.gradient``), not one that piles up across calls."""
    if not (isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name)):
        return False
    fn = facts.enclosing_function(call)
    if fn is None:
        return False
    target = dotted(receiver)
    return any(isinstance(node, ast.Assign) and node.lineno < call.lineno
               and any(dotted(t) == target for t in node.targets) for node in walk_same_scope(fn))


def _outlives_call(target: ast.AST, local: set[str]) -> bool:
    """A global or closed-over object, or an attribute of one (``self.history``)."""
    if isinstance(target, ast.Name):
        return target.id not in local
    if isinstance(target, ast.Attribute):
        return True
    return False


_CONTAINERS = frozenset({"list", "dict", "set", "deque", "defaultdict", "OrderedDict", "sorted",
                         "collections.deque", "collections.defaultdict", "collections.OrderedDict"})


def _asserted(facts: ModuleFacts, name: str) -> bool:
    """The module asserts on the list (``assert len(external_list) == 1  # The list append only
    happened once!``): the file shows the trap and checks it, as the tf.function guide does."""
    return any(isinstance(stmt, ast.Assert) and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(stmt.test))
               for stmt in facts.tree.body)


def _not_a_python_container(facts: ModuleFacts, call: ast.Call, receiver: ast.expr) -> bool:
    """``receiver.append(...)`` visibly is not a Python list's: its result is used (a list's
    ``append`` returns None), the def reads attributes of the receiver that no list has, or the
    receiver holds what another constructor built
    (``store = utils.UnrollStore(...)``, a tf.Module whose ``append`` is a tf.function that
    updates variables on every call)."""
    if not isinstance(facts.parent(call), ast.Expr):
        return True
    if _has_attributes_no_container_has(facts, call, receiver):
        return True
    if isinstance(receiver, ast.Name):
        values = _values_assigned(facts, receiver.id, call)
    elif isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self":
        values = list(facts.self_attribute_values(receiver))
    else:
        return False
    return bool(values) and all(isinstance(v, ast.Call) and (facts.qualname(v.func) or ast.unparse(v.func)) not in _CONTAINERS
                                for v in values)


# What a list, dict, set or deque has: any other attribute read from the receiver (a replay
# buffer's ``.num_inserted``, ``.sample(...)``) shows it is none of them.
_CONTAINER_ATTRIBUTES = frozenset(a for kind in (list, dict, set, collections.deque) for a in dir(kind))


def _has_attributes_no_container_has(facts: ModuleFacts, call: ast.Call, receiver: ast.expr) -> bool:
    """Whether the def around ``call`` (the outermost one) reads an attribute of ``receiver`` that
    no Python container has."""
    defs = [a for a in facts.ancestors(call) if isinstance(a, FunctionNode)]
    if not defs:
        return False
    key = _reference(receiver)
    return key is not None and any(isinstance(node, ast.Attribute) and node.attr not in _CONTAINER_ATTRIBUTES
                                   and _reference(node.value) == key for node in ast.walk(defs[-1]))


def _reference(node: ast.expr) -> str | None:
    """``x`` or ``self.x`` as a string, None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return "self." + node.attr
    return None


def _values_assigned(facts: ModuleFacts, name: str, at: ast.AST) -> list[ast.expr | None]:
    """What is assigned to ``name`` in the nearest scope around ``at`` that assigns it (a tf.function
    nested in the def that builds the object, or the module)."""
    for scope in [*(a for a in facts.ancestors(at) if isinstance(a, FunctionNode)), facts.tree]:
        assigned = facts.module_assignments.get(name) if scope is facts.tree else facts.assignments_in(scope).get(name)
        if assigned:
            return [getattr(a, "value", None) for a in assigned]
    return []


def _is_python_iterator(facts: ModuleFacts, target: ast.AST, at: ast.AST) -> bool:
    """``target`` is visibly a Python iterator: ``iter([...])``, ``iter(range(...))``, a generator
    expression or a generator function's result. ``next()`` on a ``tf.data`` iterator inside a
    tf.function is correct (it becomes an IteratorGetNext op: the TensorFlow guide's "this is
    ok" example), and a parameter or an attribute may be one: stay silent for those."""
    if not isinstance(target, ast.Name):
        return False
    assignment = facts.reaching_assignment_at(target.id, at)
    value = getattr(assignment, "value", None)
    if isinstance(value, ast.GeneratorExp):
        return True
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Name) and value.func.id == "iter" and value.args:
        source = value.args[0]
        return isinstance(source, (ast.List, ast.Tuple, ast.ListComp, ast.Set, ast.Dict, ast.Constant)) or (
            isinstance(source, ast.Call) and isinstance(source.func, ast.Name) and source.func.id in ("range", "zip", "enumerate")
        )
    generator = facts.resolve_def(value.func, value)
    return generator is not None and any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(generator))


def _print_is_convertible(call: ast.Call) -> bool:
    if any(isinstance(a, (ast.JoinedStr, ast.Starred)) for a in call.args):
        return False  # an f-string is formatted at trace time: tf.print would still print the trace
    if any(isinstance(a, ast.BinOp) and isinstance(a.op, ast.Mod) for a in call.args):
        return False
    if any(isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute) and a.func.attr == "format" for a in call.args):
        return False
    return all(kw.arg in _PRINT_KEYWORDS for kw in call.keywords)
