"""Fixes never corrupt a file: each applied fix removed its finding, the file's own TF alias is
reused, one run reaches the fixed point, and ``check`` depends on nothing but its input."""
import textwrap

from tfperf_lsp import checker
from tfperf_lsp.checker import check_file
from tfperf_lsp.cli import main
from tfperf_lsp.model import Edit, Fix, Pos, Span

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
    real_fix_for = checker.fix_for

    def useless_fix(analysis, finding):
        fix = real_fix_for(analysis, finding)
        if fix is None:
            return None
        return Fix(fix.title, (Edit(Span(Pos(0, 0), Pos(0, 0)), "# touched\n"),), fix.applicability)

    monkeypatch.setattr(checker, "fix_for", useless_fix)
    result = check_file("model.py", COMPAT_V1, {}, fix=True, unsafe=True)
    assert result.new_text == COMPAT_V1
    assert [(f.code, reason) for f, reason in result.fixes_withheld] == [
        ("TFP303", "re-analysis still reports the finding after the fix")
    ]


def test_a_fix_that_breaks_the_syntax_is_not_applied(monkeypatch):
    real_fix_for = checker.fix_for

    def breaking_fix(analysis, finding):
        fix = real_fix_for(analysis, finding)
        return None if fix is None else Fix(fix.title, (Edit(Span(Pos(3, 0), Pos(3, 0)), "def (:\n"),), fix.applicability)

    monkeypatch.setattr(checker, "fix_for", breaking_fix)
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
