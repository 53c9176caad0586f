"""``tfperf check --output-format``: the findings (and the files that could not be analysed) as text
for people, or in the shapes CI systems read: JSON, JSON lines, GitHub workflow commands, GitLab
code quality, SARIF 2.1.0 and JUnit XML."""
from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from tfperf_lsp import __version__
from tfperf_lsp.files import FileProblem

FORMATS = ("text", "concise", "json", "json-lines", "github", "gitlab", "sarif", "junit")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass
class Report:
    findings: list = field(default_factory=list)  # (path, Finding, FileResult)
    problems: list[FileProblem] = field(default_factory=list)


def use_colour(stream=None) -> bool:
    """Colour on a terminal; NO_COLOR (https://no-color.org) turns it off, FORCE_COLOR on."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


def render(fmt: str, report: Report, colour: bool = False) -> str:
    return _RENDERERS[fmt](report, colour)


# ----------------------------------------------------------------------------- people
def _paint(text: str, code: str, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


def _text(report: Report, colour: bool, concise: bool = False) -> str:
    lines = []
    from tfperf_lsp.checker import display_location

    for path, finding, result in report.findings:
        shown, _, span = display_location(path, finding, result)  # notebooks: `path:cell N`
        start = span.start
        where = _paint(f"{shown}:{start.line + 1}:{start.col + 1}:", "1", colour)
        code = _paint(finding.code, "1;31", colour)
        if concise:
            lines.append(f"{where} {code} {finding.message}")
            continue
        marker = " " + _paint("[*]", "36", colour) if finding.fix_title and finding.fix_applicability == "safe" else ""
        lines.append(f"{where} {code}{marker} [{finding.category}] {finding.message}")
    return "".join(line + "\n" for line in lines)


def _concise(report: Report, colour: bool) -> str:
    return _text(report, colour, concise=True)


def problems_text(report: Report) -> str:
    """Files that could not be analysed, for stderr in the text formats."""
    return "".join(problem.line() + "\n" for problem in report.problems)


def statistics(report: Report, fmt: str) -> str:
    from tfperf_lsp.rules import rule_by_code

    counts = Counter(f.code for _, f, _ in report.findings)
    fixable = {f.code for _, f, _ in report.findings if f.fix_title and f.fix_applicability == "safe"}
    rows = [
        {"code": code, "name": (rule_by_code(code).name if rule_by_code(code) else None), "count": count, "fixable": code in fixable}
        for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    if fmt in ("json", "json-lines"):
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(r["count"])) for r in rows), default=1)
    return "".join(f"{r['count']:>{width}}\t{r['code']}\t{'[*] ' if r['fixable'] else '    '}{r['name']}\n" for r in rows)


# ----------------------------------------------------------------------------- JSON
def _problem_json(problem: FileProblem) -> dict:
    located = problem.row is not None
    return {
        "code": None,
        "name": "syntax-error" if located else "unreadable-file",
        "category": None,
        "severity": "error",
        "message": problem.message,
        "filename": problem.path,
        "location": {"row": problem.row, "column": problem.col} if located else None,
        "end_location": {"row": problem.row, "column": problem.col} if located else None,
        "fix": None,
        "url": None,
    }


def _entries(report: Report) -> list[dict]:
    from tfperf_lsp.checker import finding_json

    return [finding_json(path, f, result) for path, f, result in report.findings] + [_problem_json(p) for p in report.problems]


def _json(report: Report, colour: bool) -> str:
    return json.dumps(_entries(report), indent=2) + "\n"


def _json_lines(report: Report, colour: bool) -> str:
    return "".join(json.dumps(entry) + "\n" for entry in _entries(report))


# ----------------------------------------------------------------------------- GitHub
def _gh_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(value: str) -> str:
    return _gh_data(value).replace(":", "%3A").replace(",", "%2C")


def _in_file(path, finding, result):
    """(span, message) for the CI formats: in a notebook, the span inside the cell and the message
    naming the cell (their location fields have no place for it)."""
    from tfperf_lsp.checker import display_location

    _, cell, span = display_location(path, finding, result)
    return span, (f"cell {cell}: {finding.message}" if cell is not None else finding.message)


def _github(report: Report, colour: bool) -> str:
    """Workflow commands: each finding becomes an annotation on the pull request's diff."""
    lines = []
    for path, finding, result in report.findings:
        span, message = _in_file(path, finding, result)
        start, end = span.start, span.end
        level = "error" if finding.severity.value == "error" else "warning"
        props = (
            f"file={_gh_property(path)},line={start.line + 1},col={start.col + 1},"
            f"endLine={end.line + 1},endColumn={end.col + 1},title={_gh_property(f'tfperf ({finding.code})')}"
        )
        lines.append(f"::{level} {props}::{_gh_data(f'{finding.code} {message}')}")
    for problem in report.problems:
        place = f",line={problem.row},col={problem.col}" if problem.row is not None else ""
        lines.append(f"::error file={_gh_property(problem.path)}{place},title=tfperf::{_gh_data(problem.message)}")
    return "".join(line + "\n" for line in lines)


# ----------------------------------------------------------------------------- GitLab
_GITLAB_SEVERITY = {"error": "major", "warning": "minor", "information": "info", "hint": "info"}


def _gitlab(report: Report, colour: bool) -> str:
    """GitLab code quality report (a JSON array); fingerprints are stable across runs."""
    entries, seen = [], Counter()
    for path, finding, result in report.findings:
        span, message = _in_file(path, finding, result)
        key = f"{path}\0{finding.code}\0{message}"
        seen[key] += 1
        entries.append({
            "description": f"{finding.code} {message}",
            "check_name": finding.code,
            "fingerprint": hashlib.sha256(f"{key}\0{seen[key]}".encode()).hexdigest(),
            "severity": _GITLAB_SEVERITY.get(finding.severity.value, "minor"),
            "location": {"path": path, "lines": {"begin": span.start.line + 1, "end": span.end.line + 1}},
        })
    for problem in report.problems:
        entries.append({
            "description": problem.message,
            "check_name": "syntax-error" if problem.row is not None else "unreadable-file",
            "fingerprint": hashlib.sha256(f"{problem.path}\0{problem.message}".encode()).hexdigest(),
            "severity": "blocker",
            "location": {"path": problem.path, "lines": {"begin": problem.row or 1}},
        })
    return json.dumps(entries, indent=2) + "\n"


# ----------------------------------------------------------------------------- SARIF
_SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


def _uri(path: str) -> str:
    return path.replace(os.sep, "/")


def _sarif(report: Report, colour: bool) -> str:
    from tfperf_lsp.rules import ALL_RULES

    index = {rule.code: i for i, rule in enumerate(ALL_RULES)}
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "helpUri": rule.doc_url,
            "properties": {"category": rule.category},
        }
        for rule in ALL_RULES
    ]
    results = []
    for path, finding, checked in report.findings:
        span, message = _in_file(path, finding, checked)
        start, end = span.start, span.end
        result = {
            "ruleId": finding.code,
            "level": _SARIF_LEVEL.get(finding.severity.value, "warning"),
            "message": {"text": message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(path)},
                    "region": {"startLine": start.line + 1, "startColumn": start.col + 1, "endLine": end.line + 1, "endColumn": end.col + 1},
                }
            }],
        }
        if finding.code in index:
            result["ruleIndex"] = index[finding.code]
        results.append(result)
    notifications = []
    for problem in report.problems:
        location = {"physicalLocation": {"artifactLocation": {"uri": _uri(problem.path)}}}
        if problem.row is not None:
            location["physicalLocation"]["region"] = {"startLine": problem.row, "startColumn": problem.col}
        notifications.append({"level": "error", "message": {"text": problem.message}, "locations": [location]})
    run = {
        "tool": {"driver": {"name": "tfperf", "version": __version__, "informationUri": "https://www.tensorflow.org/guide/function", "rules": rules}},
        "results": results,
        "invocations": [{"executionSuccessful": not report.problems, "toolExecutionNotifications": notifications}],
    }
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"


# ----------------------------------------------------------------------------- JUnit
def _junit(report: Report, colour: bool) -> str:
    """One test suite per file, one failed test case per finding (what CI test views show)."""
    by_file: dict[str, list[str]] = {}
    for path, finding, result in report.findings:
        span, message = _in_file(path, finding, result)
        start = span.start
        text = f"{path}:{start.line + 1}:{start.col + 1}: {message}"
        by_file.setdefault(path, []).append(
            f'      <testcase name={quoteattr(f"tfperf.{finding.code}")} classname={quoteattr(path)} line="{start.line + 1}">\n'
            f'        <failure message={quoteattr(message)}>{_xml_text(text)}</failure>\n'
            f"      </testcase>\n"
        )
    for problem in report.problems:
        by_file.setdefault(problem.path, []).append(
            f'      <testcase name="tfperf.syntax-error" classname={quoteattr(problem.path)}>\n'
            f"        <error message={quoteattr(problem.message)}>{_xml_text(problem.line())}</error>\n"
            f"      </testcase>\n"
        )
    total = sum(len(cases) for cases in by_file.values())
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n', f'<testsuites name="tfperf" tests="{total}" failures="{len(report.findings)}" errors="{len(report.problems)}">\n']
    for path, cases in by_file.items():
        out.append(f'  <testsuite name={quoteattr(path)} tests="{len(cases)}" failures="{len(cases)}">\n')
        out.extend(cases)
        out.append("  </testsuite>\n")
    out.append("</testsuites>\n")
    return "".join(out)


def _xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_RENDERERS = {
    "text": _text,
    "concise": _concise,
    "json": _json,
    "json-lines": _json_lines,
    "github": _github,
    "gitlab": _gitlab,
    "sarif": _sarif,
    "junit": _junit,
}
