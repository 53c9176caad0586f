"""Jedi is asked only about names that can resolve into the workspace, once per import binding
while the files the answer went through are unchanged."""
import textwrap

import jedi
import pytest

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


# ---------------------------------------------------------------- resolution without jedi
PLAIN_STEPS = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def train_step(x, step):
        return x * tf.cast(step, tf.float32)
    """
)


def test_a_def_at_the_top_of_one_file_is_resolved_without_jedi(tmp_path, jedi_calls):
    (tmp_path / "steps.py").write_text(PLAIN_STEPS)
    main = tmp_path / "main.py"
    main.write_text(CALLER)
    analysis = analyze(CALLER, str(main), workspace=WorkspaceIndex([str(tmp_path)]))
    assert [f.code for f in analysis.findings] == ["TFP101"]
    assert jedi_calls == []


def test_a_package_reexport_is_followed_without_jedi(tmp_path, jedi_calls):
    package = tmp_path / "training"
    package.mkdir()
    (package / "__init__.py").write_text("from .steps import train_step\n")
    (package / "steps.py").write_text(PLAIN_STEPS)
    caller = CALLER.replace("from steps import", "from training import")
    main = tmp_path / "main.py"
    main.write_text(caller)
    index = WorkspaceIndex([str(tmp_path)])
    analysis = analyze(caller, str(main), workspace=index)
    assert [f.code for f in analysis.findings] == ["TFP101"] and jedi_calls == []
    assert str(package / "steps.py") in analysis.ctx.dependencies  # an edit there re-analyses main.py
    (package / "steps.py").write_text(PLAIN_STEPS.replace("@tf.function\n", ""))
    assert analyze(caller, str(main), workspace=index).findings == []


LAYOUTS = {
    "top-level def": {"steps.py": PLAIN_STEPS},
    "tf.function(f) assigned": {"steps.py": "import tensorflow as tf\n\ndef _step(x, step):\n    return x * step\n\ntrain_step = tf.function(_step)\n"},
    "re-exported, relative": {"pkg/__init__.py": "from .impl import train_step\n", "pkg/impl.py": PLAIN_STEPS},
    "re-exported, absolute, twice": {"pkg/__init__.py": "from pkg.mid import train_step\n",
                                     "pkg/mid.py": "from pkg.impl import train_step\n", "pkg/impl.py": PLAIN_STEPS},
    "imported under another name": {"steps.py": PLAIN_STEPS.replace("def train_step", "def step_fn")},
}
CALLS = {"re-exported, relative": "from pkg import train_step", "re-exported, absolute, twice": "from pkg import train_step",
         "imported under another name": "from steps import step_fn as train_step"}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_answer_without_jedi_is_jedis(tmp_path, layout):
    """Where the one-file resolution answers, jedi gives the same definition (the shared corpus:
    217 of 233 imported names called in loops answered this way, all the same as jedi)."""
    import ast
    import os

    from tfperf_lsp.analysis.facts import ModuleFacts
    from tfperf_lsp.analysis.source import SourceText
    from tfperf_lsp.analysis.workspace import _UNKNOWN

    for name, text in LAYOUTS[layout].items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    caller = CALLER.replace("from steps import train_step", CALLS.get(layout, "from steps import train_step"))
    main = tmp_path / "main.py"
    main.write_text(caller)
    index = WorkspaceIndex([str(tmp_path)])
    source = SourceText(caller, str(main))
    facts = ModuleFacts(source.parse(), source)
    call = next(c for c in facts.calls if isinstance(c.func, ast.Name) and c.func.id == "train_step")
    qualname = facts.imports.bindings["train_step"]
    plain = index._plain_definition(qualname, str(main), set())
    assert plain is not _UNKNOWN
    by_jedi = index._jedi_definition(index_lookup(index, facts, call.func, str(main), qualname))
    assert (os.path.realpath(plain[0]), plain[1]) == (os.path.realpath(by_jedi[0]), by_jedi[1])
    assert [f.code for f in analyze(caller, str(main), workspace=index).findings] == ["TFP101"]


def index_lookup(index, facts, name, path, qualname):
    from tfperf_lsp.analysis.workspace import Lookup

    column = facts.source.char_col(name.lineno - 1, name.col_offset)
    return Lookup(path, qualname, name.id, name.lineno, column, facts.source.text, tuple(index.module_files(qualname, path)))


@pytest.mark.parametrize("layout", ["defined twice", "inside an if", "a stub beside it", "star re-export", "a global rebinds it"])
def test_what_only_jedi_can_decide_goes_to_jedi(tmp_path, layout, jedi_calls):
    files = {
        "defined twice": {"steps.py": PLAIN_STEPS + "\n\ndef train_step(x, step):\n    return x\n"},
        "inside an if": {"steps.py": STEPS},
        "a stub beside it": {"steps.py": PLAIN_STEPS, "steps.pyi": "def train_step(x, step): ...\n"},
        "star re-export": {"steps/__init__.py": "from .impl import *\n", "steps/impl.py": PLAIN_STEPS},
        "a global rebinds it": {"steps.py": PLAIN_STEPS + "\n\ndef reset():\n    global train_step\n    train_step = None\n"},
    }[layout]
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    main = tmp_path / "main.py"
    main.write_text(CALLER)
    analyze(CALLER, str(main), workspace=WorkspaceIndex([str(tmp_path)]))
    assert jedi_calls == ["train_step"]
