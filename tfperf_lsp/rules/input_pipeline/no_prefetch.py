"""TFP702: a tf.data pipeline consumed without a trailing ``.prefetch``."""
from __future__ import annotations

import re
from functools import partial
from typing import Iterator

from tfperf_lsp.model import Edit, Finding, Fix, Severity, Span
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import tf_alias
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.analysis.astutil import int_value
from tfperf_lsp.rules.input_pipeline._astutil import option_set_false
from tfperf_lsp.rules.input_pipeline._pipeline import (
    BATCHED_SOURCES,
    LIGHT_METHODS,
    WORK_METHODS,
    Step,
    autotune,
    dataset_label,
    pipelines,
)

_HOW = {"for": "iterated", "fit": "fed to Keras", "iter": "iterated", "return": "returned"}


# Options that stop tf.data from appending a prefetch by itself.
_AUTO_PREFETCH_OFF = re.compile(r"\b(inject_prefetch|apply_default_optimizations|autotune\.enabled)\s*=\s*False")
_OPTION_WORDS = ("inject_prefetch", "apply_default_optimizations", "autotune")



class NoPrefetch(Rule):
    code = "TFP702"
    name = "no-prefetch"
    category = "input-pipeline"
    severity = Severity.WARNING
    summary = "tf.data pipeline consumed without a trailing prefetch: input and training do not overlap"
    doc_url = "https://www.tensorflow.org/guide/data_performance#prefetching"
    fixable = True
    benchmark = "pipeline"
    docs = """
    ## What it does
    Finds a tf.data pipeline whose options turn TensorFlow's automatic prefetching off
    (`inject_prefetch = False`, `autotune.enabled = False`, `apply_default_optimizations =
    False`) and that is used up - iterated by a `for` loop or comprehension, passed
    to `fit`/`evaluate`/`predict`, to `iter()`, to a local function that loops over it, or
    returned (batched) from a function whose result no local caller transforms further - when no
    `.prefetch` follows its last transformation. The finding sits on that last transformation.

    ## Why is this slow
    Without prefetch, the producer and the consumer take turns: the model waits while the next
    batch is prepared, then the pipeline waits while the model trains (tf.data performance guide,
    "Prefetching"). `prefetch(tf.data.AUTOTUNE)` overlaps the two. We have no number of
    our own: on the 2-core CPU test machine, where producer and consumer share the same cores,
    the difference was lost in noise; the gain is largest when the model runs on an accelerator.
    Since TensorFlow 2.12, tf.data appends a prefetch by itself when the last transformation is
    synchronous (`inject_prefetch`, on by default; checked on TF 2.21), and a parallel map or a
    fused map-and-batch already runs ahead: so only pipelines whose options turn that off need
    the explicit `.prefetch`.

    ## When it stays silent
    When the file does not turn automatic prefetching off (the usual case: tf.data 2.12+ injects
    the prefetch itself). When only a few elements are taken (`ds.take(1)`, `next(iter(ds))`: a peek), when `.prefetch`
    comes after the last transformation (steps like `repeat`, `take`, `cache`
    or `with_options` may follow it), when the dataset is an intermediate one that a later
    pipeline continues (and that pipeline prefetches), when the pipeline does no work (a bare
    `from_tensor_slices`), when a function returns the dataset to callers outside this file
    (they are expected to finish it, and library loaders' callers often do; a caller in this
    file that iterates it without `.prefetch` is reported), and when the dataset goes somewhere
    tfperf cannot follow.

    ## Fix
    Append `.prefetch(tf.data.AUTOTUNE)` to the last transformation. Safe: the elements and
    their order are unchanged; it holds a few more elements in memory.
    """
    invalid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            options = tf.data.Options()
            options.experimental_optimization.inject_prefetch = False  # e.g. to save memory
            features = np.arange(24, dtype=np.float32).reshape(12, 2)
            ds = tf.data.Dataset.from_tensor_slices(features).with_options(options)
            ds = ds.batch(4)  # 3 batches
            batches = np.stack([b.numpy() for b in ds])
            """,
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            base = tf.data.Dataset.range(100).batch(10)
            for peek in base.take(1):  # a look at one batch; the training pipeline prefetches
                print(peek.shape)
            train = base.prefetch(tf.data.AUTOTUNE).repeat(2)
            for batch in train:
                pass
            """
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if not option_set_false(ctx.source.text, _AUTO_PREFETCH_OFF, _OPTION_WORDS):
            return  # tf.data (2.12+) injects the prefetch itself
        model = pipelines(ctx)
        reported: set[Step] = set()
        for consumer in model.consumers:
            if _without_prefetch(consumer.step) is None:
                continue
            if not any(s.method == "with_options" for s in consumer.step.upstream()):
                continue  # this pipeline keeps tf.data's default: a prefetch is injected
            end = consumer.step.real()  # the fix appends prefetch here, at the end of the chain
            chain = list(end.upstream())
            if not any(s.method in WORK_METHODS or s.qualname in BATCHED_SOURCES for s in chain):
                continue
            if consumer.kind == "return":
                continue  # handed to callers elsewhere: they may (and often do) prefetch
            if any(_continues_to_prefetch(s) for s in _through_light(consumer.step)):
                continue  # an intermediate look at a dataset whose real pipeline prefetches
            if any(_few(ctx, s) for s in _through_light(consumer.step)):
                continue  # ``ds.take(1)``: a peek at a few elements
            if end in reported:
                continue
            reported.add(end)
            name = dataset_label(ctx, end)
            how = _HOW.get(consumer.kind, "consumed")
            tune = f"tf.{autotune(ctx)}"
            yield self.finding(
                ctx, end.method_node(),
                f"The pipeline {name} is {how} without `.prefetch`: append `.prefetch({tune})` "
                f"so that preparing the next batch overlaps the current step",
                label="no prefetch",
                fix=partial(_append_prefetch, ctx, end),
                fix_title=f"Append .prefetch({tune})",
            )


def _append_prefetch(ctx: RuleContext, step: Step) -> Fix:
    """``ds = ds.batch(4)`` -> ``ds = ds.batch(4).prefetch(tf.data.AUTOTUNE)``: the next batch is
    prepared while the current one is used."""
    alias, extra = tf_alias(ctx, ctx.source.span(step.method_node()).start.line)
    end = ctx.source.span(step.call).end
    tune = f"{alias}.{autotune(ctx)}"
    return Fix(f"Append .prefetch({tune})", (Edit(Span(end, end), f".prefetch({tune})"), *extra))


def _without_prefetch(step: Step) -> Step | None:
    """The last real transformation of a consumed chain that lacks prefetch (None: it prefetches)."""
    current: Step | None = step
    while current is not None:
        if current.method == "prefetch":
            return None
        if current.method in LIGHT_METHODS or current.method == "call":
            current = current.parent
            continue
        return current
    return None


def _through_light(step: Step) -> Iterator[Step]:
    """The consumed step and the light steps (take, repeat, ...) back to the last transformation."""
    current: Step | None = step
    while current is not None:
        yield current
        if current.method not in LIGHT_METHODS and current.method != "call":
            return
        current = current.parent


def _few(ctx: RuleContext, step: Step, limit: int = 10) -> bool:
    if step.method != "take":
        return False
    count = int_value(ctx.facts, step.call.args[0] if step.call.args else None)
    return count is not None and 0 <= count <= limit


def _continues_to_prefetch(step: Step) -> bool:
    return step.downstream_has({"prefetch"})
