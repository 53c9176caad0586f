"""Small client-side helpers for end-to-end tests: what an editor does with the server's answers."""
from __future__ import annotations

import asyncio
import re

from lsprotocol import types


def record_versions(client) -> None:
    """Remember the version each push was for (pytest-lsp keeps only the diagnostics)."""
    client.diagnostic_versions = {}
    features = client.protocol.fm.features
    original = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish(params: types.PublishDiagnosticsParams):
        client.diagnostic_versions[params.uri] = params.version
        return original(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    # Real editors answer the refresh requests their capabilities advertise; pytest-lsp's client
    # does not, and the error it returns would fail a session for no fault of the server.
    client.refreshes = []
    for method in (types.WORKSPACE_INLAY_HINT_REFRESH, types.WORKSPACE_CODE_LENS_REFRESH):
        if method not in features:
            features[method] = lambda params, method=method: client.refreshes.append(method)


def supports_pull(client) -> bool:
    return bool(client.capabilities.text_document and client.capabilities.text_document.diagnostic)


async def diagnostics(client, uri: str, version: int | None = None, timeout: float = 120.0) -> list[types.Diagnostic]:
    """The diagnostics an editor would show now: pulled if it pulls, else the latest push. The wait
    ends when they arrive (milliseconds); its bound is for a stalled CI machine, where it was seconds."""
    if supports_pull(client):
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        return list(report.items)
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        if uri in client.diagnostics and (version is None or client.diagnostic_versions.get(uri) == version):
            return client.diagnostics[uri]
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"no diagnostics for {uri} (version {version})")
        await asyncio.sleep(0.05)


def offset(text: str, position: types.Position) -> int:
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[: position.line]) + position.character


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(text, edit.range.start)] + edit.new_text + text[offset(text, edit.range.end) :]
    return text


def edits_for(workspace_edit: types.WorkspaceEdit, uri: str, version: int | None = None) -> list[types.TextEdit]:
    """The edits of ``uri``; a versioned edit for another version is rejected, as editors do."""
    if workspace_edit.document_changes:
        edits = []
        for change in workspace_edit.document_changes:
            if change.text_document.uri == uri:
                if version is not None and change.text_document.version not in (None, version):
                    raise ValueError(f"edit for version {change.text_document.version}, document is at {version}")
                edits.extend(change.edits)
        return edits
    return list((workspace_edit.changes or {}).get(uri, []))


def folder_for_test(root, request):
    """A new folder under ROOT named after the running test: its files, in a session shared by
    several tests, are its own."""
    folder = root / re.sub(r"\W+", "_", request.node.name)
    folder.mkdir()
    return folder


def open_document(client, name: str, text: str, version: int = 1) -> str:
    """Write NAME in the client's workspace folder and open it; a client with an `opened` list
    (a session shared by several tests) remembers the document so that it can be closed."""
    path = client.workspace_root / name
    path.write_text(text)
    uri = path.as_uri()
    if hasattr(client, "opened"):
        client.opened.append(uri)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )
    return uri


def change_document(client, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
