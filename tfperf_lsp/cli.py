"""Command line: ``tfperf check|rules|rule|bench|observe`` and ``tfperf-lsp``.

Exit codes of ``check``: 0 no findings, 1 findings (``--diff`` too, and a closed pipe keeps it),
2 usage error, unknown rule code, or a file that could not be analysed (unreadable, not UTF-8,
syntax error). Option names and precedence follow ruff's; output formats live in ``output.py``,
file selection in ``files.py``, rule selectors in ``selectors.py``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from tfperf_lsp import __version__

if TYPE_CHECKING:
    from tfperf_lsp.output import Report

# Each command imports what it needs when it runs: `tfperf observe` starts the observed program
# sooner, and its parent process costs less CPU, without the checker's and the benchmark's modules.


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `observe` parses with a parser that has only that command (same options, usage and
    # errors): building the others imports the settings schema and the output formats.
    parser = _observe_parser() if argv[:1] == ["observe"] else _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `tfperf rules | head`; `check` keeps its own exit code (see _check)
        _silence_stdout()
        return 0


def lsp_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tfperf-lsp", description="tfperf language server (stdio by default)")
    _lsp_arguments(parser)
    return _run_lsp(parser.parse_args(argv))


def _top_parser():
    parser = argparse.ArgumentParser(prog="tfperf", description="Find, fix and measure TensorFlow performance problems.")
    parser.add_argument("--version", action="version", version=f"tfperf {__version__}")
    return parser, parser.add_subparsers(dest="command")


def _observe_parser() -> argparse.ArgumentParser:
    from tfperf_lsp.observe.cli import add_parser as add_observe_parser

    parser, commands = _top_parser()
    add_observe_parser(commands)
    return parser


def _parser() -> argparse.ArgumentParser:
    from tfperf_lsp import settings_schema
    from tfperf_lsp.output import FORMATS

    parser, commands = _top_parser()

    check = commands.add_parser("check", help="analyse files and print findings")
    check.add_argument("paths", nargs="*", default=["."], help="files or directories (default: .); - reads standard input")
    check.add_argument("--output-format", "--format", dest="format", choices=FORMATS, default="text",
                       help="text (default), concise, json, json-lines, github, gitlab, sarif or junit")
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff: also apply fixes that change behaviour")
    check.add_argument("--diff", action="store_true", help="print the fixes as a diff instead of writing them")
    selectors = "CODE|PREFIX|CATEGORY|NAME"
    check.add_argument("--select", action="append", default=None, metavar=selectors, help="only these rules (replaces the file's select and ignore)")
    check.add_argument("--extend-select", action="append", default=[], metavar=selectors, help="these rules as well")
    check.add_argument("--ignore", action="append", default=[], metavar=selectors, help="skip these rules")
    check.add_argument("--extend-ignore", action="append", default=[], metavar=selectors, help="skip these rules as well (same as --ignore)")
    check.add_argument("--per-file-ignores", action="append", default=None, metavar="GLOB:CODES", help="skip rules in matching files, replacing the file's table")
    check.add_argument("--extend-per-file-ignores", action="append", default=[], metavar="GLOB:CODES", help="skip rules in matching files as well")
    check.add_argument("--exclude", action="append", default=None, metavar="GLOB", help="files and folders to skip, replacing the default list")
    check.add_argument("--extend-exclude", action="append", default=[], metavar="GLOB", help="files and folders to skip as well")
    check.add_argument("--respect-gitignore", dest="respect_gitignore", action="store_true", default=None, help="skip what .gitignore ignores (the default)")
    check.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false", help="also check files that .gitignore ignores")
    check.add_argument("--force-exclude", action="store_true", default=None, help="apply exclude to files named on the command line too")
    check.add_argument("--stdin-filename", default=None, metavar="PATH", help="the name of the file read from standard input (for settings and messages)")
    check.add_argument("--statistics", action="store_true", help="print the number of findings per rule instead of the findings")
    check.add_argument("-q", "--quiet", action="store_true", help="print the findings and nothing else")
    check.add_argument("-s", "--silent", action="store_true", help="print nothing; the exit code tells")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--no-cache", action="store_true", help="analyse every file again (do not read or write .tfperf_cache/)")
    check.add_argument("--device", default=None, metavar="SPEC",
                       help="device facts for device-dependent rules: cpu, cpu:FEATURES, gpu or gpu:CC (e.g. gpu:8.6)")
    check.set_defaults(handler=_check)

    rules = commands.add_parser("rules", help="list the rules")
    rules.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    rules.set_defaults(handler=_rules)

    rule = commands.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code")
    rule.set_defaults(handler=_rule)

    bench = commands.add_parser("bench", help="benchmark the findings of files on this device")
    bench.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    bench.add_argument("--line", type=int, default=None, help="only findings on this line (1-based)")
    bench.add_argument("--select", action="append", default=None, metavar="CODE|PREFIX|CATEGORY|NAME", help="only findings of these rules")
    bench.add_argument("--output-format", "--format", dest="format", choices=("text", "json"), default="text")
    budget, timeout = settings_schema.setting("benchmark.timeBudget"), settings_schema.setting("benchmark.timeout")
    bench.add_argument("--budget", type=float, default=None,
                       help=f"seconds of timed pairs per finding ({budget.range_text()}; default {budget.default:g})")
    bench.add_argument("--timeout", type=float, default=None,
                       help=f"seconds before a benchmark is stopped ({timeout.range_text()}; default {timeout.default:g})")
    bench.add_argument("--device", default=None, help=f"auto, cpu or gpu:N (default {settings_schema.default('benchmark.device')})")
    bench.add_argument("--worker", default=None, help="command prefix that runs Python for the worker")
    bench.add_argument("--no-cache", action="store_true", help="measure again even if a result is cached")
    bench.add_argument("--fail-on", action="append", default=None, metavar="CONDITION",
                       help="exit 1 when a benchmark is: slower, outputs-differ, error, regression (comma-separated or "
                            "repeated; default: outputs-differ,error, plus regression with --baseline)")
    bench.add_argument("--baseline", default=None, metavar="RESULTS.json", help="an earlier `--output-format json` run to compare with")
    bench.set_defaults(handler=_bench)

    device = commands.add_parser("device", help="ask a benchmark worker which device it runs on, and remember it")
    device.add_argument("--worker", default=None, help="command prefix that runs Python for the worker")
    device.set_defaults(handler=_device)

    from tfperf_lsp.observe.cli import add_parser as add_observe_parser

    add_observe_parser(commands)

    lsp = commands.add_parser("lsp", help="run the language server (same as tfperf-lsp)")
    _lsp_arguments(lsp)
    lsp.set_defaults(handler=_run_lsp)
    return parser


def _lsp_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true", help="use stdin/stdout (the default)")
    parser.add_argument("--tcp", action="store_true", help="listen on TCP instead, for debugging")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2087)


def _run_lsp(args) -> int:
    from tfperf_lsp.lsp.startup import import_server

    server = import_server().create_server()
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
    return 0


# ----------------------------------------------------------------------------- check
def _check(args) -> int:
    import dataclasses

    from tfperf_lsp.checker import display_location
    from tfperf_lsp.config import parse_device_flag
    from tfperf_lsp.files import FileProblem, discover, read_source, write_source
    from tfperf_lsp.output import Report
    from tfperf_lsp.parallel import check_all

    options, error = _cli_options(args)
    if error:
        print(f"tfperf: {error}", file=sys.stderr)
        return 2
    stdin = args.paths == ["-"]
    if stdin:
        files, problems = [args.stdin_filename or "-"], []
    else:
        files, problems = discover(args.paths, _file_selection(args))
        if not files and not problems:
            print("tfperf: no Python files or notebooks found in " + " ".join(args.paths)
                  + " (after `exclude` and .gitignore: --no-respect-gitignore, --exclude change them)", file=sys.stderr)
            return 2
    roots = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in (["."] if stdin else args.paths)]
    workspace = None  # built, with the analysis modules, only for a file not in .tfperf_cache/
    # Only what the command line and the files say: no remembered probe, so that the same
    # input gives the same findings on any machine.
    try:
        device = parse_device_flag(args.device) if args.device else None
    except ValueError as exc:
        print(f"tfperf: {exc}", file=sys.stderr)
        return 2
    devices_used = set()
    report, changed, unsafe_only = Report(problems=list(problems)), 0, 0
    notices: dict[str, None] = {}  # settings problems, once each
    unknown_rules = False
    fix = args.fix or args.diff
    # Plain .py files (not stdin, not fixing) come from a process pool and .tfperf_cache/, in order.
    pooled = {} if stdin or fix else {
        p: (t, r) for p, t, r in check_all([f for f in files if f.endswith((".py", ".pyi", ".ipynb"))], options, roots,
                                           device=device, fixes=True, cache=not args.no_cache)}
    for path in files:
        text, result = pooled.get(path) or (sys.stdin.read() if stdin else read_source(path), None)
        if isinstance(text, FileProblem):
            report.problems.append(text)
            continue
        if result is None:
            from tfperf_lsp.analysis.workspace import WorkspaceIndex
            from tfperf_lsp.checker import check_file

            workspace = workspace or WorkspaceIndex(roots)
            result = check_file(None if path == "-" else path, text, options, workspace, fix=fix, unsafe=args.unsafe_fixes, device=device)
        if result.device_used:
            devices_used.add(result.device_used)
        if result.problem:
            report.problems.append(dataclasses.replace(result.problem, path=path))
            continue
        report.problems.extend(result.cell_problems)  # a notebook's other cells were still analysed
        notices.update(dict.fromkeys(result.settings_problems))
        unknown_rules |= bool(result.unknown_rules)
        if result.new_text is not None and result.new_text != text:
            changed += 1
            if args.diff:
                from tfperf_lsp.rewrite.edits import unified_diff

                sys.stdout.write(result.diff if result.diff is not None else unified_diff(path, text, result.new_text))
            elif stdin:
                sys.stdout.write(result.new_text)  # as ruff: the fixed source on stdout
            else:
                problem = write_source(path, result.new_text)  # the file's own encoding and BOM
                if problem:
                    report.problems.append(problem)
        elif stdin and args.fix:
            sys.stdout.write(text)
        unsafe_only += sum(1 for f in result.findings if f.fix_title and f.fix_applicability != "safe" and not args.unsafe_fixes)
        report.findings.extend((path, f, result) for f in result.findings)
        for finding, reason in result.fixes_withheld:
            where, _, span = display_location(path, finding, result)  # a notebook's: `path:cell N`
            print(f"{where}:{span.start.line + 1}:{span.start.col + 1}: {finding.code} fix not applied: {reason}", file=sys.stderr)
    for notice in notices:
        print(f"tfperf: {notice}", file=sys.stderr)
    if unknown_rules:
        return 2
    if report.problems:
        code = 2
    elif args.exit_zero or not report.findings and not (args.diff and changed):
        code = 0
    else:
        code = 1
    try:
        _write_report(args, report, changed, unsafe_only, stdin)
    except BrokenPipeError:  # `tfperf check | head`: the reader left, the findings are still there
        _silence_stdout()
    if not (args.quiet or args.silent):
        for used in sorted(devices_used):
            print(f"tfperf: device-dependent rules assumed {used}", file=sys.stderr)
    return code


def _write_report(args, report: Report, changed: int, unsafe_only: int, stdin: bool) -> None:
    from tfperf_lsp.output import problems_text, render, statistics, use_colour

    fmt = args.format
    quiet = args.quiet or args.silent
    if args.silent:
        return
    if args.diff:
        if report.problems:
            sys.stderr.write(problems_text(report))
        if unsafe_only and not quiet:
            print(f"{unsafe_only} finding{'s have' if unsafe_only != 1 else ' has'} only unsafe fixes, not in this diff "
                  "(--unsafe-fixes includes them).", file=sys.stderr)
        if not quiet:  # the findings counted are those the fixed files would still have
            left = len(report.findings)
            print(f"{changed} file{'s' if changed != 1 else ''} would change; {left} finding{'s' if left != 1 else ''} "
                  f"would remain after {'these fixes' if changed else 'fixing'}.", file=sys.stderr)
        return
    out = sys.stderr if stdin and args.fix else sys.stdout  # stdout carries the fixed source
    if args.statistics:
        out.write(statistics(report, fmt))
    else:
        out.write(render(fmt, report, colour=fmt in ("text", "concise") and use_colour(out)))
    out.flush()
    if fmt in ("text", "concise"):
        sys.stderr.write(problems_text(report))
        if not quiet:
            findings = report.findings
            fixable = sum(1 for _, f, _ in findings if f.fix_title and (f.fix_applicability == "safe" or args.unsafe_fixes))
            summary = f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''}"
            if args.fix:
                summary += f" after fixing {changed} file{'s' if changed != 1 else ''}"
            elif fixable:
                summary += f" ({fixable} fixable with --fix{' --unsafe-fixes' if args.unsafe_fixes else ''})"
            print(summary + ".", file=sys.stderr)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _cli_options(args) -> tuple[dict, str | None]:
    """The command line as a settings layer over [tool.tfperf] (it wins, as in ruff)."""
    options: dict = {"ignore": _flatten(args.ignore) + _flatten(args.extend_ignore)}
    if args.select:
        options["select"] = _flatten(args.select)
    if args.extend_select:
        options["extend-select"] = _flatten(args.extend_select)
    for key, values in (("per-file-ignores", args.per_file_ignores), ("extend-per-file-ignores", args.extend_per_file_ignores)):
        if values is None or (not values and key.startswith("extend")):
            continue
        table: dict[str, list[str]] = {}
        for value in values:
            pattern, sep, codes = value.rpartition(":")
            if not sep or not pattern:
                return {}, f"--{key} {value!r}: expected GLOB:CODE[,CODE...]"
            table.setdefault(pattern, []).extend(_flatten([codes]))
        options[key] = table
    from tfperf_lsp import selectors

    named = options["ignore"] + options.get("select", []) + options.get("extend-select", [])
    named += [c for key in ("per-file-ignores", "extend-per-file-ignores") for codes in options.get(key, {}).values() for c in codes]
    unknown = [v for v in named if selectors.parse(v) is None]
    if unknown:
        return {}, f"unknown rule codes or selectors: {', '.join(unknown)} (`tfperf rules` lists them)"
    return options, None


def _file_selection(args):
    """exclude / extend-exclude / respect-gitignore from [tool.tfperf], then the command line."""
    from tfperf_lsp.files import selection_for

    return selection_for(args.paths, {
        "exclude": _flatten(args.exclude) if args.exclude is not None else None,
        "extend-exclude": _flatten(args.extend_exclude),
        "respect-gitignore": args.respect_gitignore,
        "force-exclude": args.force_exclude,
    })


def _flatten(values) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


# ----------------------------------------------------------------------------- rules
def _rules(args) -> int:
    from tfperf_lsp.rules import ALL_RULES

    if args.format == "json":
        print(json.dumps([
            {"code": r.code, "name": r.name, "category": r.category, "severity": r.severity.value,
             "summary": r.summary, "fix": r.fixable, "url": r.doc_url}
            for r in ALL_RULES
        ], indent=2))
        return 0
    if args.format == "markdown":
        print(rules_markdown(ALL_RULES), end="")
        return 0
    width = max(len(r.name) for r in ALL_RULES)
    for rule in ALL_RULES:
        print(f"{rule.code}  {rule.name:<{width}}  {rule.category:<14}  {rule.summary}")
    return 0


def rules_markdown(rules) -> str:
    """The README's rules table (tests/test_readme.py keeps the README in step with the code)."""
    lines = ["| code | name | category | severity | quick fix | what it finds |", "|---|---|---|---|---|---|"]
    for rule in rules:
        fix = "yes" if rule.fixable else ""
        lines.append(f"| {rule.code} | `{rule.name}` | {rule.category} | {rule.severity.value} | {fix} | {rule.summary} |")
    return "\n".join(lines) + "\n"


def _rule(args) -> int:
    from tfperf_lsp.rules import rule_by_code

    rule = rule_by_code(args.code)
    if rule is None:
        print(f"tfperf: no rule {args.code!r}; `tfperf rules` lists them", file=sys.stderr)
        return 2
    from tfperf_lsp.engine import rule_docs

    print(rule_docs(rule), end="")
    return 0


def _device(args) -> int:
    """Probe the device once; `tfperf check` and the server then use it for device-dependent rules."""
    from tfperf_lsp.bench.service import BenchService, BenchSettings

    service = BenchService(BenchSettings(worker_command=args.worker.split() if args.worker else []))
    try:
        device, tf_version = service.probe()
    except Exception as exc:  # noqa: BLE001 - no TF, a broken worker command: say so
        print(f"tfperf: cannot start a benchmark worker: {exc}", file=sys.stderr)
        return 2
    finally:
        service.close()
    print(f"{device.label()} - TensorFlow {tf_version}")
    if device.cpu_features:
        print("CPU features: " + ", ".join(sorted(device.cpu_features)))
    for gpu in device.gpus:
        print(f"GPU {gpu.index}: {gpu.name} (compute capability {gpu.compute_capability or '?'})")
    return 0


def _bench(args) -> int:
    from tfperf_lsp.bench.cli import run_bench_command

    return run_bench_command(args)


if __name__ == "__main__":
    sys.exit(main())
