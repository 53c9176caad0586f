"""Diagnostics: pushed (debounced, with the document version) or pulled, never both."""
from __future__ import annotations

import asyncio
import logging

from lsprotocol import types

from tfperf_lsp.lsp.convert import to_diagnostic
from tfperf_lsp.lsp.features import observe
from tfperf_lsp.lsp.features.documents import codec, current_result, open_document
from tfperf_lsp.lsp.refusals import Refusal

log = logging.getLogger("tfperf_lsp")


def register(server) -> None:
    state = server.state

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls, params: types.DidOpenTextDocumentParams):
        await publish(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls, params: types.DidChangeTextDocumentParams):
        if state.pull_diagnostics or not state.settings(params.text_document.uri).lint_on_change:
            return  # pull clients ask when they want; lint-on-save users wait for didSave
        schedule(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls, params: types.DidSaveTextDocumentParams):
        await publish(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        state.forget(uri)
        if not state.pull_diagnostics:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier="tfperf", inter_file_dependencies=True, workspace_diagnostics=False),
    )
    async def pull(ls, params: types.DocumentDiagnosticParams):
        uri = params.text_document.uri
        result = await current_result(ls, uri)
        if result is not None and result.refining is not None and not _can_refresh(ls):
            # Cross-file lookups are running and this client cannot be asked to pull again
            # (Neovim 0.10): answer when they are done rather than leave findings out until
            # the next edit.
            await asyncio.shield(result.refining)
            result = await current_result(ls, uri)
        # The id changes with the text and with anything else that changes findings (settings,
        # benchmark results), so a client never keeps a stale report.
        result_id = f"{result.version}.{ls.state.generation}" if result else None
        if result is not None and params.previous_result_id == result_id:
            return types.UnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.FullDocumentDiagnosticReport(items=diagnostics_for(ls, uri, result), result_id=result_id)


def _can_refresh(ls) -> bool:
    workspace = ls.client_capabilities.workspace
    return bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support)


def schedule(ls, uri: str, publisher=None) -> None:
    """Analyse after the user pauses typing (state.debounce_seconds); a newer change cancels the
    pending run.
    ``publisher``: what to run then (a notebook publishes all its cells); ``publish`` by default."""
    publisher = publisher or publish
    pending = ls.state.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()

    async def later():
        try:
            await asyncio.sleep(ls.state.debounce_seconds(uri))
            await publisher(ls, uri)
        except asyncio.CancelledError:
            pass
        finally:
            if ls.state.pending.get(uri) is task:
                ls.state.pending.pop(uri, None)

    task = asyncio.ensure_future(later())
    ls.state.pending[uri] = task


def diagnostics_for(ls, uri: str, result) -> list[types.Diagnostic]:
    if result is None:
        return []
    source = result.analysis.source
    position_codec = codec(ls, uri)
    diagnostics = []
    for finding in result.analysis.findings:
        diagnostic = to_diagnostic(position_codec, source, finding, ls.state.benchmarkable(result, finding))
        diagnostic.message = ls.state.diagnostic_message(result, finding)
        diagnostics.append(diagnostic)
    observe.decorate_diagnostics(ls, uri, result, diagnostics)
    return diagnostics


async def publish(ls, uri: str) -> None:
    try:
        document = open_document(ls, uri)
    except Refusal:  # closed before we got here
        return
    version = document.version
    result = await current_result(ls, uri)
    if ls.state.pull_diagnostics or document.version != version:
        return  # superseded by a newer version: its own run will publish
    if result is None:
        # Too large to analyse (or gone): clear what an earlier, smaller version showed.
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=[]))
        return
    if result.version != document.version:
        return
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, version=result.version, diagnostics=diagnostics_for(ls, uri, result))
    )
    for dependent in ls.state.dependents_of(uri):
        ls.state.results.pop(dependent, None)
        schedule(ls, dependent)


async def refresh_all(ls) -> None:
    """Settings or shared facts changed: every open document's findings may differ."""
    ls.state.results.clear()
    ls.state.generation += 1
    if ls.state.pull_diagnostics:
        workspace = ls.client_capabilities.workspace
        if workspace and workspace.diagnostics and workspace.diagnostics.refresh_support:
            ls.workspace_diagnostic_refresh(None)
    else:
        for uri in list(ls.workspace.text_documents):
            await publish(ls, uri)
    workspace = ls.client_capabilities.workspace
    if workspace and workspace.inlay_hint and workspace.inlay_hint.refresh_support:
        ls.workspace_inlay_hint_refresh(None)
