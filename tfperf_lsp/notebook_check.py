"""``tfperf check`` of one .ipynb: the code cells analysed as one module, fixes written back into
the cells (never across two), locations reported as ``cell N:row:col``."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tfperf_lsp.config import settings_for
from tfperf_lsp.engine import Analysis, analyze
from tfperf_lsp.files import FileProblem
from tfperf_lsp.model import Finding, Fix
from tfperf_lsp.notebook import Notebook, NotebookError, build, language_of, read_notebook, replace_sources
from tfperf_lsp.rewrite.edits import apply_edits, unified_diff

if TYPE_CHECKING:
    from tfperf_lsp.analysis.workspace import WorkspaceIndex
    from tfperf_lsp.config import Settings


def check_notebook(path, text, options, workspace=None, fix=False, unsafe=False, device=None):
    from tfperf_lsp.checker import FileResult

    try:
        node, code_cells = read_notebook(text)
    except NotebookError as exc:
        return FileResult(problem=FileProblem(path, str(exc)))
    language = language_of(node)
    if language != "python":
        return FileResult(problem=FileProblem(path, f"skipped: a {language} notebook (tfperf reads Python notebooks)"))
    settings = settings_for(path, options).with_probe(device, source="flag")
    notebook = build(code_cells)
    analysis = analyze(notebook.text, path, settings, workspace)
    new_text = diff = None
    withheld: list[tuple[Finding, str]] = []
    if fix:
        from tfperf_lsp.checker import fix_to_fixed_point

        sources = {cell.index: cell.source for cell in notebook.cells}
        fixed, withheld = fix_to_fixed_point(NotebookVersion(sources, notebook, analysis, path, settings, workspace), unsafe)
        sources, notebook, analysis = fixed.sources, fixed.notebook, fixed.analysis
        original = dict(code_cells)
        changed = {i: s for i, s in sources.items() if s != original[i]}
        new_text = replace_sources(text, changed) if changed else text
        diff = "".join(
            _closed(unified_diff(f"{path}:cell {c.number}", original[c.index], sources[c.index]))
            for c in notebook.cells if c.index in changed
        )
    internal = tuple(f"{path}: internal error in rule {code} (please report it):\n{trace}" for code, trace in analysis.rule_errors)
    findings = [notebook.cited(finding) for finding in analysis.findings]
    result = FileResult(findings, analysis, new_text, None, settings.problems + internal,
                        [(notebook.cited(f), why) for f, why in withheld])
    result.notebook, result.diff = notebook, diff
    result.cell_problems = [
        FileProblem(f"{path}:cell {c.number}", f"syntax error: {c.syntax_error[2]}", c.syntax_error[0], c.syntax_error[1])
        for c in notebook.cells if c.syntax_error
    ]
    return result


@dataclass
class NotebookVersion:
    """A version of a notebook in the fix loop (checker.fix_to_fixed_point, shared with .py
    files): its code cells' sources by cell index, the module built from them, its analysis.
    A fix is applied inside its cell, never across two."""

    sources: dict[int, str]
    notebook: Notebook
    analysis: Analysis
    path: str
    settings: Settings
    workspace: WorkspaceIndex | None

    @property
    def syntax_errors(self) -> int:
        return sum(bool(c.syntax_error) for c in self.notebook.cells)

    def cannot_take(self, fix: Fix) -> str | None:
        return None if self.notebook.edits_by_cell(fix.edits) is not None else "its edits span two cells"

    def with_fixes(self, fixes: list[Fix]) -> NotebookVersion:
        grouped = self.notebook.edits_by_cell([e for fx in fixes for e in fx.edits]) or {}
        sources = dict(self.sources)
        for cell in self.notebook.cells:
            if cell.number in grouped:
                sources[cell.index] = _apply_in_cell(cell.source, grouped[cell.number])
        notebook = build([(c.index, sources[c.index]) for c in self.notebook.cells])
        return replace(self, sources=sources, notebook=notebook,
                       analysis=analyze(notebook.text, self.path, self.settings, self.workspace))


def _closed(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n\\ No newline at end of cell\n"


def _apply_in_cell(source: str, edits) -> str:
    # Cell edits may end at column 0 one line past the text: give the cell its closing newline.
    closed = source if source.endswith("\n") else source + "\n"
    new = apply_edits(closed, edits)
    return new if source.endswith("\n") or not new.endswith("\n") else new[:-1]


def cell_location(notebook: Notebook | None, path: str, span):
    """(location prefix for the text output, cell number or None, span inside the cell)."""
    located = notebook.locate(span.start) if notebook else None
    if located is None:
        return path, None, span
    cell, start = located
    end = notebook.locate(span.end)
    end_pos = end[1] if end and end[0] is cell else span.end.__class__(span.end.line - cell.start, span.end.col)
    return f"{path}:cell {cell.number}", cell.number, span.__class__(start, end_pos)
