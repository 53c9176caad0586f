"""A rule that raises is logged in the editor's output; the other rules still report."""
import os
import sys
import textwrap

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.lsp.helpers import diagnostics, record_versions

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CODE = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def step(x, i):
        print("running", x)
        return x * tf.cast(i, tf.float32)

    for i in range(3):
        step(tf.ones([2]), i)
    """
)


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, os.path.join(HERE, "broken_rule_server.py")],
        server_env={**os.environ, "PYTHONPATH": ROOT},
    )
)
async def client(lsp_client: LanguageClient, tmp_path):
    record_versions(lsp_client)
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities("visual-studio-code"), root_uri=tmp_path.as_uri())
    )
    lsp_client.root = tmp_path
    yield
    await lsp_client.shutdown_session()


async def test_failing_rule_is_logged_and_others_report(client):
    path = client.root / "train.py"
    path.write_text(CODE)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=CODE))
    )
    found = await diagnostics(client, uri, version=1)
    assert [d.code for d in found] == ["TFP202"]  # TFP101 is broken, the print rule still reports
    errors = [m.message for m in client.log_messages if m.type == types.MessageType.Error]
    assert any("internal error in rule TFP101" in m and "sabotaged for a test" in m for m in errors)
