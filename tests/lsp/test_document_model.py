"""Issue 15 point 4: the server's document splits lines as LSP does (\\n, \\r\\n, \\r only), so an
incremental edit below any other line-break-like character lands where the editor put it."""
import pytest
from lsprotocol import types
from pygls.workspace import Workspace

from tfperf_lsp.lsp.document import LspTextDocument, LspWorkspace, install, lsp_lines

NOT_LSP_BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def change(line, col, end_line, end_col, text):
    return types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line, col), end=types.Position(end_line, end_col)), text=text)


@pytest.mark.parametrize("char", NOT_LSP_BREAKS, ids=[f"U+{ord(c):04X}" for c in NOT_LSP_BREAKS])
def test_an_edit_below_the_character_lands_on_the_editors_line(char):
    text = f"a = 1  # {char} not a line break for LSP\nz = f(x, i)\nb = 2\n"
    doc = LspTextDocument("file:///x.py", text, version=1)
    doc.apply_change(change(1, 0, 2, 0, ""))  # the editor deletes its line 1: `z = f(x, i)`
    assert doc.source == f"a = 1  # {char} not a line break for LSP\nb = 2\n"
    doc.apply_change(change(1, 4, 1, 5, "3"))  # and edits what is now its line 1
    assert doc.source.endswith("\nb = 3\n")
    assert len(doc.lines) == 2


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\r\nb\rc\nd", "\n\n", "a\r", "a\x0cb\u2028c\r\n"])
def test_lines_keep_their_terminators_and_only_lsp_ones(text):
    lines = lsp_lines(text)
    assert "".join(lines) == text
    assert all(not line[:-1].endswith(("\n", "\r")) or line.endswith("\r\n") for line in lines)
    assert len(lines) == text.count("\n") + text.count("\r") - text.count("\r\n") + (0 if not text or text.endswith(("\n", "\r")) else 1)


def test_positions_count_utf16_on_lsp_lines():
    doc = LspTextDocument("file:///x.py", "s = '\x0c'\n\U0001F600 = 1\n", version=1)
    doc.apply_change(change(1, 2, 1, 2, "x"))  # after the astral character (2 UTF-16 units)
    assert doc.source == "s = '\x0c'\n\U0001F600x = 1\n"


def test_the_workspace_makes_lsp_documents():
    class Protocol:
        _workspace = Workspace(None)

    server = type("S", (), {"protocol": Protocol})()
    install(server)
    assert isinstance(Protocol._workspace, LspWorkspace)
    Protocol._workspace.put_text_document(types.TextDocumentItem(uri="file:///y.py", language_id="python", version=1, text="x\x0c\n"))
    assert isinstance(Protocol._workspace.get_text_document("file:///y.py"), LspTextDocument)
