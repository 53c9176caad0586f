"""The server driven over stdio as real editors drive it (capabilities of VS Code, Neovim 0.7
and 0.10, Emacs): open -> diagnostics, hover, inlay hints, quick fix applied, ignore comment,
stale edits rejected, syntax errors survived.

As in an editor, one server per editor profile serves the whole module: each test opens its own
files (a folder of its own in the workspace) and closes them when it ends. Settings changes have
their own sessions (test_settings_session.py)."""
import os
import textwrap

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import CLIENTS, SERVER, start_editor_session
from tests.lsp.helpers import apply_text_edits, change_document, diagnostics, edits_for, folder_for_test, open_document

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=SERVER, params=CLIENTS, scope="module")
async def editor(lsp_client: LanguageClient, request, tmp_path_factory):
    await start_editor_session(lsp_client, request.param, tmp_path_factory.mktemp("ws"))
    lsp_client.root = lsp_client.workspace_root
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def client(editor, request):
    """The module's session, with a workspace folder for this test; its documents close after it."""
    editor.workspace_root = folder_for_test(editor.root, request)
    editor.opened = []
    yield editor
    for uri in editor.opened:
        editor.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))


RETRACE = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def train_step(x, step):
        return x * 2.0 + tf.cast(step, tf.float32)

    x = tf.ones([4])
    for step in range(3):  # the loop
        train_step(x, step)
    """
)


async def test_open_shows_diagnostic_on_the_argument(client):
    uri = open_document(client, "train.py", RETRACE)
    found = await diagnostics(client, uri, version=1)
    retrace = [d for d in found if d.code == "TFP101"]
    assert len(retrace) == 1
    diagnostic = retrace[0]
    assert diagnostic.source == "tfperf"
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert "`train_step`" in diagnostic.message and "`step`" in diagnostic.message
    # The smallest range that shows the problem: the argument `step` on line 9.
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (8, 18)
    assert (diagnostic.range.end.line, diagnostic.range.end.character) == (8, 22)
    assert diagnostic.code_description.href.startswith("https://www.tensorflow.org/")
    assert diagnostic.data["fixable"] is True


async def test_hover_explains_the_finding(client):
    uri = open_document(client, "train.py", RETRACE)
    await diagnostics(client, uri, version=1)
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=8, character=20))
    )
    text = hover.contents.value
    assert "**TFP101**" in text
    assert "**Why:**" in text and "trace" in text
    assert "**Fix:** Pass tf.constant(step)" in text
    assert "https://www.tensorflow.org/guide/function" in text
    nothing = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=3))
    )
    assert nothing is None


async def test_inlay_hint_at_end_of_flagged_line(client):
    uri = open_document(client, "train.py", RETRACE)
    await diagnostics(client, uri, version=1)
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=9, character=0)),
        )
    )
    assert [(h.position.line, h.position.character) for h in hints] == [(8, 23)]
    assert "retraces per value of step" in hints[0].label


def command_name(action) -> str:
    # lsprotocol's client parses any code action that carries a command as a Command, with the
    # nested command object flattened to a string; VS Code and Neovim tell them apart correctly.
    command = getattr(action, "command", None)
    return str(command if isinstance(command, str) else getattr(command, "command", ""))


async def _quick_fix(client, uri, diagnostic, title_part):
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    matching = [a for a in actions if title_part in a.title]
    assert matching, [a.title for a in actions]
    action = matching[0]
    if action.edit is None:  # editors that resolve lazily ask for the edit now
        action = await client.code_action_resolve_async(action)
    return action, actions


async def test_quick_fix_applies_to_expected_text(client):
    uri = open_document(client, "train.py", RETRACE)
    diagnostic = next(d for d in await diagnostics(client, uri, version=1) if d.code == "TFP101")
    action, actions = await _quick_fix(client, uri, diagnostic, "tf.constant")
    assert action.kind == types.CodeActionKind.QuickFix
    assert any("Ignore TFP101" in a.title for a in actions)
    assert any("tfperf.showRuleDocs" in command_name(a) for a in actions)
    # The benchmark is offered too (disabled here: these sessions say the workspace is untrusted;
    # lsprotocol's client drops `disabled` when it parses, see test_benchmark_actions.py).
    assert any(a.title == "Benchmark original vs pass tf.constant(step)" for a in actions)
    fixed = apply_text_edits(RETRACE, edits_for(action.edit, uri, version=1))
    assert "    train_step(x, tf.constant(step))\n" in fixed
    assert "for step in range(3):  # the loop\n" in fixed  # comments and layout kept
    change_document(client, uri, fixed, 2)
    remaining = await diagnostics(client, uri, version=2)
    assert not [d for d in remaining if d.code == "TFP101"]


async def test_ignore_comment_silences_the_line(client):
    uri = open_document(client, "train.py", RETRACE)
    diagnostic = next(d for d in await diagnostics(client, uri, version=1) if d.code == "TFP101")
    action, _ = await _quick_fix(client, uri, diagnostic, "Ignore TFP101")
    ignored = apply_text_edits(RETRACE, edits_for(action.edit, uri, version=1))
    assert "train_step(x, step)  # tfperf: ignore[TFP101]" in ignored
    change_document(client, uri, ignored, 2)
    assert not [d for d in await diagnostics(client, uri, version=2) if d.code == "TFP101"]


async def test_stale_fix_is_rejected(client):
    uri = open_document(client, "train.py", RETRACE)
    diagnostic = next(d for d in await diagnostics(client, uri, version=1) if d.code == "TFP101")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    action = next(a for a in actions if "tf.constant" in a.title)
    edited = "# a new first line\n" + RETRACE
    change_document(client, uri, edited, 2)
    await diagnostics(client, uri, version=2)
    if action.edit is None:
        with pytest.raises(Exception, match="changed since this fix was offered"):
            await client.code_action_resolve_async(action)
    else:  # computed eagerly for version 1: the versioned edit no longer applies
        if action.edit.document_changes:
            with pytest.raises(ValueError, match="version"):
                edits_for(action.edit, uri, version=2)
        else:
            pytest.skip(f"{client.client_name} supports neither resolve nor versioned edits")


async def test_syntax_error_keeps_findings_on_unchanged_lines_and_recovers(client):
    uri = open_document(client, "train.py", RETRACE)
    await diagnostics(client, uri, version=1)
    broken = RETRACE.replace("    return x * 2.0", "    return x * (2.0")  # mid-typing
    change_document(client, uri, broken, 2)
    kept = await diagnostics(client, uri, version=2)
    assert [d.code for d in kept] == ["TFP101"]
    assert kept[0].range.start.line == 8
    # Typing on: a new line above the loop moves the kept finding with it.
    change_document(client, uri, broken.replace("x = tf.ones([4])\n", "x = tf.ones([4])\n\n"), 3)
    moved = await diagnostics(client, uri, version=3)
    assert [d.range.start.line for d in moved] == [9]
    fixed = RETRACE.replace("x = tf.ones([4])\n", "x = tf.ones([4])\n\n")
    change_document(client, uri, fixed, 4)
    recovered = await diagnostics(client, uri, version=4)
    assert [d.range.start.line for d in recovered if d.code == "TFP101"] == [9]
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=9, character=20))
    )
    assert "TFP101" in hover.contents.value


async def test_server_never_imports_tensorflow(client):
    uri = open_document(client, "train.py", RETRACE)
    await diagnostics(client, uri, version=1)
    pid = client._server.pid  # noqa: SLF001 - the server subprocess pytest-lsp started
    with open(f"/proc/{pid}/maps") as maps:
        loaded = maps.read()
    assert "tensorflow" not in loaded
    assert os.path.exists(f"/proc/{pid}")
