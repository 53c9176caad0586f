"""The server side of benchmarking: a pool with one warm spare worker. No TensorFlow here.

    pool = WorkerPool()                    # or WorkerPool(["ssh", "gpu", "python3"])
    pool.start_spare()                     # pays the TensorFlow import before the first job
    result = pool.run_job(job, on_progress=print, cancel=threading.Event())
    result = await pool.run_job_async(job, on_progress=cb)   # asyncio; task cancel kills it
    pool.close()

Jobs run one at a time (two benchmarks on the same machine disturb each other). Every failure
(exception in user code, hang, crash, memory, cancel, garbage on the stream) comes back as a
Result with verdict "error"; only an invalid Job raises (JobError), before any process starts.
The spare is replaced after a job ends, never during one, so its TensorFlow import does not
compete with the timed region.

Every job gets a fresh worker (a job runs the user's module code and may change TensorFlow's
global state: mixed-precision policy, XLA and device settings, seeds; a reused worker would time
the next job in what the previous one left). So a file with several findings would pay a
TensorFlow import for each finding after the first. Instead the spare count is fitted to the
queue: ``pool.expect(n)`` announces n jobs to come, and calls waiting for the running job count
too. When a job ends (or a job has to start a worker cold) the pool starts as many spares as the
queued jobs need, at most ``max_spares`` (the CPU count, 2 to 4), all at once, so their imports
overlap; a job waits until no spare is still importing before it sends its job, so no import
competes with a timed region. Three findings from a warm spare pay one import, not two.
"""
from __future__ import annotations

import asyncio
import inspect
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from tfperf_lsp import settings_schema

from . import protocol, report
from . import ship as ship_module
from .procs import EXIT_WAIT_S, WorkerProcess, native_frames, variant_of, worker_argv, worker_env
from .protocol import Device, Job, ProtocolError, Result, error_result

_LOG = logging.getLogger("tfperf_lsp.bench")
POLL_S = 0.05  # cancel / timeout / memory are checked this often: kills land well within 1 s
# A worker's start is its TensorFlow import: ~3 s on a desktop, but minutes on a loaded shared
# machine or a cold network disk (85 s seen on an idle CI-class 2-core box). Only a start that
# never ends should fail, and a user who does not want to wait cancels: cancel is checked meanwhile.
START_TIMEOUT_S = 600.0

ProgressFn = Callable[[float, str], Any]


def default_max_spares() -> int:
    """Workers kept warm at most: more imports at once than cores do not finish sooner, and each
    warm worker holds TensorFlow's memory (about 0.5 GB)."""
    return max(2, min(4, os.cpu_count() or 1))


class WorkerStartError(RuntimeError):
    """The worker did not become ready (no TensorFlow, bad command, crash on import...)."""


@dataclass
class WorkerInfo:
    device: Device
    tf_version: str
    python: str


def _cancelled(cancel) -> bool:
    if cancel is None:
        return False
    if hasattr(cancel, "is_set"):
        return bool(cancel.is_set())
    return bool(cancel())


class WorkerPool:
    def __init__(self, command: list[str] | None = None, *,
                 memory_limit_mb: int | None = int(settings_schema.default("benchmark.memoryLimitMB")),
                 timeout_s: float = settings_schema.default("benchmark.timeout"), start_timeout_s: float = START_TIMEOUT_S, keep_spare: bool = True,
                 cwd: str | None = None, env: dict | None = None,
                 log: Callable[[str], None] | None = None, max_line_bytes: int = 1 << 20,
                 max_output_bytes: int = 8 << 20, ship: bool | None = None, max_spares: int | None = None):
        self.command = list(command or [])
        # ship: send the worker's code over stdin (ship.py); the default when the command prefix
        # is an interpreter. False runs `<command> -m tfperf_lsp.bench.worker`, the default when
        # the command ends in a script of its own (a stand-in worker such as the tests' fake).
        self.ship = ship if ship is not None else ship_module.ships(self.command)
        self.memory_limit_mb = memory_limit_mb
        self.timeout_s = timeout_s
        self.start_timeout_s = start_timeout_s
        self.keep_spare = keep_spare
        self.cwd = cwd
        self.env = dict(env or {})
        self.log = log
        self.max_line_bytes = max_line_bytes
        self.max_output_bytes = max_output_bytes
        self.last_worker_pid: int | None = None   # of the most recent job (diagnostics, tests)
        self.max_spares = max(1, max_spares or default_max_spares())
        self._spare: WorkerProcess | None = None   # the next job's worker
        self._extras: list[WorkerProcess] = []     # more spares, for jobs queued behind it
        self._expected = 0                         # jobs announced by expect() not started yet
        self._waiting = 0                          # run_job calls waiting for the running job
        self._current: WorkerProcess | None = None
        self._lock = threading.Lock()       # guards _spare and _closed
        self._run_lock = threading.Lock()   # one job at a time
        self._closed = False

    # ---- configuration and the spare ---------------------------------------------------------
    def configure(self, **changes) -> None:
        """Change settings (same names as __init__). A change to how workers start replaces the
        spare; timeouts apply from the next job."""
        restart = False
        for key, value in changes.items():
            if not hasattr(self, key) or key.startswith("_"):
                raise TypeError(f"unknown pool setting {key!r}")
            if key in ("command", "env"):
                value = list(value or []) if key == "command" else dict(value or {})
            if key in ("command", "memory_limit_mb", "cwd", "env") and getattr(self, key) != value:
                restart = True
            setattr(self, key, value)
        if restart:
            with self._lock:
                spare, self._spare = self._spare, None
                extras, self._extras = self._extras, []
            for extra in extras:
                extra.kill()
            if spare is not None:
                spare.kill()
                # during a job the new spare would compete with timing: the job starts it after
                if self.keep_spare and not self._run_lock.locked():
                    self.start_spare()

    def _spawn(self) -> WorkerProcess:
        return WorkerProcess(worker_argv(self.command, self.memory_limit_mb, self.ship),
                             env=worker_env(self.env), cwd=self.cwd,
                             max_line_bytes=self.max_line_bytes, log=self.log,
                             preamble=ship_module.framed_payload() if self.ship else None)

    def start_spare(self) -> None:
        """Start the spare now if there is none (it imports TensorFlow in the background)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker pool is closed")
            if self._spare is not None and self._spare.alive():
                return
            if self._spare is not None:
                self._spare.kill()
            try:
                self._spare = self._spawn()
            except OSError as e:
                self._spare = None
                raise WorkerStartError(f"cannot start the benchmark worker "
                                       f"{worker_argv(self.command, None, self.ship)}: {e}") from e

    def _take_spare(self) -> tuple[WorkerProcess, bool]:
        """The next job's worker, and whether it was started just now (no spare was there)."""
        with self._lock:
            if (self._spare is None or not self._spare.alive()) and self._extras:
                if self._spare is not None:
                    self._spare.kill()
                self._spare = self._extras.pop(0)
            cold = self._spare is None or not self._spare.alive()
        self.start_spare()
        with self._lock:
            worker, self._spare = self._spare, None
            if self._extras:  # the next queued job's worker moves up
                self._spare = self._extras.pop(0)
        if worker is None:
            raise WorkerStartError("the worker pool was closed")
        return worker, cold

    # ---- spares fitted to the queue -----------------------------------------------------------
    @property
    def expected(self) -> int:
        return self._expected

    def expect(self, jobs: int) -> None:
        """``jobs`` jobs are about to be run one after another (a file with several findings):
        when a job ends, spares for the ones still queued start together instead of one import
        per job. 0 ends the batch: spares beyond what is still queued are stopped."""
        with self._lock:
            self._expected = max(0, int(jobs))
        self._trim()

    def _wanted(self) -> int:
        """Warm workers wanted now: one per queued job (at most max_spares), else the one spare."""
        if not self.keep_spare:
            return 0
        return min(self.max_spares, max(1, self._expected + self._waiting))

    def _fill(self) -> None:
        """Start the spares the queue needs (never call while a job is timing)."""
        wanted = self._wanted()
        if wanted < 1 or self._closed:
            return
        self.start_spare()
        with self._lock:
            if self._closed:
                return
            self._extras = [w for w in self._extras if w.alive() or w.kill()]
            try:
                while 1 + len(self._extras) < wanted:
                    self._extras.append(self._spawn())
            except OSError as e:  # the next job reports a worker that cannot start
                _LOG.debug("cannot start another spare worker: %s", e)
        self._trim()

    def _trim(self) -> None:
        """Stop spares beyond what the queue needs (each holds TensorFlow's memory)."""
        with self._lock:
            keep = max(0, self._wanted() - 1)
            excess, self._extras = self._extras[keep:], self._extras[:keep]
        for worker in excess:
            worker.kill()

    def _await_spares(self, cancel) -> None:
        """Wait until no spare is still importing TensorFlow: its import would compete with the
        timed region. A spare that fails to start is dropped (the job that takes it would fail)."""
        with self._lock:
            starting = [w for w in [self._spare, *self._extras] if w is not None and w.ready is None]
        for worker in starting:
            try:
                self._await_ready(worker, cancel)
            except WorkerStartError:
                with self._lock:
                    if self._spare is worker:
                        self._spare = None
                    if worker in self._extras:
                        self._extras.remove(worker)
                worker.kill()

    def close(self) -> None:
        """Kill the spare and any running job's worker; the pool cannot be used afterwards."""
        with self._lock:
            self._closed = True
            spare, self._spare = self._spare, None
            extras, self._extras = self._extras, []
        for extra in extras:
            extra.kill()
        if spare is not None:
            spare.kill()
        current = self._current
        if current is not None:
            current.kill()

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- waiting for `ready` ----------------------------------------------------------------
    def _await_ready(self, w: WorkerProcess, cancel=None, timeout_s: float | None = None) -> dict:
        """The worker's ready message; raises WorkerStartError or _Cancelled."""
        deadline = time.monotonic() + (timeout_s or self.start_timeout_s)
        with w._ready_lock:  # noqa: SLF001 - probe_device and run_job may wait on the same spare
            while w.ready is None:
                if w.start_error:
                    raise WorkerStartError(w.start_error)
                if _cancelled(cancel):
                    raise _Cancelled()
                if time.monotonic() > deadline:
                    w.start_error = (f"the worker did not start within {timeout_s or self.start_timeout_s:g} s"
                                     f" ({' '.join(w.argv)})")
                    continue
                item = w.next_message(POLL_S)
                if item is None:
                    continue
                kind, payload = item
                if kind != "line":
                    w.start_error = (f"the worker {w.exit_description()} while starting "
                                     f"({' '.join(w.argv)})\n{w.stderr_tail(EXIT_WAIT_S)}").rstrip()
                    continue
                try:
                    msg = protocol.check_message(protocol.loads(payload))
                except ProtocolError as e:
                    w.start_error = f"the worker sent garbage while starting: {e}"
                    continue
                if msg["type"] == "fatal":
                    w.start_error = msg["message"]
                elif msg["type"] == "ready":
                    w.ready = msg
                elif msg["type"] == "result" and isinstance(msg["result"].get("error"), dict):
                    w.start_error = str(msg["result"]["error"].get("message"))  # e.g. memory
                else:
                    w.start_error = f"the worker sent {msg['type']!r} before 'ready'"
        return w.ready

    def worker_info(self, timeout_s: float | None = None) -> WorkerInfo:
        """Device, TF and Python of the spare worker (started if needed; not consumed)."""
        with self._lock:
            spare = self._spare if self._spare is not None and self._spare.alive() else None
        if spare is None:
            self.start_spare()
            with self._lock:
                spare = self._spare
        if spare is None:
            raise WorkerStartError("no spare worker (the pool is busy or closed)")
        try:
            msg = self._await_ready(spare, timeout_s=timeout_s)
        except WorkerStartError:
            with self._lock:  # a spare that failed to start is useless: the next call retries
                if self._spare is spare:
                    self._spare = None
            spare.kill()
            raise
        return WorkerInfo(Device.from_dict(msg["device"]), msg["tf_version"], msg.get("python", ""))

    def probe_device(self, timeout_s: float | None = None) -> Device:
        return self.worker_info(timeout_s).device

    # ---- running a job ----------------------------------------------------------------------
    def run_job(self, job: Job, *, on_progress: ProgressFn | None = None, cancel=None,
                timeout_s: float | None = None) -> Result:
        """Run one job in a fresh worker; blocks. `cancel`: a threading/asyncio Event or a
        callable returning True to stop (the worker is killed within POLL_S + reaping)."""
        job.validate()
        with self._lock:
            self._waiting += 1
        try:
            while not self._run_lock.acquire(timeout=POLL_S):
                if _cancelled(cancel):
                    return _finish(error_result("cancelled", "benchmark cancelled before it started"))
        finally:
            with self._lock:
                self._waiting -= 1
        with self._lock:
            self._expected = max(0, self._expected - 1)
        worker = None
        try:
            if self._closed:
                raise RuntimeError("the worker pool is closed")
            try:
                worker, cold = self._take_spare()
                if cold and self._expected + self._waiting > 0:
                    self._fill()  # no warm spare: the queued jobs' workers import alongside this one
            except WorkerStartError as e:
                return _finish(error_result("start", str(e)))
            self._current = worker
            self.last_worker_pid = worker.pid
            return _finish(self._drive(worker, job, on_progress, cancel, timeout_s or self.timeout_s))
        finally:
            self._current = None
            if worker is not None:
                worker.kill()
            self._run_lock.release()
            if self.keep_spare and not self._closed:
                try:
                    self._fill()
                except (WorkerStartError, RuntimeError):
                    pass  # reported by the next job / closed meanwhile

    def _drive(self, w: WorkerProcess, job: Job, on_progress, cancel, timeout_s: float) -> Result:
        try:
            ready = self._await_ready(w, cancel)
            self._await_spares(cancel)
        except _Cancelled:
            return error_result("cancelled", "benchmark cancelled")
        except WorkerStartError as e:
            return error_result("start", str(e))
        env = {"device": Device.from_dict(ready["device"]), "tf_version": ready["tf_version"],
               "python": ready.get("python")}
        if not w.send(protocol.job_msg(job)):
            return error_result("crash", f"the worker {w.exit_description()} before taking the job",
                                stderr_tail=w.stderr_tail(EXIT_WAIT_S), **env)
        start = time.monotonic()
        deadline = start + timeout_s
        last_progress = "started"
        limit = self.memory_limit_mb * 2**20 if self.memory_limit_mb else None
        while True:
            if _cancelled(cancel):
                w.kill()
                return error_result("cancelled", "benchmark cancelled", **env)
            if time.monotonic() > deadline:
                w.kill()
                return error_result("timeout", f"timed out after {timeout_s:g} s (last step: "
                                    f"{last_progress}); the code may hang or be too slow for the "
                                    "time limit", stderr_tail=w.stderr_tail(), **env)
            rss = w.rss_bytes() if limit else None
            if rss is not None and rss > limit:
                w.kill()
                return error_result("memory", _memory_message(rss, self.memory_limit_mb),
                                    stderr_tail=w.stderr_tail(), **env)
            item = w.next_message(POLL_S)
            if item is None:
                continue
            kind, payload = item
            if kind == "oversize" or w.bytes_read > self.max_output_bytes:
                w.kill()
                return error_result("output-limit", "the worker wrote more than the protocol "
                                    f"allows ({self.max_line_bytes} bytes a line, "
                                    f"{self.max_output_bytes} in all)", **env)
            if kind == "eof":
                if self._closed:
                    return error_result("cancelled", "the benchmark pool was closed", **env)
                how = w.exit_description()
                tail = w.stderr_tail(EXIT_WAIT_S)
                frames = native_frames(tail, job)
                at = f" at {frames[-1].where} line {frames[-1].line}: {frames[-1].code}" if frames else ""
                return error_result("crash", f"the worker {how}{at} before sending a result "
                                    f"(last step: {last_progress})", stderr_tail=tail,
                                    frames=frames, variant=variant_of(frames), **env)
            try:
                msg = protocol.check_message(protocol.loads(payload))
                if msg["type"] == "progress":
                    last_progress = msg["message"]
                    _report(on_progress, float(msg["fraction"]), msg["message"])
                    continue
                if msg["type"] == "result":
                    res = Result.from_dict(msg["result"])
                    for key, value in env.items():  # the worker's watchdog sends a bare result
                        if getattr(res, key) is None:
                            setattr(res, key, value)
                    return res
                raise ProtocolError(f"unexpected message {msg['type']!r} during a job")
            except ProtocolError as e:
                w.kill()
                return error_result("protocol", f"the worker broke the protocol: {e}",
                                    stderr_tail=w.stderr_tail(), **env)

    # ---- asyncio ----------------------------------------------------------------------------
    async def run_job_async(self, job: Job, *, on_progress: ProgressFn | None = None,
                            cancel=None, timeout_s: float | None = None) -> Result:
        """run_job on a thread. on_progress runs on the event loop (a coroutine function is
        scheduled as a task). Cancelling the awaiting task kills the worker, then re-raises."""
        loop = asyncio.get_running_loop()
        stop = threading.Event()
        fut: asyncio.Future = loop.create_future()

        def progress(fraction: float, message: str) -> None:
            if on_progress is not None:
                _call_soon(loop, _deliver, on_progress, fraction, message)

        def body() -> None:
            try:
                res = self.run_job(job, on_progress=progress, timeout_s=timeout_s,
                                   cancel=lambda: stop.is_set() or _cancelled(cancel))
                _call_soon(loop, _settle, fut, res, None)
            except BaseException as e:  # noqa: BLE001 - handed to the awaiting task
                _call_soon(loop, _settle, fut, None, e)

        job.validate()  # raise JobError in the caller's task, not on a thread
        threading.Thread(target=body, name="tfperf-bench-job", daemon=True).start()
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            stop.set()
            try:  # wait for the kill so no process outlives the cancelled request
                await asyncio.wait_for(asyncio.shield(fut), timeout=5.0)
            except BaseException:  # noqa: BLE001
                pass
            raise

    async def worker_info_async(self, timeout_s: float | None = None) -> WorkerInfo:
        return await asyncio.get_running_loop().run_in_executor(None, self.worker_info, timeout_s)

    async def probe_device_async(self, timeout_s: float | None = None) -> Device:
        return (await self.worker_info_async(timeout_s)).device


class _Cancelled(Exception):
    pass


def _report(on_progress, fraction: float, message: str) -> None:
    if on_progress is None:
        return
    try:
        on_progress(fraction, message)
    except Exception:  # noqa: BLE001 - a broken progress display must not stop the benchmark
        _LOG.exception("tfperf benchmark progress callback failed")


def _finish(result: Result) -> Result:
    if not result.summary or result.verdict == "error":
        result.summary = report.summarize(result)
    return result


def _memory_message(rss: int, limit_mb: int) -> str:
    return (f"memory limit exceeded: the worker reached {rss / 2**20:.0f} MB resident "
            f"(limit {limit_mb} MB, including about 0.5 GB for TensorFlow itself)")


def _call_soon(loop, fn, *args) -> None:
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # the loop is closed: nobody is waiting any more
        pass


def _deliver(callback, fraction: float, message: str) -> None:
    out = callback(fraction, message)
    if inspect.isawaitable(out):
        asyncio.ensure_future(out)


def _settle(fut: asyncio.Future, result, exc) -> None:
    if fut.done():
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(result)


def probe_device(command: list[str] | None = None, *, timeout_s: float = START_TIMEOUT_S,
                 cwd: str | None = None, env: dict | None = None) -> Device:
    """Start a worker, ask for its device with a `probe` message, stop it."""
    return probe_worker(command, timeout_s=timeout_s, cwd=cwd, env=env).device


def probe_worker(command: list[str] | None = None, *, timeout_s: float = START_TIMEOUT_S,
                 cwd: str | None = None, env: dict | None = None, ship: bool | None = None) -> WorkerInfo:
    """Like probe_device, with the worker's TensorFlow and Python versions."""
    pool = WorkerPool(command, memory_limit_mb=None, keep_spare=False, cwd=cwd, env=env,
                      start_timeout_s=timeout_s, ship=ship)
    w = pool._spawn()  # noqa: SLF001
    try:
        pool._await_ready(w)  # noqa: SLF001
        w.send(protocol.PROBE_MSG)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            item = w.next_message(POLL_S)
            if item is None:
                continue
            if item[0] != "line":
                raise WorkerStartError(f"the worker {w.exit_description()} during the probe\n"
                                       f"{w.stderr_tail(EXIT_WAIT_S)}")
            msg = protocol.check_message(protocol.loads(item[1]))
            if msg["type"] == "device":
                return WorkerInfo(Device.from_dict(msg["device"]), msg["tf_version"],
                                  msg.get("python", ""))
        raise WorkerStartError(f"no answer to the probe within {timeout_s:g} s")
    finally:
        w.kill()
