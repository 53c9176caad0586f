"""``tfperf bench PATH... [--line N] [--output-format json] [--fail-on ...] [--baseline old.json]``:
benchmark the findings of files and folders on this device, for people and for CI.

Exit codes: 0 nothing matched a ``--fail-on`` condition (default ``outputs-differ,error``, plus
``regression`` with ``--baseline``), 1 something did, 2 usage error (no such file, nothing to
benchmark at --line / --select, an unreadable baseline).
"""
from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys

from tfperf_lsp import __version__, selectors
from tfperf_lsp.analysis.workspace import WorkspaceIndex
from tfperf_lsp.bench.titles import benchmark_title
from tfperf_lsp.bench.service import BenchService, BenchSettings, bar_chart
from tfperf_lsp.bench.report import hover_lines
from tfperf_lsp.config import settings_for
from tfperf_lsp.engine import analyze
from tfperf_lsp.files import FileProblem, discover, read_source, selection_for
from tfperf_lsp.rules import rule_by_code

FAIL_ON = ("slower", "outputs-differ", "error", "regression")


def run_bench_command(args) -> int:
    fail_on = _fail_on(args)
    if isinstance(fail_on, str):
        print(f"tfperf bench: {fail_on}", file=sys.stderr)
        return 2
    baseline = None
    if args.baseline:
        baseline = _load_baseline(args.baseline)
        if isinstance(baseline, str):
            print(f"tfperf bench: {baseline}", file=sys.stderr)
            return 2
    given = {"timeBudget": args.budget, "timeout": args.timeout, "device": args.device,
             "workerCommand": args.worker.split() if args.worker else None}
    settings, setting_problems = BenchSettings.parse({k: v for k, v in given.items() if v is not None})
    for problem in setting_problems:  # the same checks and messages as the editor's settings
        print(f"tfperf bench: {_flag_for(problem)}", file=sys.stderr)
    codes: set[str] | None = None
    if args.select:
        codes = set()
        for value in (v.strip() for item in args.select for v in item.split(",") if v.strip()):
            selector = selectors.parse(value)
            if selector is None:
                print(f"tfperf bench: unknown rule code or selector: {value}", file=sys.stderr)
                return 2
            codes |= selector.codes
    files, problems = discover(args.paths, selection_for(args.paths))
    for problem in problems:
        print(problem.line(), file=sys.stderr)
    if problems and not files:
        return 2
    todo, skipped = [], []  # (path, analysis, finding); (path, finding, reason)
    for path in files:
        text = read_source(path)
        if isinstance(text, FileProblem):
            print(text.line(), file=sys.stderr)
            continue
        analysis = analyze(text, path, settings_for(path), WorkspaceIndex([os.path.dirname(os.path.abspath(path))]))
        if analysis.parse_error:
            error = analysis.parse_error
            print(f"{path}:{error.line + 1}:{error.col + 1}: syntax error: {error.message}", file=sys.stderr)
            continue
        for finding in analysis.findings:
            if (args.line is not None and finding.span.start.line + 1 != args.line) or (codes is not None and finding.code not in codes):
                continue
            if benchmark_title(finding):
                todo.append((path, analysis, finding))
            else:
                skipped.append((path, finding, _why_not(finding)))
    if not todo:
        where = (f" on line {args.line}" if args.line else "") + (f" for {', '.join(args.select)}" if args.select else "")
        print(f"{' '.join(args.paths)}: no finding to benchmark{where} (`tfperf check` lists the findings)", file=sys.stderr)
        _print_skipped(skipped, args.format == "json")
        return 2 if args.line or args.select or problems else 0
    service = BenchService(settings)
    entries = []
    service.expect(len(todo))  # a warm worker for each queued benchmark (bounded), not one import each
    try:
        for index, (path, analysis, finding) in enumerate(todo, 1):
            plan = service.plan(analysis, finding)
            if plan.job is None:
                skipped.append((path, finding, plan.problem or "no benchmark could be built"))
                service.skip_expected()
                continue
            label = f"[{index}/{len(todo)}] {path}:{finding.span.start.line + 1}: {finding.code} {plan.title}"
            progress = _Progress(label) if sys.stderr.isatty() and args.format == "text" else None
            outcome = service.run(plan, on_progress=progress, use_cache=not args.no_cache)
            if progress:
                progress.done()
            entry = _json(path, finding, plan, outcome.result)
            entry["from_cache"] = outcome.cached
            if baseline is not None:
                entry["baseline"] = _compare(entry, baseline)
            entries.append(entry)
            if args.format == "text":
                _print_text(path, finding, plan, outcome.result, outcome.cached, entry.get("baseline"))
    finally:
        service.close()
    failures = sorted({c for e in entries for c in _conditions(e)} & fail_on)
    if args.format == "json":
        print(json.dumps({
            "tfperf_version": __version__,
            "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "git_commit": _git_commit(args.paths[0]),
            "results": entries,
            "skipped": [_skipped_json(p, f, why) for p, f, why in skipped],
            "failed_on": failures,
        }, indent=2))
    else:
        _print_skipped(skipped, False)
        if failures:
            print(f"tfperf bench: failing on {', '.join(failures)} (--fail-on)", file=sys.stderr)
    return 1 if failures else 0


def _flag_for(problem: str) -> str:
    """A settings problem in the command line's words: ``benchmark.timeout`` -> ``--timeout``."""
    from tfperf_lsp import settings_schema

    for setting in settings_schema.SETTINGS:
        if setting.cli and problem.startswith(setting.key):
            return setting.cli + problem[len(setting.key):]
    return problem


def _fail_on(args) -> set[str] | str:
    if args.fail_on is None:
        return {"outputs-differ", "error"} | ({"regression"} if args.baseline else set())
    chosen = {v.strip() for item in args.fail_on for v in item.split(",") if v.strip()}
    wrong = sorted(chosen - set(FAIL_ON))
    return f"--fail-on {', '.join(wrong)}: expected {', '.join(FAIL_ON)}" if wrong else chosen


def _conditions(entry: dict) -> set[str]:
    """What about one benchmark a --fail-on condition can name."""
    found = set()
    if entry["verdict"] == "error" or entry["error"]:
        found.add("error")
    if entry["outputs_match"] is False or entry["verdict"] == "outputs-differ":
        found.add("outputs-differ")
    if any(c["verdict"] == "slower" for c in entry["comparisons"]) or entry["verdict"] == "slower":
        found.add("slower")
    if (entry.get("baseline") or {}).get("regression"):
        found.add("regression")
    return found


def _why_not(finding) -> str:
    rule = rule_by_code(finding.code)
    if finding.category == "correctness":
        return "a correctness finding: its fix changes behaviour on purpose, a timing says nothing about it"
    if rule is not None and not rule.measurable:
        return "nothing to time: the fix renames or re-imports, the code that runs stays the same"
    return "no rewrite here to compare with (the rule has no fix for this code)"


def _skipped_json(path, finding, why) -> dict:
    return {"code": finding.code, "filename": path,
            "location": {"row": finding.span.start.line + 1, "column": finding.span.start.col + 1}, "reason": why}


def _print_skipped(skipped, as_json: bool) -> None:
    if not skipped or as_json:
        return
    print(f"Not benchmarked ({len(skipped)}):")
    for path, finding, why in skipped:
        print(f"  {path}:{finding.span.start.line + 1}:{finding.span.start.col + 1}: {finding.code} - {why}")


def _git_commit(path: str) -> str | None:
    directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    try:
        run = subprocess.run(["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return run.stdout.strip() or None if run.returncode == 0 else None


# ----------------------------------------------------------------------------- baseline
def _key(entry: dict) -> tuple:
    return (os.path.normpath(entry["filename"]), entry["code"], entry["benchmark"])


def _load_baseline(path: str) -> dict | str:
    """Earlier results by (file, rule, benchmark); several per key in their order in the file."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        return f"cannot read the baseline {path}: {exc}"
    results = data.get("results") if isinstance(data, dict) else data
    if not isinstance(results, list):
        return f"{path} is not the JSON of `tfperf bench --output-format json`"
    by_key: dict[tuple, list[dict]] = {}
    for entry in results:
        try:
            by_key.setdefault(_key(entry), []).append(entry)
        except (KeyError, TypeError):
            return f"{path} is not the JSON of `tfperf bench --output-format json`"
    return by_key


def _compare(entry: dict, baseline: dict) -> dict:
    """A regression: the new speedup's 95% interval lies entirely below the baseline's."""
    earlier = baseline.get(_key(entry))
    if not earlier:
        return {"found": False, "regression": False}
    old = earlier.pop(0)
    new_ci, old_ci = entry.get("ci95"), old.get("ci95")
    regression = bool(new_ci and old_ci and new_ci[1] is not None and old_ci[0] is not None and new_ci[1] < old_ci[0])
    return {"found": True, "speedup": old.get("speedup"), "ci95": old_ci, "regression": regression,
            "comparable": bool(new_ci and old_ci)}


class _Progress:
    def __init__(self, label: str):
        self.label = label

    def __call__(self, fraction: float, message: str) -> None:
        filled = int(fraction * 20)
        sys.stderr.write(f"\r{self.label}  [{'#' * filled}{'.' * (20 - filled)}] {fraction:4.0%} {message[:30]:<30}")
        sys.stderr.flush()

    def done(self) -> None:
        sys.stderr.write("\r" + " " * (len(self.label) + 60) + "\r")
        sys.stderr.flush()


def _print_text(path, finding, plan, result, cached, baseline=None) -> None:
    print(f"{path}:{finding.span.start.line + 1}:{finding.span.start.col + 1}: {finding.code} {plan.title}")
    if result is None:
        print(f"    {plan.problem}")
        return
    lines = hover_lines(result)
    if result.outputs_match is False:
        lines.insert(0, "OUTPUTS DIFFER: the rewrite changes results on these inputs.")
    body = lines[:1] + bar_chart(result) + lines[1:]
    if plan.inputs is not None:
        body.append(f"inputs: {plan.inputs.describe()}")
    if cached:
        body.append("(cached result: --no-cache measures again)")
    if baseline and baseline.get("found"):
        old = baseline.get("speedup")
        verdict = "REGRESSION beyond both confidence intervals" if baseline["regression"] else "no regression"
        body.append(f"baseline: {old:.2f}x - {verdict}" if old is not None else f"baseline: no speedup - {verdict}")
    for line in body:
        print("    " + line)
    print()


def _json(path, finding, plan, result) -> dict:
    comparison = result.comparisons[0] if result and result.comparisons else None
    entry = {
        "code": finding.code,
        "category": finding.category,
        "filename": path,
        "location": {"row": finding.span.start.line + 1, "column": finding.span.start.col + 1},
        "benchmark": plan.title,
        "verdict": result.verdict if result else "error",
        "speedup": comparison.speedup if comparison else None,
        "ci95": [comparison.ci_low, comparison.ci_high] if comparison and comparison.ci_low is not None else None,
        "outputs_match": result.outputs_match if result else None,
        "max_abs_err": comparison.max_abs_err if comparison else None,
        "variants": [
            {
                "name": v.name,
                "median_s": v.median_s,
                "first_call_s": v.first_call_s,
                "traces": v.traces_during_timing,
                "traces_total": v.traces_total,
                "samples": len(v.samples_s),
                "samples_s": list(v.samples_s),  # raw per-call time of each sample (pair i = sample i of each variant)
                "calls_per_sample": v.calls_per_sample,
                "peak_memory_bytes": v.peak_memory_bytes,
            }
            for v in (result.variants if result else [])
        ],
        "comparisons": [
            {"baseline": c.baseline, "candidate": c.candidate, "verdict": c.verdict, "speedup": c.speedup,
             "ci95": [c.ci_low, c.ci_high] if c.ci_low is not None else None, "outputs_match": c.outputs_match}
            for c in (result.comparisons if result else [])
        ],
        "device": result.device.label() if result and result.device else None,
        "tf_version": result.tf_version if result else None,
        "inputs": [
            {"name": s.name, "shape": s.shape, "dtype": s.dtype, "source": s.source, "scale": s.scale}
            for s in (plan.inputs.specs if plan.inputs else [])
        ],
        "warnings": result.warnings if result else plan.warnings,
        "error": (result.error.message if result and result.error else None) or (None if result else plan.problem),
    }
    return entry
