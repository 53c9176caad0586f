"""A small model of the tf.data pipelines of one module, shared by the TFP7xx rules.

A pipeline is a chain of ``Step``s: a source (``tf.data.Dataset.from_tensor_slices(x)``,
``TFRecordDataset``, ``Dataset.range``, ...) and the dataset methods applied to it, in order. Chains
are followed through method calls (``src.map(f).batch(32)``), through names (``ds = ...; ds =
ds.map(f)``: the latest assignment before the use, in the same scope) and through local functions
that return a dataset (``ds = make_dataset()``: a ``call`` step whose parent is what the function
returns). Anything else (parameters, attributes, unknown calls) ends the chain: no step, no finding.

``Consumer``s are the places a dataset is used up: ``for`` loops, ``fit``/``evaluate``/``predict``,
``iter()``, a local function that loops over its parameter, and ``return`` from a function whose
result no local caller transforms further. Built once per analysis (``pipelines(ctx)``).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterator, Sequence, cast

from tfperf_lsp.analysis.astutil import int_value
from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.models import TRAINING_CALLS
from tfperf_lsp.rules.input_pipeline._astutil import (
    KERAS_CONSUMERS,
    Def,
    consumed_parameter,
    inside,
    is_parameter,
    iterated,
    keras_inputs,
    keyword,
    last_name,
    line_of,
    more_than_one,
    parameter,
    return_statements,
)
from tfperf_lsp.rules.input_pipeline._mapfn import MapFunction, map_function
from tfperf_lsp.rules.common import reads_a_clock
from tfperf_lsp.rules.context import RuleContext

_DATASET = "tensorflow.data.Dataset."
SOURCES = {
    _DATASET + name
    for name in ("from_tensor_slices", "from_tensors", "range", "from_generator", "list_files", "zip",
                 "sample_from_datasets", "choose_from_datasets", "load")
} | {
    "tensorflow.data.TFRecordDataset", "tensorflow.data.TextLineDataset", "tensorflow.data.FixedLengthRecordDataset",
    "tensorflow.data.experimental.make_csv_dataset", "tensorflow.data.experimental.sample_from_datasets",
    "tensorflow.data.experimental.choose_from_datasets",
    "keras.utils.image_dataset_from_directory", "keras.utils.text_dataset_from_directory",
    "keras.utils.audio_dataset_from_directory", "keras.utils.timeseries_dataset_from_array",
    "keras.preprocessing.image_dataset_from_directory", "keras.preprocessing.text_dataset_from_directory",
}
# Sources whose elements are already batches (their pipelines are finished products).
BATCHED_SOURCES = {s for s in SOURCES if s.startswith("keras.") or s.endswith("make_csv_dataset")}
METHODS = {
    "map", "batch", "padded_batch", "ragged_batch", "unbatch", "rebatch", "shuffle", "repeat", "prefetch",
    "cache", "filter", "interleave", "flat_map", "parallel_interleave", "take", "skip", "shard", "apply",
    "with_options", "enumerate", "concatenate", "window", "scan", "take_while", "ignore_errors",
    "bucket_by_sequence_length", "group_by_window", "snapshot", "dense_to_ragged_batch",
}
BATCH_METHODS = {"batch", "padded_batch", "ragged_batch", "bucket_by_sequence_length", "dense_to_ragged_batch"}
# Steps that do real work per element (a pipeline with none of them gains little from prefetch).
WORK_METHODS = {
    "map", "batch", "padded_batch", "ragged_batch", "interleave", "parallel_interleave", "flat_map", "filter",
    "shuffle", "unbatch", "rebatch", "window", "scan", "bucket_by_sequence_length", "group_by_window", "apply",
    "dense_to_ragged_batch",
}
# Steps that do not produce elements worth prefetching on their own.
LIGHT_METHODS = {"repeat", "take", "skip", "with_options", "cache", "shard", "enumerate", "take_while", "ignore_errors"}
_SOURCE_NAMES = {s.rsplit(".", 1)[1] for s in SOURCES}
_HARMLESS = {"enumerate", "zip", "iter", "len", "print", "tqdm", "isinstance", "type"}


@dataclass(eq=False)
class Step:
    method: str  # "map", "batch", ...; a source's name ("from_tensor_slices"); "call" for a local factory
    call: ast.Call
    parent: "Step | None"
    qualname: str | None = None  # sources only
    factory: Def | None = None  # "call" steps: the def that builds the dataset
    children: list["Step"] = field(default_factory=list)

    @property
    def is_source(self) -> bool:
        return self.parent is None

    def upstream(self) -> Iterator[Step]:
        """This step and every step before it, last first (through local factory calls)."""
        step: Step | None = self
        while step is not None:
            yield step
            step = step.parent

    def method_node(self) -> "MethodSpan":
        return MethodSpan.of(self.call)

    def real(self) -> "Step":
        """Through local factory calls to the step that made the dataset."""
        step = self
        while step.method == "call" and step.parent is not None:
            step = step.parent
        return step

    def downstream_has(self, methods: set[str], depth: int = 0) -> bool:
        """Some pipeline built from this dataset (through names and factories) uses one of ``methods``."""
        if depth > 20:
            return False
        return any(c.method in methods or c.downstream_has(methods, depth + 1) for c in self.children)


@dataclass
class MethodSpan(ast.AST):
    """A pseudo-node from ``.method`` to the end of the call: where chain findings are reported, so
    that a finding on a multi-line chain sits on the line of its own ``.map(``."""

    lineno: int
    col_offset: int
    end_lineno: int
    end_col_offset: int

    @staticmethod
    def of(call: ast.Call) -> "MethodSpan":
        func = call.func
        # parsed nodes always have their end positions
        end_line, end_col = cast(int, call.end_lineno), cast(int, call.end_col_offset)
        if isinstance(func, ast.Attribute):
            # ``attr`` is the last token of the Attribute; the dot is just before it (``a.map``).
            col = max(cast(int, func.end_col_offset) - len(func.attr.encode("utf-8")) - 1, 0)
            return MethodSpan(cast(int, func.end_lineno), col, end_line, end_col)
        return MethodSpan(call.lineno, call.col_offset, end_line, end_col)


@dataclass
class Consumer:
    step: Step  # the dataset that is used up
    node: ast.AST  # the loop, call or return that uses it
    kind: str  # "for", "fit", "iter", "return" (a local def that loops/fits on it counts as "for"/"fit")
    epochs: bool  # iterated more than once (an epoch loop, fit(epochs>1), a fit/for in a loop)
    validation: bool = False  # ``fit(..., validation_data=ds)``: read to validate, not to train


class Pipelines:
    def __init__(self, facts: ModuleFacts):
        self.facts = facts
        self._by_call: dict[ast.Call, Step | None] = {}
        self._returns: dict[Def, Step | None] = {}
        self._param_uses: dict[tuple[Def, str], tuple[str, bool] | None] = {}
        self.steps: list[Step] = []
        # Cheap filters first (most calls and names have nothing to do with tf.data): the calls
        # that may be steps, the defs that build datasets, the names that may hold one.
        candidates: set[ast.Call] = set()
        builders: set[Def] = set()
        for call in facts.calls_named(*METHODS, *_SOURCE_NAMES):  # sets below: the order does not matter
            func = call.func
            if isinstance(func, ast.Attribute) and (
                func.attr in METHODS or (func.attr in _SOURCE_NAMES and facts.qualname(func) in SOURCES)
            ) or isinstance(func, ast.Name) and func.id in _SOURCE_NAMES and facts.qualname(func) in SOURCES:
                candidates.add(call)
                builder = facts.enclosing_function(call)
                if builder is not None:
                    builders.add(builder)
        builder_names = {b.name for b in builders}
        for call in facts.calls_named(*builder_names):
            if last_name(call.func) in builder_names:
                candidates.add(call)
        self._candidates = candidates
        self._builders = builders
        self._dataset_names: set[str] = set()
        for call in candidates:
            stmt = facts.statement_of(call)
            if isinstance(stmt, ast.Assign):
                self._dataset_names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        for call in facts.calls:
            if call in candidates:
                self.step_of_call(call)
        for step in self.steps:
            if step.parent is not None:
                step.parent.children.append(step)
        self.escaped: set[Step] = set()  # datasets handed to code we cannot follow
        self.consumers: list[Consumer] = self._find_consumers()
        self._functions: dict[ast.AST, MapFunction] = {}

    def map_function(self, step: Step) -> MapFunction:
        return map_function(self.facts, step.call, self._functions)

    def uses_of(self, step: Step) -> list[Consumer]:
        """The consumers of the pipelines built on ``step`` (``step`` itself included)."""
        return [c for c in self.consumers if _built_on(c.step, step)]

    def paced_by_sleep(self, step: Step) -> bool:
        """Every pipeline built on ``step`` is read by a loop that sleeps on every iteration
        (``time.sleep(5)`` after writing a batch of images to TensorBoard, to watch them): the
        sleep sets the pace, not the pipeline."""
        uses = self.uses_of(step)
        sleeps = self.facts.calls_by_qualname.get("time.sleep", [])
        return bool(uses) and bool(sleeps) and all(
            c.kind == "for" and any(c.node in self.facts.ancestors(s) for s in sleeps) for c in uses)

    def only_previewed(self, step: Step) -> bool:
        """The pipelines built on ``step`` are only read a few elements at a time, and somewhere:
        ``for line in ds.take(5): print(line)``. A preview, not a training input: its speed does
        not matter. (A pipeline that is also fitted on, iterated whole or returned is not.)"""
        uses = self.uses_of(step)
        return bool(uses) and all(c.kind in ("for", "iter") and not c.epochs and takes_few(c.step, step) for c in uses)

    def evaluated_once(self, step: Step) -> bool:
        """Every pipeline built on ``step`` is read in a single pass, and not to train: by
        ``evaluate`` or ``predict``, or a few batches of it (``take(n)``) looked at once. None
        repeats it, returns it or hands it to code tfperf cannot follow. What a map costs per
        element is paid once, beside the model's work on each batch."""
        uses = self.uses_of(step)
        if not uses or any(c.epochs or c.kind == "return" for c in uses):
            return False
        if any(s in self.escaped for s in self.steps if _built_on(s, step)):
            return False
        for consumer in uses:
            after = list(consumer.step.upstream())
            after = after[: next(i for i, s in enumerate(after) if s is step)]
            if any(s.method == "repeat" for s in after):
                return False
            call = consumer.node
            evaluates = isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and call.func.attr in ("evaluate", "predict")
            if not (evaluates or any(s.method == "take" for s in after)):
                return False
        return True

    def benchmarked(self, step: Step) -> bool:
        """Every pipeline built on ``step`` is handed to a def of this file that times it
        (``fast_benchmark(fast_dataset.map(increment).batch(256))``, with ``time.perf_counter()``
        in ``fast_benchmark``): the slow form shown and measured on purpose, as the tf.data
        performance guide does."""
        uses = self.uses_of(step)
        return bool(uses) and all(self._timed_by(consumer.node) for consumer in uses)

    def _timed_by(self, node: ast.AST) -> bool:
        if not (isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))):
            return False
        fn = self.facts.resolve_def(node.func, node)
        return fn is not None and reads_a_clock(self.facts, fn)

    def never_read(self, step: Step) -> bool:
        """Nothing reads the pipelines built on ``step``: each ends in a name the file never
        reads again (``test_ds = test_ds.map(f).batch(32)``, then only ``train_ds`` is fitted
        on), in a def or in a file that trains at its top level, so not a module other files
        import it from. Its speed does not matter: it never runs."""
        facts = self.facts
        leaves = [s for s in self.steps if not s.children and _built_on(s, step)]
        if not leaves or any(c.step in leaves for c in self.consumers):
            return False
        for leaf in leaves:
            statement = facts.parent(leaf.call)
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)):
                return False  # returned, passed on, stored in an attribute: read elsewhere
            name = statement.targets[0].id
            reads = [use for use in facts.names.get(name, []) if isinstance(use.ctx, ast.Load)
                     and not (statement.lineno <= use.lineno <= (statement.end_lineno or statement.lineno))]
            # ``ds = ds.map(f)`` reads the binding before it; in a loop, any read may see this one
            if any(use.lineno > statement.lineno for use in reads) or (reads and facts.enclosing_loops(statement)):
                return False
            if facts.enclosing_function(statement) is None and not self._trains_at_top_level:
                return False  # a module-level name another file may import
        return True

    @cached_property
    def _trains_at_top_level(self) -> bool:
        """The file is a script: it fits or steps a model in its module-level code."""
        return any(isinstance(call.func, ast.Attribute) and call.func.attr in TRAINING_CALLS
                   and self.facts.enclosing_function(call) is None for call in self.facts.calls)

    def maps(self) -> list[Step]:
        return [s for s in self.steps if s.method == "map"]

    def mapped_functions(self) -> list[ast.AST]:
        """The defs and lambdas the pipelines' ``map`` steps run (tf.data traces them)."""
        return [fn for step in self.maps() if (fn := self.map_function(step).node) is not None]

    # ------------------------------------------------------------------ chains
    def dataset_of(self, expr: ast.AST | None) -> Step | None:
        if isinstance(expr, ast.Call):
            return self.step_of_call(expr)
        if isinstance(expr, ast.Name) and expr.id in self._dataset_names:
            value = self._binding(expr)
            return self.dataset_of(value) if value is not None else None
        return None

    def step_of_call(self, call: ast.Call) -> Step | None:
        if call in self._by_call:
            return self._by_call[call]
        if call not in self._candidates:
            return None
        self._by_call[call] = None  # guards recursion (a factory calling itself)
        func = call.func
        step = None
        qualname = self.facts.qualname(func)
        if qualname in SOURCES:
            step = Step(qualname.rsplit(".", 1)[1], call, None, qualname=qualname)
        elif isinstance(func, ast.Attribute) and func.attr in METHODS:
            parent = self.dataset_of(func.value)
            if parent is not None:
                step = Step(func.attr, call, parent)
        elif isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
            fn = self.facts.resolve_def(func, call)
            returned = self.returned_step(fn) if fn is not None and fn in self._builders else None
            if returned is not None:
                step = Step("call", call, returned, factory=fn)
        if step is not None:
            self.steps.append(step)
        self._by_call[call] = step
        return step

    def returned_step(self, fn: Def) -> Step | None:
        """What a local def returns, if it is one dataset (a single ``return`` statement)."""
        if fn not in self._returns:
            self._returns[fn] = None
            returns = list(return_statements(fn.body))
            if len(returns) == 1 and returns[0].value is not None:
                self._returns[fn] = self.dataset_of(returns[0].value)
        return self._returns[fn]

    def _binding(self, name: ast.Name) -> ast.AST | None:
        """The value last assigned to ``name`` before the statement that reads it (same scope)."""
        facts = self.facts
        scope = facts.scope_of(name)
        if isinstance(scope, (ast.Lambda, ast.ClassDef)):
            return None
        stmt: ast.stmt | None = facts.statement_of(name)
        candidates: Sequence[ast.AST]
        if scope is None:
            candidates = facts.module_assignments.get(name.id, [])
        else:
            candidates = facts.assignments_in(scope).get(name.id, [])
            if not candidates and not is_parameter(scope, name.id):
                candidates = facts.module_assignments.get(name.id, [])  # a module-level dataset
                stmt = None
        before = [c for c in candidates if (stmt is None or line_of(c) < stmt.lineno)
                  and not facts.in_exclusive_branches(c, name)]  # the if's body never flows into its else
        if not before:
            return None
        latest = max(before, key=line_of)
        if isinstance(latest, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name.id for t in latest.targets):
            return latest.value
        return None

    # ------------------------------------------------------------------ consumers
    def _find_consumers(self) -> list[Consumer]:
        facts = self.facts
        found: list[Consumer] = []
        if not self.steps:
            return found  # no pipeline in the file: nothing to consume
        for loop in facts.loops:
            iterables = [loop.iter] if isinstance(loop, (ast.For, ast.AsyncFor)) else [g.iter for g in getattr(loop, "generators", [])]
            for iterable in iterables:
                for expr in iterated(iterable):
                    step = self.dataset_of(expr)
                    if step is not None:
                        found.append(Consumer(step, loop, "for", self._repeated(loop, step)))
        passing = self._calls_passing_datasets()
        relevant = passing.union(facts.calls_named(*KERAS_CONSUMERS, "as_numpy_iterator", "iter", "list"))
        for call in facts.calls:
            if call not in relevant:
                continue  # most calls: skipped without looking at their arguments
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in KERAS_CONSUMERS:
                for expr, is_x in keras_inputs(call):
                    step = self.dataset_of(expr)
                    if step is not None:
                        if is_x:
                            epochs = func.attr == "fit" and more_than_one(facts, keyword(call, "epochs"))
                        else:
                            epochs = _validated_more_than_once(facts, call)
                        found.append(Consumer(step, call, "fit", epochs or self._repeated(call, step), validation=not is_x))
            elif isinstance(func, ast.Attribute) and func.attr == "as_numpy_iterator":
                step = self.dataset_of(func.value)
                if step is not None:
                    found.append(Consumer(step, call, "iter", False))
            elif isinstance(func, ast.Name) and func.id in ("iter", "list") and len(call.args) == 1 and not self._peek(call):
                step = self.dataset_of(call.args[0])
                if step is not None:
                    found.append(Consumer(step, call, "iter", False))
            elif call in passing:
                found.extend(self._passed_to_function(call))
        found.extend(self._returned(found))
        return found

    def _peek(self, call: ast.Call) -> bool:
        """``next(iter(ds))``: one element, not a consumption worth prefetching for."""
        parent = self.facts.parent(call)
        return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "next"

    def _calls_passing_datasets(self) -> set[ast.Call]:
        """The calls with an argument that may be a dataset: a name some step is assigned to,
        or a step's call itself (found from those names' uses, not from every call's arguments)."""
        facts = self.facts
        passed: list[ast.AST] = [use for name in self._dataset_names for use in facts.names.get(name, ())]
        passed += self._candidates
        calls = set()
        for expr in passed:
            parent = facts.parent(expr)
            if type(parent) is ast.keyword:
                parent = facts.parent(parent)
                if type(parent) is ast.Call:
                    calls.add(parent)
            elif type(parent) is ast.Call and any(argument is expr for argument in parent.args):
                calls.add(parent)
        return calls

    def _passed_to_function(self, call: ast.Call) -> list[Consumer]:
        """A dataset passed to a local def that loops over it (or fits on it) is consumed there."""
        found = []
        arguments: list[tuple[int | str, ast.expr]] = [(i, a) for i, a in enumerate(call.args)]
        arguments += [(kw.arg, kw.value) for kw in call.keywords if kw.arg]
        for position, argument in arguments:
            step = self.dataset_of(argument)
            if step is None or (isinstance(call.func, ast.Name) and call.func.id in _HARMLESS):
                continue
            fn = self.facts.resolve_def(call.func, call) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
            param = parameter(fn, position) if fn is not None else None
            use = self._parameter_use(fn, param) if fn is not None and param else None
            if use is None:
                self.escaped.add(step)  # somewhere we cannot follow: it may be transformed further
                continue
            kind, epochs = use
            found.append(Consumer(step, call, kind, epochs or bool(self.facts.enclosing_loops(call))))
        return found

    def _parameter_use(self, fn: Def, param: str) -> tuple[str, bool] | None:
        key = (fn, param)
        if key not in self._param_uses:
            self._param_uses[key] = consumed_parameter(self.facts, fn, param)
        return self._param_uses[key]

    def _returned(self, consumed: list[Consumer]) -> list[Consumer]:
        """``return ds`` in a def no local caller continues or reads: the def builds a finished
        pipeline for code elsewhere. (``model.predict(load_dataset())``: the caller's read is the use.)"""
        found = []
        defs = {fn for fn in (self.facts.enclosing_function(s.call) for s in self.steps) if fn is not None}
        read = {c.step for c in consumed}
        for fn in sorted(defs, key=lambda d: d.lineno):
            returned = self.returned_step(fn)
            if returned is None:
                continue
            callers = [s for s in self.steps if s.method == "call" and s.factory is fn]
            if any(s.children or s in self.escaped for s in callers) or returned in self.escaped:
                continue
            if callers and all(s in read for s in callers):
                continue
            ret = next(return_statements(fn.body))
            found.append(Consumer(returned, ret, "return", False))
        return found

    def _repeated(self, node: ast.AST, step: Step) -> bool:
        """``node`` runs in a loop that does not also rebuild the dataset (an epoch loop)."""
        loops = self.facts.enclosing_loops(node)
        if not loops:
            return False
        outer = loops[-1]
        return not any(inside(self.facts, s.call, outer) for s in step.upstream())


def _validated_more_than_once(facts: ModuleFacts, fit: ast.Call) -> bool:
    """``fit(..., validation_data=val, epochs=3, validation_freq=2)`` reads ``val`` whole once per
    ``validation_freq`` epochs: here once. ``validation_steps=2``, a number written down, reads a
    few batches of it, so a cache after its map would never fill (``validation_steps=n //
    batch``, computed, is a whole pass)."""
    steps = keyword(fit, "validation_steps")
    if isinstance(steps, ast.Constant):
        return False
    epochs = int_value(facts, keyword(fit, "epochs"))
    frequency = keyword(fit, "validation_freq")
    every = 1 if frequency is None else int_value(facts, frequency)
    if epochs is None or every is None:
        return more_than_one(facts, keyword(fit, "epochs")) if frequency is None else False
    return every > 0 and epochs // every > 1


def pipelines(ctx: RuleContext) -> Pipelines:
    """The module's tf.data pipelines, built once per analysis."""
    return ctx.derived(_build_pipelines)


def _build_pipelines(ctx: RuleContext) -> Pipelines:
    return Pipelines(ctx.facts)


def dataset_label(ctx: RuleContext, step: Step) -> str:
    """How messages name a dataset: the variable it is assigned to, else its last call."""
    stmt = ctx.facts.statement_of(step.call)
    if isinstance(stmt, ast.Assign) and stmt.value is step.call and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return f"`{stmt.targets[0].id}`"
    if step.is_source:
        return f"`{step.method}(...)`"
    return f"`...{step.method}({_short_args(ctx, step.call)})`"


def _short_args(ctx: RuleContext, call: ast.Call) -> str:
    text = ", ".join(ctx.source.segment(a) for a in call.args)
    return text if len(text) <= 30 else "..."


PREVIEW = 10  # elements: ``ds.take(9)`` to print or plot a few


def _built_on(dataset: Step, step: Step) -> bool:
    """``dataset`` is ``step`` or a pipeline built from it."""
    return any(s is step for s in dataset.upstream())


def maps_whole_batches(step: Step) -> bool:
    """The map works on batches (``ds.batch(512).map(preprocess)``, no ``unbatch`` between): each
    call does a batch's work with vectorised ops, so its overhead is paid once per batch."""
    for before in step.upstream():
        if before is step:
            continue
        if before.method in BATCH_METHODS:
            return True
        if before.method in ("unbatch", "flat_map", "interleave"):
            return False
    return False


def takes_few(used: Step, step: Step) -> bool:
    """Between ``step`` and the dataset used, a ``take(n)`` with n <= PREVIEW and no ``repeat``
    after it."""
    for current in used.upstream():
        if current is step:
            return False
        if current.method in ("repeat", "unbatch", "flat_map", "interleave"):
            return False
        if current.method == "take":
            count = current.call.args[0] if current.call.args else None
            return isinstance(count, ast.Constant) and isinstance(count.value, int) and 0 <= count.value <= PREVIEW
    return False


def autotune(ctx: RuleContext) -> str:
    """How this file should spell AUTOTUNE after ``tf.``: ``data.experimental.AUTOTUNE`` in code
    written for TensorFlow 1 (``tf.data.AUTOTUNE`` arrived in 2.4) or where the file already
    spells it so; ``data.AUTOTUNE`` otherwise."""
    if ctx.hot.tf1_only or "data.experimental.AUTOTUNE" in ctx.source.text:
        return "data.experimental.AUTOTUNE"
    return "data.AUTOTUNE"
