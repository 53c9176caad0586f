"""Jupyter notebooks read as one program: the code cells, in order, concatenated into one module.

IPython syntax (magics, shell escapes, help) is masked line by line so that line numbers still
map back into cells; a cell that does not parse is masked whole and reported, and the other cells
are still analysed. ``Notebook.locate`` maps a module position to (cell number, position in cell).
Cell numbers are 1-based and count code cells only (ruff's convention).
"""
from __future__ import annotations

import ast
import json
import re
import warnings
from dataclasses import dataclass, field, replace

from tfperf_lsp.model import Edit, Finding, Pos, Span

# `%magic`, `!cmd`, `x = !cmd`, `x = %magic`, `f?`, `?f`, `f??`: IPython-only lines.
_LINE_MAGIC = re.compile(r"^\s*(%|!|\?)")
_ASSIGN_MAGIC = re.compile(r"^\s*[\w.,\s\[\]()*]+=\s*[%!]")
_HELP = re.compile(r"^\s*[\w.\[\]()]+\?{1,2}\s*$")
# IPython's automagics and shell aliases, written without `%` (`ls ./trainer/`, `cd data`,
# `pip install x`): IPython lines when they are not Python.
# The word is followed by an argument, never by an operator: `history = model.fit(x,` is the
# first line of a Python statement that does not parse on its own.
_AUTOMAGIC = re.compile(r"^\s*(ls|cd|pwd|cat|cp|mv|rm|mkdir|rmdir|ll|less|more|man|clear|pip|conda|"
                        r"timeit|load_ext|matplotlib|pylab|tensorboard)\s+(?![=!<>+*%&|^@:,(\[{])\S")
MASK = "pass  # masked IPython line"
# Colab's `%tensorflow_version 1.x` runs the notebook on TensorFlow 1 (graph mode by default):
# its mask says so, for analysis.hotness (advice for eager TensorFlow 2 does not apply there).
_TF1_MAGIC = re.compile(r"^\s*%tensorflow_version\s+1\b")
TF1_MAGIC_MASK = MASK + ": %tensorflow_version 1.x"


# ``!pip install tensorflow-gpu==2.0.0``: the TensorFlow the notebook runs on, kept in its mask
# for analysis.pins (advice about later APIs is wrong there).
_TF_INSTALL = re.compile(r"^\s*[!%]\s*pip3?\s+install\b[^#\n]*\btensorflow", re.IGNORECASE)


def _mask(line: str) -> str:
    """What replaces an IPython line: MASK, saying what analysis reads from it."""
    if _TF1_MAGIC.match(line):
        return TF1_MAGIC_MASK
    if _TF_INSTALL.match(line):
        return f"{MASK}: {line.strip().lstrip('!%').strip()}"
    return MASK


class NotebookError(ValueError):
    """The file is not a readable nbformat 4 notebook (one line for the user)."""


@dataclass
class Cell:
    number: int  # 1-based among code cells
    index: int  # position in the notebook's ``cells`` list
    source: str  # the cell's text as the user wrote it
    start: int = 0  # first module line
    lines: int = 0  # module lines the cell occupies (its text plus a closing newline)
    masked_lines: set[int] = field(default_factory=set)  # cell lines replaced by MASK
    whole_masked: bool = False
    # The cell did not parse: its lines that read as IPython automagics (`ls ./trainer/`) are
    # masked too, tried only then, as their words are common Python names.
    automagic: bool = False
    syntax_error: tuple[int, int, str] | None = None  # (row, col, message) inside the cell, 1-based
    # IPython's ``leading_indent``: a cell whose first line is indented runs with that indent
    # removed from every line that starts with it (a block pasted out of a function).
    indent: str = ""
    dedented_lines: set[int] = field(default_factory=set)  # cell lines that lost ``indent``


@dataclass
class Notebook:
    cells: list[Cell]
    text: str  # the module the engine analyses
    language: str = "python"

    def cell_at(self, line: int) -> Cell | None:
        for cell in self.cells:
            if cell.start <= line < cell.start + cell.lines:
                return cell
        return None

    def locate(self, pos: Pos) -> tuple[Cell, Pos] | None:
        cell = self.cell_at(pos.line)
        if cell is None:
            return None
        row = pos.line - cell.start
        return cell, Pos(row, pos.col + (len(cell.indent) if row in cell.dedented_lines else 0))

    def cited(self, finding: Finding) -> Finding:
        """The finding with the lines its message names (``cited_lines``, "line 383" of the
        module) named as the user sees them: "line 4" in the finding's own cell, "line 4 of
        cell 12" in another."""
        if not finding.cited_lines:
            return finding
        here = self.cell_at(finding.span.start.line)
        message, label = finding.message, finding.label
        for line in finding.cited_lines:
            cell = self.cell_at(line - 1)
            if cell is None:
                continue
            row = line - cell.start
            name = f"line {row}" if cell is here else f"line {row} of cell {cell.number}"
            cited = re.compile(rf"\bline {line}\b")
            message, label = cited.sub(name, message), cited.sub(name, label)
        return replace(finding, message=message, label=label)

    def cell_span(self, span: Span) -> tuple[Cell, Span] | None:
        """The span inside one cell; None when it crosses cells or touches masked lines."""
        start = self.locate(span.start)
        if start is None:
            return None
        cell, begin = start
        end_line = span.end.line - cell.start
        # A whole-line edit may end at column 0 just past the cell's last line.
        if not (0 <= end_line < cell.lines or (end_line == cell.lines and span.end.col == 0)):
            return None
        if cell.whole_masked or cell.indent or any(begin.line <= m <= end_line for m in cell.masked_lines):
            return None  # masked lines, or a cell analysed dedented: no edit maps back exactly
        return cell, Span(begin, Pos(end_line, span.end.col))

    def edits_by_cell(self, edits) -> dict[int, list[Edit]] | None:
        """Module edits grouped by cell number, in cell coordinates; None if any crosses cells."""
        grouped: dict[int, list[Edit]] = {}
        for edit in edits:
            mapped = self.cell_span(edit.span)
            if mapped is None:
                return None
            cell, span = mapped
            grouped.setdefault(cell.number, []).append(Edit(span, edit.new_text))
        return grouped


def read_notebook(text: str) -> tuple[dict, list[tuple[int, str]]]:
    """The parsed JSON and its code cells as (index, source); NotebookError when invalid."""
    import nbformat
    import nbformat.reader

    try:  # parse only: nbformat.reads would also validate, logging to stderr what it finds
        node = nbformat.reader.reads(text)
    except Exception as exc:  # noqa: BLE001 - nbformat raises JSON, schema and version errors
        raise NotebookError(f"not a valid Jupyter notebook: {_one_line(exc)}") from None
    if node.get("nbformat") != 4:
        raise NotebookError(f"nbformat {node.get('nbformat')} notebooks are not supported (only version 4)")
    try:
        # Duplicate or missing cell ids are common in real notebooks (copied cells): nbformat
        # repairs them in this in-memory copy and warns on stderr. The file itself is never
        # rewritten from it (fixes replace sources in the text), so the warnings say nothing
        # to a tfperf user.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nbformat.validate(node)
    except Exception as exc:  # noqa: BLE001 - schema violations
        # Jupyter opens a notebook whose schema errors leave its code readable (a markdown cell
        # with outputs, as some tools write): so do we. Fixes rewrite only code-cell sources.
        if not _code_readable(node):
            raise NotebookError(f"invalid notebook: {_one_line(exc)}") from None
    cells = [(i, _joined(c.get("source", ""))) for i, c in enumerate(node.cells) if c.get("cell_type") == "code"]
    return node, cells


def language_of(node: dict) -> str:
    metadata = node.get("metadata") or {}
    info = metadata.get("language_info") or {}
    kernel = metadata.get("kernelspec") or {}
    return str(info.get("name") or kernel.get("language") or "python").lower()


def build(code_cells: list[tuple[int, str]], language: str = "python") -> Notebook:
    """Concatenate code cells into one module, masking IPython lines and cells that do not parse."""
    cells = [Cell(number, index, source) for number, (index, source) in enumerate(code_cells, 1)]
    for cell in cells:
        if _is_cell_magic(cell.source):
            cell.whole_masked = True
        else:
            _find_leading_indent(cell)
    notebook = Notebook(cells, "", language)
    _assemble(notebook)
    for _ in range(2 * len(cells) + 1):
        error = _syntax_error(notebook.text)
        if error is None:
            break
        line, col, message = error
        cell = notebook.cell_at(line) or (cells[-1] if cells else None)
        if cell is None or cell.whole_masked:
            break
        if not cell.automagic and any(_AUTOMAGIC.match(text) for text in cell.source.split("\n")):
            cell.automagic = True
            _assemble(notebook)
            continue
        if not _magic_with_a_body(cell.source):
            row = line - cell.start
            shift = len(cell.indent) if row in cell.dedented_lines else 0  # the column the user sees
            cell.syntax_error = (row + 1, col + shift + 1, message)
        cell.whole_masked = True
        _assemble(notebook)
    return notebook


def _find_leading_indent(cell: Cell) -> None:
    """IPython's ``leading_indent`` transform: when the cell's first non-blank line is indented,
    that indent is removed from every line that starts with it before the cell runs."""
    lines = cell.source.split("\n")
    first = next((text for text in lines if text.strip()), "")
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    if indent:
        cell.indent = indent
        cell.dedented_lines = {n for n, text in enumerate(lines) if text.startswith(indent)}


def _assemble(notebook: Notebook) -> None:
    chunks, line = [], 0
    for cell in notebook.cells:
        cell_lines = cell.source.split("\n")
        if cell.source.endswith("\n"):
            cell_lines.pop()
        if cell.indent:
            cell_lines = [text[len(cell.indent):] if n in cell.dedented_lines else text for n, text in enumerate(cell_lines)]
        masked = []
        cell.masked_lines = set()
        continued = False  # IPython joins a magic's lines that end with a backslash
        python = _PythonLines()  # where Python's own statements stand: a magic starts only between them
        for number, text in enumerate(cell_lines):
            if cell.whole_masked:
                masked.append("")
            elif continued:
                cell.masked_lines.add(number)
                masked.append("")
                continued = text.rstrip().endswith("\\")
            elif python.at_rest and (_is_ipython_line(text)
                                     or cell.automagic and _AUTOMAGIC.match(text) and not _parses(text.strip())):
                continued = text.rstrip().endswith("\\")
                cell.masked_lines.add(number)
                masked.append(text[: len(text) - len(text.lstrip())] + _mask(text))
            else:
                python.read(text)
                masked.append(text)
        cell.start, cell.lines = line, len(masked)
        line += len(masked)
        chunks.extend(m + "\n" for m in masked)
    notebook.text = "".join(chunks)


class _PythonLines:
    """Whether the next line starts a new statement: not inside brackets, a triple-quoted string
    or after a backslash. Black puts an operator first on a continued line (``% name``,
    ``!= "Completed"`` inside parentheses): Python, not a magic or a shell escape."""

    def __init__(self) -> None:
        self.depth = 0
        self.string: str | None = None  # the open triple quote
        self.backslash = False

    @property
    def at_rest(self) -> bool:
        return self.depth == 0 and self.string is None and not self.backslash

    def read(self, line: str) -> None:
        self.backslash = False
        i, n = 0, len(line)
        while i < n:
            if self.string is not None:
                end = _closing(line, i, self.string)
                if end < 0:
                    return  # the string goes on to the next line
                self.string, i = None, end
                continue
            char = line[i]
            if char == "#":
                return
            if char in "\"'":
                triple = line[i:i + 3]
                if triple in ('"""', "'''"):
                    self.string, i = triple, i + 3
                    continue
                end = _closing(line, i + 1, char)
                if end < 0:
                    self.backslash = line.rstrip().endswith("\\")  # a string continued with a backslash
                    return
                i = end
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(self.depth - 1, 0)
            elif char == "\\" and i == len(line.rstrip()) - 1:
                self.backslash = True
            i += 1


def _closing(line: str, start: int, quote: str) -> int:
    """The index just after ``quote`` closes in ``line`` from ``start`` (a backslash escapes the
    next character); -1 when it does not close on this line."""
    i = start
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        if line.startswith(quote, i):
            return i + len(quote)
        i += 1
    return -1


def _is_ipython_line(text: str) -> bool:
    if not text.strip() or text.lstrip().startswith("#"):
        return False
    return bool(_LINE_MAGIC.match(text) or _ASSIGN_MAGIC.match(text) and not _parses(text.strip()) or _HELP.match(text))


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
        return True
    except SyntaxError:
        return False


def _is_cell_magic(source: str) -> bool:
    for line in source.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line.lstrip().startswith("%%")
    return False


# Magics that take the rest of the cell as their input. Datalab and early IPython notebooks
# wrote them with one `%` (`%bq query` over SQL lines, `%bash` over shell lines).
_BODY_MAGICS = frozenset({
    "bash", "sh", "bq", "sql", "script", "html", "javascript", "js", "latex", "markdown", "perl", "ruby",
    "writefile", "file", "svg", "chart", "gcs", "storage", "ml", "mlalpha", "python2", "pypy", "capture",
    "cmd", "powershell", "sx", "system",
})


def _magic_with_a_body(source: str) -> bool:
    """The cell opens with `%bash`, `%bq query`...: the lines that follow are that magic's input
    (shell, SQL), not Python, so a syntax error there is no error of the notebook's Python."""
    for line in source.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            match = re.match(r"\s*%(\w+)", line)
            return match is not None and match.group(1) in _BODY_MAGICS
    return False


def _syntax_error(text: str) -> tuple[int, int, str] | None:
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return max((exc.lineno or 1) - 1, 0), max((exc.offset or 1) - 1, 0), exc.msg
    except ValueError as exc:  # null bytes
        return 0, 0, str(exc)
    return None


def _code_readable(node: dict) -> bool:
    """Every cell says what it is, and every code cell has a source (text or list of text)."""
    cells = node.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, dict) and isinstance(c.get("cell_type"), str) for c in cells):
        return False
    sources = [c.get("source") for c in cells if c["cell_type"] == "code"]
    return all(isinstance(s, str) or (isinstance(s, list) and all(isinstance(x, str) for x in s)) for s in sources)


def _joined(source) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def _one_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


# ----------------------------------------------------------------------------- writing back
def replace_sources(text: str, new_sources: dict[int, str]) -> str:
    """The notebook's JSON text with the ``source`` of cells (by ``cells`` index) replaced.

    Only the characters of those ``source`` values change: outputs, metadata, execution counts,
    indentation, key order and the trailing newline stay byte for byte.
    """
    spans = _source_spans(text)
    for index in sorted(new_sources, reverse=True):
        start, end, value = spans[index]
        rendered = _render_source(text[start:end], value, new_sources[index])
        text = text[:start] + rendered + text[end:]
    return text


def _render_source(original: str, old_value, new: str) -> str:
    ascii_only = "\\u" in original and original.isascii()
    if isinstance(old_value, str):
        return json.dumps(new, ensure_ascii=ascii_only)
    lines = new.splitlines(keepends=True)
    if not lines:
        return "[]"
    match = re.match(r"\[(\s*)", original)
    item_space = match.group(1) if match and original != "[]" else "\n    "
    closing = re.search(r"(\s*)\]$", original)
    close_space = closing.group(1) if closing and original != "[]" else "\n   "
    items = ("," + item_space).join(json.dumps(line, ensure_ascii=ascii_only) for line in lines)
    return "[" + item_space + items + close_space + "]"


def _source_spans(text: str) -> dict[int, tuple[int, int, object]]:
    """cell index -> (start, end, value) of its ``source`` value in the JSON text."""
    parser = _SpanParser(text)
    root = parser.value(parser.skip(0))[0]
    return {index: span for index, span in enumerate(root)}


class _SpanParser:
    """Just enough JSON to find the text span of ``cells[i].source`` (json gives no offsets)."""

    _NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")

    def __init__(self, text: str):
        self.text = text
        self.found = None

    def skip(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in " \t\r\n":
            i += 1
        return i

    def value(self, i: int, path: tuple = ()):
        """Returns (result, end). At the root, result is the list of source spans."""
        char = self.text[i]
        if char == "{":
            return self._object(i, path)
        if char == "[":
            return self._array(i, path)
        if char == '"':
            value, end = json.decoder.scanstring(self.text, i + 1)
            return value, end
        for literal, value in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(literal, i):
                return value, i + len(literal)
        match = self._NUMBER.match(self.text, i)
        if not match:
            raise NotebookError(f"unexpected character at offset {i}")
        return None, match.end()

    def _object(self, i: int, path: tuple):
        result = [] if path == () else None
        i = self.skip(i + 1)
        if self.text[i] == "}":
            return result, i + 1
        while True:
            key, i = json.decoder.scanstring(self.text, i + 1)
            i = self.skip(self.skip(i) + 1)  # past ':'
            start = i
            child, i = self.value(i, path + (key,))
            if path == () and key == "cells":
                result = child
            elif len(path) == 2 and path[0] == "cells" and key == "source":
                self.found = (start, i, json.loads(self.text[start:i]))
            i = self.skip(i)
            if self.text[i] == "}":
                return result, i + 1
            i = self.skip(i + 1)

    def _array(self, i: int, path: tuple):
        spans = [] if path == ("cells",) else None
        i = self.skip(i + 1)
        if self.text[i] == "]":
            return spans, i + 1
        index = 0
        while True:
            if spans is not None:
                self.found = None
            _, i = self.value(i, path + (index,))
            if spans is not None:
                spans.append(self.found)
            index += 1
            i = self.skip(i)
            if self.text[i] == "]":
                return spans, i + 1
            i = self.skip(i + 1)
