"""Parse an edited file again by re-parsing only the top-level statements the edit touched.

A keystroke changes one statement of a 2,000-line file; ``ast.parse`` of the whole file costs
more than the rest of a keystroke's analysis. The statements above and below the edit are the
same text at the same lines, so their syntax trees are reused as they are (nothing in a tree is
changed after parsing, so sharing them between two analyses is safe, and the per-node caches of
``facts.walk_same_scope`` carry over with them).

Why re-parsing a slice gives the tree of the whole file: every top-level statement starts at
column 0 with the tokenizer at rest (no open bracket, string or continuation line), so the text
splits into independent slices at those lines. The slice re-parsed starts one statement above
the edit (an edit can indent a line into the statement before it, or turn it into its ``else``)
and ends one statement below it. A slice that leaves a bracket, a string or a block open does
not parse alone, and then the whole file is parsed: the answer, error message included, is
always what ``ast.parse`` of the whole text gives (tests/analysis/test_reparse.py checks it on
random edits of real files).

When the edit adds or removes lines, every statement below it moves. Those statements are
still re-used: their nodes' line numbers are shifted in place, visiting the nodes the facts'
walk of each statement already lists (``statement_walks``). That costs a tenth of parsing and
walking them again, and their per-node caches stay. A statement without a walk is parsed again.
The tree ``previous`` no longer matches its text then: each statement remembers the generation of
the tree that last moved it, and a tree older than one of its statements is never re-parsed
against (``reparse`` returns None and the whole text is parsed).
"""
from __future__ import annotations

import ast
import bisect
import itertools
from dataclasses import dataclass, field
from typing import Any

from tfperf_lsp.analysis.astutil import first_line


@dataclass(frozen=True)
class Parsed:
    """A text's lines and its syntax tree: what the next version of the file is parsed against.
    ``statement_walks``: its facts' walks of each top-level statement (``ModuleFacts``), which
    the next version's facts re-use for the statements it shares."""

    lines: list[str]
    tree: ast.Module
    statement_walks: dict[ast.stmt, Any] = field(default_factory=dict)
    imports: Any = None  # its facts' ImportMap: the qualified names they resolved are re-used
    structure: Any = None  # its facts' NodeStructure: each shared node's def and loops are re-used
    parents: Any = None  # its facts' parent of each node: copied, and patched for the statements that changed


def reparse(previous: Parsed, lines: list[str]) -> ast.Module | None:
    """The syntax tree of the text ``lines``, re-using the statements of ``previous`` that the
    edit did not touch. None when it cannot tell (the slice does not parse alone, or nothing
    can be re-used): the caller then parses the whole text."""
    body = previous.tree.body
    old = previous.lines
    if not body or "barry_as_FLUFL" in "".join(lines[:50]):  # a __future__ import that changes the grammar
        return None
    generation = getattr(previous.tree, _GENERATION, 0)
    if any(getattr(stmt, _GENERATION, 0) > generation for stmt in body):
        return None  # a later tree moved some of its statements: its line numbers are not these
    starts, first_statement = _chunks(body)
    n_old, n_new = len(old), len(lines)
    same_before, same_after = common_ends(old, lines)
    if same_before == n_old == n_new:
        return _module(list(body), generation)
    # Old lines (1-based) next to the edit that did not change: the one before and the one after.
    last_same_line = max(same_before, 1)
    next_same_line = min(n_old - same_after + 1, n_old)
    first = max(_chunk_of(starts, last_same_line) - 1, 0)
    last = _chunk_of(starts, next_same_line)
    below = body[first_statement[last + 1]:] if last + 1 < len(starts) else []
    walks = previous.statement_walks
    if n_new != n_old and any(stmt not in walks for stmt in below):
        last, below = len(starts) - 1, []  # no list of their nodes to move: parse them again
    slice_start = starts[first]  # 1-based, in both texts
    old_end = starts[last + 1] - 1 if last + 1 < len(starts) else n_old
    new_end = old_end + (n_new - n_old)
    if new_end < slice_start - 1:
        return None
    # The slice is parsed after as many empty lines as precede it, so its nodes carry their line
    # numbers in the whole text (``ast.increment_lineno`` would walk every node of it again).
    try:
        part = ast.parse("\n" * (slice_start - 1) + "\n".join(lines[slice_start - 1:new_end]), type_comments=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    before = body[:first_statement[first]]
    tree = _module([*before, *part.body, *below], next(_generations))
    if n_new != n_old:
        _move(below, walks, n_new - n_old, getattr(tree, _GENERATION))
    return tree


_GENERATION = "_tfperf_generation"
_generations = itertools.count(1)
_POSITIONED: dict[type, bool] = {}


def _module(body: list[ast.stmt], generation: int) -> ast.Module:
    tree = ast.Module(body=body, type_ignores=[])
    setattr(tree, _GENERATION, generation)
    return tree


def _move(statements: list[ast.stmt], walks: dict[ast.stmt, Any], lines: int, generation: int) -> None:
    """Shift every node of ``statements`` down by ``lines`` (up if negative), in place: the
    statement and the nodes its walk lists as having a parent (every node below it)."""
    for stmt in statements:
        setattr(stmt, _GENERATION, generation)
        walk = walks[stmt]
        if walk.positioned is None:
            walk.positioned = [node for node in (stmt, *walk.parents) if _has_lines(type(node))]
        for node in walk.positioned:
            node.lineno += lines
            if node.end_lineno is not None:
                node.end_lineno += lines


def _has_lines(kind: type[ast.AST]) -> bool:
    has_lines = _POSITIONED.get(kind)
    if has_lines is None:
        has_lines = _POSITIONED[kind] = "lineno" in kind._attributes
    return has_lines


def _chunks(body: list[ast.stmt]) -> tuple[list[int], list[int]]:
    """The lines where independent slices of the text start (the first at line 1), and the index
    in ``body`` of each slice's first statement. Statements that share a line (``a = 1; b = 2``)
    are one slice."""
    starts = [1]
    first_statement = [0]
    previous_end = 0
    for index, stmt in enumerate(body):
        start = first_line(stmt)
        if index and start > previous_end:
            starts.append(start)
            first_statement.append(index)
        previous_end = max(previous_end, stmt.end_lineno or stmt.lineno)
    return starts, first_statement


def _chunk_of(starts: list[int], line: int) -> int:
    return max(bisect.bisect_right(starts, line) - 1, 0)


def common_ends(old: list[str], new: list[str]) -> tuple[int, int]:
    """How many lines at the start, then at the end, the two versions share (the end never
    overlapping the start): all of a file but the lines being typed, usually."""
    n, m = len(old), len(new)
    head = 0
    while head < n and head < m and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and old[n - 1 - tail] == new[m - 1 - tail]:
        tail += 1
    return head, tail
