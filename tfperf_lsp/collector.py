"""The cyclic garbage collector, paused while an analysis runs.

An analysis allocates a burst of objects (a 2,000-line file: about 300,000 syntax nodes, their
dicts and the facts' lists) that all stay alive until it ends and are then freed by reference
counting. The collector's passes during that burst scan them again and again and free nothing:
on the 2k-line examples file they took a quarter of a fresh analysis on average (a full pass,
every fifth analysis, about 50 ms), and they made the slowest keystrokes. mypy raises its
collector's thresholds around a build for the same reason.

Pausing is counted, so analyses running in several threads (the language server's) turn the
collector back on only when the last one ends, and never when the caller had turned it off.

Between analyses the youngest generation is collected every 50,000 allocations instead of 700.
An analysis leaves the objects of the new version (tens of thousands of nodes, lists and
findings) in the youngest generation, with the previous version freed: at the default, the next
allocation after every analysis scanned them all, and every tenth analysis scanned the last ten
again in the middle generation. On the 2k-line file that was 1.6-1.8 ms of a 22 ms keystroke;
with the higher threshold 0.4 ms, and under 0.05 ms once a session's versions stopped leaving
cycles behind (tests/test_session.py): what waits for the collector is little and bounded by the
threshold. A caller's higher threshold is kept.
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_running = 0
_resume = False  # whether the collector was on when the first running analysis paused it
YOUNGEST_THRESHOLD = 50_000


@contextmanager
def paused() -> Iterator[None]:
    global _running, _resume
    with _lock:
        if _running == 0:
            _resume = gc.isenabled()
            gc.disable()
            youngest, *older = gc.get_threshold()
            if youngest < YOUNGEST_THRESHOLD:
                gc.set_threshold(YOUNGEST_THRESHOLD, *older)
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0 and _resume:
                gc.enable()
