"""Jedi is asked only about names that can resolve into the workspace, once per import binding
while the files the answer went through are unchanged."""
import textwrap

import jedi
import pytest

from tfperf_lsp.analysis.workspace import WorkspaceIndex
from tfperf_lsp.engine import analyze

STEPS = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def train_step(x, step):
        return x * tf.cast(step, tf.float32)
    """
)

CALLER = textwrap.dedent(
    """\
    import tensorflow as tf
    from time import time
    from termcolor import cprint
    from steps import train_step
    for i in range(3):
        train_step(tf.ones([2]), i)
        time()
        cprint("x", i)
    """
)


@pytest.fixture
def jedi_calls(monkeypatch):
    """The names jedi is asked to resolve (the real jedi still answers)."""
    asked = []
    real = jedi.Script

    class Recording(real):
        def goto(self, line, column, **kwargs):
            asked.append(self._code_lines[line - 1][column:].split("(")[0])
            return super().goto(line, column, **kwargs)

    monkeypatch.setattr(jedi, "Script", Recording)
    return asked


def test_only_workspace_names_reach_jedi(tmp_path, jedi_calls):
    (tmp_path / "steps.py").write_text(STEPS)
    main = tmp_path / "main.py"
    main.write_text(CALLER)
    analysis = analyze(CALLER, str(main), workspace=WorkspaceIndex([str(tmp_path)]))
    assert [f.code for f in analysis.findings] == ["TFP101"]
    assert jedi_calls == ["train_step"]


def test_typing_in_the_caller_does_not_ask_jedi_again(tmp_path, jedi_calls):
    (tmp_path / "steps.py").write_text(STEPS)
    main = tmp_path / "main.py"
    main.write_text(CALLER)
    index = WorkspaceIndex([str(tmp_path)])
    for extra in ("", "# a", "# ab", "x = 1\n"):
        analysis = analyze(CALLER + extra, str(main), workspace=index)
        assert [f.code for f in analysis.findings] == ["TFP101"]
    assert jedi_calls == ["train_step"]


def test_an_edit_of_the_target_file_is_seen(tmp_path, jedi_calls):
    steps = tmp_path / "steps.py"
    steps.write_text(STEPS)
    main = tmp_path / "main.py"
    main.write_text(CALLER)
    index = WorkspaceIndex([str(tmp_path)])
    assert [f.code for f in analyze(CALLER, str(main), workspace=index).findings] == ["TFP101"]
    steps.write_text("# the definition moved down a line\n" + STEPS)
    assert [f.code for f in analyze(CALLER, str(main), workspace=index).findings] == ["TFP101"]
    assert jedi_calls == ["train_step", "train_step"]  # the target changed: asked again
    steps.write_text(STEPS.replace("@tf.function\n", ""))
    assert analyze(CALLER, str(main), workspace=index).findings == []


def test_a_module_created_later_is_found(tmp_path):
    main = tmp_path / "main.py"
    main.write_text(CALLER)
    index = WorkspaceIndex([str(tmp_path)])
    assert analyze(CALLER, str(main), workspace=index).findings == []
    (tmp_path / "steps.py").write_text(STEPS)
    assert [f.code for f in analyze(CALLER, str(main), workspace=index).findings] == ["TFP101"]
