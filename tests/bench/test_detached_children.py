"""Issue 15 point 9: user code that forks, calls setsid() and double-forks keeps the worker's
pipes open. Killing the job must still return at once, take the detached child along, and leave
the pool able to run the next job."""
import os
import sys
import threading
import time

from tfperf_lsp.bench import Job, Variant, WorkerPool

FAKE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lsp", "fake_worker.py")
JOB = Job(prelude="x = 1\n", variants=[Variant("original", "def __tfperf_run__():\n    return x\n"),
                                       Variant("rewritten", "def __tfperf_run__():\n    return 1\n")])


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_detached_grandchild_neither_wedges_the_pool_nor_outlives_the_job(tmp_path):
    env = {"FAKE_MODE": "setsid-child", "FAKE_MARKER_DIR": str(tmp_path)}
    pool = WorkerPool([sys.executable, FAKE], memory_limit_mb=None, keep_spare=False, env=env, timeout_s=60)
    cancel = threading.Event()
    results = []
    runner = threading.Thread(target=lambda: results.append(pool.run_job(JOB, cancel=cancel)), daemon=True)
    runner.start()
    detached = []
    for _ in range(400):
        detached = [int(n.split("-")[1]) for n in os.listdir(tmp_path) if n.startswith("detached-")]
        if detached:
            break
        time.sleep(0.025)
    assert detached, "the stand-in never detached its child"
    assert os.getsid(detached[0]) != os.getsid(0)  # really in a session of its own
    cancel.set()
    runner.join(10)
    try:
        assert not runner.is_alive(), "killing the worker blocked on a pipe the detached child holds"
        assert results[0].error.kind == "cancelled"
        for _ in range(100):
            if not alive(detached[0]):
                break
            time.sleep(0.02)
        assert not alive(detached[0]), "the detached child outlived its job"
        pool.configure(env={"FAKE_MODE": "ok", "FAKE_MARKER_DIR": str(tmp_path)})
        assert pool.run_job(JOB).verdict == "faster"  # the next benchmark still answers
    finally:
        pool.close()
        for pid in detached:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
