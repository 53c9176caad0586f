"""One file through the engine for the CLI: settings, analysis, fixes applied to a fixed point,
and the two output formats. The server uses the same engine and settings (lsp/)."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, TypeVar

from tfperf_lsp.config import settings_for
from tfperf_lsp.files import FileProblem
from tfperf_lsp.model import Finding, Fix
from tfperf_lsp.rewrite.edits import OverlappingEdits, apply_edits, compatible_fixes
from tfperf_lsp.rules import rule_by_code

if TYPE_CHECKING:
    from tfperf_lsp.analysis.workspace import WorkspaceIndex
    from tfperf_lsp.config import Settings
    from tfperf_lsp.engine import Analysis

# engine (analyze, fix_for) is imported where a file is analysed: a warm `tfperf check` takes
# every result from .tfperf_cache/ and only prints them.

MAX_FIX_ROUNDS = 10


@dataclass
class FileResult:
    findings: list[Finding] = field(default_factory=list)
    analysis: Analysis | None = None
    new_text: str | None = None
    problem: FileProblem | None = None
    settings_problems: tuple[str, ...] = ()
    # Fixes that were built but not applied, with the reason (the finding stays reported).
    fixes_withheld: list[tuple[Finding, str]] = field(default_factory=list)
    device_used: str | None = None  # the device facts device-dependent rules read, described
    unknown_rules: tuple[str, ...] = ()  # selectors in the settings that name no rule
    notebook: object | None = None  # notebook.Notebook for an .ipynb: maps lines to cells
    diff: str | None = None  # a notebook's diff, cell by cell
    cell_problems: list[FileProblem] = field(default_factory=list)  # cells that do not parse
    # finding id -> its fix, built beforehand (a result from another process or the cache has
    # no analysis to build it from); None: build it from ``analysis`` when asked
    built_fixes: dict[str, Fix | None] | None = None


def detach(result: FileResult, fixes: bool) -> FileResult:
    """The result without its syntax trees (to send between processes or cache), with the fixes
    built first when ``fixes``."""
    built = {f.id: fix_of(result, f) for f in result.findings if f.fix_title} if fixes else {}
    return replace(result, analysis=None, built_fixes=built)


def fix_of(result: FileResult, finding: Finding) -> Fix | None:
    if result.built_fixes is not None:
        return result.built_fixes.get(finding.id)
    if result.analysis is None:
        return None
    from tfperf_lsp.engine import fix_for

    return fix_for(result.analysis, finding)


def check_file(path: str, text: str, options: dict, workspace=None, fix: bool = False, unsafe: bool = False, device: dict | None = None) -> FileResult:
    from tfperf_lsp.engine import analyze

    if path and path.endswith(".ipynb"):
        from tfperf_lsp.notebook_check import check_notebook

        return check_notebook(path, text, options, workspace, fix, unsafe, device)
    settings = settings_for(path, options).with_probe(device, source="flag")
    analysis = analyze(text, path, settings, workspace)
    if analysis.parse_error:
        error = analysis.parse_error
        return FileResult(problem=FileProblem(path, f"syntax error: {error.message}", error.line + 1, error.col + 1))
    new_text: str | None = None
    withheld: list[tuple[Finding, str]] = []
    if fix:
        fixed, withheld = fix_to_fixed_point(TextVersion(text, analysis, path, settings, workspace), unsafe)
        new_text, analysis = fixed.text, fixed.analysis
    # An internal error in one rule is reported; the other rules' findings stand.
    internal = tuple(f"{path}: internal error in rule {code} (please report it):\n{trace}" for code, trace in analysis.rule_errors)
    device_used = None
    if analysis.ctx is not None:
        from tfperf_lsp.rules.precision._policy import device_used as device_read

        facts = device_read(analysis.ctx)
        device_used = facts.describe() if facts is not None else None
    return FileResult(analysis.findings, analysis, new_text, None, settings.problems + internal, withheld, device_used,
                      settings.unknown_rules)


V = TypeVar("V", bound="FixableVersion")


class FixableVersion(Protocol):
    """What the fix loop needs of a version of a file: a .py file's text (TextVersion) or a
    notebook's cells (notebook_check.NotebookVersion)."""

    analysis: Analysis

    @property
    def syntax_errors(self) -> int: ...

    def cannot_take(self, fix: Fix) -> str | None: ...

    def with_fixes(self: V, fixes: list[Fix]) -> V: ...


@dataclass
class TextVersion:
    """A version of a .py file in the fix loop: its text and its analysis."""

    text: str
    analysis: Analysis
    path: str | None
    settings: Settings
    workspace: WorkspaceIndex | None

    @property
    def syntax_errors(self) -> int:
        return int(self.analysis.parse_error is not None)

    def cannot_take(self, fix: Fix) -> str | None:
        """Why ``fix`` cannot be applied to this version at all (None: it can)."""
        return None

    def with_fixes(self, fixes: list[Fix]) -> TextVersion:
        """The version with ``fixes`` applied, analysed (OverlappingEdits if they overlap)."""
        from tfperf_lsp.engine import analyze

        text = apply_edits(self.text, [e for fx in fixes for e in fx.edits])
        return replace(self, text=text, analysis=analyze(text, self.path, self.settings, self.workspace))


def fix_to_fixed_point(version: V, unsafe: bool) -> tuple[V, list[tuple[Finding, str]]]:
    """Apply fixes round by round until none remain; the last version and the fixes withheld,
    with why. A fix is kept only if the re-analysis of the fixed version parses as well as before
    and no longer reports the finding it was for; otherwise it is withheld, with the reason, and
    the round is tried again without it. ``version``: a TextVersion, or a notebook's
    (notebook_check.NotebookVersion: the same loop, with edits kept inside their cells)."""
    from tfperf_lsp.engine import fix_for

    withheld: dict[tuple, str] = {}
    # Only the findings the user was shown are fixed: a finding that a fix brings about (TFP501's
    # "add jit_compile" on the function TFP301 just compiled) is reported, not applied unasked.
    shown = Counter(_identity(f) for f in version.analysis.findings)
    for _ in range(MAX_FIX_ROUNDS * 2):
        analysis = version.analysis
        pairs = []
        for finding in analysis.findings:
            if not finding.fix_title or (finding.fix_applicability != "safe" and not unsafe):
                continue
            if _identity(finding) in withheld or shown[_identity(finding)] <= 0:
                continue
            built = fix_for(analysis, finding)
            if built is None:  # fix_for logged why
                withheld[_identity(finding)] = "its fix could not be built for this file"
            elif (reason := version.cannot_take(built)) is not None:
                withheld[_identity(finding)] = reason
            else:
                pairs.append((finding, built))
        chosen = compatible_fixes([fx for _, fx in pairs])
        if not chosen:
            break
        chosen_ids = {id(fx) for fx in chosen}
        chosen_pairs = [(f, fx) for f, fx in pairs if id(fx) in chosen_ids]
        try:
            candidate = version.with_fixes(chosen)
        except OverlappingEdits:
            for finding, _ in chosen_pairs:
                withheld[_identity(finding)] = "its edits overlap another fix's"
            continue
        if candidate.syntax_errors > version.syntax_errors:
            # Find the culprit one fix at a time; a fix must never break the file.
            for finding, fx in chosen_pairs:
                if version.with_fixes([fx]).syntax_errors > version.syntax_errors:
                    withheld[_identity(finding)] = "the fixed code would not parse"
            if not any(_identity(f) in withheld for f, _ in chosen_pairs):
                for finding, _ in chosen_pairs:  # only their combination breaks: one at a time
                    withheld[_identity(finding)] = "it conflicts with another fix"
            continue
        before = Counter(_identity(f) for f in analysis.findings)
        after = Counter(_identity(f) for f in candidate.analysis.findings)
        fixed_here = Counter(_identity(f) for f, _ in chosen_pairs)
        ineffective = [f for f, _ in chosen_pairs if after[_identity(f)] > before[_identity(f)] - fixed_here[_identity(f)]]
        if ineffective:
            for finding in ineffective:
                withheld[_identity(finding)] = "re-analysis still reports the finding after the fix"
            continue
        shown.subtract(fixed_here)
        version = candidate
    else:  # never stopped by itself: say so rather than leave a half-fixed file unexplained
        for finding in version.analysis.findings:
            if finding.fix_title and _identity(finding) not in withheld:
                withheld[_identity(finding)] = f"fixes did not reach a fixed point in {MAX_FIX_ROUNDS * 2} rounds"
    reasons = [(f, withheld[_identity(f)]) for f in version.analysis.findings if _identity(f) in withheld]
    return version, reasons


def _identity(finding: Finding) -> tuple:
    """What identifies a finding across edits: its rule and message, line numbers left out
    (a fix above it moves them)."""
    return finding.code, _DIGITS.sub("#", finding.message)


_DIGITS = re.compile(r"\d+")


def fix_until_stable(text: str, analysis: Analysis, path, settings, workspace, unsafe: bool = False) -> tuple[str, Analysis]:
    """The fixed text and its analysis; the CLI's --fix and the editor's source.fixAll.tfperf (fix
    on save) share the loop (fixes that do not hold are left out, see fix_to_fixed_point)."""
    fixed, _ = fix_to_fixed_point(TextVersion(text, analysis, path, settings, workspace), unsafe)
    return fixed.text, fixed.analysis


def finding_line(path: str, finding: Finding, result: FileResult | None = None) -> str:
    where, _, span = display_location(path, finding, result)
    start = span.start
    marker = " [*]" if finding.fix_title and finding.fix_applicability == "safe" else ""
    return f"{where}:{start.line + 1}:{start.col + 1}: {finding.code}{marker} [{finding.category}] {finding.message}"


def display_location(path: str, finding: Finding, result: FileResult | None):
    """(``path`` or ``path:cell N``, cell number or None, the span as the user sees it)."""
    from tfperf_lsp.notebook_check import cell_location

    return cell_location(result.notebook if result else None, path, finding.span)


def finding_json(path: str, finding: Finding, result: FileResult) -> dict:
    _, cell, span = display_location(path, finding, result)
    fix = None
    if finding.fix_title:
        built = fix_of(result, finding)
        if built is not None and result.notebook is not None:  # edits inside the cell, or no fix
            grouped = result.notebook.edits_by_cell(built.edits)
            built = replace(built, edits=tuple(grouped[cell])) if grouped and list(grouped) == [cell] else None
        if built is not None:
            fix = {
                "message": built.title,
                "applicability": built.applicability,
                "edits": [
                    {
                        "content": edit.new_text,
                        "location": {"row": edit.span.start.line + 1, "column": edit.span.start.col + 1},
                        "end_location": {"row": edit.span.end.line + 1, "column": edit.span.end.col + 1},
                    }
                    for edit in built.edits
                ],
            }
    rule = rule_by_code(finding.code)
    return {
        "code": finding.code,
        "name": rule.name if rule else None,
        "category": finding.category,
        "severity": finding.severity.value,
        "message": finding.message,
        "filename": path,
        "location": {"row": span.start.line + 1, "column": span.start.col + 1},
        "end_location": {"row": span.end.line + 1, "column": span.end.col + 1},
        **({"cell": cell} if result.notebook is not None else {}),
        "fix": fix,
        "url": rule.doc_url if rule else None,
        # Device-dependent findings say which device facts they assumed, and from where.
        **({"device": result.device_used} if finding.category == "precision" and result.device_used else {}),
    }
