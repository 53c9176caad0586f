"""The garbage collector is paused while an analysis runs, and only then (tfperf_lsp.collector)."""
import gc
import threading

from tfperf_lsp import collector
from tfperf_lsp.engine import analyze
from tfperf_lsp.model import Severity
from tfperf_lsp.rules import Rule


class Probe(Rule):
    """Records whether the collector ran during the analysis; can wait for a signal or raise."""

    code = "TFP998"
    name = "probe"
    category = "graph"
    severity = Severity.WARNING

    def __init__(self, started=None, release=None, error=False):
        self.seen: list[bool] = []
        self.started, self.release, self.error = started, release, error

    def check(self, ctx):
        self.seen.append(gc.isenabled())
        if self.started is not None:
            self.started.set()
            self.release.wait(5)
        if self.error:
            raise RuntimeError("boom")
        return []


def test_an_analysis_runs_with_the_collector_off_and_turns_it_back_on():
    assert gc.isenabled()
    probe = Probe()
    analyze("x = 1\n", rules=[probe])
    assert probe.seen == [False]
    assert gc.isenabled()


def test_a_rule_that_raises_leaves_the_collector_on():
    probe = Probe(error=True)
    analysis = analyze("x = 1\n", rules=[probe])
    assert analysis.rule_errors and probe.seen == [False]
    assert gc.isenabled()


def test_the_collector_stays_off_when_the_caller_had_turned_it_off():
    gc.disable()
    try:
        analyze("x = 1\n", rules=[Probe()])
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_concurrent_analyses_turn_it_back_on_when_the_last_one_ends():
    started, release = threading.Event(), threading.Event()
    slow = Probe(started, release)
    worker = threading.Thread(target=analyze, args=("x = 1\n",), kwargs={"rules": [slow]})
    worker.start()
    try:
        assert started.wait(5)
        quick = Probe()
        analyze("y = 2\n", rules=[quick])  # ends while the other analysis still runs
        assert quick.seen == [False]
        assert not gc.isenabled()
    finally:
        release.set()
        worker.join(5)
    assert gc.isenabled()


def test_paused_nests():
    with collector.paused():
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_between_analyses_the_youngest_generation_is_collected_less_often():
    """An analysis leaves tens of thousands of new objects in the youngest generation: at the
    default threshold (700) the next allocation scanned them all after every keystroke."""
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        analyze("x = 1\n", rules=[Probe()])
        assert gc.get_threshold() == (collector.YOUNGEST_THRESHOLD, 10, 10)
        gc.set_threshold(10 * collector.YOUNGEST_THRESHOLD, 5, 5)  # a caller's higher one stays
        analyze("x = 1\n", rules=[Probe()])
        assert gc.get_threshold() == (10 * collector.YOUNGEST_THRESHOLD, 5, 5)
    finally:
        gc.set_threshold(*saved)
