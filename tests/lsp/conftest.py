import os
import sys

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.lsp.helpers import record_versions

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Real editors' capability snapshots: push diagnostics (VS Code 1.65, Neovim 0.7, Emacs 29),
# pull diagnostics (Neovim 0.10), with and without lazily resolved code-action edits.
CLIENTS = ["visual-studio-code", "neovim@v0.7.0", "neovim@v0.10.0", "emacs"]


SERVER = ClientServerConfig(server_command=[sys.executable, os.path.join(ROOT, "server", "tfperf_server.py")])


async def start_editor_session(lsp_client: LanguageClient, profile: str, root) -> None:
    """Initialize as the editor PROFILE does, on an untrusted workspace at ROOT, inlay hints on."""
    record_versions(lsp_client)
    lsp_client.set_configuration({"tfperf": {"inlayHints": True}})
    lsp_client.init_result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(profile),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options={"workspaceTrusted": False},
        )
    )
    lsp_client.workspace_root = root
    lsp_client.client_name = profile


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(lsp_client: LanguageClient, request, tmp_path):
    await start_editor_session(lsp_client, request.param, tmp_path)
    yield
    await lsp_client.shutdown_session()
