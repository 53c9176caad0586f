"""What a rule is: identity, docs, examples, a detector and (optionally) a fix.

A rule module reads top to bottom: the class attributes say what it detects, why it is slow,
when it stays silent and how it is fixed; ``invalid``/``valid`` examples double as tests
(tests/rules/test_examples.py runs them all) and as the examples in ``tfperf rule CODE``.
"""
from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from typing import Callable, ClassVar, Iterable, Literal

from tfperf_lsp.model import EAGER_ADVICE_CATEGORIES, TF2_API_ADVICE_CATEGORIES, Finding, Fix, Severity
from tfperf_lsp.rules.context import RuleContext

# What the benchmark times for a finding (bench/plans.py): the code as it is against
#   "rewrite":    the code after the rule's fix;
#   "pipeline":   the tf.data pipeline after the rule's fix, timed per element it yields;
#   "graph":      the function the finding is in, eager vs tf.function vs XLA;
#   "graph-call": the same, for the function called where the finding is (a model call);
#   "xla":        the tf.function the finding is on, as it is vs jit_compile=True.
Benchmark = Literal["rewrite", "pipeline", "graph", "graph-call", "xla"]
# Builds a finding's fix when the user asks for it; returns None when no fix can be built.
FixBuilder = Callable[[], "Fix | None"]


@dataclass(frozen=True)
class Example:
    code: str
    # invalid examples: how many findings of this rule the code gives. What the fix makes of the
    # example is computed by the fix (engine.fixed_example) and pinned by the rule's snapshot.
    count: int = 1
    # invalid examples whose preconditions for a rewrite do not hold: flagged, but no fix
    expect_no_fix: bool = False
    # False: the example needs what the TensorFlow test environment lacks (tf_keras): it is
    # analysed and its fix checked, but it is not run.
    runnable: bool = True
    # retrace examples: name of the tf.function whose trace count the TensorFlow test checks
    # (more than one trace for the code, ``traces_after`` after the fix) ...
    traced: str | None = None
    traces_after: int = 1
    # ... or name of a module-level list the example's functions append to while tracing, for
    # functions re-created in a loop (each new Function has its own trace count).
    trace_counter: str | None = None
    # Python statements run under TensorFlow after the example (``verify``) or after its fixed
    # version (``verify_fixed``), in its namespace: assertions about what TF really does.
    verify: str | None = None
    verify_fixed: str | None = None
    # The fix changes results on purpose (e.g. print -> tf.print): skip the equal-outputs check.
    changes_outputs: bool = False
    note: str = ""

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).lstrip("\n")



def _with_general_silences(docs: str, category: str, graph_mode_too: bool = False, needs_tf2: bool = False,
                           since_tf: tuple[int, int] | None = None) -> str:
    """Add, at the end of "When it stays silent", where every rule (of the category) is silent
    (the engine applies it: engine._cold, analysis/hotness.py)."""
    text = ("Like every rule, it stays silent in test code (test modules, `TestCase` classes, "
            "`test_*` functions; `lint-tests = true` in `[tool.tfperf]` turns them back on), in code "
            "shown failing on purpose (under `with assert_raises(ValueError):` or `pytest.raises`, the "
            "defs called only there, defs named for their bug such as `buggy_add`), in code only shown "
            "(`print(tf.autograph.to_code(f.python_function))` with `f` called nowhere), and in a def "
            "or class the module defines again further down without the problem (a notebook's "
            "before-and-after lesson)")
    if category in EAGER_ADVICE_CATEGORIES:
        text += (", in code that runs once per model (a Keras functional builder, a layer's `build` / "
                 "`compute_output_shape` / `get_config`)")
        if not graph_mode_too and category in TF2_API_ADVICE_CATEGORIES:
            text += " and in graph code (`disable_eager_execution()`, `tf.compat.v1.Session`)"
        elif not graph_mode_too:
            text += (" and in TensorFlow 1 graph code (`disable_eager_execution()`, `tf.compat.v1.Session`, "
                     "or APIs TensorFlow 2 removed, such as `tf.contrib` or `tf.logging`, without "
                     "`enable_eager_execution()`)")
    if category in TF2_API_ADVICE_CATEGORIES or needs_tf2:
        text += (", and in code written for TensorFlow 1 (APIs TensorFlow 2 removed, such as `tf.contrib`, "
                 "`tf.train.AdamOptimizer` or `tf.placeholder`, the multi-backend Keras's `keras.engine.topology`, "
                 "or a notebook's `%tensorflow_version 1.x`): "
                 "the TensorFlow 2 APIs its advice names are not there")
    if since_tf is not None:
        version = f"{since_tf[0]}.{since_tf[1]}"
        text += (f", and in a project that pins TensorFlow older than {version} (`tensorflow==2.3.1` or `<{version}` "
                 "in the `requirements*.txt`, `environment.yml`, `setup.py`, `setup.cfg`, `pyproject.toml` or `Pipfile` "
                 "of the file's folder or a folder above it, or a notebook's `!pip install tensorflow==...`): "
                 f"its advice holds from TensorFlow {version}")
    marker = "\n## Fix"
    if marker in docs:
        head, tail = docs.split(marker, 1)
        return f"{head.rstrip()}\n\n{text}.\n{marker}{tail}"
    return f"{docs}\n\n{text}."


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    category: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]  # one line, for `tfperf rules`
    doc_url: ClassVar[str]  # the TensorFlow guide section that explains the problem
    docs: ClassVar[str]  # markdown: what it does, why it is slow, when it is silent, the fix
    invalid: ClassVar[tuple[Example, ...]] = ()
    valid: ClassVar[tuple[Example, ...]] = ()
    # Whether timing the fix (or the opportunity) tells the user something: not for renames of
    # deprecated arguments, imports, or correctness fixes that change behaviour on purpose.
    measurable: ClassVar[bool] = True
    # Off unless a selector names it (ruff's RUF100 works the same way).
    opt_in: ClassVar[bool] = False
    # Whether the rule offers a quick fix where its preconditions hold (`tfperf rules`, README).
    fixable: ClassVar[bool] = False
    # The advice holds in TensorFlow 1 graph code too (``map_fn`` -> ``vectorized_map``), where
    # the rest of its category's advice, which assumes eager execution, does not.
    graph_mode_too: ClassVar[bool] = False
    # The fix names TensorFlow 2 APIs (``tf.vectorized_map(..., fallback_to_while_loop=...)``):
    # silent in code written for TensorFlow 1, as the categories of TF2_API_ADVICE_CATEGORIES are.
    needs_tf2: ClassVar[bool] = False
    # The TensorFlow release from which the advice holds (``reduce_retracing`` came in 2.9):
    # silent in a project that pins an older one (analysis/pins.py, engine._cold).
    since_tf: ClassVar[tuple[int, int] | None] = None
    # What ``tfperf bench`` times for this rule's findings (see ``Benchmark``).
    benchmark: ClassVar[Benchmark] = "rewrite"

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        raise NotImplementedError

    # ------------------------------------------------------------------ helpers for rules
    def finding(
        self,
        ctx: RuleContext,
        node: ast.AST,
        message: str,
        *,
        label: str = "",
        fix: FixBuilder | None = None,
        fix_title: str | None = None,
        fix_applicability: str = "safe",
        severity: Severity | None = None,
        head_only: bool = False,
        cites: tuple[int, ...] = (),
    ) -> Finding:
        """The finding at ``node``. ``fix``, with ``fix_title``, builds the fix when the user asks
        for it: write it here, where the nodes it needs are in scope, e.g.
        ``fix=functools.partial(_hoist, ctx, call)`` (``partial``, not a lambda in a loop, which
        would see the loop's last node). ``cites``: the lines the message names as "line N"
        (1-based), so that a notebook can name them by cell."""
        if (fix is None) != (fix_title is None):
            raise ValueError(f"{self.code}: a fix and its title come together (fix=..., fix_title=...)")
        span = ctx.source.head_span(node) if head_only else ctx.source.span(node)
        return Finding(
            code=self.code,
            category=self.category,
            severity=severity or self.severity,
            message=message,
            span=span,
            label=label,
            fix_title=fix_title,
            fix_applicability=fix_applicability,
            build_fix=fix,
            cited_lines=cites,
        )

    @classmethod
    def markdown(cls, fixed_example: str | None = None) -> str:
        """The full rule documentation, as `tfperf rule CODE` and the hover's link show it, with
        ``fixed_example`` (the first invalid example after the fix: engine.rule_docs computes it)
        as "Use instead"."""
        parts = [f"# {cls.code} {cls.name}", "", f"*Category:* `{cls.category}` · *Severity:* {cls.severity.value}", ""]
        parts.append(_with_general_silences(textwrap.dedent(cls.docs).strip(), cls.category, cls.graph_mode_too, cls.needs_tf2,
                                             cls.since_tf))
        parts += ["", f"TensorFlow guide: {cls.doc_url}"]
        if cls.invalid:
            parts += ["", "## Example"]
            example = cls.invalid[0]
            parts += ["", "```python", example.source.rstrip(), "```"]
            if fixed_example is not None:
                parts += ["", "Use instead:", "", "```python", fixed_example.rstrip(), "```"]
        if cls.valid:
            parts += ["", "## Not flagged", "", "```python", cls.valid[0].source.rstrip(), "```"]
        return "\n".join(parts) + "\n"
