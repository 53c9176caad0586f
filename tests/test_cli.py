"""``tfperf check|rules|rule`` as a CI pipeline uses them: output formats, exit codes, fixes."""
import json
import re
import textwrap

import pytest

from tfperf_lsp.cli import main

CODE = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function(experimental_relax_shapes=True)
    def f(x, step):
        print("running", x)
        return x * tf.cast(step, tf.float32)

    for i in range(3):
        f(tf.ones([2]), i)
    """
)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # TFP106 is opt-in: these tests use it as the example of a safe fix
    (tmp_path / "pyproject.toml").write_text('[tool.tfperf]\nextend-select = ["TFP106"]\n')
    (tmp_path / "train.py").write_text(CODE)
    (tmp_path / "clean.py").write_text("import tensorflow as tf\nx = tf.ones([2])\n")
    return tmp_path


def test_text_output_and_exit_code(project, capsys):
    assert main(["check", "train.py"]) == 1
    out, err = capsys.readouterr()
    lines = out.strip().splitlines()
    assert lines == [
        "train.py:3:14: TFP106 [*] [retrace] `experimental_relax_shapes` is deprecated: use `reduce_retracing`",
        "train.py:5:5: TFP202 [correctness] `print` in `f` runs only while tracing, not on every call: use `tf.print`",
        "train.py:9:21: TFP101 [retrace] `f` is traced again for every value of `i`: pass a tensor (`tf.constant(...)`) instead of a Python number",
    ]
    assert "Found 3 findings (1 fixable with --fix)." in err


def test_clean_file_exits_zero(project, capsys):
    assert main(["check", "clean.py"]) == 0
    assert capsys.readouterr().out == ""


def test_json_format(project, capsys):
    assert main(["check", "--format", "json", "train.py"]) == 1
    findings = json.loads(capsys.readouterr().out)
    assert [f["code"] for f in findings] == ["TFP106", "TFP202", "TFP101"]
    first = findings[0]
    assert first["category"] == "retrace" and first["severity"] == "warning"
    assert first["filename"] == "train.py"
    assert first["location"] == {"row": 3, "column": 14}
    assert first["end_location"] == {"row": 3, "column": 44}  # exclusive, as ruff
    assert first["fix"]["message"] == "Rename to reduce_retracing="
    assert first["fix"]["edits"][0]["content"].startswith("@tf.function(reduce_retracing=True)")
    assert findings[2]["fix"]["applicability"] == "unsafe"


def test_fix_applies_safe_fixes_only(project, capsys):
    assert main(["check", "--fix", "train.py"]) == 1  # unsafe-only findings remain
    fixed = (project / "train.py").read_text()
    assert "@tf.function(reduce_retracing=True)" in fixed
    assert 'print("running", x)' in fixed and "f(tf.ones([2]), i)" in fixed


def test_unsafe_fixes_on_request(project, capsys):
    main(["check", "--fix", "--unsafe-fixes", "train.py"])
    fixed = (project / "train.py").read_text()
    assert 'tf.print("running", x)' in fixed
    assert "f(tf.ones([2]), tf.constant(i))" in fixed
    compile(fixed, "train.py", "exec")


def test_diff_does_not_write(project, capsys):
    assert main(["check", "--diff", "train.py"]) == 1
    captured = capsys.readouterr()
    out = captured.out
    # the count is of what the fixed file would still report, and says so (not "Found 0 findings")
    assert re.search(r"1 file would change; \d+ findings? would remain after these fixes\.", captured.err)
    assert "-@tf.function(experimental_relax_shapes=True)" in out
    assert "+@tf.function(reduce_retracing=True)" in out
    assert (project / "train.py").read_text() == CODE


def test_select_and_ignore(project, capsys):
    assert main(["check", "--select", "correctness", "train.py"]) == 1
    assert [line.split(": ")[1].split()[0] for line in capsys.readouterr().out.splitlines()] == ["TFP202"]
    assert main(["check", "--ignore", "retrace,correctness", "train.py"]) == 0
    assert main(["check", "--select", "TFP000", "train.py"]) == 2


def test_unreadable_inputs_exit_two_with_a_message(project, capsys):
    (project / "latin1.py").write_bytes(b"x = '\xe9'\n")
    (project / "broken.py").write_text("def f(:\n")
    assert main(["check", "latin1.py", "broken.py", "missing.py", "clean.py"]) == 2
    err = capsys.readouterr().err
    assert "latin1.py: cannot decode" in err
    assert "broken.py:1:7: syntax error" in err
    assert "missing.py: no such file or directory" in err


def test_declared_encoding_is_honoured(project, capsys):
    (project / "latin1.py").write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n")
    assert main(["check", "latin1.py"]) == 0


def test_huge_file_is_skipped_with_a_message(project, capsys, monkeypatch):
    monkeypatch.setattr("tfperf_lsp.files.MAX_BYTES", 100)
    assert main(["check", "train.py"]) == 2
    assert "larger than" in capsys.readouterr().err


def test_directories_are_walked_and_venvs_skipped(project, capsys):
    (project / ".venv").mkdir()
    (project / ".venv" / "lib.py").write_text(CODE)
    (project / "pkg").mkdir()
    (project / "pkg" / "more.py").write_text(CODE)
    main(["check", "."])
    out = capsys.readouterr().out
    assert "pkg/more.py" in out and ".venv" not in out


def test_rules_and_rule_docs(capsys):
    assert main(["rules"]) == 0
    listing = capsys.readouterr().out
    assert "TFP101  python-scalar-argument" in listing
    assert main(["rule", "tfp101"]) == 0
    docs = capsys.readouterr().out
    assert docs.startswith("# TFP101 python-scalar-argument")
    assert "## Why is this slow" in docs and "```python" in docs
    # "Use instead" is the example after the rule's own fix, computed, not written twice
    assert "Use instead:" in docs and "train_step(x, tf.constant(step))" in docs.split("Use instead:")[1]
    assert main(["rule", "TFP000"]) == 2
    assert main(["rules", "--format", "json"]) == 0
    assert any(r["code"] == "TFP106" and r["fix"] for r in json.loads(capsys.readouterr().out))
