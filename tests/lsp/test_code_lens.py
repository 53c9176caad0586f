"""Code lenses only where a benchmark can run, and off with `codeLens: false`."""
import textwrap

from lsprotocol import types

from tests.lsp.helpers import diagnostics, open_document

CODE = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function(experimental_relax_shapes=True)
    def f(x, step):
        return x * tf.cast(step, tf.float32)

    for i in range(3):
        f(tf.ones([2]), i)
    """
)


async def _lenses(client, uri):
    return await client.text_document_code_lens_async(types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))


async def test_lenses_follow_trust_and_the_setting(client):
    uri = open_document(client, "train.py", CODE)
    await diagnostics(client, uri, version=1)
    assert not await _lenses(client, uri)  # the fixture's workspace is untrusted: nothing can run
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"tfperf": {"workspaceTrusted": True}}))
    client.set_configuration({"tfperf": {"workspaceTrusted": True}})
    lenses = await _lenses(client, uri)
    # TFP101 can be measured; TFP106 is a rename with nothing to time: one lens, not one per finding
    assert [lens.range.start.line for lens in lenses] == [7]
    client.set_configuration({"tfperf": {"workspaceTrusted": True, "codeLens": False}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"tfperf": {"codeLens": False}}))
    assert not await _lenses(client, uri)
