"""Helpers every fix relies on."""
import textwrap

from tfperf_lsp.engine import analyze, fix_for
from tfperf_lsp.rewrite.edits import apply_edits

LATE_IMPORT = textwrap.dedent(
    """\
    import numpy as np
    from tensorflow import keras

    net = keras.Sequential([keras.layers.Dense(2)])
    for batch in batches:
        net(batch)

    import tensorflow as tf  # imported late, as scripts often do
    """
)


def test_fix_that_needs_tf_above_a_late_import_adds_one():
    analysis = analyze(LATE_IMPORT)
    finding = next(f for f in analysis.findings if f.code == "TFP302")
    fixed = apply_edits(LATE_IMPORT, fix_for(analysis, finding).edits)
    assert fixed.startswith("import tensorflow as tf\n")
    assert "net_graph = tf.function(net)\nfor batch in batches:\n    net_graph(batch)" in fixed
    compile(fixed, "<fixed>", "exec")


def test_fix_reuses_an_earlier_import():
    code = "import tensorflow as tfx\n" + LATE_IMPORT.replace("import tensorflow as tf  # imported late, as scripts often do\n", "")
    analysis = analyze(code)
    finding = next(f for f in analysis.findings if f.code == "TFP302")
    fixed = apply_edits(code, fix_for(analysis, finding).edits)
    assert "net_graph = tfx.function(net)" in fixed and fixed.count("import tensorflow") == 1


def test_a_parameter_holds_a_pretrained_network_when_every_call_passes_one():
    """``train_and_save_model(model, ...)`` called with a DenseNet201, then an Xception (an
    ensemble notebook): its ``model`` holds a pretrained network whichever call runs it (TFP704's
    and TFP801's silences beside a large step)."""
    import ast

    from tfperf_lsp.rules.common import holds_pretrained_model

    def receiver_holds_pretrained(code: str) -> bool:
        analysis = analyze(textwrap.dedent(code), "train.py")
        fit = next(c for c in analysis.ctx.facts.calls if getattr(c.func, "attr", "") == "fit")
        assert isinstance(fit.func, ast.Attribute)
        return holds_pretrained_model(analysis.ctx, fit.func.value)

    ensemble = """
        import tensorflow as tf

        def train_and_save_model(model, name):
            model.fit(dataset, epochs=13)
            model.save(name)

        base = tf.keras.applications.DenseNet201(weights="imagenet", include_top=False)
        first = tf.keras.Sequential([base, tf.keras.layers.Dense(104)])
        train_and_save_model(first, "one")
        other = tf.keras.applications.Xception(weights="imagenet", include_top=False)
        second = tf.keras.Sequential([other, tf.keras.layers.Dense(104)])
        train_and_save_model(second, "two")
    """
    assert receiver_holds_pretrained(ensemble)
    small = ensemble.replace("[other, ", "[")  # the second call passes a small network of its own
    assert not receiver_holds_pretrained(small)
