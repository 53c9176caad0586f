"""tfperf over a directory of real code: findings per rule, in tests, speed, crashes, fix safety.

    python benchmarks/realworld.py DIR [--no-fix] [--json OUT]

Prints, for every .py and .ipynb file under DIR (the CLI's own file discovery and analysis path):
- findings per rule, and how many sit in test code (which is silent by default: with
  ``lint-tests`` off they are 0 unless a rule is of the correctness category);
- files per second of the analysis alone (no fixes), and crashes (a rule that raised, or an
  exception anywhere), each with the file;
- the fix properties, after ``--fix --unsafe-fixes`` on an in-memory copy: the fixed text
  compiles (a notebook: still a valid notebook); a second run changes nothing (one run reaches the fixed point); every applied fix
  removed its finding (fixes that did not are withheld by the checker and counted here).
Nothing is written to DIR.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tfperf_lsp.analysis.hotness import is_test_path  # noqa: E402
from tfperf_lsp.analysis.workspace import WorkspaceIndex  # noqa: E402
from tfperf_lsp.checker import check_file  # noqa: E402
from tfperf_lsp.files import FileProblem, discover, read_source  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--no-fix", action="store_true", help="skip the fix properties (faster)")
    parser.add_argument("--json", default=None, help="also write the figures as JSON here")
    args = parser.parse_args(argv)

    files, problems = discover([args.directory])
    files = [f for f in files if f.endswith((".py", ".ipynb"))]
    workspace = WorkspaceIndex([os.path.abspath(args.directory)])
    per_rule: collections.Counter = collections.Counter()
    in_tests: collections.Counter = collections.Counter()
    crashes: list[str] = []
    unreadable = len(problems)
    fix = {"files_fixed": 0, "fixes_withheld": 0, "does_not_compile": [], "not_idempotent": [], "withheld": collections.Counter()}

    start = time.perf_counter()
    texts = {}
    for path in files:
        text = read_source(path)
        if isinstance(text, FileProblem):
            unreadable += 1
            continue
        texts[path] = text
        try:
            result = check_file(path, text, {}, workspace)
        except Exception:  # noqa: BLE001 - a crash is a figure here
            crashes.append(f"{path}: {traceback.format_exc(limit=3)}")
            continue
        crashes.extend(f"{path}: {p}" for p in result.settings_problems if "internal error" in p)
        for finding in result.findings:
            per_rule[finding.code] += 1
            if is_test_path(path) or (result.analysis and result.analysis.ctx.hot.in_test_line(finding.span.start.line)):
                in_tests[finding.code] += 1
    analysis_s = time.perf_counter() - start

    if not args.no_fix:
        for path, text in texts.items():
            try:
                first = check_file(path, text, {}, workspace, fix=True, unsafe=True)
                if first.new_text is None or first.problem:
                    continue
                fix["fixes_withheld"] += len(first.fixes_withheld)
                for finding, reason in first.fixes_withheld:
                    fix["withheld"][f"{finding.code}: {reason}"] += 1
                if first.new_text == text:
                    continue
                fix["files_fixed"] += 1
                try:
                    if path.endswith(".ipynb"):  # a notebook must stay a valid notebook
                        import nbformat

                        nbformat.validate(nbformat.reads(first.new_text, as_version=4))
                    else:
                        compile(first.new_text, path, "exec")
                except Exception as exc:  # noqa: BLE001 - SyntaxError, nbformat.ValidationError
                    fix["does_not_compile"].append(f"{path}: {exc}")
                second = check_file(path, first.new_text, {}, workspace, fix=True, unsafe=True)
                if second.new_text != first.new_text:
                    fix["not_idempotent"].append(path)
            except Exception:  # noqa: BLE001
                crashes.append(f"{path} (--fix): {traceback.format_exc(limit=3)}")

    total = sum(per_rule.values())
    print(f"{len(files)} files ({unreadable} unreadable) in {analysis_s:.1f} s: {len(files) / analysis_s:.0f} files/s")
    print(f"{total} findings, {sum(in_tests.values())} in test code")
    for code, count in sorted(per_rule.items()):
        print(f"  {code}  {count:4d}  (in tests: {in_tests[code]})")
    print(f"crashes: {len(crashes)}")
    for crash in crashes:
        print("  " + crash.replace("\n", "\n    "))
    if not args.no_fix:
        print(f"fixes: {fix['files_fixed']} files changed by --fix --unsafe-fixes; "
              f"{len(fix['does_not_compile'])} do not compile; {len(fix['not_idempotent'])} change again on a second run; "
              f"{fix['fixes_withheld']} fixes withheld because re-analysis did not confirm them")
        for item in fix["does_not_compile"] + fix["not_idempotent"]:
            print("  " + item)
        for reason, count in fix["withheld"].most_common():
            print(f"  withheld {count}x  {reason}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"files": len(files), "seconds": analysis_s, "per_rule": per_rule, "in_tests": in_tests,
                       "crashes": crashes, "fix": {k: (v if not isinstance(v, collections.Counter) else dict(v)) for k, v in fix.items()}},
                      handle, indent=2)
    broken = crashes or fix["does_not_compile"] or fix["not_idempotent"]
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
