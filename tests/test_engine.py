"""Engine behaviour every rule relies on: isolation of failing rules, suppression comments,
settings from pyproject.toml and the editor, syntax errors."""
import textwrap

from tfperf_lsp.config import Settings, settings_for
from tfperf_lsp.engine import analyze, suppression_edit_text
from tfperf_lsp.model import Severity
from tfperf_lsp.rules import ALL_RULES, Rule

CODE = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def f(x):
        print("running", x)
        return x
    """
)


class Broken(Rule):
    code = "TFP999"
    name = "broken"
    category = "graph"
    severity = Severity.WARNING

    def check(self, ctx):
        raise RuntimeError("boom")


def test_a_failing_rule_is_reported_and_the_others_still_run():
    analysis = analyze(CODE, rules=[Broken(), *ALL_RULES])
    assert [code for code, _ in analysis.rule_errors] == ["TFP999"]
    assert "RuntimeError: boom" in analysis.rule_errors[0][1]
    assert [f.code for f in analysis.findings] == ["TFP202"]


def test_suppression_comment_for_one_code():
    silenced = CODE.replace('print("running", x)', 'print("running", x)  # tfperf: ignore[TFP202]')
    assert analyze(silenced).findings == []
    other = CODE.replace('print("running", x)', 'print("running", x)  # tfperf: ignore[TFP101]')
    assert [f.code for f in analyze(other).findings] == ["TFP202"]
    bare = CODE.replace('print("running", x)', 'print("running", x)  # tfperf: ignore')
    assert analyze(bare).findings == []


def test_suppression_edit_adds_to_an_existing_comment():
    assert suppression_edit_text("x = 1", "TFP101") == "x = 1  # tfperf: ignore[TFP101]"
    assert suppression_edit_text("x = 1  # tfperf: ignore[TFP101]", "TFP202") == "x = 1  # tfperf: ignore[TFP101, TFP202]"
    assert suppression_edit_text("x = 1  # tfperf: ignore[TFP101]", "TFP101") == "x = 1  # tfperf: ignore[TFP101]"


def test_settings_disable_and_change_severity():
    off = Settings().with_overrides({"rules": {"TFP202": "off"}})
    assert analyze(CODE, settings=off).findings == []
    error = Settings().with_overrides({"rules": {"TFP202": "error"}})
    assert analyze(CODE, settings=error).findings[0].severity is Severity.ERROR
    by_category = Settings().with_overrides({"ignore": ["correctness"]})
    assert analyze(CODE, settings=by_category).findings == []
    only_retrace = Settings().with_overrides({"select": ["retrace"]})
    assert analyze(CODE, settings=only_retrace).findings == []


def test_invalid_settings_are_reported_not_fatal():
    settings = Settings().with_overrides({"rules": {"TFP202": "loud"}, "ignore": ["nonsense"]})
    assert len(settings.problems) == 2
    assert [f.code for f in analyze(CODE, settings=settings).findings] == ["TFP202"]


def test_pyproject_settings_apply_and_editor_settings_win(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tfperf]\nignore = ["TFP202"]\n[tool.tfperf.rules]\nTFP101 = "error"\n')
    sub = tmp_path / "pkg"
    sub.mkdir()
    path = str(sub / "model.py")
    settings = settings_for(path)
    assert not settings.is_enabled("TFP202", "correctness")
    assert settings.severity_for("TFP101", Severity.WARNING) is Severity.ERROR
    editor = settings_for(path, {"rules": {"TFP202": "hint"}})
    assert editor.is_enabled("TFP202", "correctness")


def test_broken_pyproject_is_a_problem_message(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.tfperf\n")
    settings = settings_for(str(tmp_path / "x.py"))
    assert settings.problems and "cannot read" in settings.problems[0]


def test_syntax_error_gives_no_findings_and_no_exception():
    analysis = analyze("def f(:\n")
    assert analysis.findings == [] and analysis.parse_error is not None
    assert analysis.parse_error.line == 0
    assert analyze("\x00").parse_error is not None  # NUL bytes: ValueError inside ast
    deep = "x = " + "(" * 300 + "1" + ")" * 300
    assert analyze(deep).findings == []  # too deep for the parser on some versions: no crash


def test_a_fix_that_raises_is_not_offered_and_is_logged(caplog):
    """Fixes are built where the finding is reported (Rule.finding(fix=...)); one that raises
    when asked for gives no fix, with the reason in the log, and nothing else breaks."""
    import logging

    from tfperf_lsp.engine import fix_for

    analysis = analyze("import tensorflow as tf\n\n@tf.function\ndef f(x):\n    return x\n\nfor i in range(3):\n    f(i * 0.5)\n")
    finding = next(f for f in analysis.findings if f.code == "TFP101")
    assert fix_for(analysis, finding) is not None

    def broken():
        raise RuntimeError("cannot rewrite this")

    finding.build_fix = broken
    with caplog.at_level(logging.WARNING, logger="tfperf_lsp.engine"):
        assert fix_for(analysis, finding) is None
    assert "cannot be built" in caplog.text and "cannot rewrite this" in caplog.text


def test_findings_pickle_without_their_fix_builders():
    """A result sent between processes or cached carries its fixes built already (checker.detach):
    the builder, a closure over syntax trees, is left behind."""
    import pickle

    analysis = analyze("import tensorflow as tf\n\n@tf.function\ndef f(x):\n    return x\n\nfor i in range(3):\n    f(i * 0.5)\n")
    finding = next(f for f in analysis.findings if f.code == "TFP101")
    copy = pickle.loads(pickle.dumps(finding))
    assert copy == finding and copy.build_fix is None and finding.build_fix is not None
