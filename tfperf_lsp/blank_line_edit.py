"""Findings after an edit that only adds or removes blank lines between statements.

Pressing Enter between two statements, or deleting an empty line, moves every line below the
edit and changes nothing else: no rule can find anything different there, only at other lines.
Running every rule again took 18 of the 28 ms of such an edit in a 2,000-line file; moving the
rules' findings of the version before takes well under one. The findings are re-used only where
the edit provably changes nothing but line numbers:

- every line removed and every line inserted is blank (not a comment: some rules read comments,
  such as a ``# tfperf: device=gpu`` directive or a tf.data option written in one);
- the edit lies between two statements of one block, or between a one-line block header and its
  first statement (not inside brackets, a string, a decorator list or a multi-line header), and
  the line above it does not end in a backslash;
- neither line beside the edit is a comment: a comment right above a statement can label it
  (``# INCORRECT:``, a note on tracing), and a blank line in between parts them;
- it is below the lines where a ``# tfperf: device=`` directive is read;
- a line a message names ("assigned on line 40", ``cited_lines``) is renamed where it moved;
- the rules, the settings and the other files the findings read are the same, and no cross-file
  lookup was still waiting for its answer.

Anywhere else every rule runs: the answer is the same, only slower. Suppression comments and the
filter of unused ones are applied to the new text as after a full run.
tests/test_blank_line_edit.py checks on random edits of real files that the findings equal a
full analysis, fixes included.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import partial

from tfperf_lsp.analysis.astutil import first_line
from tfperf_lsp.analysis.reparse import common_ends
from tfperf_lsp.config import Settings
from tfperf_lsp.model import Finding, Fix, Pos, Span

# A ``# tfperf: device=`` directive is read in a file's first 30 lines (rules/precision/_policy.py):
# an edit above that line could move one in or out.
DIRECTIVE_LINES = 30
_PYTHON_BLANKS = " \t\f\r"  # what the tokenizer skips on an empty line (str.strip also strips \x1c, \u3000...)
_LINE_NAMED = re.compile(r"\bline (\d+)\b")
_ELSE_OR_FINALLY = re.compile(r"\s*(else|finally)\s*:\s*(#.*)?$")


@dataclass(frozen=True)
class RuleOutput:
    """What the rules reported for one text, before suppression comments and the cold-code filter
    were applied (``cold[i]``: whether that filter drops ``findings[i]``). ``dependencies``: the
    other files the findings read, with their versions then."""

    findings: tuple[Finding, ...]
    cold: tuple[bool, ...]
    errors: tuple[tuple[str, str], ...]
    settings: Settings
    dependencies: tuple[tuple[str, object], ...]
    reusable: bool  # False when a cross-file lookup was still waiting for its answer


def moved(earlier: RuleOutput, old_lines: list[str], old_tree: ast.Module, new_lines: list[str],
          settings: Settings, workspace, ctx) -> RuleOutput | None:
    """``earlier``'s findings at their lines in ``new_lines``, if the edit from ``old_lines`` only
    added or removed blank lines between statements; None where the rules must run again."""
    gap = blank_gap(earlier, old_lines, old_tree, new_lines, settings, workspace)
    return None if gap is None else relocated(earlier, gap, ctx)


@dataclass(frozen=True)
class BlankGap:
    """Where an edit of blank lines only lies: old lines (1-based) ``before`` (the last unchanged
    line above it) and ``after`` (the first below it); ``shift``, how many lines were added."""

    before: int
    after: int
    shift: int


def blank_gap(earlier: RuleOutput, old_lines: list[str], old_tree: ast.Module, new_lines: list[str],
              settings: Settings, workspace) -> BlankGap | None:
    """The gap, if the edit from ``old_lines`` only added or removed blank lines between
    statements and ``earlier``'s findings can be moved; None where the rules must run again.
    Reads ``old_tree``'s line numbers: call it before the new text is parsed, which may move
    the statements it shares with the old tree (``analysis.reparse``)."""
    if not earlier.reusable or settings != earlier.settings or not _same_files(earlier.dependencies, workspace):
        return None
    n, m = len(old_lines), len(new_lines)
    head, tail = common_ends(old_lines, new_lines)
    if head == n == m:
        return None  # the same text: analysed again on purpose (another file changed, an answer came)
    before, after = head, n - tail + 1
    if before < DIRECTIVE_LINES:
        return None
    if not all(_blank(line) for line in (*old_lines[head:n - tail], *new_lines[head:m - tail])):
        return None
    if old_lines[before - 1].rstrip(_PYTHON_BLANKS).endswith("\\"):
        return None
    if _comment(old_lines[before - 1]) or (after <= n and _comment(old_lines[after - 1])):
        return None  # a blank line between a comment and its statement parts them (``# INCORRECT:``)
    if not _between_statements(old_tree.body, before, after, old_lines):
        return None
    return BlankGap(before, after, m - n)


def relocated(earlier: RuleOutput, gap: BlankGap, ctx) -> RuleOutput | None:
    """``earlier``'s findings moved across ``gap``; None if one lay on a removed line."""
    before, after, shift = gap.before, gap.after, gap.shift

    def new_line(line: int) -> int | None:  # 0-based, old -> new
        if line + 1 <= before:
            return line
        if line + 1 >= after:
            return line + shift
        return None  # on a removed blank line

    findings = []
    for finding in earlier.findings:
        start, end = new_line(finding.span.start.line), new_line(finding.span.end.line)
        cited = {line: new_line(line - 1) for line in finding.cited_lines}
        if start is None or end is None or None in cited.values():
            return None
        renamed = {line: moved_to + 1 for line, moved_to in cited.items() if moved_to is not None and moved_to + 1 != line}
        message, label = _renamed(finding.message, renamed), _renamed(finding.label, renamed)
        span = Span(Pos(start, finding.span.start.col), Pos(end, finding.span.end.col))
        build = partial(_fix_found_again, ctx, finding.code, span, message) if finding.build_fix else None
        findings.append(replace(finding, span=span, message=message, label=label,
                                cited_lines=tuple(renamed.get(line, line) for line in finding.cited_lines),
                                build_fix=build))
    return replace(earlier, findings=tuple(findings))


def _renamed(text: str, lines: dict[int, int]) -> str:
    """``text`` with each "line N" it names for a moved line N renamed to where N is now."""
    if not lines:
        return text
    return _LINE_NAMED.sub(lambda m: f"line {lines.get(int(m.group(1)), int(m.group(1)))}", text)


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _blank(line: str) -> bool:
    return not line.strip(_PYTHON_BLANKS)


def _same_files(dependencies: tuple[tuple[str, object], ...], workspace) -> bool:
    return all(workspace is not None and workspace.stamp_of(path) == stamp for path, stamp in dependencies)


def _fix_found_again(ctx, code: str, span: Span, message: str) -> Fix | None:
    """A moved finding's fix: its rule run again on the new text (the fix of the version before
    would edit the lines where the finding was)."""
    from tfperf_lsp.rules import rule_by_code

    rule = rule_by_code(code)
    if rule is not None:
        for again in rule.check(ctx):
            if again.span == span and again.message == message:
                return again.build_fix() if again.build_fix is not None else None
    raise LookupError(f"{code} is not found again at {span}")


def _between_statements(block: list[ast.stmt], before: int, after: int, lines: list[str]) -> bool:
    """Whether the gap between old lines ``before`` and ``after`` lies between two statements of
    ``block`` (or of a block nested in one of them), where the tokenizer is at rest."""
    for stmt in block:
        if (stmt.end_lineno or stmt.lineno) <= before:
            continue
        if first_line(stmt) >= after:
            return True  # right above this statement, below the one before it
        return first_line(stmt) <= before and (stmt.end_lineno or stmt.lineno) >= after and _inside(stmt, before, after, lines)
    return True  # below the block's last statement


def _inside(stmt: ast.stmt, before: int, after: int, lines: list[str]) -> bool:
    """The gap lies within compound statement ``stmt``: between statements of one of its blocks,
    or between a block's header (``for x in y:``, ``else:``) and its first statement."""
    for block, header in _blocks(stmt, lines):
        first, last = first_line(block[0]), block[-1].end_lineno or block[-1].lineno
        if first <= before and last >= after:
            return _between_statements(block, before, after, lines)
        if first >= after:
            return 0 < header <= before and _at_rest(lines[header - 1:before])
    return False


def _blocks(stmt: ast.stmt, lines: list[str]) -> Iterator[tuple[list[ast.stmt], int]]:
    """``stmt``'s blocks of statements in order, each with the line where its header starts (0 if
    it cannot be told, which keeps the gap from being placed below it). A ``match`` has none."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While,
                         ast.If, ast.With, ast.AsyncWith, ast.Try, ast.TryStar)):
        yield stmt.body, stmt.lineno
        for handler in getattr(stmt, "handlers", ()):
            yield handler.body, handler.lineno
        for name in ("orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if block:
                header = first_line(block[0]) - 1
                while header > 0 and _blank(lines[header - 1]):
                    header -= 1
                yield block, header if header > 0 and _ELSE_OR_FINALLY.match(lines[header - 1]) else 0


def _at_rest(header: list[str]) -> bool:
    """Whether the tokenizer is at rest after these lines (no bracket, string or backslash left
    open): a multi-line header ``def f(a,`` / ``b):`` is not, after its first line."""
    try:
        for _ in tokenize.generate_tokens(io.StringIO("\n".join(header) + "\n").readline):
            pass
    except (tokenize.TokenError, SyntaxError):
        return False
    return True
