"""Notebook documents (LSP 3.17): the code cells of a notebook analysed as one module, each
cell document seeing the findings, fixes and benchmarks that fall inside it.

The module is analysed once per set of cell versions (under the notebook's URI); each cell gets
a view: an ``Analysis`` over the cell's own text, with findings moved into cell coordinates.
Fixes and benchmark plans are built on the module, then mapped back into the cell; a fix that
would touch another cell is refused.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

from lsprotocol import types

from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.engine import Analysis, fix_for
from tfperf_lsp.lsp.state import DocumentResult
from tfperf_lsp.notebook import Notebook, build

SELECTOR = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")]
        )
    ],
    save=True,
)


@dataclass
class CellView:
    """What a cell's ``Analysis`` knows of the whole notebook."""

    module: Analysis
    notebook: Notebook
    number: int
    originals: dict  # cell finding id -> module finding


def notebook_of(ls, uri: str):
    try:
        return ls.workspace.get_notebook_document(cell_uri=uri)
    except Exception:  # noqa: BLE001 - not a cell
        return None


def code_cells(ls, notebook) -> list[tuple[int, str, object]]:
    """(index in the notebook, uri, text document) of its Python code cells, in order."""
    cells = []
    for index, cell in enumerate(notebook.cells):
        if cell.kind != types.NotebookCellKind.Code:
            continue
        try:
            document = ls.workspace.get_text_document(cell.document)
        except Exception:  # noqa: BLE001 - not opened yet
            continue
        if (document.language_id or "python") == "python":
            cells.append((index, cell.document, document))
    return cells


async def cell_result(ls, notebook, uri: str) -> DocumentResult | None:
    cells = code_cells(ls, notebook)
    # Read every cell's version and text together, on the event loop.
    snapshot = [(index, cell_uri, document.version, document.source) for index, cell_uri, document in cells]
    key = tuple((cell_uri, version) for _, cell_uri, version, _ in snapshot)
    book = build([(index, text) for index, _, _, text in snapshot])
    # defer=False: a notebook's cross-file facts are still computed with its analysis (the
    # background refinement re-publishes plain documents only)
    result = await asyncio.to_thread(ls.state.analyze, notebook.uri, key, book.text, False)
    if result is None:
        return None
    position = next((i for i, (_, cell_uri, _, _) in enumerate(snapshot) if cell_uri == uri), None)
    if position is None:
        return None
    cell = book.cells[position]
    view = _view(result.analysis, book, cell, snapshot[position][3])
    cell_doc_result = DocumentResult(snapshot[position][2], view, result.dependencies)
    for cell_id, finding in view.notebook_view.originals.items():
        if finding.id in result.measured:
            cell_doc_result.measured[cell_id] = result.measured[finding.id]
    ls.state.results[uri] = cell_doc_result  # code action resolve finds it by (uri, version)
    return cell_doc_result


def _view(module: Analysis, book: Notebook, cell, text: str) -> Analysis:
    findings, originals = [], {}
    for finding in module.findings:
        located = book.locate(finding.span.start)
        if located is None or located[0] is not cell:
            continue
        end = book.locate(finding.span.end)
        span_end = end[1] if end and end[0] is cell else located[1]
        moved = replace(book.cited(finding), span=replace(finding.span, start=located[1], end=max(span_end, located[1])))
        findings.append(moved)
        originals[moved.id] = finding
    view = Analysis(SourceText(text), findings, stale=module.stale or module.parse_error is not None)
    view.notebook_view = CellView(module, book, cell.number, originals)
    return view


def cell_fix(analysis: Analysis, finding):
    """The finding's fix in cell coordinates; None when it would reach into another cell."""
    view = getattr(analysis, "notebook_view", None)
    if view is None:
        return fix_for(analysis, finding)
    original = view.originals.get(finding.id)
    fix = fix_for(view.module, original) if original else None
    grouped = view.notebook.edits_by_cell(fix.edits) if fix else None
    if not grouped or list(grouped) != [view.number]:
        return None
    return replace(fix, edits=tuple(grouped[view.number]))


def results_uri(ls, uri: str) -> str:
    """Where benchmark results of ``uri`` are filed: a cell's under its notebook."""
    notebook = notebook_of(ls, uri)
    return notebook.uri if notebook is not None else uri


def module_finding(analysis: Analysis, finding):
    """(module analysis, module finding) for a benchmark plan: earlier cells give the inputs."""
    view = getattr(analysis, "notebook_view", None)
    if view is None:
        return analysis, finding
    return view.module, view.originals.get(finding.id, finding)


def register(server) -> None:
    state = server.state

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    async def did_open(ls, params: types.DidOpenNotebookDocumentParams):
        await publish_notebook(ls, params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    async def did_change(ls, params: types.DidChangeNotebookDocumentParams):
        structure = params.change.cells.structure if params.change.cells else None
        for closed in (structure.did_close or []) if structure else []:
            _clear(ls, closed.uri)
        uri = params.notebook_document.uri
        if state.pull_diagnostics or not state.settings(uri).lint_on_change:
            return
        schedule_notebook(ls, uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    async def did_save(ls, params: types.DidSaveNotebookDocumentParams):
        await publish_notebook(ls, params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseNotebookDocumentParams):
        state.forget(params.notebook_document.uri)
        for cell in params.cell_text_documents:
            _clear(ls, cell.uri)


def _clear(ls, uri: str) -> None:
    ls.state.forget(uri)
    if not ls.state.pull_diagnostics:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def schedule_notebook(ls, uri: str) -> None:
    """Same debounce as a file: a newer change to any cell cancels the pending run."""
    from tfperf_lsp.lsp.features.diagnostics import schedule

    schedule(ls, uri, publish_notebook)


async def publish_notebook(ls, uri: str) -> None:
    from tfperf_lsp.lsp.features.diagnostics import publish

    notebook = ls.workspace.get_notebook_document(notebook_uri=uri)
    if notebook is None:
        return
    for _, cell_uri, _ in code_cells(ls, notebook):
        await publish(ls, cell_uri)
