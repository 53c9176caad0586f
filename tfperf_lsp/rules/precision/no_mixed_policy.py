"""TFP601: a Keras model trained in float32 on a device where a mixed policy would pay."""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator

from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.models import creates_model
from tfperf_lsp.model import Edit, Finding, Fix, Pos, Severity, Span
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.rules.keras._keras import small_model
from tfperf_lsp.rules.precision._policy import describe, device_facts, policy_at, policy_events, recommended_policy
from tfperf_lsp.rules.xla._common import imported_before, leading_imports_end

_TRAINING_METHODS = ("fit", "train_on_batch")
_WEIGHTS = ("trainable_variables", "trainable_weights")


class NoMixedPolicy(Rule):
    code = "TFP601"
    name = "no-mixed-policy"
    category = "precision"
    severity = Severity.INFORMATION
    summary = "Keras model trained in float32 on a GPU/CPU with fast 16-bit math: try a mixed policy"
    doc_url = "https://www.tensorflow.org/guide/mixed_precision"
    fixable = True
    docs = """
    ## What it does
    Points at the first Keras model that is built with no dtype policy set above it and is
    trained in the same file (`fit`, `train_on_batch`, or `tape.gradient(..., m.trainable_variables)`),
    when the target device has fast 16-bit math:
    - a GPU with compute capability >= 7.0 (Tensor Cores): suggests `mixed_float16`;
    - a CPU with `amx_bf16` or `avx512_bf16`: suggests `mixed_bfloat16`.

    The device comes from the benchmark worker's probe when one has run, else from a
    `# tfperf: device=gpu cc=8.6` (or `# tfperf: device=cpu features=avx512_bf16`) comment in the
    file's first 30 lines, else from `[tool.tfperf.device]` / the editor settings.

    ## Why is this slow
    The guide measured "more than 3 times on modern GPUs … and more than 2 times on latest Intel
    CPUs". On this project's 2-core AVX512_BF16 CPU (AMD EPYC, no AMX), `fit` with
    `mixed_bfloat16` ran 1.6x-2.0x faster than float32 for a 512-1024-1024-10 MLP and a
    2-conv CNN (two runs, measured with TF 2.21). Gains shrink for tiny models and some layers
    are slower (tensorflow/tensorflow#48127), so benchmark it.

    ## When it stays silent
    When the device is unknown (no probe, comment or configuration), a GPU below compute
    capability 7.0 or of unknown capability, or a CPU without those bf16 features (`mixed_float16`
    is "significantly slower" on x86 CPUs). When a policy is set above the model (any policy,
    `float32` included: a deliberate choice), and when the model is not trained in the file.
    When the model is small (a few small Dense layers, sized as TFP805 sizes them: its matmuls
    are too small for Tensor Cores to gain), and when the file converts the model with
    `tf.lite` (a global policy would change the exported model's dtypes). When the model is
    built in library code, a function or method that this file does not run itself (from
    module-level code or `main()`): a global policy is the application's choice, made in the
    script that trains.

    ## Fix
    Inserts `keras.mixed_precision.set_global_policy("mixed_float16")` (or `"mixed_bfloat16"`)
    right after the module's leading imports, so it precedes every layer. Preconditions: the
    file sets no policy anywhere, `keras` or `tf` is imported in those leading imports, and the
    file has no `tf.GradientTape` loop (its loss would mix float16 outputs with float32 targets
    and need loss scaling; `fit` casts and scales by itself). Marked unsafe: it changes numerics
    (compare an evaluation metric, not tensors; the example's predictions agree with float32 to
    rtol 1e-2, atol 1e-2), a softmax output then needs a float32 activation (TFP602), and it may
    be slower on small models.
    """
    invalid = (
        Example(
            """
            # tfperf: device=gpu cc=8.6
            import numpy as np
            from tensorflow import keras

            model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(np.ones((32, 8), "float32"), np.zeros((32, 1), "float32"), epochs=1, verbose=0)
            preds = model(np.ones((2, 8), "float32"))
            """,
            changes_outputs=True,  # numerics change by design; tests/rules/tensorflow_claims/test_precision.py compare at rtol 1e-2
            verify_fixed="assert model.layers[0].compute_dtype == 'float16'\nkeras.mixed_precision.set_global_policy('float32')",
        ),
    )
    valid = (
        Example(
            """
            import numpy as np
            from tensorflow import keras

            model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(np.ones((32, 8)), np.zeros((32, 1)), verbose=0)  # device unknown: silent
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        device = device_facts(ctx)
        policy = recommended_policy(device)
        if policy is None:
            return
        facts = ctx.facts
        trained = _trained_names(facts)
        if not trained:
            return
        converts_to_tflite = any((facts.qualname(c.func) or "").startswith("tensorflow.lite.") for c in facts.calls)
        for call in facts.calls:
            stmt = facts.parent(call)
            if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1):
                continue
            target = stmt.targets[0]
            if not (isinstance(target, ast.Name) and target.id in trained and creates_model(facts, call)):
                continue
            if policy_at(ctx, call.lineno) is not None:
                continue  # a policy (any) is set above: a deliberate choice
            if not ctx.hot.runs_eagerly_in_script(call):
                continue  # library code: the global policy is the application's choice, made in its script
            if small_model(facts, call, facts.enclosing_function(call)) is not None or converts_to_tflite:
                continue  # nothing for Tensor Cores to gain; or the policy would leak into the exported model
            prefix = _keras_prefix(ctx)
            fix = partial(_set_policy_at_start, ctx, prefix, policy) if prefix is not None and _fixable(ctx) else None
            yield self.finding(
                ctx,
                call,
                f"`{target.id}` trains in float32 on a {describe(device)}: "
                f"`set_global_policy('{policy}')` before building layers may be faster - benchmark it",
                label=f"{policy}?",
                fix=fix,
                fix_title=f"Set the {policy} policy at program start" if fix else None,
                fix_applicability="unsafe",
                head_only=True,
            )
            return  # one finding per file: the policy is global


def _set_policy_at_start(ctx: RuleContext, prefix: str, policy: str) -> Fix:
    """``from tensorflow import keras`` + ``model = ...`` -> ``from tensorflow import keras``,
    ``keras.mixed_precision.set_global_policy("mixed_float16")``, ``model = ...``: the policy
    line goes right after the leading imports, before every layer."""
    line = leading_imports_end(ctx.facts.tree)
    text = f'{prefix}.mixed_precision.set_global_policy("{policy}")\n'
    return Fix(f"Set the {policy} policy at program start", (Edit(Span(Pos(line, 0), Pos(line, 0)), text),))


def _fixable(ctx: RuleContext) -> bool:
    """The policy line can go at program start (with Keras importable there, ``_keras_prefix``):
    the file sets no policy itself, and no custom GradientTape loop would meet float16 outputs unprepared
    (float32 targets, loss scaling: TFP603)."""
    facts = ctx.facts
    if policy_events(ctx):
        return False
    return not any(
        isinstance(item.context_expr, ast.Call) and facts.qualname(item.context_expr.func) == "tensorflow.GradientTape"
        for item in facts.with_items
    )


def _trained_names(facts: ModuleFacts) -> set[str]:
    names: set[str] = set()
    for call in facts.calls:
        func = call.func
        if not isinstance(func, ast.Attribute):
            continue
        if func.attr in _TRAINING_METHODS and isinstance(func.value, ast.Name):
            names.add(func.value.id)
        elif func.attr == "gradient":
            for arg in call.args[1:2]:
                if isinstance(arg, ast.Attribute) and arg.attr in _WEIGHTS and isinstance(arg.value, ast.Name):
                    names.add(arg.value.id)
    return names


def _keras_prefix(ctx: RuleContext) -> str | None:
    """How to spell the Keras module at program start: ``keras``, ``tf_keras`` or ``tf.keras``."""
    facts = ctx.facts
    line = leading_imports_end(facts.tree)
    if line == 0:
        return None
    for local, qualname in facts.imports.bindings.items():
        if qualname in ("keras", "tensorflow.keras", "tf_keras") and imported_before(facts, local, line):
            return local
    tf = facts.imports.alias_for("tensorflow")
    if tf and imported_before(facts, tf, line):
        return f"{tf}.keras"
    return None
