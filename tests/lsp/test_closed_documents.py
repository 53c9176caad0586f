"""Issue 15 point 17: a closed document leaves nothing behind in the server's state or the
workspace index (the server grew 8-14 KB with every document opened and closed)."""
import os
from types import SimpleNamespace

from tfperf_lsp.lsp.state import ServerState

CODE = """\
import tensorflow as tf
from helpers import step

for i in range(3):
    step(tf.ones([2]), i)
"""


def test_closing_a_document_forgets_everything_about_it(tmp_path):
    (tmp_path / "helpers.py").write_text("import tensorflow as tf\n\n@tf.function\ndef step(x, i):\n    return x * i\n")
    state = ServerState(SimpleNamespace(workspace=None))
    state.set_roots([str(tmp_path)])
    state.defer_lookups = False  # jedi answers during the analysis, as in the CLI
    for n in range(3):
        uri = (tmp_path / f"doc{n}.py").as_uri()
        for version in range(1, 4):  # every edit is a new text the index answered questions about
            state.analyze(uri, version, CODE + f"# edit {version}\n")
        state.remember_problem(uri, "TFP101@4:4", "the benchmark failed")
        state.too_large.add(uri)
        state.forget(uri)
    assert state.sessions == {} and state.results == {} and state.problems == {}
    assert state.too_large == set() and state.pending == {}
    kept = [key for key in state.index._answers if os.path.basename(key[0]).startswith("doc")]
    assert kept == [], f"answers kept for closed documents: {kept}"
    assert not [p for p in state.index._facts if os.path.basename(p).startswith("doc")]


def test_answers_for_edited_texts_are_bounded(monkeypatch, tmp_path):
    from tfperf_lsp.analysis import workspace

    monkeypatch.setattr(workspace, "MAX_ANSWERS", 8)
    state = ServerState(SimpleNamespace(workspace=None))
    state.set_roots([str(tmp_path)])
    state.defer_lookups = False  # jedi answers during the analysis, as in the CLI
    (tmp_path / "helpers.py").write_text("def step(x, i):\n    return x\n")
    uri = (tmp_path / "doc.py").as_uri()
    for version in range(1, 30):  # an open document edited 30 times
        state.analyze(uri, version, CODE + f"# edit {version}\n")
    assert len(state.index._answers) <= 8
