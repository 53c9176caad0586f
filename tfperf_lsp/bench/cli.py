"""``tfperf bench FILE [--line N] [--format json]``: benchmark a file's findings on this device.

Exit codes: 0 every benchmark ran, 1 some benchmark failed or a rewrite changed the outputs,
2 usage error (no such file, nothing to benchmark at --line).
"""
from __future__ import annotations

import json
import os
import sys

from tfperf_lsp.analysis.workspace import WorkspaceIndex
from tfperf_lsp.bench.plans import benchmark_title
from tfperf_lsp.bench.service import BenchService, BenchSettings, bar_chart
from tfperf_lsp.bench.report import hover_lines
from tfperf_lsp.config import settings_for
from tfperf_lsp.engine import analyze
from tfperf_lsp.files import FileProblem, read_source


def run_bench_command(args) -> int:
    text = read_source(args.file)
    if isinstance(text, FileProblem):
        print(f"{text.path}: {text.message}", file=sys.stderr)
        return 2
    path = args.file
    analysis = analyze(text, path, settings_for(path), WorkspaceIndex([os.path.dirname(os.path.abspath(path))]))
    if analysis.parse_error:
        error = analysis.parse_error
        print(f"{path}:{error.line + 1}:{error.col + 1}: syntax error: {error.message}", file=sys.stderr)
        return 2
    codes = {c.strip().upper() for value in args.select or [] for c in value.split(",")}
    findings = [
        f for f in analysis.findings
        if benchmark_title(f) and (args.line is None or f.span.start.line + 1 == args.line) and (not codes or f.code in codes)
    ]
    if not findings:
        where = (f" on line {args.line}" if args.line else "") + (f" for {', '.join(sorted(codes))}" if codes else "")
        print(f"{path}: no finding to benchmark{where} (`tfperf check {path}` lists the findings)", file=sys.stderr)
        return 2 if args.line or codes else 0
    options = {"timeBudget": args.budget or 3.0, "timeout": args.timeout or 60.0, "device": args.device or "auto"}
    if args.worker:
        options["workerCommand"] = args.worker.split()
    service = BenchService(BenchSettings.from_options(options))
    entries, failed = [], False
    try:
        for index, finding in enumerate(findings, 1):
            plan = service.plan(analysis, finding)
            label = f"[{index}/{len(findings)}] {path}:{finding.span.start.line + 1}: {finding.code} {plan.title}"
            if plan.job is None:
                outcome_result, cached = None, False
            else:
                progress = _Progress(label) if sys.stderr.isatty() and args.format == "text" else None
                outcome = service.run(plan, on_progress=progress, use_cache=not args.no_cache)
                if progress:
                    progress.done()
                outcome_result, cached = outcome.result, outcome.cached
            failed |= outcome_result is None or outcome_result.verdict in ("error", "outputs-differ")
            entries.append((finding, plan, outcome_result, cached))
            if args.format == "text":
                _print_text(path, finding, plan, outcome_result, cached)
    finally:
        service.close()
    if args.format == "json":
        print(json.dumps([_json(path, f, p, r) for f, p, r, _ in entries], indent=2))
    return 1 if failed else 0


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


def _print_text(path, finding, plan, result, cached) -> None:
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
