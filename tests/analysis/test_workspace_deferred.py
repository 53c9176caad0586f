"""The server's view of the workspace index never waits for jedi; the CLI's index does."""
import textwrap

from tfperf_lsp.analysis.workspace import WorkspaceIndex
from tfperf_lsp.engine import analyze

# Defined inside an ``if``: which definition a caller gets is jedi's to decide (a def at the
# top level of one file is resolved without it: test_workspace_resolution.py).
STEPS = textwrap.dedent(
    """\
    import tensorflow as tf

    if tf.__version__:
        @tf.function
        def train_step(x, step):
            return x * tf.cast(step, tf.float32)
    """
)
CODE = "import tensorflow as tf\nfrom steps import train_step\nfrom time import time\nfor i in range(3):\n    train_step(tf.ones([2]), i)\n    time()\n"


def codes(analysis):
    return [(f.code, f.span.start.line) for f in analysis.findings]


def test_deferred_analysis_skips_jedi_then_answers_from_the_cache(tmp_path, monkeypatch):
    (tmp_path / "steps.py").write_text(STEPS)
    main = tmp_path / "main.py"
    main.write_text(CODE)
    index = WorkspaceIndex([str(tmp_path)])
    calls = []
    original = WorkspaceIndex._jedi_definition
    monkeypatch.setattr(WorkspaceIndex, "_jedi_definition", lambda self, lookup: calls.append(lookup.name) or original(self, lookup))

    view = index.deferred()
    first = analyze(CODE, str(main), workspace=view)
    assert codes(first) == [] and calls == []
    assert [(lookup.name, lookup.line) for lookup in view.pending.values()] == [("train_step", 5)]  # not `time`: stdlib

    assert index.run_lookups(view.pending.values()) == 1 and calls == ["train_step"]
    assert index.run_lookups(view.pending.values()) == 0  # answered already

    again = index.deferred()
    second = analyze(CODE + "# an edit\n", str(main), workspace=again)
    assert codes(second) == [("TFP101", 4)] and again.pending == {} and calls == ["train_step"]
    assert str(tmp_path / "steps.py") in second.ctx.dependencies

    # steps.py changed on disk: the cached answer is stale, the view asks again
    (tmp_path / "steps.py").write_text("\n" + STEPS)
    third = index.deferred()
    analyze(CODE, str(main), workspace=third)
    assert len(third.pending) == 1


def test_the_cli_index_answers_synchronously(tmp_path):
    (tmp_path / "steps.py").write_text(STEPS)
    main = tmp_path / "main.py"
    main.write_text(CODE)
    assert codes(analyze(CODE, str(main), workspace=WorkspaceIndex([str(tmp_path)]))) == [("TFP101", 4)]
