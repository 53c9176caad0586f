"""Notebook document sync (LSP 3.17) as VS Code drives it: the code cells analysed as one module,
diagnostics, hovers, inlay hints and quick fixes on the cell documents, re-analysis on edits.

One server serves the module, as one editor window would: each test opens its own notebook (in a
folder of its own) and closes it when it ends."""
import asyncio
import os
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.lsp.helpers import apply_text_edits, diagnostics, edits_for, folder_for_test, record_versions

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DEFINE = "%matplotlib inline\nimport tensorflow as tf\n\n@tf.function(experimental_relax_shapes=True)\ndef train_step(x, step):\n    return x * 2.0 + tf.cast(step, tf.float32)\n"
LOOP = "x = tf.ones([4])\nfor step in range(3):\n    train_step(x, step)\n!echo done"


pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, os.path.join(ROOT, "server", "tfperf_server.py")]),
    scope="module",
)
async def vscode(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    record_versions(lsp_client)
    # TFP106 (opt-in) is the example of a fixable finding in a cell: the editor's settings
    # select it (answered to workspace/configuration, before the first analysis)
    lsp_client.set_configuration({"tfperf": {"inlayHints": True, "extendSelect": ["TFP106"]}})
    capabilities = client_capabilities("visual-studio-code")
    # VS Code 1.65's snapshot predates LSP 3.17; today's VS Code announces notebook sync.
    capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(execution_summary_support=True)
    )
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
        )
    )
    lsp_client.server_capabilities = result.capabilities
    lsp_client.root = root
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def client(vscode, request):
    """The module's session, with a workspace folder for this test; its notebooks close after it."""
    vscode.workspace_root = folder_for_test(vscode.root, request)
    vscode.open_notebooks = {}
    yield vscode
    for uri in list(vscode.open_notebooks):
        close_notebook(vscode, uri)


def close_notebook(client, uri):
    cell_uris = client.open_notebooks.pop(uri)
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in cell_uris],
        )
    )


def open_notebook(client, cells):
    """cells: (kind, text). Returns the notebook uri and the cell uris (VS Code's scheme)."""
    path = client.workspace_root / "train.ipynb"
    uri = path.as_uri()
    cell_uris = [f"vscode-notebook-cell:{path}#W{i}sZmlsZQ==" for i in range(len(cells))]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=uri, notebook_type="jupyter-notebook", version=1,
                cells=[types.NotebookCell(kind=kind, document=u) for (kind, _), u in zip(cells, cell_uris)],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=u, language_id="python" if kind == types.NotebookCellKind.Code else "markdown", version=1, text=text)
                for (kind, text), u in zip(cells, cell_uris)
            ],
        )
    )
    client.open_notebooks[uri] = cell_uris
    return uri, cell_uris


CODE, MARKUP = types.NotebookCellKind.Code, types.NotebookCellKind.Markup


async def test_notebook_sync_is_advertised_for_python_cells(client):
    sync = client.server_capabilities.notebook_document_sync
    selector = sync.notebook_selector[0]
    assert selector.notebook == "jupyter-notebook" and selector.cells[0].language == "python"


async def test_cells_are_one_module_and_positions_are_in_each_cell(client):
    _, (define, note, loop) = open_notebook(client, [(CODE, DEFINE), (MARKUP, "# train"), (CODE, LOOP)])
    in_loop = await diagnostics(client, loop, version=1)
    retrace = [d for d in in_loop if d.code == "TFP101"]
    # train_step is defined in the first cell and called in a loop in the third: found, in the third.
    assert [(d.range.start.line, d.range.start.character, d.range.end.character) for d in retrace] == [(2, 18, 22)]
    in_define = await diagnostics(client, define, version=1)
    assert [(d.code, d.range.start.line) for d in in_define] == [("TFP106", 3)]
    assert not client.diagnostics.get(note)

    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=loop), position=types.Position(line=2, character=19))
    )
    assert "TFP101" in hover.contents.value
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=types.TextDocumentIdentifier(uri=loop),
                              range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=4, character=0)))
    )
    assert [h.position.line for h in hints] == [2]


async def test_quick_fix_edits_the_cell(client):
    _, (define, loop) = open_notebook(client, [(CODE, DEFINE), (CODE, LOOP)])
    found = await diagnostics(client, define, version=1)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=define), range=found[0].range,
            context=types.CodeActionContext(diagnostics=found, only=[types.CodeActionKind.QuickFix]),
        )
    )
    fix = next(a for a in actions if "TFP106" in a.title)
    if fix.edit is None:
        fix = await client.code_action_resolve_async(fix)
    fixed = apply_text_edits(DEFINE, edits_for(fix.edit, define, version=1))
    assert fixed == DEFINE.replace("experimental_relax_shapes", "reduce_retracing")
    assert not edits_for(fix.edit, loop)


async def test_editing_one_cell_reanalyses_the_others(client):
    uri, (define, loop) = open_notebook(client, [(CODE, DEFINE), (CODE, LOOP)])
    assert [d.code for d in await diagnostics(client, loop, version=1)] == ["TFP101"]
    # Without @tf.function in the first cell, the loop in the second retraces nothing.
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=uri, version=2),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(text_content=[
                    types.NotebookDocumentCellContentChanges(
                        document=types.VersionedTextDocumentIdentifier(uri=define, version=2),
                        changes=[types.TextDocumentContentChangeWholeDocument(text=DEFINE.replace("@tf.function(experimental_relax_shapes=True)\n", ""))],
                    )
                ])
            ),
        )
    )
    assert list(await diagnostics(client, define, version=2)) == []
    for _ in range(100):  # the loop cell keeps its version; its diagnostics are pushed again
        if list(client.diagnostics.get(loop, [None])) == []:
            break
        await asyncio.sleep(0.05)
    assert list(client.diagnostics[loop]) == []


async def test_closing_the_notebook_clears_its_cells(client):
    uri, (define, loop) = open_notebook(client, [(CODE, DEFINE), (CODE, LOOP)])
    await diagnostics(client, loop, version=1)
    close_notebook(client, uri)
    for _ in range(100):
        if list(client.diagnostics.get(loop, [None])) == [] and list(client.diagnostics.get(define, [None])) == []:
            break
        await asyncio.sleep(0.05)
    assert list(client.diagnostics[loop]) == [] and list(client.diagnostics[define]) == []


async def test_a_datalab_body_magic_cell_is_quiet_and_the_other_cells_are_analysed(client):
    """`%bq query` over SQL lines (Datalab notebooks, training-data-analyst) is the magic's input:
    the server shows nothing on it and analyses the Python cells around it as one module."""
    sql = "%bq query -n taxiquery\nSELECT daynumber, COUNT(1) AS n FROM trips\nGROUP BY daynumber\n"
    _, (query, define, loop) = open_notebook(client, [(CODE, sql), (CODE, DEFINE), (CODE, LOOP)])
    in_loop = await diagnostics(client, loop, version=1)
    assert [d.code for d in in_loop] == ["TFP101"]
    assert not client.diagnostics.get(query)


async def test_a_message_names_a_line_of_another_cell_by_its_cell(client):
    define = "import tensorflow as tf\n\nscale = 2.0\n\n@tf.function\ndef apply(x):\n    return x * scale\n"
    use = "print(apply(tf.ones([2])))\nscale = 3.0\nprint(apply(tf.ones([2])))\n"
    _, (first, _, second) = open_notebook(client, [(CODE, define), (MARKUP, "# use it"), (CODE, use)])
    stale = [d for d in await diagnostics(client, first, version=1) if d.code == "TFP201"]
    assert [d.range.start.line for d in stale] == [6]
    assert "assigned on line 2 of cell 2 is ignored" in stale[0].message


async def test_a_cell_pasted_with_its_indent_is_analysed_at_the_users_columns(client):
    """IPython runs a cell whose first line is indented with that indent removed: the server does
    too, and its diagnostics point at the columns the editor shows."""
    indented = "  x = tf.ones([4])\n  for step in range(3):\n      train_step(x, step)\n"
    _, (define, loop) = open_notebook(client, [(CODE, DEFINE), (CODE, indented)])
    in_loop = await diagnostics(client, loop, version=1)
    retrace = [d for d in in_loop if d.code == "TFP101"]
    assert [(d.range.start.line, d.range.start.character, d.range.end.character) for d in retrace] == [(2, 20, 24)]
    assert not any("syntax" in d.message.lower() for d in in_loop)
