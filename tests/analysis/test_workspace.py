"""Cross-file: a tf.function defined in one module and called with a loop counter in another."""
import textwrap

from tfperf_lsp.analysis.workspace import WorkspaceIndex
from tfperf_lsp.engine import analyze

STEPS = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def train_step(x, step):
        return x * tf.cast(step, tf.float32)

    def plain(x, step):
        return x
    """
)


def test_call_site_in_another_file_is_flagged(tmp_path):
    (tmp_path / "steps.py").write_text(STEPS)
    main = tmp_path / "main.py"
    code = "import tensorflow as tf\nfrom steps import train_step, plain\nfor i in range(3):\n    train_step(tf.ones([2]), i)\n    plain(tf.ones([2]), i)\n"
    main.write_text(code)
    analysis = analyze(code, str(main), workspace=WorkspaceIndex([str(tmp_path)]))
    found = [(f.code, f.span.start.line) for f in analysis.findings]
    assert found == [("TFP101", 3)]
    assert str(tmp_path / "steps.py") in analysis.ctx.dependencies


def test_relative_and_package_imports(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .steps import train_step\n")
    (package / "steps.py").write_text(STEPS)
    code = "import tensorflow as tf\nfrom pkg import train_step as ts\nfor i in range(3):\n    ts(tf.ones([2]), i)\n"
    main = tmp_path / "main.py"
    main.write_text(code)
    analysis = analyze(code, str(main), workspace=WorkspaceIndex([str(tmp_path)]))
    assert [f.code for f in analysis.findings] == ["TFP101"]


def test_open_editor_text_wins_over_disk(tmp_path):
    (tmp_path / "steps.py").write_text(STEPS)
    unsaved = STEPS.replace("@tf.function\n", "")  # the user removed the decorator, not saved yet
    index = WorkspaceIndex([str(tmp_path)], open_text=lambda p: unsaved if p.endswith("steps.py") else None)
    code = "import tensorflow as tf\nfrom steps import train_step\nfor i in range(3):\n    train_step(tf.ones([2]), i)\n"
    main = tmp_path / "main.py"
    main.write_text(code)
    assert analyze(code, str(main), workspace=index).findings == []
