"""Suppression comments, and which of them did nothing.

- ``# tfperf: ignore`` / ``# tfperf: ignore[TFP101, TFP202]`` on the line where a finding starts;
- ``# noqa`` / ``# noqa: TFP101`` on that line, as ruff and flake8 read it (codes of other tools in
  the same comment are left to them);
- ``# tfperf: ignore-file`` / ``# tfperf: ignore-file[TFP805]`` anywhere: the whole file.

TFP901 (opt-in, as ruff's RUF100) reports suppressions that suppressed nothing or name no rule.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from tfperf_lsp.model import Finding, Severity, Span

TFPERF = re.compile(r"#\s*tfperf:\s*ignore(?!-file)(?:\[(?P<codes>[A-Za-z0-9,\s]+)\])?", re.IGNORECASE)
FILE = re.compile(r"#\s*tfperf:\s*ignore-file(?:\[(?P<codes>[A-Za-z0-9,\s]+)\])?", re.IGNORECASE)
NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
UNUSED_CODE = "TFP901"


@dataclass
class Suppression:
    line: int  # 0-based
    col: int
    end_col: int
    codes: tuple[str, ...] | None  # None: every rule
    kind: str  # "tfperf", "noqa" or "file"
    used: set[str] = field(default_factory=set)

    def covers(self, code: str) -> bool:
        return self.codes is None or code in self.codes


def _codes(text: str | None, kind: str) -> tuple[str, ...] | None:
    if not text:
        return None
    codes = tuple(c.strip().upper() for c in re.split(r"[\s,]+", text) if c.strip())
    if kind == "noqa":  # `# noqa: E501, TFP101`: E501 belongs to another tool
        codes = tuple(c for c in codes if c.startswith("TFP"))
    return codes


def parse(lines: list[str]) -> list[Suppression]:
    found = []
    for index, line in enumerate(lines):
        if "#" not in line:
            continue
        for kind, pattern in (("tfperf", TFPERF), ("noqa", NOQA), ("file", FILE)):
            for match in pattern.finditer(line):
                codes = _codes(match.group("codes"), kind)
                if kind == "noqa" and codes == ():
                    continue  # only other tools' codes
                found.append(Suppression(index, match.start(), match.end(), codes, kind))
    return found


def apply(findings: list[Finding], suppressions: list[Suppression]) -> list[Finding]:
    """The findings no suppression covers; each suppression records what it suppressed."""
    if not suppressions:
        return findings
    file_level = [s for s in suppressions if s.kind == "file"]
    by_line: dict[int, list[Suppression]] = {}
    for s in suppressions:
        if s.kind != "file":
            by_line.setdefault(s.line, []).append(s)
    kept = []
    for finding in findings:
        covering = [s for s in file_level + by_line.get(finding.span.start.line, []) if s.covers(finding.code)]
        for s in covering:
            s.used.add(finding.code)
        if not covering:
            kept.append(finding)
    return kept


def unused(suppressions: list[Suppression], known: set[str], enabled: set[str]) -> list[Finding]:
    """TFP901 findings: codes that name no rule, and suppressions that suppressed nothing."""
    findings = []
    for s in suppressions:
        span = Span.of(s.line, s.col, s.line, s.end_col)
        if s.codes is None:
            if not s.used and s.kind != "noqa":  # a bare `# noqa` may be for another tool
                findings.append(_finding(span, "suppression comment suppresses nothing here: remove it"))
            continue
        unknown = [c for c in s.codes if c not in known]
        idle = [c for c in s.codes if c in enabled and c not in s.used]
        off = [c for c in s.codes if c in known and c not in enabled]
        if off:
            findings.append(_finding(span, f"suppression of {', '.join(off)}, which {'is' if len(off) == 1 else 'are'} not enabled: remove it"))
        if unknown:
            findings.append(_finding(span, f"unknown rule code{'s' if len(unknown) > 1 else ''} in suppression: {', '.join(unknown)}"))
        if idle:
            findings.append(_finding(span, f"unused suppression: no {', '.join(idle)} finding {'here' if s.kind != 'file' else 'in this file'}: remove it"))
    return findings


def _finding(span: Span, message: str) -> Finding:
    return Finding(UNUSED_CODE, "suppressions", Severity.INFORMATION, message, span, label="unused suppression")
