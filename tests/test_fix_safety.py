"""Fixes never corrupt a file: each applied fix removed its finding, the file's own TF alias is
reused, one run reaches the fixed point, and ``check`` depends on nothing but its input."""
import textwrap

from tfperf_lsp import engine
from tfperf_lsp.checker import check_file
from tfperf_lsp.cli import main
from tfperf_lsp.model import Edit, Fix, Pos, Span
from tests.rules.helpers import break_fix_building

COMPAT_V1 = textwrap.dedent(
    """\
    import tensorflow.compat.v1 as tf


    def costly(x):
        for _ in range(10):
            x = tf.tanh(tf.matmul(x, x)) + tf.sin(x)
        return x


    for step in range(100):
        y = costly(tf.ones([4, 4]))
    """
)


def test_fix_reuses_a_compat_v1_alias_and_reaches_the_fixed_point():
    result = check_file("model.py", COMPAT_V1, {}, fix=True, unsafe=True)
    assert result.new_text.count("import tensorflow") == 1
    assert result.new_text.count("@tf.function") == 1
    assert result.findings == [] and result.fixes_withheld == []
    again = check_file("model.py", result.new_text, {}, fix=True, unsafe=True)
    assert again.new_text == result.new_text


def test_a_fix_that_does_not_remove_its_finding_is_not_applied(monkeypatch):
    """A broken fix (here: one that only adds a comment) is withheld, with the reason."""
    real_fix_for = engine.fix_for

    def useless_fix(analysis, finding):
        fix = real_fix_for(analysis, finding)
        if fix is None:
            return None
        return Fix(fix.title, (Edit(Span(Pos(0, 0), Pos(0, 0)), "# touched\n"),), fix.applicability)

    monkeypatch.setattr(engine, "fix_for", useless_fix)
    result = check_file("model.py", COMPAT_V1, {}, fix=True, unsafe=True)
    assert result.new_text == COMPAT_V1
    assert [(f.code, reason) for f, reason in result.fixes_withheld] == [
        ("TFP303", "re-analysis still reports the finding after the fix")
    ]


def test_a_fix_that_breaks_the_syntax_is_not_applied(monkeypatch):
    real_fix_for = engine.fix_for

    def breaking_fix(analysis, finding):
        fix = real_fix_for(analysis, finding)
        return None if fix is None else Fix(fix.title, (Edit(Span(Pos(3, 0), Pos(3, 0)), "def (:\n"),), fix.applicability)

    monkeypatch.setattr(engine, "fix_for", breaking_fix)
    result = check_file("model.py", COMPAT_V1, {}, fix=True, unsafe=True)
    assert result.new_text == COMPAT_V1
    assert result.fixes_withheld[0][1] == "the fixed code would not parse"


def test_check_ignores_a_remembered_device_and_takes_the_flag(tmp_path, monkeypatch, capsys):
    """The same input gives the same findings on any machine: no remembered probe is used."""
    from tfperf_lsp.bench import service

    monkeypatch.setattr(service, "remembered_device_facts",
                        lambda *a, **k: {"kind": "gpu", "compute_capability": "8.6", "name": "A100"})
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.Input(shape=(512,)), tf.keras.layers.Dense(1024), tf.keras.layers.Dense(1024)])
        model.compile(optimizer="adam", loss="mse")
        for epoch in range(10):
            model.fit(np.ones((4096, 512)), np.ones((4096, 1024)), batch_size=256)
        """
    ))
    main(["check", "--select", "precision", "train.py"])
    out, err = capsys.readouterr()
    assert "TFP601" not in out and "unknown device" in err
    main(["check", "--select", "precision", "--device", "gpu:8.6", "train.py"])
    out, err = capsys.readouterr()
    assert "TFP601" in out and "GPU cc 8.6 (from --device)" in err
    assert main(["check", "--device", "tpu", "train.py"]) == 2


def test_fixes_apply_only_to_findings_that_were_shown():
    """Compiling an eager step (TFP301) makes it a jit candidate (TFP501): that new finding is
    reported on the next run, never applied unasked in the same one."""
    code = textwrap.dedent(
        """\
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.SGD()


        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            return loss


        for step in range(1000):
            train_step(tf.ones([4, 2]), tf.ones([4, 1]))
        """
    )
    result = check_file("train.py", code, {}, fix=True, unsafe=True)
    assert "@tf.function\ndef train_step" in result.new_text
    assert "jit_compile" not in result.new_text
    assert [f.code for f in result.findings] == ["TFP501"]  # shown next time, as a new finding


def test_a_fix_that_cannot_be_built_is_reported_as_not_applied(monkeypatch):
    """--fix says which fix it left out and why; the file is left as it was."""
    break_fix_building(monkeypatch, "TFP101")
    text = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    return x\n\nfor i in range(3):\n    f(i * 0.5)\n"
    result = check_file("a.py", text, {}, fix=True, unsafe=True)
    assert result.new_text == text
    assert [(f.code, reason) for f, reason in result.fixes_withheld] == [("TFP101", "its fix could not be built for this file")]
