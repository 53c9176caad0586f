"""The private tf.data pipeline model the TFP7xx rules share (rules/input_pipeline/_pipeline.py)."""
import ast

from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.rules.input_pipeline._pipeline import MethodSpan, Pipelines

from tests.rules.helpers import findings, source


def model(code):
    text = SourceText(source(code))
    return Pipelines(ModuleFacts(ast.parse(text.text), text))


def chain_of(step):
    return [s.method for s in reversed(list(step.upstream()))]


def test_chain_across_statements_factories_and_method_chains():
    m = model(
        """
        import tensorflow as tf
        from tensorflow.data import Dataset

        def base(files):
            ds = tf.data.TFRecordDataset(files)
            ds = ds.map(tf.io.parse_tensor)
            return ds

        def train(files):
            ds = base(files).shuffle(10)
            return ds.batch(2).prefetch(1)

        for batch in Dataset.range(4).map(lambda x: x).batch(2):
            pass
        """
    )
    ends = {c.node.__class__.__name__: c.step for c in m.consumers}
    assert chain_of(ends["For"]) == ["range", "map", "batch"]
    assert chain_of(ends["Return"]) == ["TFRecordDataset", "map", "call", "shuffle", "batch", "prefetch"]
    # base() is continued by its caller, so its own return is not a consumer
    assert sum(c.kind == "return" for c in m.consumers) == 1


def test_names_resolve_to_the_latest_assignment_in_the_same_scope():
    m = model(
        """
        import tensorflow as tf

        ds = tf.data.Dataset.range(8)
        ds = ds.batch(2)
        ds = ds.prefetch(1)

        def other(ds):
            return ds.map(lambda x: x)  # a parameter: not the module-level ds
        """
    )
    assert [s.method for s in m.steps] == ["range", "batch", "prefetch"]
    assert m.steps[2].parent is m.steps[1]


def test_unknown_receivers_make_no_steps():
    m = model(
        """
        import pandas as pd

        frame = pd.read_csv("x.csv")
        labels = frame["y"].map(str)
        mapped = map(str, [1, 2])
        """
    )
    assert m.steps == []


def test_epoch_loops_fit_epochs_and_local_consumers():
    m = model(
        """
        import tensorflow as tf

        EPOCHS = 5

        def run(dataset):
            for epoch in range(3):
                for batch in dataset:
                    pass

        ds = tf.data.Dataset.range(8).batch(2)
        once = tf.data.Dataset.range(8).batch(2)
        run(ds)
        for batch in once:
            pass
        model.fit(ds, epochs=EPOCHS)
        model.fit(once, epochs=1)
        """
    )
    flags = sorted((c.kind, c.epochs) for c in m.consumers)
    assert flags == [("fit", False), ("fit", True), ("for", False), ("for", True)]


def test_method_span_starts_at_the_dot():
    text = source(
        """
        import tensorflow as tf  # map_parallelization = False
        ds = (tf.data.Dataset.range(4).with_options(OPTS)
              .map(lambda x: x + 1 - 2))
        """
    )
    call = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "map")
    span = MethodSpan.of(call)
    assert (span.lineno, span.col_offset) == (3, 6)
    found = findings(text, "TFP701")
    assert [(f.span.start.line, f.span.start.col) for f in found] == [(2, 6)]
