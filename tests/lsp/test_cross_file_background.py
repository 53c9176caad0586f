"""Jedi off the request path (issue 11): a file importing a tf.function from a sibling module gets
its diagnostics from its own facts first; the cross-file finding follows when jedi has answered,
pushed again or pulled again after a refresh. Jedi is gated here (slow_jedi_server.py), so the
first diagnostics provably did not wait for it."""
import asyncio
import os
import sys
import textwrap

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.lsp.helpers import record_versions, supports_pull

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

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

MAIN = textwrap.dedent(
    """\
    import tensorflow as tf
    from steps import train_step

    @tf.function
    def local_step(x, step):
        return x * tf.cast(step, tf.float32)

    for i in range(3):
        local_step(tf.ones([2]), i)
        train_step(tf.ones([2]), i)
    """
)
LOCAL, REMOTE = 8, 9  # the lines of the two calls


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, os.path.join(HERE, "slow_jedi_server.py")],
        server_env={**os.environ, "PYTHONPATH": ROOT},
    ),
    # push; pull with workspace/diagnostic/refresh; pull without it (Neovim 0.10 as it is)
    params=["visual-studio-code", "neovim@v0.10.0+refresh", "neovim@v0.10.0"],
)
async def client(lsp_client: LanguageClient, request, tmp_path):
    record_versions(lsp_client)
    lsp_client.diagnostic_refreshes = 0

    features = lsp_client.protocol.fm.features
    original = features[types.WORKSPACE_DIAGNOSTIC_REFRESH]

    def refresh(params):
        lsp_client.diagnostic_refreshes += 1
        return original(params)

    features[types.WORKSPACE_DIAGNOSTIC_REFRESH] = refresh

    capabilities = client_capabilities(request.param.split("+")[0])
    if request.param.endswith("+refresh"):
        capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    lsp_client.can_refresh = not request.param.startswith("neovim") or request.param.endswith("+refresh")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
            initialization_options={"workspaceTrusted": False},
        )
    )
    lsp_client.root = tmp_path
    yield
    await lsp_client.shutdown_session()


async def retrace_lines(client, uri: str, version: int) -> list[int]:
    if supports_pull(client):
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        return sorted(d.range.start.line for d in report.items if d.code == "TFP101")
    for _ in range(600):
        if client.diagnostic_versions.get(uri) == version:
            return sorted(d.range.start.line for d in client.diagnostics[uri] if d.code == "TFP101")
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no diagnostics for version {version}")


async def eventually(client, uri: str, version: int, expected: list[int]) -> None:
    for _ in range(300):
        if await retrace_lines(client, uri, version) == expected:
            return
        await asyncio.sleep(0.1)
    pytest.fail(f"diagnostics never became {expected}: {await retrace_lines(client, uri, version)}")


async def test_first_diagnostics_do_not_wait_for_jedi_then_the_cross_file_finding_appears(client):
    (client.root / "steps.py").write_text(STEPS)
    main = client.root / "main.py"
    main.write_text(MAIN)
    uri = main.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=MAIN)))

    if client.can_refresh:
        # Jedi is held: the file's own finding is published, the cross-file one is not yet.
        assert await retrace_lines(client, uri, 1) == [LOCAL]
        (client.root / "release-jedi").write_text("")
        await eventually(client, uri, 1, [LOCAL, REMOTE])
        if supports_pull(client):
            # The server asked the client to pull again. A pull made while the refined analysis
            # ran already got its findings: the refresh request may still be on its way.
            for _ in range(100):
                if client.diagnostic_refreshes:
                    break
                await asyncio.sleep(0.05)
            assert client.diagnostic_refreshes >= 1
    else:
        # A pull client that cannot be asked to pull again gets its answer when jedi is done.
        asyncio.get_running_loop().call_later(0.5, (client.root / "release-jedi").write_text, "")
        assert await retrace_lines(client, uri, 1) == [LOCAL, REMOTE]

    # The answer is cached for the current version of steps.py: a keystroke in main.py gets the
    # cross-file finding in its first diagnostics, with jedi held again.
    os.remove(client.root / "release-jedi")
    edited = MAIN + "x = 1\n"
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)]))
    assert await retrace_lines(client, uri, 2) == [LOCAL, REMOTE]
