"""One worker subprocess seen from the server: spawn, read, measure, kill. No TensorFlow here.

Every worker runs in its own session (process group) so that a kill takes whatever the user's
code started too; every live worker is registered and killed at interpreter exit. A server that
dies without running atexit (SIGKILL) closes the worker's stdin, which the worker treats as
"exit now" (see worker.py).
"""
from __future__ import annotations

import atexit
import collections
import hashlib
import logging
import os
import queue
import re
import signal
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import TYPE_CHECKING, Callable

from . import ship

if TYPE_CHECKING:
    from .protocol import Frame, Job
# protocol (dataclasses, the message shapes) is imported where a message is built: `tfperf
# observe` runs its program through WorkerProcess and never speaks the protocol.

WORKER_MODULE = "tfperf_lsp.bench.worker"
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_LOG = logging.getLogger("tfperf_lsp.bench")
_LIVE: set["WorkerProcess"] = set()
_LIVE_LOCK = threading.Lock()
STDERR_TAIL_LINES = 60
STDERR_FORWARD_LINES = 300   # per worker; more would flood the server log (prints in a loop)
MAX_STDERR_LINE = 2000
# How long a worker that closed its output may take to finish exiting and to flush its stderr
# (a crash's traceback). The waits end as soon as it has: only a process that stays alive after
# closing its pipes waits the whole time. On a stalled machine a dying TensorFlow process took
# more than 1 s, and its crash was reported as "stopped answering" without its traceback.
EXIT_WAIT_S = 10.0


def worker_argv(command: list[str] | None, memory_limit_mb: int | None, shipped: bool = False) -> list[str]:
    """The worker's command line. Our own interpreter gets -P (3.11+): `-m` would otherwise put
    the working directory first on sys.path, and a repository's `tensorflow.py` would run. A
    configured command may be an older Python or ssh: it gets PYTHONSAFEPATH (worker_env) and a
    private working directory (private_cwd) instead."""
    if shipped:  # the worker's code comes over stdin (ship.py): nothing to install over there
        return ship.shipped_argv(list(command or [sys.executable]), memory_limit_mb)
    if command:
        argv = list(command)
    else:
        argv = [sys.executable] + (["-P"] if sys.version_info >= (3, 11) else [])
    argv += ["-m", WORKER_MODULE]
    if memory_limit_mb:
        argv += ["--memory-limit-mb", str(int(memory_limit_mb))]
    return argv


def package_path() -> str:
    """A directory holding only `tfperf_lsp` (a symlink to ours), for the worker's PYTHONPATH.
    Putting our parent directory there instead would, for a bundled copy (server/libs), shadow
    the user's packages (typing_extensions, ...) that their TensorFlow was installed with.
    It lives in the user's cache directory (not /tmp: nobody else can plant a package there)
    and is reused, so a killed server leaves nothing new behind."""
    pkg = os.path.join(_PACKAGE_ROOT, "tfperf_lsp")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    d = os.path.join(base, "tfperf", "worker-path", hashlib.sha256(pkg.encode()).hexdigest()[:16])
    link = os.path.join(d, "tfperf_lsp")
    try:
        if os.path.realpath(link) != os.path.realpath(pkg):
            os.makedirs(d, mode=0o700, exist_ok=True)
            tmp = f"{link}.{os.getpid()}"
            os.symlink(pkg, tmp)
            os.replace(tmp, link)  # atomic: concurrent servers agree
        return d
    except OSError:  # no symlinks or no cache dir: the parent directory is the next best thing
        return _PACKAGE_ROOT


def worker_env(extra: dict | None = None) -> dict:
    """The server's environment + our package first on PYTHONPATH (the worker must speak the
    server's protocol version) + quiet TensorFlow logging."""
    env = dict(os.environ)
    paths = [package_path()] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["PYTHONSAFEPATH"] = "1"  # no cwd / script folder on sys.path (Python 3.11+)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.update(extra or {})
    return env


_PRIVATE_CWD: str | None = None


def private_cwd() -> str:
    """An empty directory only this user can write, the workers' working directory: nothing in
    it can be imported by accident (Python < 3.11 puts the cwd on sys.path for `-m`)."""
    global _PRIVATE_CWD
    if _PRIVATE_CWD is None or not os.path.isdir(_PRIVATE_CWD):
        _PRIVATE_CWD = tempfile.mkdtemp(prefix="tfperf-worker-")
        atexit.register(shutil.rmtree, _PRIVATE_CWD, True)
    return _PRIVATE_CWD


def _kill_all() -> None:
    with _LIVE_LOCK:
        workers = list(_LIVE)
    for w in workers:
        w.kill()


atexit.register(_kill_all)


def live_workers() -> list["WorkerProcess"]:
    with _LIVE_LOCK:
        return list(_LIVE)


class WorkerProcess:
    def __init__(self, argv: list[str], *, env: dict | None = None, cwd: str | None = None,
                 max_line_bytes: int = 1 << 20, log: Callable[[str], None] | None = None,
                 preamble: bytes | None = None):
        self.argv = argv
        self.max_line_bytes = max_line_bytes
        self.log = log or (lambda line: _LOG.info("worker: %s", line))
        self.messages: "queue.Queue[tuple[str, object]]" = queue.Queue()
        self.bytes_read = 0
        self.ready: dict | None = None       # the `ready` message once received
        self.start_error: str | None = None  # why it never became ready
        self._ready_lock = threading.Lock()
        self._tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._forwarded = 0
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, cwd=cwd or private_cwd(), start_new_session=True, close_fds=True)
        self.pid = self.proc.pid
        self._pipes = _pipe_ids(self.proc)
        if preamble:  # the shipped worker's code, before any protocol line (ship.py)
            try:
                self.proc.stdin.write(preamble)
                self.proc.stdin.flush()
            except OSError:
                pass  # it died at once: reported as a start failure with its stderr
        with _LIVE_LOCK:
            _LIVE.add(self)
        threading.Thread(target=self._read_stdout, name=f"tfperf-out-{self.pid}", daemon=True).start()
        self._stderr_done = threading.Event()
        threading.Thread(target=self._read_stderr, name=f"tfperf-err-{self.pid}", daemon=True).start()

    # ---- reading ----------------------------------------------------------------------------
    def _read_stdout(self) -> None:
        out = self.proc.stdout
        try:
            while True:
                line = out.readline(self.max_line_bytes + 1)
                if not line:
                    break
                if len(line) > self.max_line_bytes:
                    self.messages.put(("oversize", len(line)))
                    return
                self.bytes_read += len(line)
                self.messages.put(("line", line))
        except (OSError, ValueError):
            pass
        _close(out)  # here, not in kill(): a reader blocked on a stranger's pipe holds its lock
        self.messages.put(("eof", None))

    def _read_stderr(self) -> None:
        try:
            while True:
                raw = self.proc.stderr.readline(65536)  # bounded: a newline-free flood is split
                if not raw:
                    break
                line = raw.decode("utf-8", "replace").rstrip("\n")[:MAX_STDERR_LINE]
                self._tail.append(line)
                if self._forwarded < STDERR_FORWARD_LINES:
                    self._forwarded += 1
                    self.log(line)
                elif self._forwarded == STDERR_FORWARD_LINES:
                    self._forwarded += 1
                    self.log("(further worker stderr lines are not forwarded)")
        except (OSError, ValueError):
            pass
        finally:
            _close(self.proc.stderr)
            self._stderr_done.set()

    def stderr_tail(self, wait_s: float = 0.0) -> str:
        """The last lines of the worker's stderr (waits up to wait_s for the pipe to close)."""
        if wait_s:
            self._stderr_done.wait(wait_s)
        return "\n".join(self._tail)

    def next_message(self, timeout: float) -> tuple[str, object] | None:
        try:
            return self.messages.get(timeout=timeout)
        except queue.Empty:
            return None

    # ---- writing ----------------------------------------------------------------------------
    def send(self, msg: dict) -> bool:
        from .protocol import dumps

        try:
            self.proc.stdin.write((dumps(msg) + "\n").encode("utf-8"))
            self.proc.stdin.flush()
            return True
        except (OSError, ValueError):  # it died; the reader reports EOF
            return False

    # ---- state ------------------------------------------------------------------------------
    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_bytes(self) -> int | None:
        """Resident memory of the worker and its descendants (Linux /proc; None elsewhere)."""
        total, seen, todo = 0, set(), [self.pid]
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            rss = _proc_rss(pid)
            if rss is None:
                if pid == self.pid:
                    return None
                continue
            total += rss
            todo.extend(_proc_children(pid))
        return total

    def exit_description(self, wait_s: float = EXIT_WAIT_S) -> str:
        try:
            code = self.proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            hint = " (possibly the system's out-of-memory killer)" if -code == signal.SIGKILL else ""
            return f"was killed by {name}{hint}"
        return f"exited with code {code}"

    def kill(self) -> None:
        """SIGKILL the whole process tree, reap. Idempotent; returns within ~1 s.

        The tree is the worker's process group, its descendants (a child that called setsid()
        left the group) and every process of ours holding one of the worker's pipes (a
        double-forked child is no longer a descendant). The read ends are closed by the reader
        threads, never here: close() would wait for a reader blocked on a pipe a stranger holds.
        """
        stray = set(_descendants(self.pid)) | _pipe_holders(self._pipes)
        stray.discard(os.getpid())
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for pid in stray:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.proc.kill()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            # Uninterruptible sleep, or a stalled machine still tearing down TensorFlow's memory:
            # the kernel finishes it. Reap it then, so no zombie stays behind.
            threading.Thread(target=self.proc.wait, daemon=True).start()
        threading.Thread(target=_close, args=(self.proc.stdin,), daemon=True).start()
        with _LIVE_LOCK:
            _LIVE.discard(self)


def _close(pipe) -> None:
    try:
        if pipe is not None:
            pipe.close()
    except (OSError, ValueError):
        pass


def _pipe_ids(proc: subprocess.Popen) -> set[str]:
    """The /proc/*/fd link texts ("pipe:[inode]") of the worker's three pipes."""
    ids = set()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        try:
            ids.add(f"pipe:[{os.fstat(pipe.fileno()).st_ino}]")
        except (OSError, ValueError, AttributeError):
            pass
    return ids


def _pipe_holders(pipe_ids: set[str]) -> set[int]:
    """Processes of this user that hold one of the pipes (Linux /proc; empty elsewhere)."""
    holders: set[int] = set()
    if not pipe_ids:
        return holders
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return holders
    me = os.getpid()
    for pid in pids:
        if pid == me:
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:  # another user's process, or gone
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") in pipe_ids:
                    holders.add(pid)
                    break
            except OSError:
                continue
    return holders


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo and len(out) < 10000:
        for kid in _proc_children(todo.pop()):
            if kid not in out:
                out.append(kid)
                todo.append(kid)
    return out


def _proc_rss(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0  # a zombie has no VmRSS line
    except (OSError, ValueError):
        return None


def _proc_children(pid: int) -> list[int]:
    kids = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                    kids += [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                pass
    except OSError:
        pass
    return kids


_FAULT_FRAME = re.compile(r'File "<tfperf:(prelude|variant:(.*))>", line (\d+) in ')


def native_frames(stderr: str, job: Job) -> list[Frame]:
    """The user's frames in a faulthandler dump (segfault, abort), innermost last."""
    from .protocol import Frame

    sources = {v.name: v.source for v in job.variants}
    frames = []
    for m in _FAULT_FRAME.finditer(stderr):
        where = m.group(2) if m.group(2) is not None else "prelude"
        src = job.prelude if where == "prelude" else sources.get(where, "")
        lines = src.splitlines()
        line = int(m.group(3))
        code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        frames.append(Frame(where, line, code))
    return frames[::-1]  # faulthandler prints the most recent call first


def variant_of(frames: list[Frame]) -> str | None:
    return frames[-1].where if frames and frames[-1].where != "prelude" else None
