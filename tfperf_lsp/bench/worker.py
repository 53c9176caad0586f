"""The benchmark worker: ``python -m tfperf_lsp.bench.worker [--memory-limit-mb N]``.

The only module of tfperf that imports TensorFlow. Protocol (docs/contract.md section 2):
write `ready` (or `fatal`), read ONE message (`probe` or `job`), answer, exit.

Protocol lines go to a private duplicate of the original stdout; fd 1 and sys.stdout are pointed
at stderr before anything else runs, so prints from the user's code or from TensorFlow's C++
cannot corrupt the stream. The worker exits by itself when the server goes away (stdin EOF or
a new parent) and when its resident memory passes the limit (a remote worker started through
`ssh` cannot be watched by the server).
"""
from __future__ import annotations

import faulthandler
import io
import os
import re
import signal
import sys
import threading
import time

from . import protocol
from .protocol import Job, JobError, ProtocolError

EXIT_OK, EXIT_FATAL, EXIT_MEMORY, EXIT_BAD_MESSAGE = 0, 2, 3, 4


class Channel:
    """Writes protocol lines to the real stdout; thread-safe (watchdogs write too)."""

    def __init__(self):
        proto_fd = os.dup(1)
        os.dup2(2, 1)           # C-level writes to stdout (TF logging, printf) now go to stderr
        sys.stdout = sys.stderr  # Python-level prints too
        self._out = os.fdopen(proto_fd, "w", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()
        self._last_progress = 0.0
        self._last_step = ""

    def send(self, msg: dict) -> None:
        line = protocol.dumps(msg) + "\n"
        with self._lock:
            self._out.write(line)
            self._out.flush()

    def progress(self, fraction: float, message: str) -> None:
        """A new step is always sent (the server names it on a crash or timeout); repeats of
        the same step ("pair 3/10", "pair 4/10") at most 10 times a second."""
        now = time.monotonic()
        step = re.sub(r"\d+", "#", message)
        if step != self._last_step or now - self._last_progress >= 0.1:
            self._last_progress, self._last_step = now, step
            self.send(protocol.progress_msg(fraction, message))


def _exit_now(code: int) -> None:
    """Leave without TF's slow teardown, taking along processes the user's code started."""
    try:
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - the server may be gone: stderr is a broken pipe
        pass
    try:
        if os.getpgrp() == os.getpid():  # only when we lead our own group (the pool's setsid)
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, signal.SIG_IGN)  # spare ourselves, keep the code
                os.killpg(os.getpid(), signal.SIGTERM)
            else:  # signal.signal only works on the main thread: take the group, us included
                os.killpg(os.getpid(), signal.SIGKILL)
    except BaseException:  # noqa: BLE001 - exiting matters more than the cleanup
        pass
    os._exit(code)


def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:  # macOS and friends: peak, not current, but good enough for a limit
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024
    except (ImportError, OSError):
        return None


def _start_watchdogs(channel: Channel, limit_mb: int | None) -> None:
    parent = os.getppid()

    def parent_watch():
        while True:
            time.sleep(0.25)
            if os.getppid() != parent:  # re-parented: the server died without closing our stdin
                _exit_now(EXIT_OK)

    def memory_watch():
        limit = limit_mb * 1024 * 1024
        while True:
            time.sleep(0.05)
            rss = _rss_bytes()
            if rss is not None and rss > limit:
                msg = (f"memory limit exceeded: the worker reached {rss / 2**20:.0f} MB resident "
                       f"(limit {limit_mb} MB, including TensorFlow itself)")
                try:
                    channel.send(protocol.result_msg(protocol.error_result("memory", msg)))
                finally:
                    _exit_now(EXIT_MEMORY)

    threading.Thread(target=parent_watch, name="tfperf-parent", daemon=True).start()
    if limit_mb:
        threading.Thread(target=memory_watch, name="tfperf-memory", daemon=True).start()


def _watch_stdin_eof() -> None:
    """After the one message, stdin stays open until the server goes: EOF means exit."""
    def run():
        while True:
            try:
                if not os.read(0, 65536):
                    break
            except OSError:
                break
        _exit_now(EXIT_OK)
    threading.Thread(target=run, name="tfperf-stdin", daemon=True).start()


def _parse_args(argv: list[str]) -> int | None:
    limit = None
    it = iter(argv)
    for arg in it:
        if arg == "--memory-limit-mb":
            limit = int(next(it))
        elif arg.startswith("--memory-limit-mb="):
            limit = int(arg.split("=", 1)[1])
    return limit if limit and limit > 0 else None


def _import_tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf  # the one TensorFlow import of tfperf

    for gpu in tf.config.list_physical_devices("GPU"):
        try:  # allocate on demand: peak-memory figures mean something, other users keep theirs
            tf.config.experimental.set_memory_growth(gpu, True)
        except Exception:  # noqa: BLE001 - already initialised; harmless
            pass
    return tf


def _safe_sys_path() -> None:
    """Drop the working directory from sys.path before anything is imported: an old Python
    started without -P / PYTHONSAFEPATH puts it first, and a `tensorflow.py` there would run."""
    cwd = os.getcwd()
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != cwd]


def _enter_job_folder(job: Job) -> None:
    """After TensorFlow is imported: the analysed file's folder goes first on sys.path (its
    sibling modules import as when the file runs) and becomes the working directory."""
    folder = job.meta.get("folder")
    if not isinstance(folder, str) or not os.path.isdir(folder):
        return
    sys.path.insert(0, folder)
    try:
        os.chdir(folder)
    except OSError:
        pass


def _read_message() -> dict | None:
    line = sys.stdin.buffer.readline()
    if not line:
        return None
    return protocol.check_message(protocol.loads(line))


def main(argv: list[str] | None = None) -> int:
    _safe_sys_path()
    channel = Channel()
    faulthandler.enable()  # a segfault in native code leaves a Python traceback on stderr
    limit_mb = _parse_args(sys.argv[1:] if argv is None else argv)
    _start_watchdogs(channel, limit_mb)
    python = sys.version.split()[0]
    try:
        tf = _import_tf()
        from . import device as device_mod
        device = device_mod.probe(tf)
    except Exception as e:  # noqa: BLE001 - report any start-up failure to the server
        channel.send(protocol.fatal_msg(f"the worker could not import TensorFlow with "
                                        f"{sys.executable}: {type(e).__name__}: {e}"))
        return EXIT_FATAL
    channel.send(protocol.ready_msg(tf.__version__, python, device, os.getpid()))
    try:
        msg = _read_message()
    except ProtocolError as e:
        sys.stderr.write(f"tfperf worker: bad message from the server: {e}\n")
        return EXIT_BAD_MESSAGE
    if msg is None:  # the server went away before giving us work
        return EXIT_OK
    _watch_stdin_eof()
    sys.stdin = io.StringIO("")  # the user's input() must not eat the protocol
    if msg["type"] == "probe":
        channel.send(protocol.device_msg(tf.__version__, python, device))
        return EXIT_OK
    if msg["type"] != "job":
        sys.stderr.write(f"tfperf worker: expected 'job' or 'probe', got {msg['type']!r}\n")
        return EXIT_BAD_MESSAGE
    try:
        job = Job.from_dict(msg["job"]).validate()
    except (ProtocolError, JobError) as e:
        result = protocol.error_result("invalid-job", str(e), device=device,
                                       tf_version=tf.__version__, python=python)
    else:
        from . import tfjob
        _enter_job_folder(job)
        try:
            result = tfjob.run_job(tf, job, device, channel.progress)
        except Exception as e:  # noqa: BLE001 - a bug of ours still ends as a result
            import traceback
            result = protocol.error_result(
                "crash", f"internal error in the tfperf worker: {type(e).__name__}: {e}",
                traceback=traceback.format_exc()[-4000:], device=device,
                tf_version=tf.__version__, python=python)
    channel.send(protocol.result_msg(result))
    return EXIT_OK


if __name__ == "__main__":
    code = main()
    _exit_now(code)
