"""workspace/executeCommand handlers (benchmark commands are added by the bench integration)."""
from __future__ import annotations

import os
import tempfile

from lsprotocol import types

from tfperf_lsp.rules import rule_by_code


def register(server) -> None:
    @server.command("tfperf.ruleDocs")
    def rule_docs(ls, code: str):
        rule = rule_by_code(str(code))
        if rule is None:
            raise ValueError(f"no rule {code!r}")
        return {"code": rule.code, "markdown": rule.markdown()}

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


def _docs_file(rule) -> str:
    """Rule docs as a markdown file any editor can open (regenerated: docs change with versions)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "tfperf", "rules")
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        directory = tempfile.gettempdir()
    path = os.path.join(directory, f"{rule.code}.md")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(rule.markdown())
    return path
