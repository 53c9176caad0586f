"""Per-rule fixture files and their snapshots (Ruff's fixtures + insta snapshots, for tfperf).

``tests/rules/fixtures/TFP401.py`` holds a rule's edge cases, one case per ``# %%`` cell, each
analysed as a module of its own. A line the rule must flag ends with ``# expect: TFP401``.
``tests/rules/snapshots/TFP401.snap`` holds what the rule reports on every case (``line:col``
in the fixture file, code, message, fix title) and the diff its fixes make. Tests fail when a
finding's position, message or fix changes without the snapshot changing with it:

    .venv/bin/python -m tests.rules.fixtures --update [TFP401 ...]   # rewrite, then review the diff

A case's header takes options after its title, in brackets:

    # %% retraces on every new length [run, traced=total, traces_after=1]

- ``path=tests/test_model.py``: analyse the case as if it were that file (default: no path);
- ``run``: under TensorFlow, the case and its fixed version both run and their module-level
  tensors are equal (``np.allclose``); ``changes_outputs``: the fix changes them on purpose;
- ``traced=NAME``: under TensorFlow, the case traces tf.function NAME more than once and the
  fixed case ``traces_after`` times (default 1); ``trace_counter=LIST`` counts traces by a
  module-level list the case's functions append to while tracing;
- ``no_fix``: the rule flags the case but offers no fix (a precondition of the rewrite fails);
- ``others=none`` / ``others=TFP301 TFP103``: with default settings, the other rules report
  nothing / exactly these codes on the case (real-code regressions: nothing else may fire).

A ``# %% verify`` (``# %% verify fixed``) cell after a case holds Python statements run under
TensorFlow after the case (after its fixed version): assertions about what TensorFlow does. They
are not analysed.
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
SNAPSHOTS = os.path.join(HERE, "snapshots")

_CELL = re.compile(r"^# %%\s*(?P<title>[^\[]*?)\s*(?:\[(?P<options>[^\]]*)\])?\s*$")
_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>TFP\d{3}(?:\s*,\s*TFP\d{3})*)")


@dataclass
class Case:
    title: str
    first_line: int  # 0-based line in the fixture file of the case's first code line
    source: str
    options: dict[str, str] = field(default_factory=dict)
    verify: str | None = None
    verify_fixed: str | None = None

    def option(self, name: str, default: str | None = None) -> str | None:
        return self.options.get(name, default)

    def expected_lines(self, code: str) -> list[int]:
        """0-based lines (of the fixture file) marked ``# expect: CODE``."""
        found = []
        for index, line in enumerate(self.source.splitlines()):
            match = _EXPECT.search(line)
            if match and code in re.split(r"\s*,\s*", match.group("codes")):
                found.append(self.first_line + index)
        return found


def _options(text: str | None) -> dict[str, str]:
    options = {}
    for item in (text or "").split(","):
        item = item.strip()
        if item:
            key, _, value = item.partition("=")
            options[key.strip()] = value.strip() or "true"
    return options


def parse(path: str) -> list[Case]:
    """The cases of a fixture file, in order."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines(keepends=True)
    cases: list[Case] = []
    current: tuple[str, int, dict[str, str]] | None = None
    body: list[str] = []

    def close() -> None:
        if current is None:
            return
        title, start, options = current
        text = "".join(body)
        if title in ("verify", "verify fixed"):
            if not cases:
                raise ValueError(f"{path}: a '# %% {title}' cell needs a case before it")
            setattr(cases[-1], "verify_fixed" if title == "verify fixed" else "verify", text)
        else:
            cases.append(Case(title, start, text, options))

    for index, line in enumerate(lines):
        match = _CELL.match(line.rstrip("\n"))
        if match:
            close()
            current = (match.group("title"), index + 1, _options(match.group("options")))
            body = []
        elif current is not None:
            body.append(line)
    close()
    titles = [c.title for c in cases]
    duplicates = {t for t in titles if titles.count(t) > 1}
    if duplicates:
        raise ValueError(f"{path}: case titles must be unique: {sorted(duplicates)}")
    return cases


# ------------------------------------------------------------------------------ analysis
def analyse(case: Case, code: str, text: str | None = None):
    """The analysis of ``text`` (default: the case) and the findings of rule ``code``."""
    from tfperf_lsp.config import Settings
    from tfperf_lsp.engine import analyze

    settings = Settings().with_overrides({"select": ["ALL"]})  # opt-in rules too
    analysis = analyze(case.source if text is None else text, path=case.option("path"), settings=settings)
    if analysis.parse_error is not None:
        raise AssertionError(f"{case.title}: does not parse: {analysis.parse_error.message}")
    if analysis.rule_errors:
        raise AssertionError(f"{case.title}: a rule raised:\n" + "\n".join(t for _, t in analysis.rule_errors))
    return analysis, [f for f in analysis.findings if f.code == code]


def other_codes(case: Case, code: str) -> list[str]:
    """The codes other rules report on the case, with default settings (as a user sees it)."""
    from tfperf_lsp.engine import analyze

    analysis = analyze(case.source, path=case.option("path"))
    return sorted({f.code for f in analysis.findings if f.code != code})


def fixed(case: Case, code: str) -> str:
    """The case after every fix (safe and unsafe) of rule ``code``, one at a time, re-analysing
    between them (engine.fixed_text). A fix that cannot be built stops it; the tests then find
    the finding still fixable (test_fixed_case_compiles_and_is_clean)."""
    from tfperf_lsp.config import Settings
    from tfperf_lsp.engine import fixed_text

    return fixed_text(case.source, {code}, Settings().with_overrides({"select": ["ALL"]}), case.option("path"))


def docs_examples(code: str) -> list[Case]:
    """The rule's own examples (its docs), as cases numbered by their own lines."""
    from tfperf_lsp.rules import rule_by_code

    rule = rule_by_code(code)
    if rule is None:
        return []
    return [Case(f"docs: {kind} example {index + 1} (lines of the example)", 0, example.source)
            for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid))
            for index, example in enumerate(examples)]


def render(code: str, path: str | None = None) -> str:
    """The snapshot of rule ``code``: its docs examples, then every case of its fixture file."""
    path = path or fixture_path(code)
    out = [f"# {code}: findings and fixes on its docs examples and {os.path.relpath(path, HERE)}", ""]
    for case in docs_examples(code) + (parse(path) if os.path.exists(path) else []):
        _, findings = analyse(case, code)
        out.append(f"# %% {case.title}")
        if not findings:
            out.append("(no findings)")
        for finding in findings:
            start = finding.span.start
            fix = f" [fix: {finding.fix_title} ({finding.fix_applicability})]" if finding.fix_title else ""
            out.append(f"{case.first_line + start.line + 1}:{start.col + 1} {finding.code} "
                       f"[{finding.severity.value}] {finding.message}{fix}")
        if any(f.fix_title for f in findings):
            after = fixed(case, code)
            diff = difflib.unified_diff(
                case.source.splitlines(), after.splitlines(), lineterm="", n=1,
                fromfile="case", tofile="fixed",
            )
            out.extend(_shift_hunks(list(diff)[2:], case.first_line))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _shift_hunks(lines: list[str], offset: int) -> list[str]:
    """Hunk headers numbered by the fixture file's lines, not the case's."""
    def shift(match: re.Match) -> str:
        return f"{match.group(1)}{int(match.group(2)) + offset}"

    return [re.sub(r"([-+])(\d+)", shift, line, count=2) if line.startswith("@@") else line for line in lines]


# ------------------------------------------------------------------------------ files
def fixture_path(code: str) -> str:
    return os.path.join(FIXTURES, f"{code}.py")


def snapshot_path(code: str) -> str:
    return os.path.join(SNAPSHOTS, f"{code}.snap")


def fixture_codes() -> list[str]:
    return sorted(name[:-3] for name in os.listdir(FIXTURES) if re.fullmatch(r"TFP\d{3}\.py", name))


def all_cases() -> list[tuple[str, Case]]:
    """Every fixture case, with its rule's code, in file order."""
    return [(code, case) for code in fixture_codes() for case in parse(fixture_path(code))]


def case_ids(cases: list[tuple[str, Case]]) -> list[str]:
    """pytest ids: the rule's code and the case's title."""
    return [f"{code}-{case.title}" for code, case in cases]


def update(codes: list[str]) -> list[str]:
    """Rewrite the snapshots of ``codes``; the codes whose snapshot changed."""
    os.makedirs(SNAPSHOTS, exist_ok=True)
    changed = []
    for code in codes:
        text = render(code)
        target = snapshot_path(code)
        old = open(target, encoding="utf-8").read() if os.path.exists(target) else None
        if old != text:
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(text)
            changed.append(code)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check or rewrite the rules' fixture snapshots.")
    parser.add_argument("codes", nargs="*", help="rule codes (default: every fixture)")
    parser.add_argument("--update", action="store_true", help="rewrite the snapshots that differ")
    args = parser.parse_args(argv)
    codes = [c.upper() for c in args.codes] or fixture_codes()
    if args.update:
        changed = update(codes)
        print(f"{len(changed)} snapshot(s) rewritten: {' '.join(changed) or '-'}; review them with `git diff tests/rules/snapshots`")
        return 0
    stale = [c for c in codes if not os.path.exists(snapshot_path(c)) or open(snapshot_path(c), encoding="utf-8").read() != render(c)]
    print(f"{len(stale)} snapshot(s) out of date: {' '.join(stale) or '-'}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
