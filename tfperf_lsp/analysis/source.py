"""Source text, its lines, and conversion of ``ast`` positions to code-point positions.

``ast`` reports columns in UTF-8 bytes; editors and our model count code points (then UTF-16
units in the LSP layer). Non-ASCII lines are rare in code, so ASCII lines take a fast path.
"""
from __future__ import annotations

import ast
from typing import Any
import re
from dataclasses import dataclass
from itertools import accumulate

from tfperf_lsp.analysis.reparse import Parsed, reparse
from tfperf_lsp.model import Pos, Span

_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class ParseError:
    message: str
    line: int  # 0-based
    col: int


class SourceText:
    def __init__(self, text: str, path: str | None = None):
        self.text = text
        self.path = path
        # str.split is ~10x faster than the regex; the same lines where there is no \r
        self.lines = text.split("\n") if "\r" not in text else _NEWLINE.split(text)
        self._line_starts: list[int] | None = None

    def line(self, index: int) -> str:
        return self.lines[index] if 0 <= index < len(self.lines) else ""

    def char_col(self, line: int, byte_col: int) -> int:
        text = self.line(line)
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def span(self, node: ast.AST) -> Span:
        located: Any = node  # any node with a position: stmt, expr, arg, keyword, alias, ...
        line, end_line = located.lineno - 1, located.end_lineno - 1
        return Span(
            Pos(line, self.char_col(line, located.col_offset)),
            Pos(end_line, self.char_col(end_line, located.end_col_offset)),
        )

    def head_span(self, node: ast.AST) -> Span:
        """The first line of a node only: a loop or def header, not its whole body."""
        full = self.span(node)
        if full.start.line == full.end.line:
            return full
        line_text = self.line(full.start.line)
        return Span(full.start, Pos(full.start.line, len(line_text.rstrip())))

    def segment(self, node: ast.AST) -> str:
        return self.slice(self.span(node))

    def slice(self, span: Span) -> str:
        if span.start.line == span.end.line:
            return self.line(span.start.line)[span.start.col : span.end.col]
        parts = [self.line(span.start.line)[span.start.col :]]
        parts += self.lines[span.start.line + 1 : span.end.line]
        parts.append(self.line(span.end.line)[: span.end.col])
        return "\n".join(parts)

    def indent_of(self, line: int) -> str:
        text = self.line(line)
        return text[: len(text) - len(text.lstrip())]

    def offset(self, pos: Pos) -> int:
        """Character offset of ``pos`` in ``text``."""
        if self._line_starts is None:
            if "\r" in self.text:
                self._line_starts = [0] + [m.end() for m in _NEWLINE.finditer(self.text)]
            else:  # lines split at "\n" alone: each starts one past the end of the one before
                self._line_starts = list(accumulate((len(line) + 1 for line in self.lines), initial=0))[:-1]
        if pos.line >= len(self._line_starts):
            return len(self.text)
        return self._line_starts[pos.line] + pos.col

    def parse(self, previous: Parsed | None = None) -> ast.Module | ParseError:
        """The syntax tree, or why there is none. With ``previous`` (an earlier version of this
        file and its tree), only the statements the edit touched are parsed again."""
        if previous is not None:
            tree = reparse(previous, self.lines)
            if tree is not None:
                return tree
        try:
            return ast.parse(self.text, filename=self.path or "<unknown>", type_comments=False)
        except SyntaxError as exc:
            line = max((exc.lineno or 1) - 1, 0)
            col = max((exc.offset or 1) - 1, 0)
            return ParseError(exc.msg or "invalid syntax", line, col)
        except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
            return ParseError(str(exc) or type(exc).__name__, 0, 0)
