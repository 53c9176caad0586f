"""``tfperf observe [options] -- python train.py ...``: run, report, remember for the editor."""
from __future__ import annotations

import json
import sys

from tfperf_lsp.observe.facts import report_json, report_text, facts_from_run
from tfperf_lsp.observe.runner import CommandError, ObserveOptions, run_observed
from tfperf_lsp.observe.store import ObservationStore


def add_parser(commands) -> None:
    observe = commands.add_parser(
        "observe", help="run a program with TensorFlow instrumented and report traces, syncs and stalls per line",
        description="Runs the program (it runs your code) and reports every tf.function trace with its culprit "
                    "argument, call times, host syncs and input stalls at the source line. "
                    "Example: tfperf observe --max-seconds 120 -- python train.py --epochs 1")
    observe.add_argument("--max-seconds", type=float, default=None, help="stop the program after this many seconds")
    observe.add_argument("--max-steps", type=int, default=None, help="stop Keras fit after this many steps in total")
    observe.add_argument("--memory-limit-mb", type=int, default=None, help="stop the program above this resident memory")
    observe.add_argument("--output-format", choices=("text", "json"), default="text")
    observe.add_argument("--no-store", action="store_true", help="do not remember the facts for the editor")
    observe.add_argument("program", nargs="...", help="-- python script.py args (or python -m module, python -c code)")
    observe.set_defaults(handler=run_observe_command)


def run_observe_command(args) -> int:
    command = args.program[1:] if args.program[:1] == ["--"] else args.program
    options = ObserveOptions(max_seconds=args.max_seconds, max_steps=args.max_steps,
                             memory_limit_mb=args.memory_limit_mb)
    # The program's own output goes to stderr when stdout carries the JSON report.
    sink = sys.stderr.buffer if args.output_format == "json" else sys.stdout.buffer

    def show(chunk: bytes) -> None:
        sink.write(chunk)
        sink.flush()

    try:
        outcome = run_observed(command, options, on_output=show, on_stderr=lambda line: print(line, file=sys.stderr))
    except CommandError as exc:
        print(f"tfperf observe: {exc}", file=sys.stderr)
        return 2
    if outcome.run is None:
        print(f"tfperf observe: {outcome.problem}", file=sys.stderr)
        return 2
    report = report_json(outcome.run, outcome.command, outcome.date)
    if outcome.problem:
        report["error"] = report.get("error") or outcome.problem
    if not args.no_store:
        ObservationStore().put_run(outcome.run, facts_from_run(outcome.run), outcome.command, outcome.date)
    if args.output_format == "json":
        print(json.dumps(report, indent=2))
    else:
        print(report_text(report, outcome.cwd), end="")
    return 0 if outcome.run.get("status") == "finished" else 1
