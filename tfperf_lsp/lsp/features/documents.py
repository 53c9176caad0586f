"""Getting the analysis of a document's current version without blocking the event loop."""
from __future__ import annotations

import asyncio

from tfperf_lsp.lsp.state import DocumentResult


async def current_result(server, uri: str) -> DocumentResult | None:
    from tfperf_lsp.lsp.notebooks import cell_result, notebook_of

    notebook = notebook_of(server, uri)
    if notebook is not None:  # a cell: the notebook's code cells are one module
        return await cell_result(server, notebook, uri)
    document = server.workspace.get_text_document(uri)
    version, text = document.version, document.source  # read together, on the event loop
    cached = server.state.cached(uri, version)
    if cached is not None:
        return cached
    return await asyncio.to_thread(server.state.analyze, uri, version, text)


def codec(server, uri: str):
    return server.workspace.get_text_document(uri).position_codec
