"""/proc helpers of the benchmark tests: which processes exist, whose children they are."""
from __future__ import annotations

import os


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


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
