"""One open document across edits: keeps the last good findings while the file does not parse.

Mid-typing, a file is often not valid Python. Like pyright and ruff, we then keep showing the
findings of the last version that parsed, for the lines that did not change (moved to where they
are now), and drop the others. Their fixes are withheld: they were computed for other text.
"""
from __future__ import annotations

import difflib
from dataclasses import replace

from tfperf_lsp.engine import Analysis, analyze
from tfperf_lsp.model import Finding


class DocumentSession:
    def __init__(self, path: str | None = None):
        self.path = path
        self.last_good: Analysis | None = None
        self.current: Analysis | None = None

    def update(self, text: str, settings=None, workspace=None) -> Analysis:
        analysis = analyze(text, self.path, settings, workspace)
        if analysis.parse_error is None:
            self.last_good = analysis
        elif self.last_good is not None:
            carried = carry_over(self.last_good, analysis.source.lines)
            analysis = replace(analysis, findings=carried, stale=True)
        self.current = analysis
        return analysis


def carry_over(old: Analysis, new_lines: list[str]) -> list[Finding]:
    """Findings of ``old`` whose lines are unchanged in ``new_lines``, moved to their new place."""
    matcher = difflib.SequenceMatcher(None, old.source.lines, new_lines, autojunk=False)
    line_map: dict[int, int] = {}
    for tag, i1, i2, j1, _j2 in matcher.get_opcodes():
        if tag == "equal":
            for offset in range(i2 - i1):
                line_map[i1 + offset] = j1 + offset
    carried = []
    for finding in old.findings:
        start, end = finding.span.start.line, finding.span.end.line
        if start not in line_map:
            continue
        delta = line_map[start] - start
        if all(line_map.get(line) == line + delta for line in range(start, end + 1)):
            carried.append(replace(finding, span=finding.span.shifted(delta), fix_title=None))
    return carried
