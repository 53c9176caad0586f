"""`source.fixAll.tfperf`: what `editor.codeActionsOnSave` asks for applies every safe fix."""
import textwrap

from lsprotocol import types

from tests.lsp.helpers import apply_text_edits, diagnostics, edits_for, open_document

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


async def _actions(client, uri, only):
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=only, trigger_kind=types.CodeActionTriggerKind.Automatic),
        )
    )


async def test_fix_all_on_save_applies_safe_fixes_only(client):
    # TFP106 is opt-in: the project selects it, as the example of a safe fix
    (client.workspace_root / "pyproject.toml").write_text('[tool.tfperf]\nextend-select = ["TFP106"]\n')
    uri = open_document(client, "train.py", CODE)
    await diagnostics(client, uri, version=1)
    advertised = client.init_result.capabilities.code_action_provider.code_action_kinds
    assert "source.fixAll.tfperf" in advertised
    for only in (["source.fixAll.tfperf"], ["source.fixAll"], ["source"]):
        [action] = await _actions(client, uri, only)
        assert action.kind == "source.fixAll.tfperf"
    fixed = apply_text_edits(CODE, edits_for(action.edit, uri, version=1))
    assert "@tf.function(reduce_retracing=True)" in fixed
    assert "f(tf.ones([2]), i)" in fixed  # TFP101's fix is unsafe: not on save
    assert not await _actions(client, uri, ["quickfix.nothing"])
