"""While a file does not parse, findings on unchanged lines stay (moved), others go."""
import textwrap

from tfperf_lsp.session import DocumentSession

GOOD = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def f(x):
        print("a")
        return x

    @tf.function
    def g(x):
        print("b")
        return x
    """
)


def test_findings_are_kept_and_moved_while_the_file_is_broken():
    session = DocumentSession()
    good = session.update(GOOD)
    assert [f.span.start.line for f in good.findings] == [4, 9]
    broken = GOOD.replace('print("a")', 'print("a"').replace("import tensorflow as tf\n", "import tensorflow as tf\n\n")
    analysis = session.update(broken)
    assert analysis.parse_error is not None and analysis.stale
    # line 4 changed (it is where the typing happens): dropped; line 9 moved to 10
    assert [f.span.start.line for f in analysis.findings] == [10]
    assert all(f.fix_title is None for f in analysis.findings)  # fixes were for other text


def test_recovers_when_the_error_is_fixed():
    session = DocumentSession()
    session.update(GOOD)
    session.update(GOOD + "def broken(:\n")
    fixed = session.update(GOOD + "def fine():\n    pass\n")
    assert not fixed.stale and len(fixed.findings) == 2


def test_broken_from_the_start_has_nothing_to_keep():
    analysis = DocumentSession().update("def f(:\n")
    assert analysis.findings == [] and analysis.parse_error is not None
