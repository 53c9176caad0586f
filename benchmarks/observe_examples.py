"""Runs examples/retrace_pitfalls.py and the seed programs under `tfperf observe` and prints, per
traced function, tfperf's trace count next to TensorFlow's own counter
(`experimental_get_tracing_count()`, summed over the Function objects of one Python function)
and the culprit of its retraces. Exit status 1 if any count differs.

Run: .venv/bin/python benchmarks/observe_examples.py [--max-seconds 300] [files...]
"""
from __future__ import annotations

import argparse
import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tfperf_lsp.observe.facts import report_json  # noqa: E402
from tfperf_lsp.observe.runner import ObserveOptions, run_observed  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-seconds", type=float, default=300)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = args.files or [os.path.join(ROOT, "examples", "retrace_pitfalls.py"),
                           *sorted(glob.glob(os.path.join(ROOT, "examples", "seed*.py")))]
    mismatches = 0
    for path in files:
        outcome = run_observed([sys.executable, path], ObserveOptions(max_seconds=args.max_seconds, cwd=ROOT))
        name = os.path.relpath(path, ROOT)
        if outcome.run is None:
            print(f"{name}: no report ({outcome.problem})")
            mismatches += 1
            continue
        report = report_json(outcome.run, outcome.command, outcome.date)
        print(f"{name}: {report['status']}" + (f" ({report['error']})" if report.get("error") else ""))
        for fn in sorted(report["functions"], key=lambda f: (f["file"], f["line"])):
            counter = fn.get("tf_count")
            same = counter is None or counter == fn["traces"]
            mismatches += not same
            culprit = f"  culprit: {fn['culprit']['text']}" if fn["traces"] > 1 and fn["culprit"] else ""
            where = os.path.relpath(fn["file"], ROOT) if fn["user"] else os.path.basename(fn["file"])
            print(f"  {'ok ' if same else 'DIFF'} {where}:{fn['line']} {fn['name']}: traced {fn['traces']}x, "
                  f"TensorFlow's counter {counter if counter is not None else 'n/a'}{culprit}")
    print(f"{mismatches} function(s) whose count differs from TensorFlow's counter")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
