"""workspace/executeCommand handlers (benchmark commands are added by the bench integration)."""
from __future__ import annotations

import os
import stat
import tempfile

from lsprotocol import types

from tfperf_lsp.engine import rule_docs
from tfperf_lsp.rules import rule_by_code


def register(server) -> None:
    @server.command("tfperf.ruleDocs")
    def rule_docs(ls, code: str):
        rule = rule_by_code(str(code))
        if rule is None:
            raise ValueError(f"no rule {code!r}")
        return {"code": rule.code, "markdown": rule_docs(rule)}

    @server.command("tfperf.showRuleDocs")
    async def show_rule_docs(ls, code: str):
        rule = rule_by_code(str(code))
        if rule is None:
            raise ValueError(f"no rule {code!r}")
        path = _docs_file(rule)
        window = ls.client_capabilities.window
        if window and window.show_document and window.show_document.support:
            await ls.window_show_document_async(
                types.ShowDocumentParams(uri="file://" + path, take_focus=True)
            )
        else:
            ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Info, message=f"{rule.code} {rule.name}: {rule.summary}. {rule.doc_url}")
            )
        return {"code": rule.code, "path": path}


_PRIVATE_DOCS: str | None = None


def _docs_dir() -> str:
    """~/.cache/tfperf/rules when it is ours and private; else a private temporary directory
    (never a predictable name in the shared /tmp, which anyone could pre-create as a link)."""
    global _PRIVATE_DOCS
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "tfperf", "rules")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        st = os.lstat(directory)
        ours = not hasattr(os, "getuid") or st.st_uid == os.getuid()
        if stat.S_ISDIR(st.st_mode) and ours and not st.st_mode & 0o022:
            return directory
    except OSError:
        pass
    if _PRIVATE_DOCS is None or not os.path.isdir(_PRIVATE_DOCS):
        _PRIVATE_DOCS = tempfile.mkdtemp(prefix="tfperf-rules-")
    return _PRIVATE_DOCS


def _docs_file(rule) -> str:
    """Rule docs as a markdown file any editor can open (regenerated: docs change with versions).
    Never written through a link planted at the name."""
    path = os.path.join(_docs_dir(), f"{rule.code}.md")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError:  # a link (O_NOFOLLOW refuses it) or something odd: replace it
        os.unlink(path)
        fd = os.open(path, flags | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(rule_docs(rule))
    return path
