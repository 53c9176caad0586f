"""Getting the analysis of a document's current version without blocking the event loop.

Only documents the editor opened are analysed: pygls would read an unopened URI from disk on
the event loop (a FIFO blocks it forever). Requests that arrive together for the same version
(diagnostics, inlay hints, code lenses after one change) share one analysis in flight.
"""
from __future__ import annotations

import asyncio
from urllib.parse import unquote

from tfperf_lsp.lsp.refusals import Refusal
from tfperf_lsp.lsp.state import DocumentResult


def open_document(server, uri: str):
    """The open document, or a Refusal (expected: a client asked about a file it did not open)."""
    document = server.workspace.text_documents.get(unquote(uri))
    if document is None:
        raise Refusal(f"{uri} is not open in the editor")
    return document


async def current_result(server, uri: str) -> DocumentResult | None:
    from tfperf_lsp.lsp.notebooks import cell_result, notebook_of

    notebook = notebook_of(server, uri)
    if notebook is not None:  # a cell: the notebook's code cells are one module
        return await cell_result(server, notebook, uri)
    document = open_document(server, uri)
    version, text = document.version, document.source  # read together, on the event loop
    state = server.state
    cached = state.cached(uri, version)
    if cached is not None:
        return cached
    key = (uri, version)
    running = state.inflight.get(key)
    if running is None:
        running = asyncio.ensure_future(asyncio.to_thread(state.analyze, uri, version, text))
        state.inflight[key] = running
        running.add_done_callback(lambda _f: state.inflight.pop(key, None) if state.inflight.get(key) is running else None)
    return await asyncio.shield(running)


def codec(server, uri: str):
    return open_document(server, uri).position_codec
