"""One open document across edits: keeps the last good findings while the file does not parse.

Mid-typing, a file is often not valid Python. Like pyright and ruff, we then keep showing the
findings of the last version that parsed, for the lines that did not change (moved to where they
are now), and drop the others. Their fixes are withheld: they were computed for other text.
"""
from __future__ import annotations

import time
import weakref
from dataclasses import replace
from functools import partial

from tfperf_lsp.analysis.reparse import Parsed, common_ends
from tfperf_lsp.engine import Analysis, analyze
from tfperf_lsp.model import Finding


class DocumentSession:
    def __init__(self, path: str | None = None):
        self.path = path
        self.last_good: Analysis | None = None
        self.current: Analysis | None = None
        self.last_seconds = 0.0  # how long the last update took: the editor's debounce follows it

    def update(self, text: str, settings=None, workspace=None) -> Analysis:
        started = time.perf_counter()
        previous = self._parsed()
        earlier = self.last_good.rule_output if previous is not None and self.last_good is not None else None
        analysis = analyze(text, self.path, settings, workspace, previous=previous, earlier=earlier)
        self.last_seconds = time.perf_counter() - started
        if analysis.parse_error is None:
            analysis = Rebuildable(analysis, lambda: analyze(text, self.path, settings, workspace))
            if isinstance(self.last_good, Rebuildable) and previous is not None:
                # The new tree may have moved the statements it shares with the old one (line
                # numbers shifted in place, analysis.reparse): a fix asked of the old version
                # is built from its own text again.
                self.last_good.drop()
            self.last_good = analysis
        elif self.last_good is not None:
            carried = carry_over(self.last_good, analysis.source.lines)
            analysis = replace(analysis, findings=carried, stale=True)
        self.current = analysis
        return analysis

    def _parsed(self) -> Parsed | None:
        """The last version that parsed, with its tree, while the tree is kept: a keystroke then
        parses only the statements it changed."""
        good = self.last_good
        if isinstance(good, Rebuildable) and good.has_trees and good.ctx is not None:
            facts = good.ctx.facts
            return Parsed(good.source.lines, facts.tree, facts.statement_walks, facts.imports, facts.structure,
                          facts.parents_map())
        return None

    def drop_trees(self) -> None:
        """Forget the syntax trees (most of a document's memory); rebuilt if a fix needs them."""
        for analysis in (self.last_good, self.current):
            if isinstance(analysis, Rebuildable):
                analysis.drop()


class Rebuildable(Analysis):
    """An analysis whose facts (``ctx``: the syntax tree and what rules derived from it) can be
    dropped while its findings stay, and are rebuilt from the same text when a fix or a
    benchmark plan asks for them. The server keeps the trees of a few documents only: a tree
    of 2,000 lines is 3-4 MB, and findings, hovers and inlay hints do not need it."""

    def __init__(self, full: Analysis, rebuild):
        self._ctx = None
        self._rebuilt: Analysis | None = None
        super().__init__(full.source, full.findings, full.parse_error, full.rule_errors, full.ctx, full.stale,
                         full.rule_output)
        self._rebuild = rebuild
        self.dependencies = frozenset(full.ctx.dependencies) if full.ctx else frozenset()

    @property
    def ctx(self):
        if self._ctx is None and self._rebuild is not None:
            self._ctx = self.rebuilt().ctx
        return self._ctx

    def rebuilt(self) -> Analysis:
        """The same text analysed again, for its trees and its findings' fix builders."""
        if self._rebuilt is None:
            self._rebuilt = self._rebuild()
        return self._rebuilt

    @ctx.setter
    def ctx(self, value) -> None:
        self._ctx = value

    @property
    def has_trees(self) -> bool:
        return self._ctx is not None

    def drop(self) -> None:
        # A finding's fix builder holds the syntax nodes it needs, and through them the whole
        # tree: it is swapped for one that asks the rebuilt analysis for the same finding's fix.
        self._ctx = None
        self._rebuilt = None
        self.rule_output = None  # its findings' fix builders hold the trees too
        for finding in self.findings:
            builder = finding.build_fix
            if builder is not None and getattr(builder, "func", None) is not _fix_from_rebuilt:
                # A weak reference: the analysis holds its findings, and a builder holding the
                # analysis would make each dropped version wait for the cycle collector.
                finding.build_fix = partial(_fix_from_rebuilt, weakref.ref(self), finding.id, finding.message)


def _fix_from_rebuilt(reference: weakref.ref[Rebuildable], finding_id: str, message: str):
    """The fix that the same text, analysed again, builds for the same finding."""
    analysis = reference()
    if analysis is None:
        raise LookupError(f"the analysis that reported {finding_id} is gone")
    same = next((f for f in analysis.rebuilt().findings if f.id == finding_id and f.message == message), None)
    if same is None or same.build_fix is None:
        raise LookupError(f"the text analysed again does not report {finding_id}")
    return same.build_fix()


def carry_over(old: Analysis, new_lines: list[str]) -> list[Finding]:
    """Findings of ``old`` whose lines are unchanged in ``new_lines``, moved to their new place."""
    line_map = unchanged_lines(old.source.lines, new_lines)
    carried = []
    for finding in old.findings:
        start, end = finding.span.start.line, finding.span.end.line
        if start not in line_map:
            continue
        delta = line_map[start] - start
        if all(line_map.get(line) == line + delta for line in range(start, end + 1)):
            carried.append(replace(finding, span=finding.span.shifted(delta), fix_title=None, build_fix=None))
    return carried


def unchanged_lines(old: list[str], new: list[str]) -> dict[int, int]:
    """Old line -> new line for lines that did not change, in O(n log n) (difflib's matcher is
    quadratic: 0.35 s at 8,000 lines, on every keystroke while the file does not parse).

    The common prefix and suffix (all of the file but the lines being typed, usually), then in
    between a patience diff: lines unique on both sides anchor the match (the longest run that
    keeps their order), and equal neighbours of an anchor follow it.
    """
    n, m = len(old), len(new)
    head, tail = common_ends(old, new)
    line_map = {i: i for i in range(head)}
    line_map.update((n - 1 - k, m - 1 - k) for k in range(tail))
    _patience(old, new, head, n - tail, head, m - tail, line_map)
    return line_map


def _patience(old, new, lo1, hi1, lo2, hi2, line_map) -> None:
    if lo1 >= hi1 or lo2 >= hi2:
        return
    counts: dict[str, list[int]] = {}
    for i in range(lo1, hi1):
        entry = counts.setdefault(old[i], [0, 0, i, -1])
        entry[0] += 1
    for j in range(lo2, hi2):
        entry = counts.get(new[j])
        if entry is not None:
            entry[1] += 1
            entry[3] = j
    pairs = [(e[2], e[3]) for e in counts.values() if e[0] == 1 and e[1] == 1]
    pairs.sort()
    anchors = _increasing(pairs)
    used = {j for _, j in anchors}
    for i, j in anchors:
        line_map[i] = j
    for i, j in anchors:
        # equal neighbours follow their anchor (blank lines, repeated ``return x``)
        for step in (-1, 1):
            a, b = i + step, j + step
            while lo1 <= a < hi1 and lo2 <= b < hi2 and a not in line_map and b not in used and old[a] == new[b]:
                line_map[a] = b
                used.add(b)
                a, b = a + step, b + step


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of ``pairs`` (sorted by old line) whose new lines increase."""
    tails: list[int] = []  # index into pairs of the smallest tail of a run of each length
    previous: list[int] = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        position = _bisect(pairs, tails, j)
        if position > 0:
            previous[index] = tails[position - 1]
        if position == len(tails):
            tails.append(index)
        else:
            tails[position] = index
    run, index = [], tails[-1] if tails else -1
    while index >= 0:
        run.append(pairs[index])
        index = previous[index]
    return run[::-1]


def _bisect(pairs, tails, j) -> int:
    lo, hi = 0, len(tails)
    while lo < hi:
        mid = (lo + hi) // 2
        if pairs[tails[mid]][1] < j:
            lo = mid + 1
        else:
            hi = mid
    return lo
