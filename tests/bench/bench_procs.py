"""/proc helpers of the benchmark tests: which processes exist, whose children they are."""
from __future__ import annotations

import os
import time

# How soon "promptly" is in these tests: a kill, a cancel or a job timeout must land within this
# many seconds. It is far below what it must beat (a hang that never ends, the pool's 60 s job
# timeout), and far above what a loaded machine needs: bounds of 1-2.5 s failed on a shared 2-core
# CI machine that ran Python ~15x slower than usual. Speed itself is measured by benchmarks/.
PROMPT_S = 30.0


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgrp) of a process, None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = data[data.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[2])


def all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def children_of(pid: int) -> list[int]:
    """Direct children, zombies included (an unreaped child is a leak too)."""
    return [p for p in all_pids() if (s := _stat(p)) is not None and s[1] == pid]


def worker_children_of(pid: int) -> list[int]:
    """Children that are benchmark workers (real or fake): other tests of the same session may
    leave unrelated helpers alive (jedi keeps an inference subprocess, for one)."""
    found = []
    for child in children_of(pid):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                command = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        if "tfperf_lsp.bench.worker" in command or "bench_fake_worker" in command:
            found.append(child)
    return found


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group."""
    return [p for p in all_pids() if (s := _stat(p)) is not None and s[2] == pgid and s[0] != "Z"]


def is_gone(pid: int) -> bool:
    s = _stat(pid)
    return s is None or s[0] == "Z" and s[1] != os.getpid()


def eventually(condition, within_s: float = PROMPT_S) -> bool:
    """Whether `condition()` holds within `within_s`: a killed process takes a while to be gone
    (a dying TensorFlow worker tore its memory down for seconds on a stalled machine)."""
    deadline = time.monotonic() + within_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(condition())


def wait_gone(pid: int, within_s: float = PROMPT_S) -> bool:
    """Whether the process is gone within `within_s` (a kill is asynchronous: poll for it)."""
    return eventually(lambda: is_gone(pid), within_s)


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
