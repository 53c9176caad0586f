"""Run a program under observation in a child process: limits, cancel, no leftover processes.
No TensorFlow here (the child imports it). Process handling is the benchmark worker's
(bench/procs.py): own process group, killed as a whole, registered for kill at exit."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

from tfperf_lsp.bench.procs import WorkerProcess, worker_env

BOOTSTRAP = "tfperf_lsp.observe.bootstrap"
# `python -c` rather than `python -m BOOTSTRAP`: the same program measured about 0.1 s more CPU
# time with the bootstrap run by runpy as `-m` (TensorFlow 2.21, Python 3.11; the `import` row of
# benchmarks/bench_observe_overhead.py).
BOOTSTRAP_CODE = f"import sys; from {BOOTSTRAP} import main; sys.exit(main())"
OUT_ENV = "TFPERF_OBSERVE_OUT"
GRACE_S = 30.0              # after --max-seconds, for the report to be written
DEFAULT_MAX_OUTPUT = 1 << 20
_PYTHON = re.compile(r"^python(\d+(\.\d+)*)?(\.exe)?$")


@dataclass
class ObserveOptions:
    max_seconds: float | None = None
    max_steps: int | None = None
    memory_limit_mb: int | None = None
    max_output_bytes: int = DEFAULT_MAX_OUTPUT
    cwd: str | None = None
    python: list[str] = field(default_factory=list)  # replaces the command's python (editor setting)


@dataclass
class Outcome:
    run: dict | None          # what the observed process recorded (None: no report came back)
    problem: str | None       # why the run is incomplete, in words
    command: list[str]
    date: str
    cwd: str


class CommandError(ValueError):
    pass


def observe_argv(command: list[str], options: ObserveOptions) -> list[str]:
    """``python script.py args`` -> ``python -c <run the bootstrap> [limits] -- script.py args``."""
    if not command:
        raise CommandError("give the program to observe after --, e.g. tfperf observe -- python train.py")
    if not _PYTHON.match(os.path.basename(command[0])):
        raise CommandError(f"the command must start with a Python interpreter (python train.py ...), not {command[0]!r}; "
                           "for tests use: pytest --tfperf-observe")
    python = options.python or [command[0]]
    argv = [*python, "-c", BOOTSTRAP_CODE]
    if options.max_seconds:
        argv += ["--max-seconds", str(options.max_seconds)]
    if options.max_steps:
        argv += ["--max-steps", str(int(options.max_steps))]
    return argv + ["--", *command[1:]]


def run_observed(command: list[str], options: ObserveOptions | None = None, *,
                 on_output: Callable[[bytes], None] | None = None,
                 on_stderr: Callable[[str], None] | None = None,
                 cancel: threading.Event | None = None) -> Outcome:
    options = options or ObserveOptions()
    argv = observe_argv(command, options)
    cwd = os.path.abspath(options.cwd or os.getcwd())
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    folder = tempfile.mkdtemp(prefix="tfperf-observe-")
    out_path = os.path.join(folder, "run.json")
    problem = None
    try:
        worker = WorkerProcess(argv, env=worker_env({OUT_ENV: out_path, "TFPERF_OBSERVE_T0": repr(time.time())}), cwd=cwd,
                               log=on_stderr or (lambda line: None))
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise CommandError(f"cannot start {argv[0]}: {exc}") from exc
    try:
        try:
            worker.proc.stdin.close()  # the program reads no input from us
        except OSError:
            pass
        problem = _supervise(worker, options, on_output, cancel)
        run = _read(out_path)
        if run is None and problem is None:
            problem = f"the program {worker.exit_description()} before writing its report"
        elif run is None:
            problem += " (no report was written)"
        return Outcome(run, problem, list(command), date, cwd)
    finally:
        worker.kill()
        shutil.rmtree(folder, ignore_errors=True)


def _supervise(worker: WorkerProcess, options, on_output, cancel) -> str | None:
    hard_deadline = (worker.started + options.max_seconds + GRACE_S) if options.max_seconds else None
    stop_deadline = None
    written, problem, next_memory_check = 0, None, 0.0
    while True:
        message = worker.next_message(0.2)
        if message is not None:
            kind, payload = message
            if kind == "eof":
                break
            if kind == "line":
                if written < options.max_output_bytes and on_output:
                    chunk = payload[: options.max_output_bytes - written]
                    on_output(chunk)
                    if written + len(payload) >= options.max_output_bytes:
                        on_output(b"\n[tfperf observe: further output is not shown]\n")
                written += len(payload)
            elif kind == "oversize":
                problem = problem or "the program printed a line longer than 1 MiB; it was stopped"
                stop_deadline = _stop(worker, stop_deadline)
        now = time.monotonic()
        if cancel is not None and cancel.is_set() and stop_deadline is None:
            problem = "cancelled"
            stop_deadline = _stop(worker, stop_deadline)
        if hard_deadline and now > hard_deadline and stop_deadline is None:
            problem = f"stopped: it ran past --max-seconds {options.max_seconds:g} by {GRACE_S:g} s"
            stop_deadline = _stop(worker, stop_deadline)
        if options.memory_limit_mb and now >= next_memory_check:
            next_memory_check = now + 1.0
            rss = worker.rss_bytes()
            if rss and rss > options.memory_limit_mb * 1024 * 1024:
                problem = f"stopped: it used {rss >> 20} MiB, over the {options.memory_limit_mb} MiB limit"
                worker.kill()
                return problem
        if stop_deadline is not None and now > stop_deadline:
            worker.kill()
            break
    try:
        worker.proc.wait(timeout=GRACE_S if stop_deadline is None else 2.0)
    except Exception:  # noqa: BLE001 - it closed stdout but lingers: kill() takes it
        pass
    return problem


def _stop(worker: WorkerProcess, deadline):
    """SIGTERM the process group: the bootstrap writes its report, then we kill what is left."""
    if deadline is not None:
        return deadline
    try:
        os.killpg(worker.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    return time.monotonic() + 10.0


def _read(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return data if isinstance(data, dict) and data.get("format") == 1 else None
    except (OSError, ValueError):
        return None
