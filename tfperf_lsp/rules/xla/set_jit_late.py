"""TFP503: ``tf.config.optimizer.set_jit(True)`` after models were built or tf.functions called."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator

from tfperf_lsp.analysis.astutil import keyword
from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.models import creates_model
from tfperf_lsp.model import Edit, Finding, Fix, Pos, Severity, Span
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.xla._common import imported_before, leading_imports_end

SET_JIT = "tensorflow.config.optimizer.set_jit"
_FIX_TITLE = "Move set_jit to program start"


class SetJitLate(Rule):
    code = "TFP503"
    name = "set-jit-late"
    category = "xla"
    severity = Severity.WARNING
    summary = "`tf.config.optimizer.set_jit(True)` called after models are built: set it at program start"
    doc_url = "https://www.tensorflow.org/xla#auto-clustering"
    fixable = True
    docs = """
    ## What it does
    Finds `tf.config.optimizer.set_jit(True)` (or `"autoclustering"`) that runs after a Keras
    model or layer was constructed or a tf.function was called: earlier in the module, or - for
    a call inside a function - earlier in that function or at module level before its `def`.

    ## Why is this slow
    The XLA guide: "JIT level is cached for a session… set in the very beginning".
    Models and functions that already exist keep running without auto-clustering, so the call
    does not do what it says.

    ## When it stays silent
    When `set_jit` comes before every model, layer and tf.function call (as in the XLA guide), and for `set_jit(False)` or a non-literal argument.

    ## Fix
    Moves the statement (with its trailing comment) to just after the module's leading imports.
    Preconditions: the call is a module-level statement of its own; the name it uses (`tf`) is
    imported in those leading imports; no other `set_jit` call runs in between. Marked unsafe:
    code that ran without auto-clustering now runs with it, which may change results within
    float tolerance on devices where auto-clustering is active (on CPU it needs
    `TF_XLA_FLAGS=--tf_xla_cpu_global_jit`). A call inside a function (often paired with a
    `set_jit(False)` afterwards) gets the warning without a fix.
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(2)])
            tf.config.optimizer.set_jit(True)  # enable XLA
            y = model(tf.ones([3, 4]))
            tf.config.optimizer.set_jit(False)
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            tf.config.optimizer.set_jit(True)

            model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(2)])
            y = model(tf.ones([3, 4]))
            tf.config.optimizer.set_jit(False)
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if "set_jit" not in ctx.source.text:
            return
        set_jits = ctx.facts.calls_to(SET_JIT)
        for call in set_jits:
            if not _enables(call):
                continue
            found = _earlier_work(ctx, call)
            if found is None:
                continue
            earlier_call, earlier = found
            movable = _movable(ctx, call, set_jits)
            yield self.finding(
                ctx,
                call,
                f"`set_jit({ctx.source.segment(call.args[0]) if call.args else '...'})` runs after {earlier}: "
                f"models and functions that already exist "
                f"keep running without XLA auto-clustering - call it at program start",
                label="set_jit too late",
                cites=(earlier_call.lineno,),
                fix=partial(_move_to_start, ctx, call) if movable else None,
                fix_title=_FIX_TITLE if movable else None,
                fix_applicability="unsafe",
            )


def _move_to_start(ctx: RuleContext, call: ast.Call) -> Fix:
    """``import tf; model = ...; tf.config.optimizer.set_jit(True)`` ->
    ``import tf; tf.config.optimizer.set_jit(True); model = ...``: the statement (with its
    trailing comment) moves to just after the leading imports."""
    stmt = ctx.facts.statement_of(call)
    first, last = stmt.lineno - 1, _end_line(stmt) - 1
    moved = "\n".join(ctx.source.lines[first : last + 1]) + "\n"
    insert = leading_imports_end(ctx.facts.tree)
    return Fix(
        _FIX_TITLE,
        (
            Edit(Span(Pos(insert, 0), Pos(insert, 0)), moved),
            Edit(Span(Pos(first, 0), Pos(last + 1, 0)), ""),
        ),
    )


def _end_line(stmt: ast.stmt) -> int:
    """The 1-based last line of ``stmt`` (always set on parsed nodes)."""
    return stmt.lineno if stmt.end_lineno is None else stmt.end_lineno


def _enables(call: ast.Call) -> bool:
    value = call.args[0] if call.args else keyword(call, "enabled")
    if not isinstance(value, ast.Constant):
        return False
    return value.value is True or value.value == "autoclustering"


def _earlier_work(ctx: RuleContext, call: ast.Call) -> tuple[ast.Call, str] | None:
    """What ran before ``call``: a model/layer construction or a tf.function call (the call and
    its description)."""
    facts = ctx.facts
    fn = facts.enclosing_function(call)
    outer = fn
    while outer is not None and facts.enclosing_function(outer) is not None:
        outer = facts.enclosing_function(outer)
    for other in facts.calls:  # in source order
        if other.lineno >= call.lineno:
            break
        scope = facts.enclosing_function(other)
        if scope is None:
            # Module-level code runs before a module-level call written later, and before any
            # function whose def comes later in the file.
            if other.lineno >= (call.lineno if outer is None else outer.lineno):
                continue
        elif scope is not fn or other.lineno >= call.lineno:
            continue  # another function's body: when it runs is unknown
        description = _work(facts, other)
        if description:
            return other, description
    return None


def _work(facts: ModuleFacts, call: ast.Call) -> str | None:
    qualname = facts.qualname(call.func) or ""
    if qualname.startswith(("keras.layers.", "keras.applications.")) or creates_model(facts, call):
        return f"`{_name(call)}` (line {call.lineno})"
    if facts.resolve_tf_function(call.func, call) is not None:
        return f"the tf.function call `{_name(call)}` (line {call.lineno})"
    return None


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "call")


def _movable(ctx: RuleContext, call: ast.Call, set_jits: list[ast.Call]) -> bool:
    facts = ctx.facts
    stmt = facts.statement_of(call)
    if facts.parent(stmt) is not facts.tree or not (isinstance(stmt, ast.Expr) and stmt.value is call):
        return False
    insert = leading_imports_end(facts.tree)
    if insert == 0 or stmt.lineno - 1 < insert:
        return False
    root = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not (isinstance(root, ast.Name) and imported_before(facts, root.id, insert)):
        return False
    first, last = stmt.lineno - 1, _end_line(stmt) - 1
    source = ctx.source
    if source.line(first)[: stmt.col_offset].strip() or source.line(last)[stmt.end_col_offset :].strip().startswith(";"):
        return False  # shares its line with another statement
    return not any(c is not call and insert < c.lineno <= stmt.lineno for c in set_jits)

