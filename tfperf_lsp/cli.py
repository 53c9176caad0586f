"""Command line: ``tfperf check|rules|rule|bench`` and ``tfperf-lsp``.

Exit codes of ``check``: 0 no findings, 1 findings (or, with ``--diff``, changes to make),
2 usage error or a file that could not be analysed (unreadable, not UTF-8, syntax error).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from tfperf_lsp import __version__
from tfperf_lsp.files import FileProblem, discover, read_source
from tfperf_lsp.model import CATEGORIES


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def lsp_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tfperf-lsp", description="tfperf language server (stdio by default)")
    _lsp_arguments(parser)
    return _run_lsp(parser.parse_args(argv))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tfperf", description="Find, fix and measure TensorFlow performance problems.")
    parser.add_argument("--version", action="version", version=f"tfperf {__version__}")
    commands = parser.add_subparsers(dest="command")

    check = commands.add_parser("check", help="analyse files and print findings")
    check.add_argument("paths", nargs="*", default=["."], help="files or directories (default: .)")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff: also apply fixes that change behaviour")
    check.add_argument("--diff", action="store_true", help="print the fixes as a diff instead of writing them")
    check.add_argument("--select", action="append", default=None, metavar="CODE|CATEGORY", help="only these rules")
    check.add_argument("--ignore", action="append", default=[], metavar="CODE|CATEGORY", help="skip these rules")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--device", default=None, metavar="SPEC",
                       help="device facts for device-dependent rules: cpu, cpu:FEATURES, gpu or gpu:CC (e.g. gpu:8.6)")
    check.set_defaults(handler=_check)

    rules = commands.add_parser("rules", help="list the rules")
    rules.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    rules.set_defaults(handler=_rules)

    rule = commands.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code")
    rule.set_defaults(handler=_rule)

    bench = commands.add_parser("bench", help="benchmark the findings of a file on this device")
    bench.add_argument("file")
    bench.add_argument("--line", type=int, default=None, help="only findings on this line (1-based)")
    bench.add_argument("--select", action="append", default=None, metavar="CODE", help="only findings of these rules")
    bench.add_argument("--format", choices=("text", "json"), default="text")
    bench.add_argument("--budget", type=float, default=None, help="seconds of timed pairs per finding")
    bench.add_argument("--timeout", type=float, default=None, help="seconds before a benchmark is stopped")
    bench.add_argument("--device", default=None, help="auto, cpu or gpu:N")
    bench.add_argument("--worker", default=None, help="command prefix that runs Python for the worker")
    bench.add_argument("--no-cache", action="store_true", help="measure again even if a result is cached")
    bench.set_defaults(handler=_bench)

    device = commands.add_parser("device", help="ask a benchmark worker which device it runs on, and remember it")
    device.add_argument("--worker", default=None, help="command prefix that runs Python for the worker")
    device.set_defaults(handler=_device)

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
    from tfperf_lsp.lsp.server import create_server

    server = create_server()
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
    return 0


# ----------------------------------------------------------------------------- check
def _check(args) -> int:
    from tfperf_lsp.analysis.workspace import WorkspaceIndex
    from tfperf_lsp.checker import check_file, finding_json, finding_line
    from tfperf_lsp.config import parse_device_flag

    editor_like = {"ignore": _flatten(args.ignore)}
    if args.select:
        editor_like["select"] = _flatten(args.select)
    unknown = [v for v in editor_like["ignore"] + editor_like.get("select", []) if not _valid_selector(v)]
    if unknown:
        print(f"tfperf: unknown rule codes or categories: {', '.join(unknown)}", file=sys.stderr)
        return 2
    files, problems = discover(args.paths)
    if not files and not problems:
        print("tfperf: no Python files found in " + " ".join(args.paths), file=sys.stderr)
        return 2
    roots = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in args.paths]
    workspace = WorkspaceIndex(roots)
    # Only what the command line and the files say: no remembered probe, so that the same
    # input gives the same findings on any machine.
    try:
        device = parse_device_flag(args.device) if args.device else None
    except ValueError as exc:
        print(f"tfperf: {exc}", file=sys.stderr)
        return 2
    devices_used = set()
    all_findings, errors, changed = [], list(problems), 0
    for path in files:
        text = read_source(path)
        if isinstance(text, FileProblem):
            errors.append(text)
            continue
        result = check_file(path, text, editor_like, workspace, fix=args.fix or args.diff, unsafe=args.unsafe_fixes, device=device)
        if result.device_used:
            devices_used.add(result.device_used)
        if result.problem:
            errors.append(result.problem)
            continue
        for problem in result.settings_problems:
            print(f"tfperf: {problem}", file=sys.stderr)
        if result.new_text is not None and result.new_text != text:
            changed += 1
            if args.diff:
                from tfperf_lsp.rewrite.edits import unified_diff

                sys.stdout.write(unified_diff(path, text, result.new_text))
            else:
                with open(path, "w", encoding="utf-8", newline="") as handle:
                    handle.write(result.new_text)
        all_findings.extend((path, f, result) for f in result.findings)
        for finding, reason in result.fixes_withheld:
            start = finding.span.start
            print(f"{path}:{start.line + 1}:{start.col + 1}: {finding.code} fix not applied: {reason}", file=sys.stderr)
    for error in errors:
        print(f"{error.path}: {error.message}", file=sys.stderr)
    if args.diff:
        return 2 if errors else (1 if changed else 0)
    if args.format == "json":
        print(json.dumps([finding_json(path, f, result) for path, f, result in all_findings], indent=2))
    else:
        for path, finding, result in all_findings:
            print(finding_line(path, finding))
        fixable = sum(1 for _, f, _ in all_findings if f.fix_title and (f.fix_applicability == "safe" or args.unsafe_fixes))
        summary = f"Found {len(all_findings)} finding{'s' if len(all_findings) != 1 else ''}"
        if args.fix:
            summary += f" after fixing {changed} file{'s' if changed != 1 else ''}"
        elif fixable:
            summary += f" ({fixable} fixable with --fix{' --unsafe-fixes' if args.unsafe_fixes else ''})"
        print(summary + ".", file=sys.stderr)
    for used in sorted(devices_used):
        print(f"tfperf: device-dependent rules assumed {used}", file=sys.stderr)
    if errors:
        return 2
    return 0 if args.exit_zero or not all_findings else 1


def _flatten(values) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


def _valid_selector(value: str) -> bool:
    from tfperf_lsp.rules import rule_by_code

    return value in CATEGORIES or rule_by_code(value) is not None


# ----------------------------------------------------------------------------- rules
def _rules(args) -> int:
    from tfperf_lsp.rules import ALL_RULES, Rule

    if args.format == "json":
        print(json.dumps([
            {"code": r.code, "name": r.name, "category": r.category, "severity": r.severity.value,
             "summary": r.summary, "fix": type(r).fix is not Rule.fix, "url": r.doc_url}
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
    from tfperf_lsp.rules import Rule

    lines = ["| code | name | category | severity | quick fix | what it finds |", "|---|---|---|---|---|---|"]
    for rule in rules:
        fix = "yes" if type(rule).fix is not Rule.fix else ""
        lines.append(f"| {rule.code} | `{rule.name}` | {rule.category} | {rule.severity.value} | {fix} | {rule.summary} |")
    return "\n".join(lines) + "\n"


def _rule(args) -> int:
    from tfperf_lsp.rules import rule_by_code

    rule = rule_by_code(args.code)
    if rule is None:
        print(f"tfperf: no rule {args.code!r}; `tfperf rules` lists them", file=sys.stderr)
        return 2
    print(rule.markdown(), end="")
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
