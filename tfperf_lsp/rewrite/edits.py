"""Applying text edits, choosing non-overlapping fixes, and showing them as a diff."""
from __future__ import annotations

import difflib
from typing import Iterable

from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.model import Edit, Fix, Pos, Span


class OverlappingEdits(ValueError):
    pass


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    source = SourceText(text)
    ordered = sorted(edits, key=lambda e: (e.span.start, e.span.end))
    for before, after in zip(ordered, ordered[1:]):
        if after.span.start < before.span.end:
            raise OverlappingEdits(f"edits overlap at line {after.span.start.line + 1}")
    result = text
    for edit in reversed(ordered):
        start, end = source.offset(edit.span.start), source.offset(edit.span.end)
        result = result[:start] + edit.new_text + result[end:]
    return result


def compatible_fixes(fixes: Iterable[Fix]) -> list[Fix]:
    """A subset of fixes whose edits do not touch each other, in source order."""
    chosen: list[Fix] = []
    taken: list[Span] = []
    for fix in sorted(fixes, key=lambda f: min(e.span.start for e in f.edits)):
        spans = [e.span for e in fix.edits]
        if any(_touches(a, b) for a in spans for b in taken):
            continue
        chosen.append(fix)
        taken.extend(spans)
    return chosen


def _touches(a: Span, b: Span) -> bool:
    # Whole-line edits that merely share a boundary still conflict when one inserts lines.
    return not (a.end < b.start or b.end < a.start)


def unified_diff(path: str, old: str, new: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=path, tofile=path
        )
    )


def replace_node_text(source: SourceText, node, new_text: str) -> Edit:
    return Edit(source.span(node), new_text)


def insert_at(line: int, col: int, text: str) -> Edit:
    return Edit(Span(Pos(line, col), Pos(line, col)), text)


def whole_lines(source: SourceText, first: int, last: int) -> Span:
    return Span(Pos(first, 0), Pos(last, len(source.line(last))))
