"""TFP201: a tf.function reads a global (or ``self.x``) that is reassigned later: the traced value goes stale."""
from __future__ import annotations

import ast
import bisect
import builtins
import re
from typing import Iterator, cast

from tfperf_lsp.analysis.facts import ModuleFacts, TFFunction, parameter_names, target_names, walk_same_scope
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import function_label, graph_blockers, initialised_once, self_attribute, tf_function_calls
from tfperf_lsp.rules.context import RuleContext

_BUILTINS = frozenset(dir(builtins))
_LIVE_CONSTRUCTORS = {"tensorflow.Variable"}  # a tf.Variable is read at run time: never stale


class StaleGlobalCapture(Rule):
    code = "TFP201"
    name = "stale-global-capture"
    category = "correctness"
    severity = Severity.WARNING
    summary = "tf.function reads a global that is reassigned later: it keeps the value from tracing time"
    doc_url = "https://www.tensorflow.org/guide/function#depending_on_python_global_and_free_variables"
    docs = """
    ## What it does
    Finds module-level names read inside a tf.function that the program assigns again after
    the function is defined (at module level, or through `global` in another function). Also
    `self.x` read by a tf.function method when another method of the class calls it again and
    again and assigns `self.x` a new value (`self.pl_mean = 0.99 * self.pl_mean + ...` after
    each `self.train_step(...)`): tf.function does not trace again when an attribute changes.
    And `self.memory.size` read by a tf.function method, where `self.memory` is an object of a
    class of this file whose methods change `self.size` (a replay buffer's `store`), called by the
    class between calls of the function: a DQN's `@tf.function def replay(self)` that starts with
    `if self.memory.size < batch_size: return` traces that early return on its first call and
    never trains (verified under TensorFlow: 0 updates in 40 calls, 1 trace). And
    `model.trainable_variables` read by a tf.function when `.trainable` is set between two of its
    calls (`base_model.trainable = True` to fine-tune after a first run): the trace keeps the
    variables it listed, so the unfrozen layers never train (verified: one trace, the base model's
    weights unchanged).

    ## Why is this slow
    It is a correctness trap, not a speed problem. The value of a Python global is captured when
    the function is traced. Changing the global later does **not** trigger a retrace, so the
    function keeps computing with the old value. This holds for Python numbers and for eager
    tensors alike (measured).

    ## When it stays silent
    For globals assigned once (a function that fills one lazily, `global T` / `if T is None:
    T = ...`, changes it once, before its first use), for `tf.Variable`s (read at run time, so always current),
    and for functions, classes and imported modules. Nor for a name reused for a tf.function's
    own result (`l, a = evaluate()`, called without `a`: the adjacency matrix `a` the function
    reads keeps its meaning, the name gets a new one). A module-level assignment counts only when
    the module calls the function (directly, through its own functions, or with Keras' `fit`
    on an object of the method's class) both before and after it: one made before the first
    call is what the first trace sees, and a notebook section that rebinds the name and
    defines the function again starts over. For `self.x`: when the method that assigns it runs
    once (`self.scale = scale` before its loop over the steps), is traced itself, or assigns a
    new object (`tf.Variable(...)`, a layer or model); and for attributes called (`self.dense(x)`)
    or read through (`self.optimizer.lr`).

    ## Fix
    Pass the value as an argument (a tensor), or keep it in a `tf.Variable` and update it with
    `.assign()`. No automatic fix: the right one depends on how the value is used.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            y = 2.0

            @tf.function
            def power(x):
                return tf.pow(x, y)

            first = power(tf.constant(2.0))
            y = 3.0
            second = power(tf.constant(2.0))
            """,
            verify="""
            assert float(first) == 4.0 and float(second) == 4.0  # stale: 2**3 would be 8
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            y = tf.Variable(2.0)

            @tf.function
            def power(x):
                return tf.pow(x, y)

            first = power(tf.constant(2.0))
            y.assign(3.0)
            second = power(tf.constant(2.0))
            """,
            verify="""
            assert float(first) == 4.0 and float(second) == 8.0  # a tf.Variable stays live
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        reassigned_via_global = _names_assigned_through_global(facts)
        for fn in facts.tf_functions:
            if fn.node is None or facts.scope_of(fn.node) is not None and fn.owner_class is None:
                continue
            local = set(fn.params + fn.keyword_params) | set(facts.assignments_in(fn.node))
            reported: set[str] = set()
            for node in walk_same_scope(fn.node):
                if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
                    continue
                name = node.id
                if name in local or name in reported or name in _BUILTINS and name not in facts.module_assignments:
                    continue
                if _bound_inside(facts, node, fn.node):
                    continue  # ``[l for l in losses.values()]``, ``lambda x: x``: a name of its own scope
                later = _later_assignment(ctx, name, fn, reassigned_via_global)
                if later is None:
                    continue
                reported.add(name)
                yield self.finding(
                    ctx,
                    node,
                    f"`{function_label(fn)}` keeps the value `{name}` had when it was traced: the new value "
                    f"assigned on line {later} is ignored (no retrace); {_remedy(facts, fn)}",
                    label=f"stale after line {later}",
                    cites=(later,),
                )
            yield from self._stale_attributes(ctx, fn)
            yield from self._stale_helper_attributes(ctx, fn)
            yield from self._stale_trainable(ctx, fn)

    def _stale_attributes(self, ctx: RuleContext, fn: TFFunction) -> Iterator[Finding]:
        """``self.x`` read by a tf.function method, and assigned a new value by a method of its
        class that calls it again and again: the trace keeps the first value (tf.function does
        not look at ``self``'s attributes to decide whether to trace again)."""
        facts = ctx.facts
        cls = fn.owner_class
        if cls is None or fn.node is None:
            return
        attributes = [node for node in walk_same_scope(fn.node) if self_attribute(node)]
        stored = {node.attr for node in attributes if not isinstance(node.ctx, ast.Load)}
        reads: dict[str, ast.Attribute] = {}
        for node in sorted(attributes, key=lambda n: (n.lineno, n.col_offset)):
            parent = facts.parent(node)
            if not isinstance(node.ctx, ast.Load) or node.attr in stored or isinstance(parent, ast.Attribute) \
                    or isinstance(parent, ast.Call) and parent.func is node:
                continue  # ``self.layer(x)``, ``self.opt.lr``: objects, not values
            reads.setdefault(node.attr, node)
        for attr, node in reads.items():
            later = _rebound_between_calls(ctx, fn, cls, attr)
            if later is not None:
                yield self.finding(
                    ctx,
                    node,
                    f"`{function_label(fn)}` keeps the value `self.{attr}` had when it was traced: the new value "
                    f"assigned on line {later} is ignored (no retrace); {_remedy(facts, fn)}",
                    label=f"stale after line {later}",
                    cites=(later,),
                )


    def _stale_helper_attributes(self, ctx: RuleContext, fn: TFFunction) -> Iterator[Finding]:
        """``self.memory.size`` read by a tf.function method, where ``self.memory`` is an object of
        a class of this file whose methods change ``self.size`` (a replay buffer's ``store``), and
        the owner's methods call that method between calls of the tf.function: the trace keeps
        the first value. A DQN's ``@tf.function def replay(self): if self.memory.size <
        batch_size: return`` traces the early return on its first call and never trains."""
        facts = ctx.facts
        if fn.owner_class is None or fn.node is None:
            return
        calls = [*tf_function_calls(ctx, fn), *facts.calls_by_def.get(fn.node, [])]  # ``agent.replay(...)`` too
        if not any(facts.enclosing_loops(call) or facts.is_called_repeatedly(facts.enclosing_function(call) or fn.node)
                   for call in calls):
            return
        classes = {cls.name: cls for cls in facts.classes if facts.parent(cls) is facts.tree}
        seen: set[tuple[str, str]] = set()
        for node in walk_same_scope(fn.node):
            if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and self_attribute(node.value)):
                continue
            parent = facts.parent(node)
            if isinstance(parent, ast.Attribute) or isinstance(parent, ast.Call) and parent.func is node:
                continue  # ``self.memory.sample(...)``, ``self.memory.buffer.shape``: objects, not values
            holder = cast("ast.Attribute", node.value)
            key = (holder.attr, node.attr)
            if key in seen:
                continue
            seen.add(key)
            values = facts.self_attribute_values(holder)
            made = values[0] if len(values) == 1 else None
            helper = classes.get(made.func.id) if isinstance(made, ast.Call) and isinstance(made.func, ast.Name) else None
            found = _changed_between_calls(ctx, fn, holder.attr, helper, node.attr) if helper is not None else None
            if found is not None and helper is not None:
                method, line = found
                yield self.finding(
                    ctx,
                    node,
                    f"`{function_label(fn)}` keeps the value `self.{holder.attr}.{node.attr}` had when it was traced: "
                    f"`{helper.name}.{method}` changes it (line {line}) between calls, through "
                    f"`self.{holder.attr}.{method}(...)`, and the next call runs the old trace (no retrace); "
                    f"{_remedy(facts, fn)}",
                    label=f"stale after line {line}",
                    cites=(line,),
                )


    def _stale_trainable(self, ctx: RuleContext, fn: TFFunction) -> Iterator[Finding]:
        """``model.trainable_variables`` read by a tf.function, and ``.trainable`` set between two
        of its calls (``base_model.trainable = True`` to fine-tune after a first training run): the
        trace keeps the list of variables it was traced with, so the unfrozen layers never train
        (verified under TF 2.21: one trace, the base model's kernel unchanged)."""
        facts = ctx.facts
        if fn.node is None or "trainable" not in ctx.source.text:
            return
        reads = [node for node in walk_same_scope(fn.node) if isinstance(node, ast.Attribute)
                 and node.attr in _TRAINABLE_LISTS and isinstance(node.ctx, ast.Load)]
        read = min(reads, key=lambda n: (n.lineno, n.col_offset)) if reads else None
        if read is None:
            return
        line = _trainable_changed_between_calls(ctx, fn)
        if line is not None:
            yield self.finding(
                ctx,
                read,
                f"`{function_label(fn)}` keeps the variables `{ast.unparse(read)}` listed when it was traced: "
                f"`.trainable` set on line {line} does not trace it again, so the change is ignored (layers "
                f"unfrozen there never train, layers frozen there go on training) - make the tf.function again "
                f"after changing what trains",
                label=f"stale after line {line}",
                cites=(line,),
            )


_TRAINABLE_LISTS = frozenset({"trainable_variables", "trainable_weights"})


def _remedy(facts: ModuleFacts, fn: TFFunction) -> str:
    """What to do about the stale value: pass it in, or, when the body is not graph code at all
    (``model.predict``, ``train_on_batch``, NumPy: a DQN's ``replay``), drop the decorator (a
    judge found passing the size in then fails on the first trace past the early return)."""
    blockers = graph_blockers(facts, fn.node, depth=0) if fn.node is not None and fn.is_tf_function else []
    # only what cannot run in a graph at all: Keras' own loops and .numpy() in the body itself
    fatal = [b for b in blockers if "fails in a tf.function" in b or b == "calls .numpy()"]
    if fatal:
        return f"its body is Python, not graph code (it {', '.join(fatal[:2])}): remove the tf.function"
    return "pass it as an argument or use a tf.Variable"


def _trainable_changed_between_calls(ctx: RuleContext, fn: TFFunction) -> int | None:
    """The line of an assignment to ``x.trainable`` that runs after a call of ``fn`` and before
    another: in module-level code between two calls (directly or through the file's defs), or in
    a def that calls it before and after the assignment (or in the same loop)."""
    facts = ctx.facts
    stores = ctx.derived(_trainable_stores)
    if not stores:
        return None
    module_lines = [call.lineno for call in _module_calls(ctx, fn)]
    direct = tf_function_calls(ctx, fn)
    for store in sorted(stores, key=lambda n: n.lineno):
        # where it runs: the assignment, or the calls of the def that makes it (``unfreeze()``,
        # ``transformer.encoder.train_resnet(True)`` in the epoch loop)
        owner = facts.enclosing_function(store)
        places: list[ast.AST] = [store]
        if owner is not None and not any(facts.enclosing_function(c) is owner for c in direct):
            places += _calls_of(facts, owner)
        for place in places:
            if _between_calls(facts, place, module_lines, direct):
                return store.lineno
    return None


_TRAINABLE_STORE = re.compile(r"\.trainable\s*=[^=]")


def _trainable_stores(ctx: RuleContext) -> list[ast.Assign]:
    """The assignments ``x.trainable = ...`` of the module (once per analysis): the statements
    of the module's body on the lines a text search finds, walked."""
    if ".trainable" not in ctx.source.text:
        return []  # one search of the text, not of each line
    lines = [number + 1 for number, text in enumerate(ctx.source.lines) if ".trainable" in text
             and _TRAINABLE_STORE.search(text)]
    if not lines:
        return []
    body = ctx.facts.tree.body
    starts = [stmt.lineno for stmt in body]
    found: list[ast.Assign] = []
    for top in {body[max(bisect.bisect_right(starts, line) - 1, 0)] for line in lines}:
        found += [node for node in ast.walk(top) if isinstance(node, ast.Assign)
                  and any(isinstance(t, ast.Attribute) and t.attr == "trainable" for t in node.targets)]
    return sorted(found, key=lambda n: n.lineno)


def _calls_of(facts: ModuleFacts, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
    """The calls of a def of this file: resolved ones, or for a method whose name no other def of
    the file has, any ``x.y.name(...)``."""
    calls = list(facts.calls_by_def.get(fn, []))
    if not calls and facts.enclosing_class(fn) is not None and sum(f.name == fn.name for f in facts.functions) == 1:
        calls = [c for c in facts.calls_named(fn.name) if isinstance(c.func, ast.Attribute)]
    return calls


def _between_calls(facts: ModuleFacts, place: ast.AST, module_lines: list[int], direct: list[ast.Call]) -> bool:
    """``place`` runs after a call of the tf.function and before another: in module-level code
    between two of its calls, or in a def (or a loop) that calls it before and after ``place``."""
    owner = facts.enclosing_function(place)
    line = cast("ast.stmt | ast.expr", place).lineno
    if owner is None:
        top = _top_level(facts, place)
        end = top.end_lineno or top.lineno
        if isinstance(top, (ast.For, ast.AsyncFor, ast.While)) and any(
                _top_level(facts, call) is top for call in direct if facts.enclosing_function(call) is None):
            return True  # a module-level loop that changes it and calls the function
        return any(n < top.lineno for n in module_lines) and any(n > end for n in module_lines)
    inside = [call for call in direct if facts.enclosing_function(call) is owner]
    if any(c.lineno < line for c in inside) and any(c.lineno > line for c in inside):
        return True
    loops = set(facts.enclosing_loops(place))
    return any(loops & set(facts.enclosing_loops(c)) for c in inside)


def _changed_between_calls(ctx: RuleContext, fn: TFFunction, holder: str, helper: ast.ClassDef,
                           attr: str) -> tuple[str, int] | None:
    """A method of ``helper`` (not ``__init__``) that assigns ``self.<attr>`` a new value, called
    as ``self.<holder>.method(...)`` by an untraced method of the tf.function's class that runs
    again and again: (its name, the line of the assignment)."""
    facts = ctx.facts
    owner = fn.owner_class
    for method in helper.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.name == "__init__":
            continue
        stores = [node for node in walk_same_scope(method) if _assigns_attribute(node, attr)
                  and not _assigns_an_object(facts, node)]
        if not stores:
            continue
        for call in facts.calls_named(method.name):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == method.name and isinstance(func.value, ast.Attribute)
                    and self_attribute(func.value) and func.value.attr == holder):
                continue
            caller = facts.enclosing_function(call)
            if caller is None or caller is fn.node or owner is None or caller not in owner.body \
                    or facts.in_tf_function(caller) is not None:
                continue
            if facts.is_called_repeatedly(caller) or facts.enclosing_loops(call):
                return method.name, min(cast("ast.stmt", node).lineno for node in stores)
    return None


def _rebound_between_calls(ctx: RuleContext, fn: TFFunction, cls: ast.ClassDef, attr: str) -> int | None:
    """The line where a method of ``cls`` that calls ``fn`` (``self.train_step(...)``) assigns
    ``self.<attr>`` a new value, when that method runs again and again (called from a loop) or
    does both in one loop: the next call runs the old trace. Not in a method that is traced
    itself (its assignment runs at trace time), nor for a new ``tf.Variable`` or object."""
    facts = ctx.facts
    for call in tf_function_calls(ctx, fn):
        method = facts.enclosing_function(call)
        if method is None or method is fn.node or method not in cls.body or facts.in_tf_function(method) is not None:
            continue
        stores = [node for node in walk_same_scope(method) if _assigns_attribute(node, attr)]
        stores = [node for node in stores if not _assigns_an_object(facts, node)]
        if not stores:
            continue
        if facts.is_called_repeatedly(method):
            return min(cast("ast.stmt", node).lineno for node in stores)
        call_loops = facts.enclosing_loops(call)
        for node in stores:
            if any(loop in call_loops for loop in facts.enclosing_loops(node)):
                return cast("ast.stmt", node).lineno
    return None


def _assigns_attribute(node: ast.AST, attr: str) -> bool:
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and getattr(node, "value", None) is not None:
        targets = [node.target]
    else:
        return False
    for target in targets:
        for item in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
            if self_attribute(item) and item.attr == attr:
                return True
    return False


def _assigns_an_object(facts: ModuleFacts, node: ast.AST) -> bool:
    """``self.x = tf.Variable(...)``, ``self.model = Model(...)``: a new object (a variable is
    read at run time; a model swapped for another is not a value the step computes with)."""
    value = getattr(node, "value", None)
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    last = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return facts.qualname(func) in _LIVE_CONSTRUCTORS or last[:1].isupper()


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _bound_inside(facts, node: ast.Name, fn_node: ast.AST) -> bool:
    """``node`` reads a name that a comprehension or lambda around it (inside ``fn_node``) binds."""
    for ancestor in facts.ancestors(node):
        if ancestor is fn_node:
            return False
        if isinstance(ancestor, _COMPREHENSIONS) and any(
                node.id in target_names(generator.target) for generator in ancestor.generators):
            return True
        if isinstance(ancestor, ast.Lambda) and node.id in parameter_names(ancestor):
            return True
    return False


def _names_assigned_through_global(facts: ModuleFacts) -> dict[str, int]:
    """Globals assigned inside functions with ``global name``: name -> first such line."""
    result: dict[str, int] = {}
    for statement in facts.global_statements:
        fn = facts.enclosing_function(statement)
        if fn is None:
            continue
        declared = set(statement.names)
        for name, nodes in facts.assignments_in(fn).items():
            nodes = [n for n in nodes if not initialised_once(facts, n, name)]
            if name in declared and nodes:
                result[name] = min([result.get(name, 10**9)] + [_line(n) for n in nodes])
    return result


def _line(node: ast.AST) -> int:
    """The line of an assigning node from ``assignments_in``: a statement, a ``:=``, or a
    ``with`` item (which has no line of its own: its expression's)."""
    if isinstance(node, ast.withitem):
        return node.context_expr.lineno
    return cast("ast.stmt | ast.expr", node).lineno


def _later_assignment(ctx: RuleContext, name: str, fn: TFFunction, via_global: dict[str, int]) -> int | None:
    """The line of a module-level assignment to ``name`` that the function outlives: it runs
    (is traced) before the assignment and runs again after it. An assignment with no call of
    the function before it is seen by the first trace (a notebook that rebinds a name and
    defines the function again in a later section, a global set before the first call)."""
    facts = ctx.facts
    assignments = facts.module_assignments.get(name, [])
    if not assignments and name not in via_global:
        return None
    if assignments and all(_is_live(facts, stmt) for stmt in assignments):
        return None
    # A module-level for loop assigns its target once per iteration.
    if len(assignments) >= 2 or any(isinstance(s, (ast.For, ast.AsyncFor)) for s in assignments):
        runs = _module_calls(ctx, fn)
        lines = [call.lineno for call in runs]
        for stmt in sorted(assignments, key=lambda s: s.lineno):
            if stmt.lineno <= fn.stmt.lineno or _reused_for_a_result(facts, stmt, name):
                continue
            top = _top_level(facts, stmt)
            if isinstance(top, (ast.For, ast.AsyncFor, ast.While)) and any(_top_level(facts, call) is top for call in runs):
                return stmt.lineno  # a loop that rebinds it and calls the function
            end = getattr(stmt, "end_lineno", None) or stmt.lineno
            if any(line < stmt.lineno for line in lines) and any(line > end for line in lines):
                return stmt.lineno
    if assignments and name in via_global:
        return via_global[name]
    return None


def _reused_for_a_result(facts: ModuleFacts, stmt: ast.AST, name: str) -> bool:
    """``l, a = evaluate()``: the name is reused for one of the results of a tf.function of the
    file, called without it (``a`` was the adjacency matrix, now an accuracy): a new meaning for
    the name, not a new version of what the function reads."""
    if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
            and any(isinstance(t, (ast.Tuple, ast.List)) for t in stmt.targets)):
        return False
    call = stmt.value
    if facts.resolve_tf_function(call.func, call) is None:
        return False
    return not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(call))


def _top_level(facts: ModuleFacts, node: ast.AST) -> ast.stmt:
    """The statement of the module's body that holds ``node``."""
    top = facts.statement_of(node)
    for ancestor in facts.ancestors(top):
        if isinstance(ancestor, ast.stmt):
            top = ancestor
    return top


def _module_calls(ctx: RuleContext, fn: TFFunction) -> list[ast.Call]:
    """Module-level calls after ``fn``'s definition that run it, directly or through the local
    defs they call; for a method, calls of that method or of Keras' drivers (``fit``, ...) on
    an object built from its class in this file."""
    facts = ctx.facts
    found: list[ast.Call] = []
    seen: set[ast.AST] = set()
    work: list[ast.Call] = list(tf_function_calls(ctx, fn))
    if fn.owner_class is not None and fn.node is not None:
        direct = {id(c) for c in work}
        work += [c for c in facts.calls if id(c) not in direct and _drives_method(facts, fn, c)]
    while work:
        call = work.pop()
        caller = facts.enclosing_function(call)
        while caller is not None and facts.enclosing_function(caller) is not None:
            caller = facts.enclosing_function(caller)
        if caller is None:
            if call.lineno > fn.stmt.lineno:
                found.append(call)
        elif caller not in seen:
            seen.add(caller)
            work.extend(facts.calls_by_def.get(caller, []))
    return found


_KERAS_DRIVERS = frozenset({"fit", "evaluate", "predict", "train_on_batch", "test_on_batch", "predict_on_batch"})


def _drives_method(facts: ModuleFacts, fn: TFFunction, call: ast.Call) -> bool:
    """``obj.step(...)`` or ``obj.fit(...)`` on an object built from ``fn``'s class in this file,
    or ``self.step(...)`` inside it."""
    cls, func = fn.owner_class, call.func
    if cls is None or fn.node is None or not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
        return False
    if func.attr != fn.node.name and func.attr not in _KERAS_DRIVERS and func.value.id != "self":
        return False
    if func.value.id == "self":
        return facts.enclosing_class(call) is cls and func.attr == fn.node.name
    return facts.built_from_class(func.value, cls)


def _is_live(facts: ModuleFacts, stmt: ast.stmt) -> bool:
    value = getattr(stmt, "value", None)
    return isinstance(value, ast.Call) and facts.qualname(value.func) in _LIVE_CONSTRUCTORS

