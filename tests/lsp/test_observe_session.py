"""Observing from the editor, end to end with TensorFlow: the tfperf.observe command runs the file,
then observed facts appear as diagnostics, hovers and inlay hints marked "observed"; the static
retrace hint the run confirms says so, the one it refutes too; an edit makes them disappear."""
import asyncio
import os
import sys
import textwrap

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from tests.lsp.helpers import diagnostics, record_versions

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SAMPLE = textwrap.dedent(
    """\
    import tensorflow as tf


    @tf.function
    def update(w, lr):
        return w * lr


    @tf.function
    def once(w, k):
        return w + k


    w = tf.ones([3])
    for epoch in range(4):
        lr = 0.1 / (1 + epoch)
        w = update(w, lr)
    for k in range(1):
        w = once(w, k)
    """
)
UPDATE_LINE, ONCE_LINE = 16, 18  # 0-based lines of the two calls


def server_config(tmp_path):
    env = {**os.environ, "TFPERF_CACHE_DIR": str(tmp_path / "bench"), "TFPERF_OBSERVE_DIR": str(tmp_path / "observed")}
    return ClientServerConfig(server_command=[sys.executable, os.path.join(ROOT, "server", "tfperf_server.py")],
                              server_env=env)


async def start(tmp_path, trusted):
    client = await server_config(tmp_path).start()
    record_versions(client)
    client.set_configuration({"tfperf": {"inlayHints": True}})
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=tmp_path.as_uri(),
        initialization_options={"workspaceTrusted": trusted}))
    path = tmp_path / "sample.py"
    path.write_text(SAMPLE)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SAMPLE)))
    await diagnostics(client, uri, version=1)
    return client, uri


async def test_observe_is_refused_in_an_untrusted_workspace(tmp_path):
    client, uri = await start(tmp_path, trusted=False)
    try:
        with pytest.raises(Exception, match="trust this workspace"):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="tfperf.observe", arguments=[uri]))
        assert not (tmp_path / "observed").exists()  # nothing ran
    finally:
        await client.shutdown_session()


@pytest.mark.tf
@pytest.mark.slow
async def test_observed_facts_at_the_line_until_the_code_changes(tmp_path):
    client, uri = await start(tmp_path, trusted=True)
    try:
        answer = await client.workspace_execute_command_async(
            # the run's time limit only catches a hang: a stalled machine passed the default 300 s
            types.ExecuteCommandParams(command="tfperf.observe", arguments=[uri, {"maxSeconds": 1500}]))
        assert answer["status"] == "finished", answer
        reports = [r for values in client.progress_reports.values() for r in values]
        assert any(isinstance(r, types.WorkDoneProgressBegin) and r.cancellable for r in reports)
        assert any(isinstance(r, types.WorkDoneProgressEnd) for r in reports)
        # The server republishes after the run; wait for a push that carries observed facts.
        for _ in range(100):
            found = await diagnostics(client, uri, version=1)
            if any(d.source == "tfperf (observed)" for d in found):
                break
            await asyncio.sleep(0.1)
        observed = [d for d in found if d.source == "tfperf (observed)"]
        retrace = [d for d in observed if d.code == "observed-retrace"]
        assert [d.range.start.line for d in retrace] == [UPDATE_LINE]
        assert "traced 4x here: lr is a Python float with 4 values" in retrace[0].message
        assert "(observed: `python" in retrace[0].message and "sample.py`" in retrace[0].message

        static = {d.range.start.line: d for d in found if d.code == "TFP101"}
        assert "Confirmed by a run: traced 4x here" in static[UPDATE_LINE].message
        assert "Refuted by a run: traced once here" in static[ONCE_LINE].message
        assert static[ONCE_LINE].severity == types.DiagnosticSeverity.Hint

        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=UPDATE_LINE, character=8)))
        assert "**Observed**" in hover.contents.value and "lr is a Python float" in hover.contents.value

        hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=30, character=0))))
        labels = {h.position.line: h.label for h in hints}
        assert "traced 4x: lr is a Python float with 4 values" in labels[UPDATE_LINE]
        assert "(observed)" in labels[UPDATE_LINE]

        # Any edit: the facts were about other code, so they are gone.
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=SAMPLE + "# edited\n")]))
        found = await diagnostics(client, uri, version=2)
        assert not [d for d in found if d.source == "tfperf (observed)"]
        assert all("by a run" not in d.message for d in found)
    finally:
        await client.shutdown_session()
