import os
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Real editors' capability snapshots: push diagnostics (VS Code 1.65, Neovim 0.7, Emacs 29),
# pull diagnostics (Neovim 0.10), with and without lazily resolved code-action edits.
CLIENTS = ["visual-studio-code", "neovim@v0.7.0", "neovim@v0.10.0", "emacs"]


def _record_versions(client: LanguageClient) -> None:
    """Remember the version each push was for (pytest-lsp keeps only the diagnostics)."""
    client.diagnostic_versions = {}
    features = client.protocol.fm.features
    original = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish(params: types.PublishDiagnosticsParams):
        client.diagnostic_versions[params.uri] = params.version
        return original(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, os.path.join(ROOT, "server", "tfperf_server.py")]),
    params=CLIENTS,
)
async def client(lsp_client: LanguageClient, request, tmp_path):
    _record_versions(lsp_client)
    lsp_client.set_configuration({"tfperf": {"inlayHints": True}})
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
            initialization_options={"workspaceTrusted": False},
        )
    )
    lsp_client.workspace_root = tmp_path
    lsp_client.client_name = request.param
    yield
    await lsp_client.shutdown_session()
