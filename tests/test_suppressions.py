"""Suppression comments: tfperf's own, ruff/flake8's `# noqa`, file-level, and TFP901 (opt-in)."""
import textwrap

from tfperf_lsp.config import Settings
from tfperf_lsp.engine import analyze

LOOP = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def f(x, step):
        return x * tf.cast(step, tf.float32)

    for i in range(3):
        f(tf.ones([2]), i){comment}
    """
)


def codes(source, settings=None):
    return [f.code for f in analyze(source, settings=settings).findings]


def test_noqa_with_a_tfperf_code_suppresses_it():
    assert codes(LOOP.format(comment="")) == ["TFP101"]
    assert codes(LOOP.format(comment="  # noqa: TFP101")) == []
    assert codes(LOOP.format(comment="  # noqa: E501,TFP101")) == []
    assert codes(LOOP.format(comment="  # noqa")) == []
    assert codes(LOOP.format(comment="  # noqa: E501")) == ["TFP101"]  # another tool's code only
    assert codes(LOOP.format(comment="  # noqa: TFP202")) == ["TFP101"]


def test_ignore_file_suppresses_the_named_rules_everywhere():
    source = "# tfperf: ignore-file[TFP101]\n" + LOOP.format(comment="")
    assert codes(source) == []
    assert codes("# tfperf: ignore-file[TFP805]\n" + LOOP.format(comment="")) == ["TFP101"]
    assert codes("# tfperf: ignore-file\n" + LOOP.format(comment="")) == []


def test_line_level_ignore_is_not_mistaken_for_ignore_file():
    source = LOOP.format(comment="") + "y = 1  # tfperf: ignore-file[TFP202]\n"
    assert codes(source) == ["TFP101"]


UNUSED = Settings().with_overrides({"extend-select": ["TFP901"]})


def test_unused_suppressions_are_reported_only_when_selected():
    source = LOOP.format(comment="  # noqa: TFP101") + "y = 1  # tfperf: ignore[TFP202, TFP999]\n"
    assert codes(source) == []
    findings = analyze(source, settings=UNUSED).findings
    messages = sorted(f.message for f in findings)
    assert [f.code for f in findings] == ["TFP901", "TFP901"]
    assert any("TFP999" in m and "unknown" in m for m in messages)
    assert any("TFP202" in m and "unused" in m for m in messages)
    assert findings[0].span.start.line == 8


def test_suppression_of_a_disabled_rule_is_reported_as_such():
    settings = Settings().with_overrides({"extend-select": ["unused-suppression"], "ignore": ["TFP101"]})
    findings = analyze(LOOP.format(comment="  # tfperf: ignore[TFP101]"), settings=settings).findings
    assert [f.code for f in findings] == ["TFP901"]
    assert "not enabled" in findings[0].message
