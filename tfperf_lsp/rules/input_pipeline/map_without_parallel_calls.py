"""TFP701: ``Dataset.map(f)`` without ``num_parallel_calls``: one element at a time, on one core."""
from __future__ import annotations

import libcst as cst

from tfperf_lsp.model import Fix, Severity
from tfperf_lsp.rewrite.cst import replace_in_statement, with_keyword
from tfperf_lsp.rules.base import Example, Rule
from tfperf_lsp.rules.common import tf_alias
from tfperf_lsp.rules.input_pipeline._mapfn import function_label
from tfperf_lsp.rules.input_pipeline._pipeline import pipelines, step_at

CHEAP_COST = 1  # at most one op: the tensorpack maintainers saw no gain from parallelising these


class MapWithoutParallelCalls(Rule):
    code = "TFP701"
    name = "map-without-parallel-calls"
    category = "input-pipeline"
    severity = Severity.WARNING
    summary = "Dataset.map without num_parallel_calls runs the function on one element at a time"
    doc_url = "https://www.tensorflow.org/guide/data_performance#parallelizing_data_transformation"
    docs = """
    ## What it does
    Finds `.map(f)` on a tf.data pipeline (a chain from `tf.data.Dataset.from_tensor_slices`,
    `range`, `from_generator`, `list_files`, `TFRecordDataset`, ... through method chains, names
    and local functions that return a dataset) called without `num_parallel_calls`.

    ## Why is this slow
    Without `num_parallel_calls`, tf.data calls `f` on one element at a time, on one core, while
    the training step waits (tf.data performance guide, "Parallelizing data transformation";
    catalog D1). Measured on 2 CPU cores: 0.65 s serial, 0.25 s with `tf.data.AUTOTUNE`.

    ## When it stays silent
    With `num_parallel_calls` (keyword or second argument), and for identity or re-packing
    functions (`lambda x, y: (x, y)`, `lambda d: d["image"]`), which have nothing to parallelise.
    A function with at most one op (`lambda x: x / 255`) is reported at information level: the
    tensorpack maintainers measured no gain for cheap functions (tensorpack/tensorpack#1539), so
    benchmark it. `.map` on something that is not a visible tf.data pipeline (a parameter, a
    pandas Series) is never reported.

    ## Fix
    Add `num_parallel_calls=tf.data.AUTOTUNE`. Output order is kept (`deterministic` defaults to
    true), so the elements are the same: a safe fix. When the pipeline has a `with_options(...)`
    (whose options may set `deterministic` to false, and then a parallel map may reorder
    elements), the fix is marked unsafe. Preconditions, else the finding has no fix:
    - `f` is visible (a lambda or a def in this file) and calls only TensorFlow ops, local
      functions and harmless builtins;
    - `f` is not stateful: no `tf.random` (a parallel map changes which element gets which draw,
      "values may not be deterministic" in the `Dataset.map` docstring, catalog trap 15), no
      `py_function`/`numpy_function`, no Python side effects (counters, appends, globals).
    """
    invalid = (
        Example(
            """
            import numpy as np
            import tensorflow as tf

            def normalize(image, label):
                image = tf.cast(image, tf.float32) / 255.0
                image = (image - 0.5) * 2.0
                return image, label

            images = np.arange(8 * 4 * 4 * 3, dtype=np.uint8).reshape(8, 4, 4, 3)
            labels = np.arange(8)
            ds = tf.data.Dataset.from_tensor_slices((images, labels)).batch(4)
            ds = ds.map(normalize)  # scale to [-1, 1]
            batches = np.stack([x.numpy() for x, _ in ds.prefetch(tf.data.AUTOTUNE)])
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            def normalize(image, label):
                image = tf.cast(image, tf.float32) / 255.0
                image = (image - 0.5) * 2.0
                return image, label

            images = np.arange(8 * 4 * 4 * 3, dtype=np.uint8).reshape(8, 4, 4, 3)
            labels = np.arange(8)
            ds = tf.data.Dataset.from_tensor_slices((images, labels)).batch(4)
            ds = ds.map(normalize, num_parallel_calls=tf.data.AUTOTUNE)  # scale to [-1, 1]
            batches = np.stack([x.numpy() for x, _ in ds.prefetch(tf.data.AUTOTUNE)])
            """,
        ),
        Example(
            """
            import numpy as np
            import tensorflow as tf

            squares = np.stack(list(
                tf.data.Dataset.range(6)
                .map(lambda x: x * x)
                .batch(3)
                .prefetch(2)
                .as_numpy_iterator()
            ))
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            squares = np.stack(list(
                tf.data.Dataset.range(6)
                .map(lambda x: x * x, num_parallel_calls=tf.data.AUTOTUNE)
                .batch(3)
                .prefetch(2)
                .as_numpy_iterator()
            ))
            """,
            note="one op: reported at information level, still fixable",
        ),
        Example(
            """
            import tensorflow as tf

            def jitter(x):
                return x + tf.random.uniform([], maxval=0.1)

            ds = tf.data.Dataset.range(8).map(lambda x: tf.cast(x, tf.float32), num_parallel_calls=2)
            ds = ds.map(jitter).batch(4).prefetch(1)
            """,
            expect_no_fix=True,
            note="jitter draws random numbers: a parallel map changes which element gets which draw",
        ),
    )
    valid = (
        Example(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(8)
            ds = ds.map(lambda x: x * 2, num_parallel_calls=tf.data.AUTOTUNE)
            ds = ds.map(lambda x: (x, x))  # re-packing only
            pairs = tf.data.Dataset.zip((ds, ds)).map(lambda a, b: a, 4)
            """
        ),
        Example(
            """
            import pandas as pd

            def describe(series: pd.Series, mapping):
                return series.map(mapping).batch(2)  # not a tf.data pipeline we can see
            """
        ),
    )

    def check(self, ctx):
        model = pipelines(ctx)
        for step in model.maps():
            call = step.call
            if len(call.args) >= 2 or any(kw.arg == "num_parallel_calls" for kw in call.keywords):
                continue
            fn = model.map_function(step)
            if fn.identity:
                continue  # nothing to parallelise
            label = function_label(call)
            if fn.stateful or fn.random:
                yield self.finding(
                    ctx, step.method_node(),
                    f"`map({label})` runs {label} on one element at a time, but {label} is stateful "
                    f"({fn.stateful or fn.random}): with `num_parallel_calls` its results may change with the "
                    f"order of calls; parallelise it only if that is acceptable",
                    label="serial map",
                )
                continue
            if fn.unknown:
                unseen = f"`{label}` is not defined in this file" if fn.node is None else f"{label} calls `{fn.unknown}`"
                yield self.finding(
                    ctx, step.method_node(),
                    f"`map({label})` runs {label} on one element at a time: add `num_parallel_calls=tf.data.AUTOTUNE` "
                    f"unless it is stateful ({unseen}, which tfperf cannot check)",
                    label="serial map",
                )
                continue
            # Options may turn determinism off (experimental_deterministic=False): then the parallel
            # map may reorder elements, so the fix is no longer safe.
            options = any(s.method == "with_options" for s in step.upstream()) or step.downstream_has({"with_options"})
            cheap = fn.cost <= CHEAP_COST
            yield self.finding(
                ctx, step.method_node(),
                f"`map({label})` runs {label} on one element at a time: add `num_parallel_calls=tf.data.AUTOTUNE`"
                + (" (it is one op: benchmark it, the gain may be small)" if cheap else ""),
                label="serial map",
                severity=Severity.INFORMATION if cheap else None,
                fix_title="Add num_parallel_calls=tf.data.AUTOTUNE",
                fix_applicability="unsafe" if options else "safe",
            )

    def fix(self, ctx, finding):
        step = step_at(ctx, finding)
        if step is None:
            return None
        alias, extra = tf_alias(ctx, finding.span.start.line)
        stmt = ctx.facts.statement_of(step.call)
        edit = replace_in_statement(
            ctx.source, stmt, step.call, cst.Call,
            lambda c: with_keyword(c, "num_parallel_calls", f"{alias}.data.AUTOTUNE"),
        )
        return Fix(f"Add num_parallel_calls={alias}.data.AUTOTUNE", (edit, *extra)) if edit else None

