"""The server's copy of a document, with LSP's idea of a line.

pygls splits lines with ``str.splitlines``, which also breaks at \\x0b \\x0c \\x1c-\\x1e \\x85
\\u2028 \\u2029. LSP counts only \\n, \\r\\n and \\r, so with incremental sync every edit below
such a character (a form feed is legal in Python source) landed on the wrong text. The
subclass fixes ``lines``, which pygls uses to apply changes and convert positions.
"""
from __future__ import annotations

import re
from typing import Optional, Sequence

from pygls.workspace import TextDocument, Workspace

# A line and its terminator; the last line may have none (never an empty match).
_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def lsp_lines(text: str) -> list[str]:
    """Lines as LSP counts them, terminators kept (like ``splitlines(True)`` for \\n only)."""
    return _LSP_LINE.findall(text)


class LspTextDocument(TextDocument):
    @property
    def lines(self) -> Sequence[str]:
        return tuple(lsp_lines(self.source))


class LspWorkspace(Workspace):
    def _create_text_document(
        self,
        doc_uri: str,
        source: Optional[str] = None,
        version: Optional[int] = None,
        language_id: Optional[str] = None,
    ) -> TextDocument:
        return LspTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )


def install(server) -> None:
    """Called from the initialize handler, after pygls made its Workspace and before any
    document opens: the workspace adds no state, so its class can be swapped in place."""
    workspace = server.protocol._workspace  # noqa: SLF001 - pygls offers no factory hook
    if workspace is not None and not isinstance(workspace, LspWorkspace):
        workspace.__class__ = LspWorkspace
