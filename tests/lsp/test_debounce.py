"""The wait after a keystroke follows how long the document's last analysis took."""
from tfperf_lsp.lsp.state import DEBOUNCE_SECONDS, ServerState

LOW, HIGH = DEBOUNCE_SECONDS


def test_a_fast_document_waits_the_least_and_a_slow_one_the_most(tmp_path):
    state = ServerState(server=None)
    small, large = f"file://{tmp_path}/small.py", f"file://{tmp_path}/large.py"
    assert state.debounce_seconds(small) == HIGH  # never analysed: nothing known yet
    state.analyze(small, 1, "import tensorflow as tf\nx = tf.ones([2])\n")
    state.analyze(large, 1, "import tensorflow as tf\n")
    state.sessions[small].last_seconds = 0.001
    state.sessions[large].last_seconds = 5.0
    assert state.debounce_seconds(small) == LOW
    assert state.debounce_seconds(large) == HIGH
    state.sessions[large].last_seconds = (LOW + HIGH) / 2
    assert state.debounce_seconds(large) == (LOW + HIGH) / 2


def test_the_session_records_how_long_an_update_took(tmp_path):
    state = ServerState(server=None)
    uri = f"file://{tmp_path}/m.py"
    state.analyze(uri, 1, "import tensorflow as tf\n" + "y = tf.ones([2])\n" * 200)
    assert 0 < state.sessions[uri].last_seconds < 60
    state.forget(uri)
    assert state.debounce_seconds(uri) == HIGH
