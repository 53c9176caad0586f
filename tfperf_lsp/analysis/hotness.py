"""How hot is this code? One model shared by every rule, instead of each rule guessing.

Performance advice only matters where code runs often: inside a loop, in a training step, in a
function reached from a loop, in the body of a ``tf.function`` or a ``Dataset.map`` function.
It does not matter in code that runs once or only while testing:

- **test code**: a test module (``test_*.py``, ``*_test.py``, ``conftest.py``, test helpers
  such as ``test_utils.py``, files under ``tests/``), a ``TestCase`` class, a ``test_*``
  function of a module that imports a test framework;
- **builders**: functions that build a Keras functional model (``keras.Input``,
  ``keras.Model(inputs, outputs)``): they run once, on symbolic tensors;
- **one-time layer methods**: ``build``, ``compute_output_shape``, ``get_config``,
  ``__init__`` of a class (Keras calls them once per model, not per step);
- **TensorFlow 1 graph code**: a module that turns eager execution off
  (``tf.compat.v1.disable_eager_execution()``, ``disable_v2_behavior()``) or runs a
  ``tf.compat.v1.Session``: there every op is already part of a graph.

The engine uses ``test_lines`` to keep performance categories silent in tests (correctness
rules stay on); rules ask ``why_cold`` and ``is_hot`` for their own decisions.
"""
from __future__ import annotations

import ast
import bisect
import builtins
import functools
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import cast

from tfperf_lsp.analysis.astutil import enumerated, first_line, int_value, keyword
from tfperf_lsp.analysis.facts import FunctionNode, ModuleFacts, argument_or_default, parameter_defaults, walk_same_scope
from tfperf_lsp.analysis.models import OPTIMIZER_STEPS, TRAINING_CALLS
from tfperf_lsp.analysis.versions import has_fallback, version_gated
from tfperf_lsp.notebook import TF1_MAGIC_MASK

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef

_TEST_FILE = re.compile(
    r"^(test_.*|.*_test|.*_tests|tests|testing|conftest|(.*_)?test_?utils?|(.*_)?testing_?utils?|.*_testlib)\.pyi?$"
)
_TEST_DIRS = {"tests", "test", "testing", "unittests", "unit_tests"}
_TEST_FRAMEWORKS = ("pytest", "unittest", "absl.testing", "tensorflow.test", "keras.src.testing")
_TEST_BASES = {"TestCase", "IsolatedAsyncioTestCase", "KerasParameterizedTestCase", "TestCaseWithFixtures"}

_FUNCTIONAL_INPUT = {"keras.Input", "keras.layers.Input", "keras.src.layers.Input"}
_MODEL_CLASSES = {"keras.Model", "keras.models.Model"}
# Calls that train or run a model: a def that makes them is not just a builder.
_USES_A_MODEL = {"fit", "train_on_batch", "predict", "predict_on_batch", "evaluate", "apply_gradients", "minimize"}
_ONE_TIME_METHODS = {"__init__", "build", "compute_output_shape", "compute_output_signature", "get_config", "from_config"}
_TF1_GRAPH_SWITCHES = {
    "tensorflow.compat.v1.disable_eager_execution",
    "tensorflow.compat.v1.disable_v2_behavior",
    "tensorflow.disable_eager_execution",
    "tensorflow.disable_v2_behavior",
}
_TF1_SESSIONS = {"tensorflow.compat.v1.Session", "tensorflow.Session", "tensorflow.compat.v1.InteractiveSession"}
_TAPE = "tensorflow.GradientTape"
_EAGER_SWITCHES = {"tensorflow.enable_eager_execution", "tensorflow.compat.v1.enable_eager_execution",
                   "tensorflow.contrib.eager.enable_eager_execution"}
# TensorFlow 1 names that TensorFlow 2 removed from ``tf`` (they live on in ``tf.compat.v1`` only).
_TF1_ONLY_MODULES = ("tensorflow.contrib.", "tensorflow.logging.", "tensorflow.gfile.", "tensorflow.estimator.inputs.",
                     "tensorflow.layers.", "tensorflow.nn.rnn_cell.", "tensorflow.python_io.", "tensorflow.app.",
                     "tensorflow.flags.", "tensorflow.Summary.")
# Modules only TensorFlow 1 and the multi-backend Keras of its time (2.3 and before) had: there
# ``model(x)`` on arrays built a graph node, not a result, and ``predict`` cost little per call.
_TF1_ERA_MODULES = ("tensorflow.contrib", "keras.engine.topology")
_TF1_ONLY = frozenset({
    "tensorflow.placeholder", "tensorflow.global_variables_initializer", "tensorflow.local_variables_initializer",
    "tensorflow.tables_initializer", "tensorflow.variable_scope", "tensorflow.get_variable", "tensorflow.string_split",
    "tensorflow.regex_replace", "tensorflow.to_float", "tensorflow.to_int32", "tensorflow.to_int64",
    "tensorflow.train.AdamOptimizer", "tensorflow.train.GradientDescentOptimizer", "tensorflow.train.RMSPropOptimizer",
    "tensorflow.train.MomentumOptimizer", "tensorflow.train.AdagradOptimizer", "tensorflow.train.get_or_create_global_step",
    "tensorflow.train.get_global_step", "tensorflow.trainable_variables", "tensorflow.global_variables",
    "tensorflow.reset_default_graph", "tensorflow.get_default_graph", "tensorflow.py_func", "tensorflow.assign",
    "tensorflow.random_normal", "tensorflow.random_uniform", "tensorflow.truncated_normal", "tensorflow.log",
    "tensorflow.summary.FileWriter", "tensorflow.app.run", "tensorflow.flags.DEFINE_string",
    # gone from TensorFlow 2 too (checked with hasattr on TF 2.21)
    "tensorflow.Summary", "tensorflow.ConfigProto", "tensorflow.GPUOptions", "tensorflow.set_random_seed",
    "tensorflow.Print", "tensorflow.squared_difference", "tensorflow.div", "tensorflow.multinomial",
    "tensorflow.random_crop", "tensorflow.train.Saver", "tensorflow.train.exponential_decay",
    "tensorflow.train.Supervisor", "tensorflow.image.resize_images", "tensorflow.summary.merge_all",
    "tensorflow.summary.merge", "keras.backend.get_session", "keras.backend.set_session",
    "tensorflow.Session", "tensorflow.InteractiveSession", "tensorflow.assign_add", "tensorflow.assign_sub",
    "tensorflow.enable_eager_execution", "tensorflow.decode_csv", "tensorflow.decode_raw", "tensorflow.read_file",
    "tensorflow.parse_single_example", "tensorflow.parse_example", "tensorflow.FixedLenFeature",
    "tensorflow.VarLenFeature", "tensorflow.sparse_tensor_to_dense", "tensorflow.nn.dynamic_rnn",
    "tensorflow.nn.static_rnn", "tensorflow.train.string_input_producer", "tensorflow.train.batch",
    "tensorflow.train.shuffle_batch", "tensorflow.data.make_one_shot_iterator",
    "tensorflow.image.resize_image_with_crop_or_pad",
    # the cuDNN-only recurrent layers: TensorFlow 2's LSTM and GRU pick cuDNN themselves
    "keras.layers.CuDNNGRU", "keras.layers.CuDNNLSTM",
})


def is_test_path(path: str | None) -> bool:
    """A file that by its name or folder holds tests or test helpers. Folders count only inside
    the project (below the nearest pyproject.toml, setup.py or .git): a checkout that happens to
    live in ``~/test/`` is not test code."""
    if not path:
        return False
    parts = os.path.normpath(path).replace("\\", "/").split("/")
    if _TEST_FILE.match(parts[-1]):
        return True
    folders = os.path.relpath(os.path.dirname(os.path.abspath(path)), _project_root(path)).replace("\\", "/").split("/")
    return any(part in _TEST_DIRS for part in folders)


_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


@functools.lru_cache(maxsize=256)
def _folder_root(folder: str) -> str:
    current = folder
    while True:
        if any(os.path.exists(os.path.join(current, marker)) for marker in _ROOT_MARKERS):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            # No project marker: below the working directory if the file is there, else nothing
            # of its path but the file name counts.
            cwd = os.getcwd()
            return cwd if folder == cwd or folder.startswith(cwd + os.sep) else folder
        current = parent


def _project_root(path: str) -> str:
    return _folder_root(os.path.dirname(os.path.abspath(path)))


# A tf.function trace (0.05-1 s) or an XLA compile (0.1-2 s) saves one to two milliseconds per
# call on a small step (an iris-sized train step: 1.9 ms eager, 0.19 ms as a graph, measured on a
# CPU): a step the code visibly runs at most this many times saves about a second at most, in
# all, beside what the trace costs (real-code reviews judged 200-500-step demo loops not worth it).
FEW_RUNS = 500
# A def that runs once per epoch beside the training loop (a sample translated to watch progress)
# may also run this many times in all after training, at module level (the test sentences): a
# blink beside the training either way.
FEW_EVALUATIONS = 100

# A loop that decodes one sequence and stops at its end token (``if word == '<end>': return``)
# runs once per token of that output: when its bound is not written down (``range(max_length)``
# from the data), it is counted as this many, a long sentence or caption.
DECODED_TOKENS = 100
_END_TOKEN = re.compile(r"<\s*/?\s*(end|eos)\s*>|\[(end|eos)\]|\bendseq\b|\beos\b|eos_(token|id)|end_(token|id)|idx_end|stop_token",
                        re.IGNORECASE)

class HotCode:
    def __init__(self, facts: ModuleFacts, path: str | None):
        self.facts = facts
        self.path = path
        self._unrunnable: dict[ast.AST, bool] = {}  # top-level defs that cannot run as written

    # ------------------------------------------------------------------ test code
    @cached_property
    def test_module(self) -> bool:
        return is_test_path(self.path)

    @cached_property
    def _imports_test_framework(self) -> bool:
        return any(
            q == f or q.startswith(f + ".")
            for q in self.facts.imports.bindings.values()
            for f in _TEST_FRAMEWORKS
        ) or "tf" in self.facts.imports.bindings and "tensorflow.test.main" in self.facts.calls_by_qualname

    @cached_property
    def test_lines(self) -> list[tuple[int, int]]:
        """0-based, inclusive line ranges of test code (the whole file for a test module)."""
        if self.test_module:
            return [(0, len(self.facts.source.lines))]
        ranges = []
        for cls in self.facts.classes:
            if any(_base_name(b) in _TEST_BASES or _base_name(b).endswith("TestCase") for b in cls.bases):
                ranges.append(_lines_of(cls))
        if self._imports_test_framework:
            for stmt in self.facts.tree.body:
                if isinstance(stmt, FunctionNode) and stmt.name.startswith("test"):
                    ranges.append(_lines_of(stmt))
        return ranges

    def in_test_line(self, line: int) -> bool:
        return any(start <= line <= end for start, end in self.test_lines)

    def in_test(self, node: ast.AST) -> bool:
        return self.in_test_line(getattr(node, "lineno", 1) - 1)

    @cached_property
    def error_demonstration_lines(self) -> list[tuple[int, int]]:
        """0-based, inclusive line ranges of code shown failing on purpose: the body of a ``with``
        that expects an error (``with assert_raises(ValueError):``, ``pytest.raises``), the defs
        this file calls only there (the guide's ``@tf.function def f(): v = tf.Variable(1.0)``),
        and defs named for the bug they show (``buggy_add``, ``leaky_function``, ``bad_step``)."""
        facts = self.facts
        named = [_lines_of(fn) for fn in facts.functions if _BUG_NAME.match(fn.name)]
        blocks = []
        for item in facts.with_items:
            statement = facts.parent(item)
            if isinstance(statement, (ast.With, ast.AsyncWith)) and _expects_an_error(item.context_expr) and statement.body:
                blocks.append((statement.body[0].lineno - 1, (statement.end_lineno or statement.lineno) - 1))
        if not blocks:
            return named
        ranges = named + blocks
        for fn in facts.functions:
            calls = facts.calls_by_def.get(fn, [])
            if calls and all(any(start <= call.lineno - 1 <= end for start, end in blocks) for call in calls):
                ranges.append(_lines_of(fn))
        return ranges

    def in_error_demonstration(self, line: int) -> bool:
        return any(start <= line <= end for start, end in self.error_demonstration_lines)

    @cached_property
    def shown_not_run_lines(self) -> list[tuple[int, int]]:
        """0-based, inclusive line ranges of defs whose code is shown, never run: every use of
        the name is inside ``tf.autograph.to_code(f.python_function)`` (``to_graph``,
        ``inspect.getsource``), the AutoGraph lessons' way to print what a function becomes."""
        facts = self.facts
        shows = [call for qualname in _SHOW_SOURCE for call in facts.calls_by_qualname.get(qualname, [])]
        if not shows:
            return []
        ranges = []
        for fn in facts.functions:
            uses = [use for use in facts.names.get(fn.name, []) if isinstance(use.ctx, ast.Load)]
            if uses and all(any(ancestor in shows for ancestor in facts.ancestors(use)) for use in uses):
                ranges.append(_lines_of(fn))
        return ranges

    def in_code_only_shown(self, line: int) -> bool:
        return any(start <= line <= end for start, end in self.shown_not_run_lines)

    @cached_property
    def disabled_lines(self) -> list[tuple[int, int]]:
        """0-based, inclusive line ranges of defs that the file calls only in commented-out code
        (``# agent.test()``, ``#predict_to_file(...)``) and nowhere else, by name or attribute:
        the author turned them off (judged wrong on a never-called ``test()`` of an RL agent and
        on submission writers whose call was commented out). Only in a file that runs its own
        defs (a script, a notebook): a library's functions are called from other modules. Not a
        decorated def (a framework may call it) nor a dunder method."""
        facts = self.facts
        commented = {name for line in facts.source.lines if "(" in line and "#" in line and line.lstrip().startswith("#")
                     for name in _CALLED_NAME.findall(line)}
        # The cheap checks first: most candidates are called by name somewhere, and the walk for
        # attributes and the reachability of the script cost a full pass each.
        candidates = [fn for fn in facts.functions if fn.name in commented and self._unused(fn)]
        if not candidates or not self.script_reachable:
            return []
        return [_lines_of(fn) for fn in candidates]

    def _unused(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Nothing in the file uses ``fn``: not by name, not by a string (``getattr(agent, "test")``);
        not decorated (a framework may call it), not a dunder method."""
        return self._unused_by_name(fn) and not re.search(rf"[\"']{re.escape(fn.name)}[\"']", self.facts.source.text)

    def _unused_by_name(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        facts = self.facts
        return not fn.decorator_list and not fn.name.startswith("__") and fn.name not in facts.attribute_names \
            and not any(isinstance(use.ctx, ast.Load) for use in facts.names.get(fn.name, []))

    def in_disabled_code(self, line: int) -> bool:
        if any(start <= line <= end for start, end in self.disabled_lines):
            return True
        # A top-level def nothing calls that reads names the file never binds (lecture notes:
        # ``def knowledge(): ... model.fit(inputs, targets)`` with ``inputs`` defined nowhere):
        # it cannot run as written. Worked out only for a def that holds a finding.
        fn = self._top_level_def_at(line)
        if fn is None:
            return False
        if fn not in self._unrunnable:
            # the cheap checks first: a search of the text, then the script's reachability (a
            # pass over the file), only for a def its name alone does not show in use
            self._unrunnable[fn] = self._unused_by_name(fn) and self._reads_unbound_names(fn) \
                and self._unused(fn) and bool(self.script_reachable)
        return self._unrunnable[fn]

    def _top_level_def_at(self, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The module-level def whose lines hold 0-based ``line``."""
        starts, defs = self._top_level_defs
        index = bisect.bisect_right(starts, line) - 1
        if index < 0:
            return None
        fn = defs[index]
        return fn if line <= (fn.end_lineno or fn.lineno) - 1 else None

    @cached_property
    def _top_level_defs(self) -> tuple[list[int], list[ast.FunctionDef | ast.AsyncFunctionDef]]:
        """The module-level defs in order, with their first lines (0-based, decorators included)."""
        defs = [stmt for stmt in self.facts.tree.body if isinstance(stmt, FunctionNode)]
        return [first_line(fn) - 1 for fn in defs], defs

    def _reads_unbound_names(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """``fn`` reads a name bound nowhere: not in it (a parameter, an assignment, an import),
        not at module level, not a builtin; never in a file with a star import."""
        facts = self.facts
        if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in facts.imports.statements):
            return False
        inner: set[str] = set()
        loads: list[str] = []
        for node in ast.walk(fn):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    loads.append(node.id)
                else:
                    inner.add(node.id)
            elif isinstance(node, ast.arg):
                inner.add(node.arg)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                inner.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (*FunctionNode, ast.ClassDef)):
                inner.add(node.name)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                inner.add(node.name)
        module = facts.imports.bindings.keys() | facts.module_defs.keys() | facts.module_assignments.keys() \
            | {c.name for c in facts.classes}
        return any(name not in inner and name not in module and name not in _BUILTINS for name in loads)


    @cached_property
    def dead_lines(self) -> list[tuple[int, int]]:
        """0-based, inclusive line ranges of blocks that never run: under ``if False:`` / ``if 0:``
        (or ``while False:``), and the ``else`` of ``if True:`` (a notebook's switched-off cell:
        judged wrong on a legacy import under ``if False:``)."""
        ranges = []
        for node in self.facts.constant_branches:  # indexed by the facts' walk
            test = cast(ast.Constant, node.test)
            block = node.body if not test.value else node.orelse if isinstance(node, ast.If) else []
            if block:
                ranges.append((first_line(block[0]) - 1, (block[-1].end_lineno or block[-1].lineno) - 1))
        return ranges

    def in_dead_code(self, line: int) -> bool:
        return any(start <= line <= end for start, end in self.dead_lines)

    @cached_property
    def superseded_lines(self) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """Top-level defs and classes that the module defines again further down (a notebook shows
        a version, then the fixed one: ``add_noise`` with ``np.random``, then with ``tf.random``),
        each as (its 0-based inclusive line range, the range of the last definition). Only where
        the last definition reads none of the module's objects that the earlier did not."""
        definitions: list[Definition] = [s for s in self.facts.tree.body if isinstance(s, (*FunctionNode, ast.ClassDef))]
        last = {stmt.name: stmt for stmt in definitions}
        if len(last) == len(definitions):
            return []
        defined = Counter(stmt.name for stmt in definitions)
        redefined = [stmt for stmt in definitions if defined[stmt.name] > 1]
        reads = self._module_objects_read(redefined, set(defined))
        return [(_lines_of(stmt), _lines_of(last[stmt.name])) for stmt in redefined
                if last[stmt.name] is not stmt and reads[last[stmt.name]] <= reads[stmt]]

    def _module_objects_read(self, definitions: Sequence[Definition], defined: set[str]) -> dict[ast.stmt, set[str]]:
        """The module's own objects (not imports; ``defined``: its top-level defs and classes)
        each of ``definitions`` reads: a later definition that reads one the earlier did not
        (``transformer`` instead of ``seq2seq_rnn``) is another variant, not the fixed version
        of the same code. From each statement's names where the facts walked it on its own (a
        document session), else from the index of names (one pass over their uses)."""
        facts = self.facts
        module_objects = (set(facts.module_assignments) | defined) - set(facts.imports.bindings)
        walks = facts.statement_walks
        if all(d in walks for d in definitions):
            return {d: {name for name, uses in walks[d].names.items()
                        if name in module_objects and any(isinstance(use.ctx, ast.Load) for use in uses)}
                    for d in definitions}
        starts = [first_line(d) for d in definitions]
        reads: dict[ast.stmt, set[str]] = {d: set() for d in definitions}
        for name in module_objects:
            for use in facts.names.get(name, ()):
                index = bisect.bisect_right(starts, use.lineno) - 1
                if index >= 0 and isinstance(use.ctx, ast.Load) and use.lineno <= (definitions[index].end_lineno or 0):
                    reads[definitions[index]].add(name)
        return reads

    def superseding_definition(self, line: int) -> tuple[int, int] | None:
        """The lines of the last definition of the def or class ``line`` is in, if the module
        defines it again further down; None otherwise."""
        return next((later for (start, end), later in self.superseded_lines if start <= line <= end), None)

    # ------------------------------------------------------------------ run-once code
    @cached_property
    def tf1_graph_mode(self) -> bool:
        """The module builds TensorFlow 1 graphs: ops are graph nodes, not eager dispatches. Either
        it says so (``disable_eager_execution``, a ``Session``), or it is written for TensorFlow 1
        (``tf.contrib``, ``tf.logging``...: gone in TensorFlow 2), whose default is graph mode,
        and does not turn eager execution on."""
        qualnames = self._called_qualnames
        if any(q in _TF1_GRAPH_SWITCHES or q in _TF1_SESSIONS for q in qualnames):
            return True
        return self.tf1_only and not any(q in _EAGER_SWITCHES for q in qualnames)

    @cached_property
    def v2_behavior_off(self) -> bool:
        """The program turns TensorFlow 2's behaviour off (``tf.compat.v1.disable_v2_behavior()``,
        ``disable_eager_execution()``): Keras then trains with its TensorFlow 1 loop, where
        ``steps_per_execution``, ``jit_compile`` and a model called for ``.numpy()`` do not
        apply. (Not for a ``Session`` alone: a TensorFlow 2 notebook may show one in passing.)"""
        return any(q in _TF1_GRAPH_SWITCHES and not all(version_gated(self.facts, c) for c in calls)
                   for q, calls in self.facts.calls_by_qualname.items())

    @property
    def _called_qualnames(self) -> Iterable[str]:
        return self.facts.calls_by_qualname.keys()

    @cached_property
    def tf1_only(self) -> bool:
        """The module calls TensorFlow 1 APIs that TensorFlow 2 removed (not through
        ``tf.compat.v1``), or is a notebook that selects TensorFlow 1: it cannot run on
        TensorFlow 2, where our advice applies."""
        # (not a call that runs only on an old version: ``else: tf.set_random_seed(3)`` after
        # ``if tf.__version__[0] == "2":``, code written for both)
        if any((q in _TF1_ONLY or q.startswith(_TF1_ONLY_MODULES)) and not all(version_gated(self.facts, c) for c in calls)
               for q, calls in self.facts.calls_by_qualname.items()):
            return True
        if TF1_MAGIC_MASK in self.facts.source.text and any(line.strip() == TF1_MAGIC_MASK for line in self.facts.source.lines):
            return True  # a notebook that selects TensorFlow 1 (``%tensorflow_version 1.x`` in Colab)
        return any((isinstance(n, ast.ImportFrom) and (n.module or "").startswith(_TF1_ERA_MODULES)
                    or isinstance(n, ast.Import) and any(a.name.startswith(_TF1_ERA_MODULES) for a in n.names))
                   and not version_gated(self.facts, n) and not has_fallback(self.facts, n)
                   for n in self.facts.imports.statements)

    def is_functional_builder(self, fn: ast.AST) -> bool:
        """A def that builds a Keras functional model and does nothing else with it: it runs
        once, on symbolic tensors. (A ``main()`` that builds the model and then trains it is not
        one: its training loop is hot.)"""
        builds = False
        for node in walk_same_scope(fn):
            if isinstance(node, ast.withitem) and isinstance(node.context_expr, ast.Call) \
                    and self.facts.qualname(node.context_expr.func) == _TAPE:
                return False
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Attribute) and node.func.attr in _USES_A_MODEL:
                return False
            qualname = self.facts.qualname(node.func)
            if qualname in _FUNCTIONAL_INPUT:
                builds = True
            elif qualname in _MODEL_CLASSES and (len(node.args) >= 2 or {"inputs", "outputs"} & {k.arg for k in node.keywords}):
                builds = True
        return builds

    def is_layer_application_builder(self, fn: ast.AST) -> bool:
        """A def whose body creates Keras layers and applies them: ``Dense(8)(x)`` builds, once;
        so does ``conv1 = Conv2D(...)`` then ``x = conv1(x)`` (a ResNet block helper)."""
        made: set[str] = set()  # names bound to a new layer
        for node in walk_same_scope(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
                if (self.facts.qualname(node.func.func) or "").startswith("keras.layers."):
                    return True
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Call) and (self.facts.qualname(node.value.func) or "").startswith("keras.layers."):
                made.add(node.targets[0].id)
        return bool(made) and any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in made
                                  for node in walk_same_scope(fn))

    def why_cold(self, node: ast.AST) -> str | None:
        """Why ``node`` runs too rarely for performance advice to matter; None if it may be hot."""
        if self.in_test(node):
            return "test code"
        for ancestor in [node, *self.facts.ancestors(node)]:
            if not isinstance(ancestor, FunctionNode):
                continue
            if ancestor.name in _ONE_TIME_METHODS and isinstance(self.facts.parent(ancestor), ast.ClassDef):
                return f"`{ancestor.name}` runs once per object"
            if self.is_functional_builder(ancestor):
                return "a Keras functional-model builder (runs once, on symbolic tensors)"
        return None

    def innermost_function_at(self, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost def whose lines hold ``line`` (0-based)."""
        best: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        for fn in self.facts.functions:
            if fn.lineno - 1 <= line <= (fn.end_lineno or fn.lineno) - 1:
                if best is None or fn.lineno >= best.lineno:
                    best = fn
        return best

    def shows_tracing_at_line(self, line: int) -> bool:
        """A comment right above the statement at ``line`` (0-based), or above a block around it
        in the same def, speaks of tracing (``# WARNING: a trace happens for any new value!``
        over ``for i in range(5): square(i)``): the code shows retracing on purpose, to teach it."""
        return self._commented_at_line(line, _TRACING_WORD)

    def labelled_wrong_at_line(self, line: int) -> bool:
        """A comment right above the statement at ``line`` (0-based), or above a block around it,
        or at the end of its first line, labels it the wrong way (``# INCORRECT: softmax and
        model output will be float16``, ``# Bad:``): a guide shows the mistake before the fix."""
        return self._commented_at_line(line, _WRONG_LABEL)

    def _commented_at_line(self, line: int, pattern: re.Pattern[str]) -> bool:
        lines = self.facts.source.lines
        for stmt in _statements_at(self.facts.tree.body, line):
            first = stmt.lineno - 1
            above = first - 1
            while above >= 0 and lines[above].lstrip().startswith("#"):
                if pattern.search(lines[above]):
                    return True
                above -= 1
            header = lines[first] if first < len(lines) else ""
            if "#" in header and pattern.search(header[header.index("#"):]):
                return True
        return False

    def cold_reason_at_line(self, line: int) -> str | None:
        """``why_cold`` for a finding's line: test code, a builder or a run-once method."""
        if self.in_test_line(line):
            return "test code"
        fn = self.innermost_function_at(line)
        return None if fn is None else self.why_cold(fn.body[0])

    # ------------------------------------------------------------------ hot code
    def is_training_step(self, fn: ast.AST) -> bool:
        """A def that records a GradientTape and applies gradients: it runs once per step."""
        tape = apply = False
        for node in walk_same_scope(fn):
            if isinstance(node, ast.withitem) and isinstance(node.context_expr, ast.Call):
                tape = tape or self.facts.qualname(node.context_expr.func) == _TAPE
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                apply = apply or node.func.attr in OPTIMIZER_STEPS
        return tape and apply

    def is_hot(self, node: ast.AST) -> bool:
        """Runs many times: in a loop, a tf.function, a training step, or a def called from a loop."""
        if self.why_cold(node) is not None:
            return False
        facts = self.facts
        if facts.enclosing_loops(node) or facts.in_tf_function(node) is not None:
            return True
        fn = facts.enclosing_function(node)
        while fn is not None:
            if self.is_training_step(fn) or facts.is_called_repeatedly(fn):
                return True
            fn = facts.enclosing_function(fn)
        return False


    # ------------------------------------------------------------------ eager entry points
    @cached_property
    def script_reachable(self) -> frozenset[ast.AST]:
        """Defs this file itself runs: called (or handed to a runner such as ``app.run(main)``)
        from module-level code, and what those call in turn. A library module's functions are
        not in it: their callers, and whether they call them eagerly, are elsewhere."""
        facts = self.facts
        methods: dict[str, list[ast.AST]] = {}
        for cls in facts.classes:
            for stmt in cls.body:
                if isinstance(stmt, FunctionNode):
                    methods.setdefault(stmt.name, []).append(stmt)
        found: set[ast.AST] = set()
        work: list[ast.AST] = []

        def visit(call: ast.Call) -> None:
            for expr in [call.func, *call.args, *(k.value for k in call.keywords)]:
                targets: list[ast.AST] = []
                target = facts.resolve_def(expr, call)
                if target is not None:
                    targets.append(target)
                elif isinstance(expr, ast.Attribute) and expr is call.func:
                    targets.extend(methods.get(expr.attr, []))  # obj.method(): any class's method
                for t in targets:
                    if t not in found:
                        found.add(t)
                        work.append(t)

        for call in facts.calls:
            if facts.enclosing_function(call) is None and facts.enclosing_class(call) is None:
                visit(call)
        while work:
            for node in walk_same_scope(work.pop()):
                if isinstance(node, ast.Call):
                    visit(node)
        return frozenset(found)

    def runs_eagerly_in_script(self, node: ast.AST) -> bool:
        """``node`` runs eagerly in a program this file runs: module-level code or a def reached
        from it, not traced into a graph, not TensorFlow 1 graph code."""
        if self.tf1_graph_mode or self.facts.in_tf_function(node) is not None:
            return False
        fn = self.facts.enclosing_function(node)
        return fn is None or fn in self.script_reachable

    def per_step(self, node: ast.AST) -> bool:
        """Runs on every iteration of the innermost loop around it, and that loop is the step
        loop: not under ``if step % N == 0`` (periodic), not once per epoch beside an inner loop
        that does the steps."""
        loops = self.facts.enclosing_loops(node)
        if not loops or self.on_some_iterations(node):
            return False
        innermost = loops[0]
        # An inner loop under an ``if`` (PPO's ``if len(batch) >= update_interval or done:`` then
        # its update epochs) is a periodic update beside the steps, not the loop of steps that
        # would make the innermost one an epoch loop.
        inner_loops = [n for n in walk_same_scope(innermost) if n is not innermost
                       and isinstance(n, (ast.For, ast.While, ast.AsyncFor)) and not self._under_an_if(n, innermost)]
        if not inner_loops:
            return True
        around = set(self.facts.ancestors(node))
        return all(inner in around for inner in inner_loops)

    def _under_an_if(self, node: ast.AST, loop: ast.AST) -> bool:
        """``node`` sits in the body or ``else`` of an ``if`` inside ``loop``."""
        for ancestor in self.facts.ancestors(node):
            if ancestor is loop:
                return False
            if isinstance(ancestor, ast.If):
                return True
        return False

    def runs_beside_training(self, node: ast.AST) -> bool:
        """``node`` is in a def that the file calls only from an epoch loop, beside the inner loop
        that trains (``for batch in ds: train_step(...)``, then ``predict(encoder, decoder, ...)``
        to show one sample), or from a loop that trains, on some of its iterations only (``if step
        == loader.steps_per_epoch: evaluate(loader_va)``): it runs once per epoch, or every N
        steps, a blink beside the steps. Calls at module level outside loops run once (the test
        set's evaluation after training), or in a loop over a few items written in the code (20
        test sentences translated after training), and do not change that."""
        facts = self.facts
        fn = facts.enclosing_function(node)
        calls = facts.calls_by_def.get(fn, []) if fn is not None else []
        beside = False
        for call in calls:
            loops = facts.enclosing_loops(call)
            if loops and (self.beside_a_training_loop(loops[0], call) or self.on_some_iterations(call) and self.trains(loops[0])):
                beside = True
            elif not (facts.enclosing_function(call) is None and (not loops or self.runs_few_times([call], FEW_EVALUATIONS))):
                return False
        return beside

    def beside_a_training_loop(self, loop: ast.AST, node: ast.AST, through_steps: bool = True) -> bool:
        """``loop`` holds an inner loop that trains and ``node`` is not in it: an epoch loop, and
        ``node`` runs once per epoch beside the steps. ``through_steps``: a call of a def that
        opens a ``GradientTape`` counts as training too, not only an optimizer or Keras training call."""
        around = set(self.facts.ancestors(node))
        return any(inner is not loop and inner not in around and isinstance(inner, (ast.For, ast.While, ast.AsyncFor))
                   and self.trains(inner, through_steps) for inner in walk_same_scope(loop))

    def trains(self, loop: ast.AST, through_steps: bool = True, skip: ast.AST | None = None) -> bool:
        """The loop runs a training step: an optimizer or Keras training call, or (``through_steps``)
        a def of this file that opens a ``GradientTape`` (``train_step(x, y)``); code inside
        ``skip`` (a branch of the loop) does not count."""
        skipped = set(ast.walk(skip)) if skip is not None else set()
        for node in walk_same_scope(loop):
            if not isinstance(node, ast.Call) or node in skipped:
                continue
            if isinstance(node.func, ast.Attribute) and node.func.attr in TRAINING_CALLS:
                return True
            if not through_steps:
                continue
            step = self.facts.resolve_def(node.func, node)
            if step is not None and any(isinstance(n, ast.withitem) and isinstance(n.context_expr, ast.Call)
                                        and self.facts.qualname(n.context_expr.func) == _TAPE for n in walk_same_scope(step)):
                return True
        return False

    def on_some_iterations(self, node: ast.AST) -> bool:
        """Inside the innermost loop around it, ``node`` sits in the body of ``if step % 100 ==
        0`` / ``if epoch == 0``: it skips most iterations (the ``else`` does not)."""
        loops = self.facts.enclosing_loops(node)
        if not loops:
            return False
        innermost = loops[0]
        counters = {n.id for loop in loops if isinstance(loop, (ast.For, ast.AsyncFor))
                    for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
        counters |= {n.target.id for n in walk_same_scope(innermost) if isinstance(n, ast.AugAssign)
                     and isinstance(n.op, ast.Add) and isinstance(n.target, ast.Name)
                     and isinstance(n.value, ast.Constant) and n.value.value == 1}  # ``step += 1``
        child = node
        for ancestor in self.facts.ancestors(node):
            if ancestor is innermost:
                break
            if isinstance(ancestor, ast.If) and child not in ancestor.orelse and _runs_on_some_iterations(ancestor.test, counters):
                return True
            child = ancestor
        return False

    def runs_at_most(self, node: ast.AST) -> int | None:
        """How many times ``node`` runs, when the code writes it down: module-level code runs
        once, and each loop around it in its scope has a literal count (``range(10)``,
        ``ds.take(5)``, ``for epoch in range(EPOCHS)`` with ``EPOCHS = 5``; a loop that stops at
        its end token counts as ``DECODED_TOKENS`` when its bound is not written). None when unknown
        (a loop over a dataset, or code in a def, which its callers may run any number of times).
        Code in a top-level def runs as often as its calls in this file do together (``forecast(
        model, 14)`` called once), when they are all counted and the def is not used otherwise."""
        return self._runs_at_most(node, 2)

    def _runs_at_most(self, node: ast.AST, depth: int) -> int | None:
        facts = self.facts
        if facts.enclosing_class(node) is not None:
            return None
        fn = facts.enclosing_function(node)
        if fn is not None and (depth == 0 or facts.enclosing_function(fn) is not None):
            return None
        total = 1
        for loop in facts.enclosing_loops(node):
            count = self.loop_count(loop)
            if count is None and stops_at_end_token(loop):
                count = DECODED_TOKENS
            if count is None:
                return None
            total *= count
        if fn is None:
            return total
        calls = facts.calls_by_def.get(fn, [])
        if not calls or len(facts.names.get(fn.name, [])) != len(calls):
            return None  # never called here, or passed around (a callback, a map function)
        runs = [self._runs_at_most(call, depth - 1) for call in calls]
        if any(n is None for n in runs):
            return None
        return total * sum(n for n in runs if n is not None)

    def runs_few_times(self, nodes: Sequence[ast.AST], limit: int = FEW_RUNS) -> bool:
        """The code writes down that ``nodes`` (the calls of a step, say) run ``limit`` times or
        fewer in all: too few to pay back a trace or a compile. False when any count is unknown."""
        if not nodes:
            return False
        counts = [self.runs_at_most(node) for node in nodes]
        return all(n is not None for n in counts) and sum(n for n in counts if n is not None) <= limit

    def loop_count(self, loop: ast.AST) -> int | None:
        """The iteration count of a ``for`` loop written with literals, else None. For a
        comprehension (``[model(x) for _ in range(100)]``), at most that many: the product of
        its generators' counts (an ``if`` can only skip)."""
        if isinstance(loop, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            total = 1
            for generator in loop.generators:
                count = self._iterable_count(generator.iter)
                if count is None:
                    return None
                total *= count
            return total
        if isinstance(loop, ast.While):
            return self._counted_while(loop)
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            return None
        count = self._iterable_count(loop.iter)
        stop = _break_at_index(loop, self.facts)
        if stop is not None and (count is None or stop < count):
            return stop
        return count

    def _counted_while(self, loop: ast.While) -> int | None:
        """``i = 0`` then ``while i < 30:`` whose every pass adds to ``i`` (``i = i + 1`` in each
        branch of the body, no ``continue``): at most 30 passes. None for any other ``while``."""
        test = loop.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Lt, ast.LtE))
                and isinstance(test.left, ast.Name)) or loop.orelse:
            return None
        name, bound = test.left.id, self._int_constant(test.comparators[0])
        if bound is None or any(isinstance(n, ast.Continue) for n in ast.walk(loop)):
            return None
        inside = set(ast.walk(loop))
        stores = [n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
        if not stores or not all(_increment_of(self.facts.parent(n), name) for n in stores) \
                or not _always_increments(loop.body, name):
            return None
        scope = self.facts.enclosing_function(loop)
        assigned = self.facts.assignments_in(scope) if scope is not None else self.facts.module_assignments
        before = [a for a in assigned.get(name, []) if a not in inside and getattr(a, "lineno", 0) < loop.lineno]
        if len(before) != 1 or not isinstance(before[0], ast.Assign):
            return None
        start = before[0].value
        if not (isinstance(start, ast.Constant) and type(start.value) is int):
            return None
        return max(0, bound - start.value + (1 if isinstance(test.ops[0], ast.LtE) else 0))

    def _iterable_count(self, iterable: ast.expr) -> int | None:
        iterable = enumerated(iterable) or iterable  # as many items as what it numbers
        if isinstance(iterable, ast.Name):  # ``for x in train_data`` where ``train_data = ....take(5)``
            assignment = self.facts.reaching_assignment(iterable)
            value = getattr(assignment, "value", None)
            if isinstance(value, (ast.List, ast.Tuple, ast.Set)) and _binds_only(assignment, iterable.id) \
                    and not self._grown(iterable.id):
                iterable = value  # ``EXAMPLES = ['3 May 1979', ...]``, never appended to
            iterable = value if isinstance(value, (ast.Call, ast.Subscript)) and _counted(value) else iterable
        if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)):
            return None if any(isinstance(e, ast.Starred) for e in iterable.elts) else len(iterable.elts)
        if isinstance(iterable, ast.Subscript) and isinstance(iterable.slice, ast.Slice):
            # ``rows[:10]``: at most that many
            window = iterable.slice
            if window.lower is None and window.step is None and window.upper is not None:
                return self._int_constant(window.upper)
            if window.lower is None and window.upper is None and _is_minus_one(window.step):
                return self._iterable_count(iterable.value)  # ``np.linspace(-4, 4, n)[::-1]``: reversed
            return None
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id in ("list", "reversed") \
                and len(iterable.args) == 1 and not iterable.keywords:
            return self._iterable_count(iterable.args[0])  # ``list(np.linspace(0, 1, size))``
        if isinstance(iterable, ast.Call) and self.facts.qualname(iterable.func) == "numpy.linspace":
            num = iterable.args[2] if len(iterable.args) > 2 else keyword(iterable, "num")
            return self._int_constant(num) if num is not None else 50  # numpy's default
        if isinstance(iterable, ast.Call) and self.facts.qualname(iterable.func) == "random.sample" and len(iterable.args) == 2:
            return self._int_constant(iterable.args[1])  # ``random.sample(test_sentences, 10)``
        if isinstance(iterable, ast.Call) and self.facts.qualname(iterable.func) in _SIZED_DRAWS:
            # ``ids = np.random.choice(np.arange(len(test_dataset)), size=n)`` with ``n = 5``
            position = _SIZED_DRAWS[cast(str, self.facts.qualname(iterable.func))]
            size = keyword(iterable, "size") or (iterable.args[position] if len(iterable.args) > position else None)
            return self._int_constant(size) if size is not None else None
        if not isinstance(iterable, ast.Call) or not iterable.args:
            return None
        given = [self._int_constant(a) for a in iterable.args]
        bounds = [b for b in given if b is not None]
        if len(bounds) != len(given):
            return None
        if isinstance(iterable.func, ast.Attribute) and iterable.func.attr == "take" and len(bounds) == 1:
            return bounds[0]
        if (isinstance(iterable.func, ast.Name) and iterable.func.id == "range"
                or self.facts.qualname(iterable.func) == "numpy.arange") and len(bounds) <= 3:
            return len(range(*bounds))  # ``np.arange(num_tests)`` with integers counts the same
        return None

    def _grown(self, name: str) -> bool:
        """``name`` is added to somewhere (``name.append(x)``, ``name += [...]``, ``name[i] = x``)."""
        for use in self.facts.names.get(name, []):
            parent = self.facts.parent(use)
            if isinstance(parent, ast.Attribute) and parent.attr in _GROWERS or isinstance(parent, ast.AugAssign) \
                    or isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store):
                return True
        return False

    def _int_constant(self, expr: ast.expr, depth: int = 2) -> int | None:
        """An int literal, or a module-level name bound once to one (``EPOCHS = 5``; in module
        code, bound to one by the last assignment above the use), or a name the def around the
        use binds once to one (``num_generate = 200``), or a
        parameter of a top-level def that every call of it in this file passes such a number
        (``forecast(values, model, into_future=INTO_FUTURE)``), or leaves at a default that is
        one, or passes on from a parameter of its own that is so (two defs deep): the largest."""
        value: ast.AST | None = expr
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult)):
            # ``range(1, epochs + 1)``
            left, right = self._int_constant(expr.left, depth), self._int_constant(expr.right, depth)
            if left is None or right is None:
                return None
            return left + right if isinstance(expr.op, ast.Add) else left - right if isinstance(expr.op, ast.Sub) else left * right
        if isinstance(expr, ast.Name):
            passed = self._passed_constant(expr, depth) if depth > 0 else None
            if passed is not None:
                return passed
            if self.facts.enclosing_function(expr) is None:
                # module code runs in order: the last assignment above it (a notebook or a guide
                # sets ``epochs = 2`` in one section and ``epochs = 1`` in the next)
                assignment = self.facts.reaching_assignment(expr)
                value = assignment.value if isinstance(assignment, ast.Assign) and len(assignment.targets) == 1 else None
            else:
                fn = self.facts.enclosing_function(expr)
                local = self.facts.assignments_in(fn).get(expr.id) if fn is not None else None
                # a name the def assigns is its own (``num_generate = 200`` in ``generate_text``):
                # bound once to a literal, that is its value; a module-level one of the same name is not
                assignments = local if local is not None else self.facts.module_assignments.get(expr.id, [])
                if len(assignments) != 1 or (local is not None and not (
                        isinstance(assignments[0], ast.Assign) and len(assignments[0].targets) == 1)):
                    return None
                value = getattr(assignments[0], "value", None)
        if isinstance(value, ast.Constant) and isinstance(value.value, int) and not isinstance(value.value, bool):
            return value.value
        return None

    def _passed_constant(self, name: ast.Name, depth: int) -> int | None:
        facts = self.facts
        fn = facts.enclosing_function(name)
        if fn is None or facts.enclosing_function(fn) is not None or facts.enclosing_class(fn) is not None \
                or name.id in facts.assignments_in(fn):
            return None  # a nested def or a method: its calls go through objects this file passes on
        if name.id not in {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}:
            return None
        calls = facts.calls_by_def.get(fn, [])
        if not calls:
            return None
        values = []
        for call in calls:
            value = argument_or_default(call, fn, name.id)
            count = self._int_constant(value, depth - 1) if value is not None else None
            if count is None:
                return None
            values.append(count)
        return max(values)

    def paced_by_user(self, node: ast.AST) -> bool:
        """Every run of ``node`` waits for the user: a loop around it asks for ``input()`` on each
        iteration, or its def is called only from such loops (an interactive demo translates a
        sentence, then asks "Continue?")."""
        facts = self.facts
        if any(self._asks_user(loop) for loop in facts.enclosing_loops(node)):
            return True
        fn = facts.enclosing_function(node)
        if fn is None or facts.enclosing_function(fn) is not None:
            return False
        calls = facts.calls_by_def.get(fn, [])
        return bool(calls) and all(any(self._asks_user(loop) for loop in facts.enclosing_loops(call)) for call in calls)

    def _asks_user(self, loop: ast.AST) -> bool:
        """The loop calls ``input()``, or a def of this file that does (``self.human_input()``)."""
        return any(isinstance(n, ast.Call) and (_calls_input(n) or n in self._calls_asking_user)
                   for n in walk_same_scope(loop)) if self._input_is_builtin else False

    @cached_property
    def _input_is_builtin(self) -> bool:
        # the builtin, also as ``from builtins import input`` (Python 2 compatible scripts)
        return self.facts.imports.bindings.get("input", "builtins.input") == "builtins.input"

    @cached_property
    def _calls_asking_user(self) -> set[ast.Call]:
        """The calls of the defs of this file whose own body calls ``input()``."""
        return {call for fn, calls in self.facts.calls_by_def.items()
                if any(isinstance(n, ast.Call) and _calls_input(n) for n in walk_same_scope(fn)) for call in calls}

    def repeats(self, node: ast.AST) -> bool:
        """Inside a loop that runs more than a handful of times (not ``for c in range(3)``) and
        does more than draw (not a loop that shows nine augmented images)."""
        return any(not is_short_loop(loop) and not self._short_by_constant(loop) and not self.draws(loop)
                   and not self.over_uploads(loop) for loop in self.facts.enclosing_loops(node))

    def _short_by_constant(self, loop: ast.AST) -> bool:
        """``for i in range(NUM_AUG)`` with ``NUM_AUG = 4`` at module level: short, as ``range(4)``."""
        count = self.loop_count(loop)
        return count is not None and count <= _SHORT

    def over_uploads(self, loop: ast.AST) -> bool:
        """A loop over the files a user uploads by hand (``uploaded = files.upload()`` in Colab,
        then ``for name in uploaded.keys()``): it runs once per file picked, a handful."""
        iterable = getattr(loop, "iter", None)
        for _ in range(3):  # enumerate(...), list(...), sorted(...); .keys() / .items() / .values()
            if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id in _WRAPPERS and iterable.args:
                iterable = iterable.args[0]
            elif isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and iterable.func.attr in _DICT_VIEWS:
                iterable = iterable.func.value
        if isinstance(iterable, ast.Name):
            iterable = getattr(self.facts.reaching_assignment(iterable), "value", None)
        return isinstance(iterable, ast.Call) and self.facts.qualname(iterable.func) in _UPLOADS

    def draws(self, loop: ast.AST) -> bool:
        """A display loop: its body plots or renders (``plt.imshow``, ``display(...)``,
        ``env.render()``). It runs to show a few results, not to compute many. Drawing switched on
        by a flag (``if render: env.render()``, a parameter of the def) does not make it one: the
        loop also runs without it (an episode loop trained with ``render=False``)."""
        for node in walk_same_scope(loop):
            if not isinstance(node, ast.Call):
                continue
            qualname = self.facts.qualname(node.func) or ""
            if (qualname.startswith(_DRAWING_MODULES) or (isinstance(node.func, ast.Attribute) and node.func.attr in _DRAWING_METHODS)
                    or (isinstance(node.func, ast.Name) and node.func.id == "display")) and not self._behind_a_parameter(node, loop):
                return True
        return False

    def _behind_a_parameter(self, node: ast.AST, loop: ast.AST) -> bool:
        """``node`` runs under ``if render:`` in ``loop``, ``render`` a parameter of the def around
        that is off unless a caller turns it on (no default, or a false one)."""
        fn = self.facts.enclosing_function(loop)
        if not isinstance(fn, FunctionNode):
            return False
        defaults = parameter_defaults(fn)
        switches = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)
                    if (default := defaults.get(a.arg)) is None or isinstance(default, ast.Constant) and not default.value}
        child = node
        for ancestor in self.facts.ancestors(node):
            if ancestor is loop:
                return False
            if isinstance(ancestor, ast.If) and isinstance(ancestor.test, ast.Name) and ancestor.test.id in switches \
                    and child in ancestor.body:
                return True
            child = ancestor
        return False


_SHORT = 4  # a loop over at most this many literal items: channels, a few sizes, train/eval
_DRAWING_MODULES = ("matplotlib.", "IPython.display.", "PIL.Image.fromarray", "seaborn.")
_DRAWING_METHODS = frozenset({"imshow", "subplot", "add_subplot", "render", "savefig", "plot", "pcolormesh", "errorbar",
                              "fill_between"})


def _peeks(iterable: ast.expr) -> bool:
    """A dataset chain with ``.take(n)``, n a small literal, and nothing after it that makes
    more elements (``repeat``, ``unbatch``, ``flat_map``...): ``ds.take(1).map(f).batch(1)``."""
    node = iterable
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        method = node.func.attr
        if method == "take":
            count = node.args[0] if node.args else None
            return isinstance(count, ast.Constant) and isinstance(count.value, int) and count.value <= _SHORT
        if method not in _KEEPS_COUNT:
            return False
        node = node.func.value
    return False


# Dataset methods that never make more elements than they get (batch makes fewer).
_KEEPS_COUNT = frozenset({"map", "batch", "padded_batch", "filter", "prefetch", "cache", "as_numpy_iterator",
                          "shuffle", "apply", "with_options"})


def _runs_on_some_iterations(test: ast.expr, counters: set[str]) -> bool:
    """``if step % 100 == 0`` (periodic) or ``if step == 0`` with ``step`` a loop variable or a
    counter the loop adds one to (once, or once per epoch: ``if step == loader.steps_per_epoch``):
    the branch does not run on every iteration. (``if mode == 1`` may hold on every one.)"""
    for node in ast.walk(test):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MODULO_OPS:
            return True  # ``tf.equal(tf.math.mod(step, 10), 0)``: the same test, written in ops
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq) for op in node.ops):
            sides = [node.left, *node.comparators]
            counted = [c for c in sides if isinstance(c, ast.Name) and c.id in counters]
            others = [c for c in sides if c not in counted]
            if counted and others and all(
                    isinstance(c, ast.Constant) and isinstance(c.value, int) and not isinstance(c.value, bool)
                    or isinstance(c, (ast.Attribute, ast.Name, ast.BinOp, ast.Call)) for c in others):
                return True
    return False


_MODULO_OPS = frozenset({"mod", "floormod", "truncatemod", "fmod", "remainder"})
_UPLOADS = frozenset({"google.colab.files.upload"})
_WRAPPERS = frozenset({"enumerate", "list", "sorted", "tuple"})
_DICT_VIEWS = frozenset({"keys", "items", "values"})


# "trace", "retracing", "re-traced": a comment that speaks of tracing (not of a "stack trace").
_TRACING_WORD = re.compile(r"(?<!stack )\b(re-?)?trac(e|es|ed|ing)\b", re.IGNORECASE)


def _statements_at(body: list[ast.stmt], line: int) -> list[ast.stmt]:
    """The statements whose lines hold ``line`` (0-based), innermost first, up to the def or
    class around them (its own header and comments are not the block's)."""
    found: list[ast.stmt] = []
    # The module's body is in source order: the last statement starting at or above ``line``
    # is the only one that can hold it (a bisection, not a scan of a notebook's 400 statements).
    index = bisect.bisect_right(body, line, key=lambda s: s.lineno - 1) - 1
    while index > 0 and line <= (body[index - 1].end_lineno or body[index - 1].lineno) - 1:
        index -= 1  # ``a = 1; b = 2``: the first of the statements on that line
    stmt = body[index] if index >= 0 and line <= (body[index].end_lineno or body[index].lineno) - 1 else None
    while stmt is not None:
        if isinstance(stmt, (*FunctionNode, ast.ClassDef)) and stmt.lineno - 1 != line:
            found = []  # only the statements inside the def count
            body = stmt.body
        else:
            found.append(stmt)
            body = [child for field in ("body", "orelse", "finalbody") for child in getattr(stmt, field, None) or []]
            body += [child for handler in getattr(stmt, "handlers", []) for child in handler.body]
        stmt = next((s for s in body if s.lineno - 1 <= line <= (s.end_lineno or s.lineno) - 1), None)
    return found[::-1]


# A def named for the bug it demonstrates (the TensorFlow guide's buggy_add, leaky_function).
_BUG_NAME = re.compile(r"^_*(buggy|bad|broken|wrong|incorrect|leaky)(_|[A-Z]|$)", re.IGNORECASE)
_RAISES = frozenset({"raises", "assert_raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp",
                     "assert_raises_regex", "assertRaisesOpError", "assertRaisesWithPredicateMatch"})


def _expects_an_error(expr: ast.expr) -> bool:
    """``assert_raises(ValueError)``, ``pytest.raises(...)``, ``self.assertRaises(...)``: a
    context manager that passes only if its body raises."""
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in _RAISES:
        return True
    return name.endswith(("raises", "Raises")) and bool(expr.args)


# Calls that print a function's code rather than run it.
# NumPy draws whose ``size`` (keyword, or this positional argument) is how many items they give
_SIZED_DRAWS = {"numpy.random.choice": 1, "numpy.random.randint": 2}
_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "get_ipython", "display"}
_CALLED_NAME = re.compile(r"\b([A-Za-z_]\w*)\s*\(")  # in a comment line: a call turned off
_SHOW_SOURCE = ("tensorflow.autograph.to_code", "tensorflow.autograph.to_graph", "inspect.getsource")


def _binds_only(assignment: ast.AST | None, name: str) -> bool:
    """``name = value`` itself, not ``name, other = a, b`` (the tuple is not what ``name`` holds)."""
    targets = assignment.targets if isinstance(assignment, ast.Assign) else \
        [assignment.target] if isinstance(assignment, ast.AnnAssign) else []
    return len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id == name


_GROWERS = frozenset({"append", "extend", "insert", "add", "update", "__setitem__"})


def _increment_of(stmt: ast.AST | None, name: str) -> bool:
    """``i += 1`` or ``i = i + 1`` (any positive literal step)."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
        step = stmt.value
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.BinOp) \
            and isinstance(stmt.value.op, ast.Add) and isinstance(stmt.value.left, ast.Name) and stmt.value.left.id == name:
        step = stmt.value.right
    else:
        return False
    return isinstance(step, ast.Constant) and type(step.value) is int and step.value >= 1


def _always_increments(body: list[ast.stmt], name: str) -> bool:
    """Every way through ``body`` runs an increment of ``name`` (in it, or in both branches of an ``if``)."""
    for stmt in body:
        if _increment_of(stmt, name):
            return True
        if isinstance(stmt, ast.If) and stmt.orelse and _always_increments(stmt.body, name) \
                and _always_increments(stmt.orelse, name):
            return True
    return False


def _is_minus_one(expr: ast.expr | None) -> bool:
    return isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and isinstance(expr.operand, ast.Constant) \
        and expr.operand.value == 1


def _counted(value: ast.expr) -> bool:
    """An expression whose length ``_iterable_count`` can read: ``ds.take(5)``, ``random.sample(x, 10)``,
    ``rows[:10]``, ``range(10)``, ``np.random.choice(x, size=5)``."""
    if isinstance(value, ast.Subscript):
        return isinstance(value.slice, ast.Slice)
    func = value.func if isinstance(value, ast.Call) else None
    if isinstance(func, ast.Name) and func.id == "range" or isinstance(func, ast.Attribute) and func.attr == "linspace":
        return True  # ``epochs = range(10)``, then ``for epoch in epochs``
    if isinstance(func, ast.Attribute) and func.attr in ("choice", "randint") and isinstance(value, ast.Call) \
            and keyword(value, "size") is not None:
        return True  # ``ids = np.random.choice(indices, size=n)``
    return (isinstance(func, ast.Attribute) and func.attr in ("take", "sample")
            and (func.attr == "take" or isinstance(func.value, ast.Name) and func.value.id == "random"))


def is_short_loop(loop: ast.AST) -> bool:
    """A loop whose iteration count is written in the code and small: ``range(3)``, ``(a, b)``."""
    iterables = [loop.iter] if isinstance(loop, (ast.For, ast.AsyncFor)) else [g.iter for g in getattr(loop, "generators", [])]
    if not iterables:
        return False  # while loops: unknown count
    for iterable in iterables:
        while (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id in _SAME_COUNT
               and len(iterable.args) == 1):
            iterable = iterable.args[0]  # ``enumerate((10, 250))``: as many items as the literal
        if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)) and len(iterable.elts) <= _SHORT:
            continue
        if _peeks(iterable):
            continue  # ``for x in ds.take(1)``, ``ds.take(1).map(f).batch(1)``: a peek at a few elements
        if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"
                and iterable.args and all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in iterable.args)):
            bounds = [a.value for a in iterable.args if isinstance(a, ast.Constant) and isinstance(a.value, int)]
            count = len(range(*bounds)) if len(bounds) <= 3 else _SHORT + 1
            if count <= _SHORT:
                continue
        return False
    return True


# A comment that labels the code under it as the mistake a guide shows before its fix.
_WRONG_LABEL = re.compile(r"#\s*(?:INCORRECT|Incorrect|WRONG|Wrong|BAD|Bad|Anti-?pattern|ANTI-?PATTERN)\b"
                          r"\s*(?:[:!,(-]|$|way\b|example\b|version\b|usage\b)")
_SAME_COUNT = frozenset({"enumerate", "reversed", "sorted", "list", "tuple"})


def _base_name(base: ast.expr) -> str:
    if isinstance(base, ast.Attribute):
        return base.attr
    if isinstance(base, ast.Name):
        return base.id
    return ""


def _lines_of(node: ast.stmt) -> tuple[int, int]:
    return first_line(node) - 1, (node.end_lineno or node.lineno) - 1


def _calls_input(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == "input"


def stops_at_end_token(loop: ast.AST) -> bool:
    """A decoding loop: it ends (``break`` or ``return``) when the token it picked is the end
    token (``if targ_lang.index_word[predicted_id] == '<end>': return result``,
    ``if sampled_token == "[end]": break``)."""
    if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
        return False
    for node in walk_same_scope(loop):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) \
                and any(isinstance(s, (ast.Break, ast.Return)) for s in node.body) \
                and all(isinstance(op, (ast.Eq, ast.Is, ast.In)) for op in node.test.ops) \
                and _END_TOKEN.search(ast.unparse(node.test)):
            return True
    return False


def _break_at_index(loop: ast.For | ast.AsyncFor, facts: ModuleFacts) -> int | None:
    """``for idx, x in enumerate(gen): ... if idx == 29: break`` (or ``>= 29``, ``> 29``, or a
    module-level name set once to the bound) at the loop body's top level: at most 30
    iterations, whatever ``gen`` holds. Likewise ``if idx > 10:
    continue`` as the body's first statement: the rest of the body runs at most 12 times (a demo
    that prints a few translations of a whole dataset); the guard itself only compares."""
    target = loop.target
    if not (enumerated(loop.iter) is not None and isinstance(target, ast.Tuple) and target.elts
            and isinstance(target.elts[0], ast.Name)):
        return None
    index = target.elts[0].id
    for position, stmt in enumerate(loop.body):
        if not (isinstance(stmt, ast.If) and not stmt.orelse and (
                any(isinstance(s, ast.Break) for s in stmt.body)
                or position == 0 and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Continue))):
            continue
        test = stmt.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)
                and test.left.id == index):
            continue
        bound = int_value(facts, test.comparators[0])  # a literal, or ``total_test_steps = 100``
        if bound is None or bound < 0:
            continue
        if isinstance(test.ops[0], (ast.Eq, ast.GtE)):
            return bound + 1
        if isinstance(test.ops[0], ast.Gt):
            return bound + 2
    return None
