"""A setting changed while the editor runs takes effect, in every editor profile: a server of
its own per test, since the change outlives the test (test_editor_session.py shares one)."""
from lsprotocol import types

from tests.lsp.helpers import diagnostics, open_document
from tests.lsp.test_editor_session import RETRACE


async def test_settings_turn_a_rule_off(client):
    settings = {"tfperf": {"rules": {"TFP101": "off"}}}
    client.set_configuration(settings)  # answered to workspace/configuration (VS Code, Neovim 0.10)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=settings))
    uri = open_document(client, "train.py", RETRACE)
    found = await diagnostics(client, uri, version=1)
    assert not [d for d in found if d.code == "TFP101"]
