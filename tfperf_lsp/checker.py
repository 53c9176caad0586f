"""One file through the engine for the CLI: settings, analysis, fixes applied to a fixed point,
and the two output formats. The server uses the same engine and settings (lsp/)."""
from __future__ import annotations

from dataclasses import dataclass, field

from tfperf_lsp.config import settings_for
from tfperf_lsp.engine import Analysis, analyze, fix_for
from tfperf_lsp.files import FileProblem
from tfperf_lsp.model import Finding
from tfperf_lsp.rewrite.edits import OverlappingEdits, apply_edits, compatible_fixes
from tfperf_lsp.rules import rule_by_code

MAX_FIX_ROUNDS = 10


@dataclass
class FileResult:
    findings: list[Finding] = field(default_factory=list)
    analysis: Analysis | None = None
    new_text: str | None = None
    problem: FileProblem | None = None
    settings_problems: tuple[str, ...] = ()


def check_file(path: str, text: str, options: dict, workspace=None, fix: bool = False, unsafe: bool = False, device: dict | None = None) -> FileResult:
    settings = settings_for(path, options).with_probe(device)
    analysis = analyze(text, path, settings, workspace)
    if analysis.parse_error:
        error = analysis.parse_error
        return FileResult(problem=FileProblem(path, f"{error.line + 1}:{error.col + 1}: syntax error: {error.message}"))
    new_text = None
    if fix:
        current = text
        for _ in range(MAX_FIX_ROUNDS):
            wanted = [
                f for f in analysis.findings
                if f.fix_title and (f.fix_applicability == "safe" or unsafe)
            ]
            fixes = [fx for fx in (fix_for(analysis, f) for f in wanted) if fx is not None]
            chosen = compatible_fixes(fixes)
            if not chosen:
                break
            try:
                candidate = apply_edits(current, [e for fx in chosen for e in fx.edits])
            except OverlappingEdits:
                break
            next_analysis = analyze(candidate, path, settings, workspace)
            if next_analysis.parse_error:  # a fix must never break the file: stop before it
                break
            current, analysis = candidate, next_analysis
        new_text = current
    # An internal error in one rule is reported; the other rules' findings stand.
    internal = tuple(f"{path}: internal error in rule {code} (please report it):\n{trace}" for code, trace in analysis.rule_errors)
    return FileResult(analysis.findings, analysis, new_text, None, settings.problems + internal)


def finding_line(path: str, finding: Finding) -> str:
    start = finding.span.start
    marker = " [*]" if finding.fix_title and finding.fix_applicability == "safe" else ""
    return f"{path}:{start.line + 1}:{start.col + 1}: {finding.code}{marker} [{finding.category}] {finding.message}"


def finding_json(path: str, finding: Finding, result: FileResult) -> dict:
    fix = None
    if finding.fix_title and result.analysis is not None:
        built = fix_for(result.analysis, finding)
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
        "location": {"row": finding.span.start.line + 1, "column": finding.span.start.col + 1},
        "end_location": {"row": finding.span.end.line + 1, "column": finding.span.end.col + 1},
        "fix": fix,
        "url": rule.doc_url if rule else None,
    }
