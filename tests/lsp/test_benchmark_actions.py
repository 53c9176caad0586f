"""The benchmark code action: offered for findings with something to measure, disabled with the
reason in an untrusted workspace, and it never starts a worker (only an explicit benchmark or
probe does: issue 15, point 1)."""
import textwrap
from types import SimpleNamespace

from lsprotocol import types

import pytest

from tfperf_lsp.engine import analyze
from tfperf_lsp.lsp.features import benchmark as benchmark_feature
from tfperf_lsp.lsp.features.benchmark import UNTRUSTED, benchmark_actions
from tfperf_lsp.lsp.state import DocumentResult

CODE = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def f(x):
        print("running", x)
        return x

    @tf.function
    def g(x, step):
        return x * tf.cast(step, tf.float32)

    for step in range(3):
        g(tf.ones([2]), step)
    """
)


class CountingBench:
    """Stands in for the BenchService: any use of it counts as starting something."""

    def __init__(self, state):
        self._state = state

    def __getattr__(self, name):
        self._state.warmed += 1
        return lambda *a, **k: None


class FakeState:
    def __init__(self, trusted):
        self.trusted = trusted
        self.warmed = 0
        self.bench = CountingBench(self)


@pytest.fixture(autouse=True)
def no_warm_spare_any_more():
    assert not hasattr(benchmark_feature, "warm_spare")


def actions_for(code, trusted):
    analysis = analyze(CODE)
    result = DocumentResult(1, analysis, frozenset())
    ls = SimpleNamespace(state=FakeState(trusted))
    finding = next(f for f in analysis.findings if f.code == code)
    diagnostic = types.Diagnostic(range=types.Range(start=types.Position(0, 0), end=types.Position(0, 1)), message="")
    return ls.state, benchmark_actions(ls, "file:///x.py", result, finding, diagnostic)


def test_trusted_offers_the_benchmark_and_starts_nothing():
    state, actions = actions_for("TFP101", trusted=True)
    assert [a.title for a in actions] == ["Benchmark original vs pass tf.constant(step)"]
    assert actions[0].disabled is None
    assert actions[0].command.command == "tfperf.benchmark"
    assert actions[0].command.arguments == ["file:///x.py", "TFP101@12:20"]
    assert state.warmed == 0


def test_untrusted_disables_it_with_the_reason_and_starts_nothing():
    state, actions = actions_for("TFP101", trusted=False)
    assert actions[0].disabled.reason == UNTRUSTED
    assert state.warmed == 0


def test_findings_without_anything_to_measure_get_no_benchmark():
    code = "import tensorflow as tf\ny = 2.0\n\n@tf.function\ndef power(x):\n    return x ** y\n\npower(2.0)\ny = 3.0\npower(2.0)\n"
    analysis = analyze(code)
    finding = next(f for f in analysis.findings if f.code == "TFP201")  # no rewrite, not an opportunity
    ls = SimpleNamespace(state=FakeState(True))
    diagnostic = types.Diagnostic(range=types.Range(start=types.Position(0, 0), end=types.Position(0, 1)), message="")
    assert benchmark_actions(ls, "file:///x.py", DocumentResult(1, analysis, frozenset()), finding, diagnostic) == []
    assert ls.state.warmed == 0
