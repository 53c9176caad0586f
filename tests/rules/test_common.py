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
