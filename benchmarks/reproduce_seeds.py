"""Reproduce the seed articles' speed claims with `tfperf bench` on examples/, on this machine.

Prints a Markdown table (for the README): what the article measured, per call, and what tfperf
measured, per call, on the article's input sizes. Every variant is compared with the original
on its own (its own ratio and 95% interval; nothing is "best of").

The examples keep small inputs so that they run fast in the unit tests; the article's sizes are
given to `tfperf bench` here with a declaration comment (`# tfperf: A=float32[...]`) added to a
temporary copy of the example, the way a user declares inputs. The benchmark runs through the
same service and JSON as `tfperf bench --format json`, in-process, because the CLI has no flag
for the worker's memory limit (benchmark.memoryLimitMB, 4096 MB by default), which seed 000 at
the article's sizes exceeds. The measured shapes are checked against the declared ones and any
scaling is printed. When one call is too long for ten timed pairs to fit in tfperf's window (3x
the budget), tfperf gives a single-shot time without an interval; for that case (seed 000) a
reduced size, named in the table, is measured as well.

Usage: python benchmarks/reproduce_seeds.py [--budget SECONDS] [--only 000,001]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Case:
    seed: str
    claim: str
    path: str
    code: str
    article: str  # the article's own figures, per call, and where it says it measured
    sizes: list[tuple[str, str]] = field(default_factory=list)  # (label, declaration); the first is the article's


CASES = [
    Case("000", "loop of 1000 `tf.matmul` + `tf.stack` vs one `tf.einsum`",
         "examples/seed000_einsum_batch_matmul.py", "TFP401",
         "0.40 s -> 0.28 s, one run of each (1.43x); i9-9900K + RTX 2060 SUPER GPU",
         [("article's sizes", "A=float32[1000,100,1000] B=float32[1000,1000]"),
          ("reduced: the 1000-step loop kept, matmul width 1000 -> 500 (1/4 of the work per call)",
           "A=float32[1000,100,500] B=float32[500,500]")]),
    Case("001", "eager function vs `tf.function` (99 chained `tf.matmul`)",
         "examples/seed001_tf_function_decorator.py", "TFP303",
         "11.9 ms -> 2.6 ms per call (median of 5 `timeit` repeats of 10 calls: 0.119 s -> 0.026 s; 4.6x); "
         "no XLA figure; device not stated",
         [("article's sizes", "x=float32[100,100]")]),
    Case("001", "per-row `reduce_mean` loop vs one axis reduction (both `tf.function`)",
         "examples/seed001_tf_function_decorator.py", "TFP402",
         "0.91 ms -> 0.17 ms per call (10 calls: 9.1 ms -> 1.7 ms; 5.5x); device not stated",
         [("article's sizes", "x=float32[100,100]")]),
    Case("003", "Keras MLP called eagerly vs `tf.function(net)`",
         "examples/seed003_hybrid_eager_vs_graph.py", "TFP302",
         "1.28 ms -> 0.58 ms per call (1000 calls: 1.2769 s -> 0.5811 s, the graph loop's first call "
         "tracing included; 2.2x); no XLA figure; device not stated",
         [("article's sizes", "x=float32[1,512]")]),
]

_DECL = re.compile(r"([A-Za-z_]\w*)=([a-z]+\d*)\[([\d,]*)\]")


def declared(declaration: str) -> dict[str, tuple[str, list[int]]]:
    return {n: (t, [int(d) for d in dims.split(",") if d]) for n, t, dims in _DECL.findall(declaration)}


def measure(case: Case, declaration: str, service, workdir: str) -> tuple[dict | None, str]:
    """What `tfperf bench COPY --select CODE --format json` does, on a copy of the example that
    declares the inputs (in-process, to set the worker's memory limit); (entry, error text)."""
    from tfperf_lsp.analysis.workspace import WorkspaceIndex
    from tfperf_lsp.bench.cli import _json
    from tfperf_lsp.config import settings_for
    from tfperf_lsp.engine import analyze

    with open(os.path.join(ROOT, case.path), encoding="utf-8") as handle:
        text = handle.read().rstrip("\n") + f"\n# tfperf: {declaration}\n"
    copy = os.path.join(workdir, os.path.basename(case.path))
    with open(copy, "w", encoding="utf-8") as handle:
        handle.write(text)
    analysis = analyze(text, copy, settings_for(copy), WorkspaceIndex([workdir]))
    finding = next((f for f in analysis.findings if f.code == case.code), None)
    if finding is None:
        return None, f"no {case.code} finding in {case.path}"
    plan = service.plan(analysis, finding)
    if plan.job is None:
        return None, plan.problem or "no benchmark could be built"
    entry = _json(case.path, finding, plan, service.run(plan, use_cache=False).result)
    return entry, entry["error"] or ""


def ms(seconds) -> str:
    if seconds is None:
        return "?"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1e3:.3g} ms"


def sizes_cell(entry: dict, wanted: dict[str, tuple[str, list[int]]], label: str) -> str:
    """The inputs as measured; says so when tfperf scaled them below what was declared."""
    parts, scaled = [], []
    for item in entry["inputs"]:
        if item["shape"]:
            parts.append(f"{item['name']} {item['dtype']}[{','.join(map(str, item['shape']))}]")
            want = wanted.get(item["name"])
            if want and want[1] != item["shape"]:
                scaled.append(f"{item['name']} declared [{','.join(map(str, want[1]))}]")
        else:
            parts.append(f"{item['name']} = {item['source'].split(': ', 1)[-1]}")
    text = "; ".join(parts) or "-"
    if scaled:
        text += " - SCALED by tfperf's input-memory budget (" + "; ".join(scaled) + ")"
    return f"{text} ({label})"


def comparison_cell(entry: dict) -> str:
    """Each variant against the original, on its own."""
    by_name = {v["name"]: v for v in entry["variants"]}
    cells = []
    for c in entry["comparisons"]:
        head = f"{c['candidate']} vs {c['baseline']}: "
        if c["speedup"] is None:
            cells.append(head + f"no ratio, {c['verdict']}")
            continue
        if c["ci95"]:
            lo, hi = c["ci95"]
            n = by_name.get(c["candidate"], {}).get("samples")
            cells.append(head + f"{c['speedup']:.2f}x (95% CI {lo:.2f}-{hi:.2f}x, {n} pairs), {c['verdict']}")
        else:
            cells.append(head + f"{c['speedup']:.2f}x, single shot (no interval), {c['verdict']}")
    return "<br>".join(cells)


def measure_all(cases: list[Case], service, workdir: str, rows: list[str], raw: list[dict], budget: float) -> None:
    for case in cases:
        for index, (label, declaration) in enumerate(case.sizes):
            print(f"seed {case.seed} {case.code} [{declaration}] ...", file=sys.stderr, flush=True)
            entry, problem = measure(case, declaration, service, workdir)
            if entry is not None:
                raw.append({"declaration": declaration, **entry})
            where = f"`{os.path.basename(case.path)}` {case.code}"
            claim = f"{case.claim} (seed {case.seed}: {case.article})" if index == 0 else f"same, {label.split(':')[0]}"
            if entry is None or problem:
                rows.append(f"| {claim} | {where} | `# tfperf: {declaration}` ({label}) | not measured: "
                            f"{problem.replace('|', '/')} | | |")
                print(f"  not measured: {problem}", file=sys.stderr)
                continue
            variants = " / ".join(f"{v['name']} {ms(v['median_s'])}" for v in entry["variants"])
            match = {True: "yes", False: "NO", None: "not verified"}[entry["outputs_match"]]
            rows.append(f"| {claim} | {where} | {sizes_cell(entry, declared(declaration), label)} | {variants} | "
                        f"{comparison_cell(entry)} | {match} |")
            single = [v["name"] for v in entry["variants"] if not v["samples"]]
            if single:
                slowest = max(v["median_s"] or 0 for v in entry["variants"])
                print(f"  single shot for {', '.join(single)}: one call takes up to {ms(slowest)}; ten pairs "
                      f"(with tfperf's A/A control) do not fit in 3x the {budget:g} s budget", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=float, default=10.0, help="tfperf bench --budget (seconds, at most 10)")
    parser.add_argument("--timeout", type=float, default=900.0, help="tfperf bench --timeout per benchmark")
    parser.add_argument("--memory-limit-mb", type=float, default=12288.0,
                        help="the worker's resident-memory limit (benchmark.memoryLimitMB; tfperf's default 4096 "
                             "is too small for seed 000 at the article's sizes)")
    parser.add_argument("--max-input-mb", type=float, default=512.0,
                        help="benchmark.maxInputMB: declared inputs above this are scaled down (reported)")
    parser.add_argument("--only", default=None, help="comma-separated seeds (000,001,003)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the raw entries here")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    cases = [c for c in CASES if not only or c.seed in only]
    rows: list[str] = []
    raw: list[dict] = []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as workdir:  # never from a cache
        os.environ["TFPERF_CACHE_DIR"] = cache
        from tfperf_lsp.bench.service import BenchService, BenchSettings

        settings, problems = BenchSettings.parse({"timeBudget": args.budget, "timeout": args.timeout,
                                                  "memoryLimitMB": args.memory_limit_mb, "maxInputMB": args.max_input_mb})
        for problem in problems:
            print(problem, file=sys.stderr)
        service = BenchService(settings)
        try:
            measure_all(cases, service, workdir, rows, raw, settings.time_budget)
        finally:
            service.close()
    load_after = os.getloadavg()
    device = next((f"{e['device']}, TF {e['tf_version']}" for e in reversed(raw) if e.get("device")), "an unknown device")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(raw, handle, indent=1)
    print(f"Measured with `python benchmarks/reproduce_seeds.py --budget {settings.time_budget:g}` "
          f"(worker memory limit {settings.memory_limit_mb:g} MB, inputs up to {settings.max_input_mb:g} MB).")
    print(f"Device: {device}, Python {platform.python_version()}, {os.cpu_count()} CPUs visible, "
          f"load average {load_before[0]:.1f} before / {load_after[0]:.1f} after.\n")
    print("| article's claim (per call) | example | inputs (declared to `tfperf bench`) | median per call "
          "| each variant vs the original | outputs match |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    notes = [f"- seed {e['filename'].split('seed')[-1][:3]} {e['code']} [{e['declaration']}]: {'; '.join(e['warnings'])}"
             for e in raw if e.get("warnings")]
    if notes:
        print("\ntfperf's warnings:\n" + "\n".join(notes))


if __name__ == "__main__":
    main()
