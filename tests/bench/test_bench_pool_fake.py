"""WorkerPool mechanics against a fake worker (no TensorFlow): every failure is a Result,
kills are fast, and no process is left behind."""
import asyncio
import os
import subprocess
import sys
import threading
import time

import pytest

from bench_procs import PROMPT_S, is_gone, wait_gone, worker_children_of
from tfperf_lsp.bench import Job, JobError, Variant, WorkerPool

FAKE = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_fake_worker.py")]
RUN = "def __tfperf_run__():\n    return 1\n"
JOB = Job(prelude="", variants=[Variant("original", RUN), Variant("rewritten", RUN)], budget_s=1.0)


@pytest.fixture
def make_pool(no_leaks):
    pools = []

    def make(mode="ok", **kw):
        env = {"FAKE_MODE": mode, **kw.pop("env", {})}
        kw.setdefault("start_timeout_s", 120)  # a Python start on a loaded machine, not a hang
        kw.setdefault("ship", False)  # the fake worker is a script of its own, not shipped code
        pool = WorkerPool(kw.pop("command", FAKE), env=env, **kw)
        pools.append(pool)
        return pool

    yield make
    for p in pools:
        p.close()


def assert_reaped(pool):
    assert pool.last_worker_pid is not None and is_gone(pool.last_worker_pid)


def test_a_job_returns_the_workers_result_with_progress_and_keeps_a_fresh_spare(make_pool):
    pool = make_pool()
    seen = []
    res = pool.run_job(JOB, on_progress=lambda f, m: seen.append((f, m)))
    assert res.verdict == "faster" and res.comparisons[0].speedup == 2.0
    assert [m for _, m in seen] == ["step 0", "step 1", "step 2"]
    assert_reaped(pool)
    # the spare was replaced after the job: exactly one live child, not the job's worker
    kids = worker_children_of(os.getpid())
    assert len(kids) == 1 and kids[0] != pool.last_worker_pid


def test_the_spare_answers_device_questions_without_being_used_up(make_pool):
    pool = make_pool(memory_limit_mb=1234)
    info = pool.worker_info()
    assert info.device.name == "Fake CPU" and info.tf_version == "0.0-fake"
    assert "--memory-limit-mb 1234" in info.device.platform   # the limit reaches the worker
    spare = pool._spare.pid
    assert pool.probe_device().name == "Fake CPU"
    assert pool._spare.pid == spare


def test_the_probe_message_is_answered(no_leaks):
    from tfperf_lsp.bench import probe_worker
    info = probe_worker(FAKE, ship=False)
    assert info.device.name == "Fake CPU" and info.python == "3.x"


def test_a_worker_that_cannot_start_is_an_error_result(make_pool):
    res = make_pool("fatal").run_job(JOB)
    assert res.verdict == "error" and res.error.kind == "start"
    assert "No module named 'tensorflow'" in res.error.message
    res = make_pool("crash-on-start").run_job(JOB)
    assert res.error.kind == "start"
    assert "exited with code 1" in res.error.message and "boom at start" in res.error.message
    res = make_pool(command=["/nonexistent/python"]).run_job(JOB)
    assert res.error.kind == "start" and "/nonexistent/python" in res.error.message


def test_worker_info_raises_a_clear_error_when_the_worker_cannot_start(make_pool):
    from tfperf_lsp.bench import WorkerStartError
    with pytest.raises(WorkerStartError, match="No module named 'tensorflow'"):
        make_pool("fatal").worker_info()


def test_garbage_on_the_stream_is_a_protocol_error(make_pool):
    pool = make_pool("garbage")
    res = pool.run_job(JOB)
    assert res.error.kind == "protocol" and "not a JSON line" in res.error.message
    assert_reaped(pool)


def test_an_oversized_line_is_an_output_limit_error(make_pool):
    pool = make_pool("oversize")
    res = pool.run_job(JOB)
    assert res.error.kind == "output-limit"
    assert_reaped(pool)


def test_a_worker_that_exits_is_a_crash_with_its_stderr(make_pool):
    pool = make_pool("exit")
    res = pool.run_job(JOB)
    assert res.error.kind == "crash"
    assert "exited with code 5" in res.error.message
    assert "dying now" in res.error.stderr_tail
    res = pool.run_job(JOB)  # the next job gets a new worker
    assert "exited with code 5" in res.error.message


def test_a_segfault_names_the_signal(make_pool):
    res = make_pool("segv").run_job(JOB)
    assert res.error.kind == "crash" and "SIGSEGV" in res.error.message


def test_a_hang_times_out_and_the_whole_process_group_dies(make_pool):
    pool = make_pool("grandchild")
    # 10 s, not 1: on a stalled machine the fake worker's fork of its grandchild and its first
    # progress line took longer than 1 s, so the job ended before "hanging" was reported.
    timeout_s = 10.0
    t0 = time.monotonic()
    res = pool.run_job(JOB, timeout_s=timeout_s)
    took = time.monotonic() - t0
    assert res.error.kind == "timeout" and "timed out after 10 s" in res.error.message
    assert "last step: hanging" in res.error.message
    assert took < timeout_s + PROMPT_S  # the worker hangs forever: only the timeout ends the job
    grandchild = int(res.error.stderr_tail.split("grandchild ")[1].split()[0])
    assert wait_gone(grandchild), "a process started by the user's code survived the kill"
    assert_reaped(pool)


def test_cancel_kills_the_worker_long_before_the_job_timeout(make_pool):
    pool = make_pool("hang")
    pool.worker_info()  # spare ready, so the job starts at once
    cancel = threading.Event()
    started = threading.Event()
    fired = []

    def fire():
        started.wait(PROMPT_S)
        fired.append(time.monotonic())
        cancel.set()

    threading.Thread(target=fire).start()
    res = pool.run_job(JOB, cancel=cancel, on_progress=lambda f, m: started.set())
    assert res.error.kind == "cancelled"
    assert time.monotonic() - fired[0] < PROMPT_S  # the worker hangs; the job timeout is 60 s
    assert_reaped(pool)


def test_a_callable_cancel_token_works_too(make_pool):
    pool = make_pool("hang")
    t0 = time.monotonic()
    res = pool.run_job(JOB, cancel=lambda: time.monotonic() - t0 > 0.5)
    assert res.error.kind == "cancelled"


def test_the_memory_limit_is_enforced_from_the_server_side(make_pool):
    pool = make_pool("memory", memory_limit_mb=300)
    res = pool.run_job(JOB, timeout_s=300)
    assert res.error.kind == "memory"
    assert "limit 300 MB" in res.error.message
    assert_reaped(pool)


def test_a_stderr_flood_is_not_forwarded_line_by_line(make_pool):
    logged = []
    pool = make_pool("stderrflood", log=logged.append)
    res = pool.run_job(JOB)
    assert res.verdict == "faster"
    time.sleep(0.2)
    assert 300 <= len(logged) <= 302 and "not forwarded" in logged[-1]


def test_jobs_run_one_at_a_time(make_pool):
    pool = make_pool(env={"FAKE_STEP_S": "0.15"})
    results = []
    threads = [threading.Thread(target=lambda: results.append(pool.run_job(JOB))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == 2 and all(r.verdict == "faster" for r in results)
    (a, b) = sorted((r.timing["start"], r.timing["end"]) for r in results)
    assert a[1] <= b[0], "two jobs overlapped"


def test_an_invalid_job_raises_before_any_process_starts(make_pool):
    pool = make_pool()
    with pytest.raises(JobError):
        pool.run_job(Job(prelude="", variants=[Variant("only", RUN)]))
    assert worker_children_of(os.getpid()) == []


def test_configure_replaces_the_spare_when_the_command_changes(make_pool):
    pool = make_pool()
    pool.start_spare()
    first = pool._spare.pid
    pool.configure(timeout_s=5)           # timing settings do not restart it
    assert pool._spare.pid == first
    pool.configure(memory_limit_mb=999)   # how it starts does
    assert pool._spare.pid != first
    assert is_gone(first)
    assert "--memory-limit-mb 999" in pool.worker_info().device.platform
    with pytest.raises(TypeError):
        pool.configure(nonsense=1)


async def test_async_run_delivers_progress_on_the_loop(make_pool):
    pool = make_pool()
    loop_thread = []
    res = await pool.run_job_async(JOB, on_progress=lambda f, m: loop_thread.append(threading.get_ident()))
    assert res.verdict == "faster"
    assert loop_thread and set(loop_thread) == {threading.get_ident()}


async def test_async_cancellation_kills_the_worker_and_reraises(make_pool):
    pool = make_pool("hang")
    await pool.worker_info_async()
    started = asyncio.Event()
    task = asyncio.ensure_future(pool.run_job_async(JOB, on_progress=lambda f, m: started.set()))
    await asyncio.wait_for(started.wait(), PROMPT_S)
    t0 = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - t0 < PROMPT_S  # the worker hangs; the job timeout is 60 s
    assert_reaped(pool)


async def test_async_cancel_event(make_pool):
    pool = make_pool("hang")
    stop = asyncio.Event()
    asyncio.get_running_loop().call_later(0.5, stop.set)
    res = await pool.run_job_async(JOB, cancel=stop)
    assert res.error.kind == "cancelled"


def test_the_real_worker_without_tensorflow_says_so(no_leaks):
    # `python -S` skips site-packages: the real worker starts, but TensorFlow is missing
    with WorkerPool([sys.executable, "-S"], keep_spare=False) as pool:
        res = pool.run_job(JOB)
    assert res.error.kind == "start"
    assert "could not import TensorFlow" in res.error.message
    assert "No module named 'tensorflow'" in res.error.message


def test_the_worker_path_exposes_only_our_package():
    from tfperf_lsp.bench.procs import package_path, worker_env
    first = worker_env()["PYTHONPATH"].split(os.pathsep)[0]
    assert first == package_path()
    assert os.listdir(first) == ["tfperf_lsp"]   # nothing else of the server's can shadow
    import tfperf_lsp
    assert os.path.realpath(os.path.join(first, "tfperf_lsp")) == os.path.realpath(tfperf_lsp.__path__[0])


# ---- spares fitted to the queue (issue 11: one TensorFlow import per file, not per finding) -----
def events(log):
    found = []
    for line in log.read_text().splitlines():
        event, pid, when = line.split()
        found.append((event, int(pid), float(when)))
    return found


def assert_no_import_during_a_job(found):
    """No worker was between its start and its ready while another worker took its job."""
    starts = {pid: when for event, pid, when in found if event == "start"}
    readies = {pid: when for event, pid, when in found if event == "ready"}
    for event, pid, when in found:
        if event != "job":
            continue
        for other, started in starts.items():
            if other != pid and started < when:
                assert readies.get(other, float("inf")) <= when, f"worker {other} was importing while {pid} took its job"


def test_a_warm_batch_starts_the_queued_jobs_spares_together_after_the_first_job(make_pool, tmp_path):
    log = tmp_path / "events"
    pool = make_pool(env={"FAKE_LOG": str(log), "FAKE_START_S": "0.3"}, max_spares=3)
    pool.worker_info()  # the spare is warm
    pool.expect(3)
    results = [pool.run_job(JOB) for _ in range(3)]
    assert [r.verdict for r in results] == ["faster"] * 3
    found = events(log)
    jobs = [pid for event, pid, _ in found if event == "job"]
    assert len(set(jobs)) == 3  # a fresh worker for every job
    starts = {pid: when for event, pid, when in found if event == "start"}
    first_job = next(when for event, _, when in found if event == "job")
    # the first job did not wait for extra imports; the 2nd and 3rd job's workers started
    # together after it (one import's wait, not two)
    job_times = [when for event, _, when in found if event == "job"]
    assert starts[jobs[1]] > first_job and starts[jobs[2]] > first_job
    assert starts[jobs[2]] < job_times[1]  # the third job's worker was not started after the second job
    assert_no_import_during_a_job(found)
    pool.expect(0)
    assert len(worker_children_of(os.getpid())) == 1  # back to the one spare


def test_a_cold_batch_starts_every_queued_worker_with_the_first(make_pool, tmp_path):
    log = tmp_path / "events"
    pool = make_pool(env={"FAKE_LOG": str(log), "FAKE_START_S": "0.3"}, max_spares=3)
    pool.expect(3)
    assert worker_children_of(os.getpid()) == []  # announcing jobs starts nothing
    results = [pool.run_job(JOB) for _ in range(3)]
    assert [r.verdict for r in results] == ["faster"] * 3
    found = events(log)
    jobs = [pid for event, pid, _ in found if event == "job"]
    starts = {pid: when for event, pid, when in found if event == "start"}
    first_job = next(when for event, _, when in found if event == "job")
    assert all(starts[pid] < first_job for pid in jobs)
    assert_no_import_during_a_job(found)


def test_spares_are_bounded_and_an_ended_batch_stops_the_extras(make_pool):
    pool = make_pool(max_spares=2)
    pool.expect(5)
    pool.run_job(JOB)
    assert len(worker_children_of(os.getpid())) == 2  # bounded by max_spares, not 4
    pool.expect(0)  # the batch was cancelled
    assert len(worker_children_of(os.getpid())) == 1


def test_calls_waiting_for_the_running_job_count_as_queued(make_pool):
    pool = make_pool(env={"FAKE_MODE": "ok"}, max_spares=3)
    slow = Job(prelude="", variants=JOB.variants, budget_s=1.0)
    pool._waiting = 2  # two other run_job calls blocked behind this one  # noqa: SLF001
    pool.run_job(slow)
    assert len(worker_children_of(os.getpid())) == 2  # one warm worker for each of the two
    pool._waiting = 0  # noqa: SLF001
    pool.expect(0)
    assert len(worker_children_of(os.getpid())) == 1


def test_the_service_announces_a_batch_and_cached_results_need_no_spare(tmp_path):
    from tfperf_lsp.bench.cache import ResultCache
    from tfperf_lsp.bench.service import BenchService

    service = BenchService(cache=ResultCache(str(tmp_path)))
    service.expect(0)
    assert service._pool is None  # noqa: SLF001 - ending nothing creates no pool
    service.expect(3)
    assert service.pool.expected == 3 and worker_children_of(os.getpid()) == []  # nothing starts yet
    service.skip_expected()  # a cached result (or no plan): one worker fewer
    assert service.pool.expected == 2
    service.close()


def test_a_worker_that_dies_slowly_is_still_reaped(monkeypatch):
    """kill() waits 1 s for the process to go; a TensorFlow worker on a stalled machine took
    longer to tear its memory down. It must still be reaped (no zombie left in the server)."""
    from tfperf_lsp.bench.procs import WorkerProcess

    worker = WorkerProcess([sys.executable, "-c", "import time; time.sleep(1000)"])
    real_wait = worker.proc.wait

    def slow_wait(timeout=None):
        if timeout is not None:  # the kill's bounded wait: as if the process had not finished
            raise subprocess.TimeoutExpired(worker.argv, timeout)
        return real_wait()

    monkeypatch.setattr(worker.proc, "wait", slow_wait)
    worker.kill()
    assert wait_gone(worker.pid), "the killed worker was left a zombie"
