"""The observed process: ``python -c "...; from tfperf_lsp.observe.bootstrap import main; ..." [options]
-- script args`` (runner.py; ``python -m tfperf_lsp.observe.bootstrap`` works too).

Instruments TensorFlow (recorder.py), runs the program as ``python script args`` would
(``-m module`` and ``-c code`` too), stops it after --max-seconds (KeyboardInterrupt in the main
thread, so ``finally`` blocks run) and writes what it saw as JSON to $TFPERF_OBSERVE_OUT, also
when the program fails or is stopped (SIGTERM is turned into KeyboardInterrupt for that).
"""
from __future__ import annotations

import _thread
import argparse
import builtins
import io
import json
import os
import runpy
import signal
import sys
import threading
import time
import traceback
import types

OUT_ENV = "TFPERF_OBSERVE_OUT"
T0_ENV = "TFPERF_OBSERVE_T0"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="tfperf-observe-bootstrap")
    parser.add_argument("--max-seconds", type=float, default=None)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        print("tfperf observe: no program to run", file=sys.stderr)
        return 2
    out = os.environ.get(OUT_ENV)
    stopped = {"why": None}

    def stop(why):
        stopped["why"] = stopped["why"] or why
        _thread.interrupt_main()

    signal.signal(signal.SIGTERM, lambda *_: stop("cancelled"))
    from tfperf_lsp.observe import recorder as recorder_module

    recorder = recorder_module.install(max_steps=args.max_steps)
    if args.max_seconds:
        # Counted from the parent's start (TensorFlow's import is part of the run); a real
        # signal, since interrupt_main() alone does not wake a sleeping main thread.
        started = float(os.environ.get(T0_ENV) or time.time())
        timer = threading.Timer(max(0.0, args.max_seconds - (time.time() - started)), _expire, args=(stopped,))
        timer.daemon = True
        timer.start()
    status, error, code = "finished", None, 0
    try:
        _run(program)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code:
            status, error = "failed", f"the program exited with code {code}"
    except KeyboardInterrupt:
        status = stopped["why"] or "interrupted"
        error = {"max-seconds": f"stopped after --max-seconds {args.max_seconds:g}",
                 "cancelled": "cancelled"}.get(status, "interrupted")
    except BaseException as exc:  # noqa: BLE001 - the program's own failure: report it
        status, code = "failed", 1
        error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        traceback.print_exc()
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if out:
            _write(out, recorder.snapshot(status, error))
    return code


def _expire(stopped: dict) -> None:
    stopped["why"] = stopped["why"] or "max-seconds"
    os.kill(os.getpid(), signal.SIGTERM)


def _run(program: list[str]) -> None:
    if program[0] == "-m" and len(program) > 1:
        sys.argv = [program[1]] + program[2:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(program[1], run_name="__main__", alter_sys=True)
    elif program[0] == "-c" and len(program) > 1:
        sys.argv = ["-c"] + program[2:]
        sys.path.insert(0, "")
        exec(compile(program[1], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102 - the user's own -c
    else:
        script = os.path.abspath(program[0])
        sys.argv = [program[0]] + program[1:]
        sys.path.insert(0, os.path.dirname(script))
        _run_script(script)


def _run_script(path: str) -> None:
    """Run a script as ``python script.py`` does: its code in a module that is ``__main__`` (and
    stays so). Not runpy.run_path: a program importing TensorFlow measured 0.1-0.2 s more CPU
    time run through it than exec'd in a module as here (TensorFlow 2.21, Python 3.11; the same
    Python calls were profiled in both). A directory or zip file with a ``__main__.py`` still goes
    through runpy, as Python itself runs it."""
    from pkgutil import get_importer

    if get_importer(path) is not None:
        runpy.run_path(path, run_name="__main__")
        return
    with io.open_code(path) as f:
        source = f.read()
    code = compile(source, path, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=path, __cached__=None, __loader__=None, __package__=None, __spec__=None,
                           __builtins__=builtins)
    sys.modules["__main__"] = module
    exec(code, module.__dict__)  # noqa: S102 - the user's own program


def _write(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
