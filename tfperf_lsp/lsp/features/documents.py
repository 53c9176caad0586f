"""Getting the analysis of a document's current version without blocking the event loop.

Only documents the editor opened are analysed: pygls would read an unopened URI from disk on
the event loop (a FIFO blocks it forever). Requests that arrive together for the same version
(diagnostics, inlay hints, code lenses after one change) share one analysis in flight.

Jedi stays off the request path: an analysis answers cross-file questions (is this imported name
a tf.function?) from the cache only. The lookups it skipped run in the background
(``refine_later``); the document is then analysed again, and when its findings changed they are
published again (push) or the client is asked to pull again (pull, with a new result id).
"""
from __future__ import annotations

import asyncio
import logging
from urllib.parse import unquote

from pygls.uris import to_fs_path

from tfperf_lsp.lsp.refusals import Refusal
from tfperf_lsp.lsp.state import DocumentResult

log = logging.getLogger("tfperf_lsp")
MAX_REFINE_ROUNDS = 3  # per document version: a target file that changes meanwhile asks again


def open_document(server, uri: str):
    """The open document, or a Refusal (expected: a client asked about a file it did not open)."""
    document = server.workspace.text_documents.get(unquote(uri))
    if document is None:
        raise Refusal(f"{uri} is not open in the editor")
    return document


async def current_result(server, uri: str) -> DocumentResult | None:
    from tfperf_lsp.lsp.features.lifecycle import settings_ready
    from tfperf_lsp.lsp.notebooks import cell_result, notebook_of

    await settings_ready(server)
    notebook = notebook_of(server, uri)
    if notebook is not None:  # a cell: the notebook's code cells are one module
        return await cell_result(server, notebook, uri)
    document = open_document(server, uri)
    version, text = document.version, document.source  # read together, on the event loop
    state = server.state
    cached = state.cached(uri, version)
    if cached is not None:
        # The analysis thread stores its result before the request that started it resumes: a
        # request in between gets it from the cache, and must see its lookups under way too.
        refine_later(server, uri, cached)
        return cached
    key = (uri, version)
    running = state.inflight.get(key)
    if running is None:
        running = asyncio.ensure_future(asyncio.to_thread(state.analyze, uri, version, text))
        state.inflight[key] = running
        running.add_done_callback(lambda _f: state.inflight.pop(key, None) if state.inflight.get(key) is running else None)
    result = await asyncio.shield(running)
    if unquote(uri) not in server.workspace.text_documents:
        state.forget(uri)  # closed while it was analysed: keep nothing of it
        return result
    refine_later(server, uri, result)
    return result


def refine_later(server, uri: str, result: DocumentResult | None) -> None:
    """Answer the cross-file lookups ``result`` skipped, in the background, then refine."""
    if result is None or not getattr(result, "pending", ()) or result.refining is not None:
        return
    state = server.state
    version, rounds = state.refine_rounds.get(uri, (None, 0))
    rounds = rounds + 1 if version == result.version else 1
    if rounds > MAX_REFINE_ROUNDS:
        log.debug("%s: cross-file lookups still missing after %d rounds; not asking again", uri, rounds - 1)
        return
    state.refine_rounds[uri] = (result.version, rounds)
    result.refining = asyncio.ensure_future(_refine(server, uri, result))


async def _refine(server, uri: str, result: DocumentResult) -> None:
    state = server.state
    try:
        ran = await asyncio.to_thread(state.index.run_lookups, result.pending)
        log.debug("%s: %d cross-file lookups answered in the background", uri, ran)
        if unquote(uri) not in server.workspace.text_documents:
            # Closed while jedi ran: the answers it stored for this document go too (a closed
            # document leaves nothing behind in the index).
            path = to_fs_path(uri)
            if path:
                state.index.forget(path)
            return
        if state.results.get(uri) is not result:
            return  # closed, or a newer analysis exists (it used the answers, or refines itself)
        state.results.pop(uri, None)
        try:
            refined = await current_result(server, uri)
        except Refusal:
            return  # closed meanwhile
        if refined is None or refined.version != result.version:
            return
        if _shown(refined) == _shown(result):
            return  # the lookups found nothing that changes what the editor shows
        state.generation += 1  # a pull client's result id changes with it
        capabilities = server.client_capabilities.workspace
        if state.pull_diagnostics:
            if capabilities and capabilities.diagnostics and capabilities.diagnostics.refresh_support:
                server.workspace_diagnostic_refresh(None)
        else:
            from tfperf_lsp.lsp.features.diagnostics import publish

            await publish(server, uri)
        if capabilities and capabilities.inlay_hint and capabilities.inlay_hint.refresh_support:
            server.workspace_inlay_hint_refresh(None)
        if capabilities and capabilities.code_lens and capabilities.code_lens.refresh_support:
            server.workspace_code_lens_refresh(None)
    except Exception:  # noqa: BLE001 - a failed refinement leaves the first diagnostics shown
        log.exception("refining the cross-file findings of %s failed", uri)


def _shown(result: DocumentResult) -> list:
    return [(f.code, f.span, f.message, f.label, f.fix_title) for f in result.analysis.findings]


def codec(server, uri: str):
    return open_document(server, uri).position_codec
