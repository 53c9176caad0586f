"""TFP204: a TensorFlow op called as a statement, its result thrown away: it changes nothing."""
from __future__ import annotations

import ast
from typing import Iterator

from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.model import Finding, Severity
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import DATASET_TRANSFORMATIONS, reads_a_clock, short
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.input_pipeline._pipeline import pipelines

# Ops that return a new tensor and change nothing else: calling one as a statement is a no-op
# (eager: computed and dropped every step; in a graph: pruned, so it never even runs).
_PURE_OPS = frozenset(
    "tensorflow." + name
    for name in (
        "clip_by_norm clip_by_value clip_by_global_norm cast reshape transpose squeeze expand_dims "
        "concat stack unstack split tile gather gather_nd where abs add subtract multiply divide "
        "maximum minimum matmul einsum reduce_sum reduce_mean reduce_max reduce_min reduce_prod "
        "square sqrt exp math.log nn.relu nn.softmax nn.sigmoid sigmoid tanh nn.l2_normalize "
        "math.l2_normalize one_hot pad reverse sort argsort argmax argmin round sign negative "
        "image.resize image.flip_left_right image.convert_image_dtype boolean_mask "
        "convert_to_tensor zeros_like ones_like"
    ).split()
)


class DiscardedOpResult(Rule):
    code = "TFP204"
    name = "discarded-op-result"
    category = "correctness"
    severity = Severity.WARNING
    summary = ("A TensorFlow op's or tf.data transformation's result is thrown away (`tf.clip_by_norm(g, 5)`, "
               "`ds.shuffle(n)` as a statement): it changes nothing")
    doc_url = "https://www.tensorflow.org/guide/tensor"
    docs = """
    ## What it does
    Finds a call of a TensorFlow op that returns a new tensor and has no other effect
    (`tf.clip_by_norm`, `tf.clip_by_value`, `tf.cast`, `tf.reshape`, `tf.nn.l2_normalize`, ...)
    written as a statement of its own, so its result is thrown away; and a `tf.data`
    transformation (`dataset.map(f)`, `.batch(n)`, `.shuffle(n)`...) on a visible pipeline
    written as a statement: it returns a new dataset and the old one is used on. When the op's
    argument is the item of the loop around it (`for g in gradients: tf.clip_by_norm(g, 15)`),
    the message suggests building the new list (`gradients = [tf.clip_by_norm(g, 15) for g in
    gradients]`): assigning to `g` would change nothing either.

    ## Why is this slow
    Tensors are immutable: `tf.clip_by_norm(grad, 15)` returns a clipped copy and leaves `grad`
    as it was, so the statement clips nothing (a correctness bug: the training step runs without
    the clipping its author meant). Eagerly it still computes the op on every step, for nothing;
    in a `tf.function` graph the unused op is pruned. Measured on TF 2.21: after
    `tf.clip_by_norm(g, 1.0)` as a statement, `g` keeps its norm.

    ## When it stays silent
    For ops with effects (`tf.print`, `tf.debugging.*`, `tf.assert_*`, `tf.summary.*`,
    `tf.io.write_file`, variable `assign`) and `tf.ensure_shape`, a shape check written as a
    statement (it raises on a mismatch), for calls whose result is used (assigned, returned,
    passed on), and for ops tfperf does not know to be pure. At the top level of a module: in a
    notebook, a cell's last expression is its displayed output (and a script's top level runs
    once). Inside the `try` of a `try`/`except` or a `with pytest.raises(...)` /
    `self.assertRaises*(...)` block: the op is run for the error it raises (a shape or dtype
    that does not fit).

    ## Fix
    Use the result: `grad = tf.clip_by_norm(grad, 15)` (no quick fix: which name to assign to is
    the author's choice, and the clipped value must then reach `apply_gradients`).
    """
    invalid = (
        Example(
            """
            import tensorflow as tf

            def clipped_norm(g):
                tf.clip_by_norm(g, 1.0)  # meant: g = tf.clip_by_norm(g, 1.0)
                return float(tf.norm(g))


            norm = clipped_norm(tf.constant([3.0, 4.0]))
            """,
            verify="""
            assert abs(norm - 5.0) < 1e-6  # nothing was clipped
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            g = tf.constant([3.0, 4.0])
            g = tf.clip_by_norm(g, 1.0)
            tf.print("norm:", tf.norm(g))
            tf.debugging.assert_all_finite(g, "finite")
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        by_qualname = facts.calls_by_qualname
        pure = {call for name in by_qualname.keys() & _PURE_OPS for call in by_qualname[name]}
        for call in facts.calls:  # in the facts' order; the few that call a pure op
            if call not in pure:
                continue
            statement = facts.parent(call)
            if not isinstance(statement, ast.Expr) or statement.value is not call:
                continue
            if isinstance(facts.parent(statement), ast.Module):
                continue  # top level: a notebook cell's last expression is its output, shown
            qualname = facts.qualname(call.func)
            if qualname not in _PURE_OPS:
                continue
            if _expected_to_raise(facts, statement):
                continue  # run for the error it raises (a shape or dtype demonstration)
            if _timed(facts, statement):
                continue  # run for its time: a benchmark of the op, or its warm-up before the clock starts
            op = short(qualname)
            loop = _loop_over_argument(facts, call)
            if loop is not None:
                # ``for g in grads: tf.clip_by_norm(g, 5)``: ``g = ...`` would not change ``grads``
                item, items = loop[0], ctx.source.segment(loop[1])
                advice = (f"build the new list (`{items} = [{op}({item}, ...) for {item} in {items}]`): assigning "
                          f"to `{item}` would leave `{items}` as it was")
            else:
                advice = f"assign it (`x = {op}(x, ...)`)"
            yield self.finding(
                ctx, call,
                f"The result of `{op}(...)` is thrown away: tensors are immutable, so this "
                f"statement changes nothing - {advice}",
                label="result unused",
            )
        yield from self._discarded_dataset_steps(ctx)

    def _discarded_dataset_steps(self, ctx: RuleContext) -> Iterator[Finding]:
        """``dataset.map(f)`` as a statement: a ``tf.data`` transformation returns a new dataset
        and leaves its input as it was, so the map never runs."""
        facts = ctx.facts
        for step in pipelines(ctx).steps:
            statement = facts.parent(step.call)
            if step.method not in DATASET_TRANSFORMATIONS or not isinstance(statement, ast.Expr) \
                    or isinstance(facts.parent(statement), ast.Module):
                continue
            receiver = step.call.func.value if isinstance(step.call.func, ast.Attribute) else None
            target = ast.unparse(receiver) if isinstance(receiver, (ast.Name, ast.Attribute)) else "dataset"
            # The function it maps has never run on this pipeline: a judge found an augmentation
            # that raises on a third of the images once assigned (a random crop after a downscale).
            untried = "; its function has never run here, so try it on a few elements first" \
                if step.method in _FUNCTION_STEPS and (step.call.args or step.call.keywords) else ""
            yield self.finding(
                ctx, step.call,
                f"The dataset that `.{step.method}(...)` returns is thrown away: a tf.data transformation "
                f"makes a new dataset and leaves `{target}` as it was - assign it "
                f"(`{target} = {target}.{step.method}(...)`){untried}",
                label="result unused",
            )


# Transformations that run a function of the user's on each element.
_FUNCTION_STEPS = frozenset({"map", "filter", "flat_map", "interleave", "parallel_interleave"})


def _expected_to_raise(facts: ModuleFacts, statement: ast.stmt) -> bool:
    """In the body of a ``try`` that handles errors, or of ``with pytest.raises(...)`` /
    ``assert_raises(...)`` / ``self.assertRaisesRegex(...)``: the op is run for the error it raises, not for its result."""
    child: ast.AST = statement
    for ancestor in facts.ancestors(statement):
        if isinstance(ancestor, ast.Try) and ancestor.handlers and child in ancestor.body:
            return True
        if isinstance(ancestor, ast.With) and any(
                isinstance(item.context_expr, ast.Call) and "raises" in _callee_name(item.context_expr.func).lower()
                for item in ancestor.items):
            return True
        if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return False
        child = ancestor
    return False


def _timed(facts: ModuleFacts, statement: ast.stmt) -> bool:
    """The function (or, at module level, the loop) around ``statement`` reads a clock:
    ``start = time.time(); for _ in range(10): tf.matmul(x, x)`` times the op, and a first
    ``tf.matmul(x, x)`` before the clock starts is its warm-up."""
    scope: ast.AST | None = facts.enclosing_function(statement)
    if scope is None:
        loops = facts.enclosing_loops(statement)
        scope = loops[0] if loops else None
    return scope is not None and reads_a_clock(facts, scope)


def _callee_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _loop_over_argument(facts: ModuleFacts, call: ast.Call) -> tuple[str, ast.expr] | None:
    """The ``for item in items`` loop whose item is the op's first argument, the statement
    directly in its body (``for g in grads: tf.clip_by_norm(g, 5)``), with a name as the item and
    a name or attribute as what it walks: a new list of the results is what was meant. (The
    item's name, what the loop walks.)"""
    loop = facts.parent(facts.statement_of(call))
    if not isinstance(loop, ast.For) or not call.args or not isinstance(call.args[0], ast.Name):
        return None
    if not isinstance(loop.target, ast.Name) or loop.target.id != call.args[0].id:
        return None
    return (loop.target.id, loop.iter) if isinstance(loop.iter, (ast.Name, ast.Attribute)) else None
