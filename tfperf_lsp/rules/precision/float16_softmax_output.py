"""TFP602: a softmax output layer computed in float16/bfloat16 under a mixed policy."""
from __future__ import annotations

import ast
from functools import partial
from typing import TYPE_CHECKING, Iterator, Literal

from tfperf_lsp.rewrite.lazy import libcst as cst  # libcst only when a fix is built

from tfperf_lsp.model import Finding, Fix, Severity
from tfperf_lsp.rewrite.cst import StatementRewrite
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.precision._policy import DENSE, MIXED, activation_name, policy_at, policy_events
from tfperf_lsp.analysis.astutil import keyword

if TYPE_CHECKING:
    import libcst

# Where the Dense stands, which decides how the fix splits it: ``Dense(...)(x)``, an element of
# ``Sequential([...])``, or ``model.add(Dense(...))``.
Shape = Literal["functional", "list", "add"]
_FIX_TITLE = "Split off a float32 softmax Activation"


class Float16SoftmaxOutput(Rule):
    code = "TFP602"
    name = "float16-softmax-output"
    category = "precision"
    severity = Severity.WARNING
    summary = "Softmax output layer computed in float16 under a mixed policy: use a float32 Activation"
    doc_url = "https://www.tensorflow.org/guide/mixed_precision#building_the_model"
    fixable = True
    docs = """
    ## What it does
    Finds `Dense(..., activation="softmax")` built while a mixed policy (`mixed_float16` or
    `mixed_bfloat16`) is the global Keras policy (set by `set_global_policy`, or the removed
    `set_policy`, above the layer).

    ## Why is this slow
    It is a numerics problem that mixed precision brings: the layer computes and returns float16,
    so the softmax and the loss that follows lose precision and can overflow. The mixed precision
    guide: the model's outputs should be float32; splitting off the activation costs nothing. Checked under TF: the model's output dtype goes from float16 to float32.

    ## When it stays silent
    Under the default float32 policy (or after `set_global_policy("float32")`), when the Dense
    sets its own `dtype=`, and for other activations.

    ## Fix
    Splits the layer into `Dense(n)` and `Activation("softmax", dtype="float32")`: as two
    elements of a `Sequential([...])` list, as `Activation(...)(Dense(n)(x))` in a functional
    call, or as a second `model.add(...)`. Preconditions: the Dense has no `name=` (the output
    layer's name would move), and `Activation` can be spelled the way `Dense` is (`layers.` or an
    imported name). Marked unsafe because the output changes dtype (float16 -> float32) and
    precision; the values agree with the original to the float16 resolution (tests: rtol 1e-2,
    atol 1e-3).
    """
    invalid = (
        Example(
            """
            import numpy as np
            from tensorflow import keras

            keras.mixed_precision.set_global_policy("mixed_float16")
            model = keras.Sequential([
                keras.Input(shape=(8,)),
                keras.layers.Dense(16, activation="relu"),
                keras.layers.Dense(4, activation="softmax"),  # class probabilities
            ])
            probs = model(np.linspace(-1.0, 1.0, 16, dtype="float32").reshape(2, 8))
            keras.mixed_precision.set_global_policy("float32")
            """,
            changes_outputs=True,  # float16 -> float32 output; tests/rules/tensorflow_claims/test_precision.py compare at rtol 1e-2
            verify="assert probs.dtype == 'float16', probs.dtype",
            verify_fixed="assert probs.dtype == 'float32', probs.dtype",
        ),
    )
    valid = (
        Example(
            """
            from tensorflow import keras

            keras.mixed_precision.set_global_policy("mixed_float16")
            model = keras.Sequential([
                keras.Input(shape=(8,)),
                keras.layers.Dense(4),
                keras.layers.Activation("softmax", dtype="float32"),
            ])
            keras.mixed_precision.set_global_policy("float32")
            head = keras.layers.Dense(4, activation="softmax")  # float32 policy again
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if not policy_events(ctx):
            return
        facts = ctx.facts
        for call in ctx.facts.calls_to(*DENSE):
            if activation_name(facts, call) != "softmax":
                continue
            policy = policy_at(ctx, call.lineno)
            if policy not in MIXED or keyword(call, "dtype") is not None:
                continue
            shape = _fix_shape(ctx, call)
            yield self.finding(
                ctx,
                call,
                f"`{_label(ctx, call)}` computes and returns {policy.split('_')[1]} under the "
                f"`{policy}` policy: split it into `Dense` + `Activation('softmax', dtype='float32')`",
                label=f"{policy.split('_')[1]} output",
                fix=partial(_split_activation, ctx, call, shape) if shape else None,
                fix_title=_FIX_TITLE if shape else None,
                fix_applicability="unsafe",
                head_only=True,
            )


def _split_activation(ctx: RuleContext, call: ast.Call, shape: Shape) -> Fix | None:
    """``Dense(4, activation="softmax")`` -> ``Dense(4), Activation("softmax", dtype="float32")``
    in a list; ``Activation("softmax", dtype="float32")(Dense(4)(x))`` in a functional call; a
    second ``model.add(Activation(...))`` after ``model.add(Dense(4))``."""
    facts = ctx.facts
    stmt = facts.statement_of(call)
    try:
        rewrite = StatementRewrite(ctx.source, stmt)
    except (ValueError, cst.ParserSyntaxError):
        return None
    dense = rewrite.node_at(call, cst.Call)
    activation = _activation_factory(ctx, call)
    given = keyword(call, "activation")
    if dense is None or activation is None or given is None:
        return None
    value = ctx.source.segment(given)
    quote = value[0] if value[:1] in "'\"" else '"'
    act = cst.parse_expression(f"{activation}({value}, dtype={quote}float32{quote})")
    plain = _without_keyword(dense, "activation")
    if shape == "functional":
        parent = facts.parent(call)
        outer = rewrite.node_at(parent, cst.Call) if parent is not None else None
        if outer is None:
            return None
        new = cst.Call(func=act, args=[cst.Arg(outer.with_changes(func=plain))])
        module = rewrite.module.deep_replace(outer, new)
    elif shape == "list":
        element = next((e for e in _elements(rewrite.module) if e.value is dense), None)
        if element is None:
            return None
        pair = element.with_changes(value=plain, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        module = rewrite.module.deep_replace(element, cst.FlattenSentinel([pair, element.with_changes(value=act)]))
    else:  # model.add(Dense(...)): a second model.add(...) statement after it
        line = rewrite.module.body[0]
        first = line.deep_replace(dense, plain)
        second = line.deep_replace(dense, act).with_changes(leading_lines=(), trailing_whitespace=cst.TrailingWhitespace())
        module = rewrite.module.with_changes(body=[first, second])
    edit = rewrite.edit(module)
    return Fix(_FIX_TITLE, (edit,)) if edit else None


def _label(ctx: RuleContext, call: ast.Call) -> str:
    text = " ".join(ctx.source.segment(call).split())
    return text if len(text) <= 60 else "Dense(..., activation='softmax')"


def _fix_shape(ctx: RuleContext, call: ast.Call) -> Shape | None:
    """How the fix can split this layer here, or None when a precondition fails."""
    facts = ctx.facts
    if keyword(call, "name") is not None or _activation_factory(ctx, call) is None:
        return None
    parent = facts.parent(call)
    if isinstance(parent, ast.Call) and parent.func is call and len(parent.args) == 1 and not parent.keywords:
        return "functional"
    if isinstance(parent, ast.List) and isinstance(facts.parent(parent), ast.Call):
        return "list"
    if (
        isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr == "add"
        and parent.args == [call]
    ):
        stmt = facts.parent(parent)
        if isinstance(stmt, ast.Expr) and stmt.lineno == stmt.end_lineno:
            return "add"
    return None


def _activation_factory(ctx: RuleContext, call: ast.Call) -> str | None:
    """``keras.layers.Activation`` spelled like the Dense (``layers.Dense`` -> ``layers.Activation``)."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return f"{ctx.source.segment(func.value)}.Activation"
    for local, qualname in ctx.facts.imports.bindings.items():
        if qualname.endswith(".Activation") and ctx.facts.qualname(ast.Name(id=local)) == "keras.layers.Activation":
            return local
    return None


def _without_keyword(call: libcst.Call, name: str) -> libcst.Call:
    args = list(call.args)
    index = next(i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == name)
    removed = args.pop(index)
    if index == len(args) and args:  # it was the last argument: its comma style moves up
        args[-1] = args[-1].with_changes(comma=removed.comma)
    return call.with_changes(args=args)


def _elements(module: libcst.Module) -> Iterator[libcst.Element]:
    stack: list[libcst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Element):
            yield node
        stack.extend(node.children)
