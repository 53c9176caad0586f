"""`tfperf check --output-format ...` and the other CI-facing behaviour: statistics, quiet,
colour, syntax errors, exit codes under a broken pipe and with --diff."""
import json
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from tfperf_lsp.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))
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
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    # TFP106 is opt-in: these tests use it as the example of a safe fix
    (tmp_path / "pyproject.toml").write_text('[tool.tfperf]\nextend-select = ["TFP106"]\n')
    (tmp_path / "train.py").write_text(CODE)
    (tmp_path / "broken.py").write_text("x = (1,\ndef f(:\n")
    return tmp_path


def run(capsys, *argv):
    rc = main(["check", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_format_is_an_alias_of_output_format(project, capsys):
    assert run(capsys, "--format", "json", "train.py")[1] == run(capsys, "--output-format", "json", "train.py")[1]


def test_concise(project, capsys):
    rc, out, _ = run(capsys, "--output-format", "concise", "train.py")
    assert rc == 1
    assert out.splitlines()[0] == "train.py:3:14: TFP106 `experimental_relax_shapes` is deprecated: use `reduce_retracing`"


def test_json_lines(project, capsys):
    _, out, _ = run(capsys, "--output-format", "json-lines", "train.py")
    assert [json.loads(line)["code"] for line in out.splitlines()] == ["TFP106", "TFP202", "TFP101"]


def test_github_annotations(project, capsys):
    _, out, _ = run(capsys, "--output-format", "github", "train.py")
    first = out.splitlines()[0]
    assert first.startswith("::warning file=train.py,line=3,col=14,endLine=3,endColumn=44,title=tfperf (TFP106)::TFP106 ")


def test_gitlab_code_quality(project, capsys):
    _, out, _ = run(capsys, "--output-format", "gitlab", "train.py")
    entries = json.loads(out)
    assert {e["check_name"] for e in entries} == {"TFP101", "TFP106", "TFP202"}
    assert entries[0]["location"] == {"path": "train.py", "lines": {"begin": 3, "end": 3}}
    assert len({e["fingerprint"] for e in entries}) == 3
    assert {e["severity"] for e in entries} <= {"info", "minor", "major", "critical", "blocker"}


def test_sarif_is_valid_sarif_2_1_0(project, capsys):
    with open(os.path.join(HERE, "..", "schemas", "sarif-2.1.0.json"), encoding="utf-8") as handle:
        schema = json.load(handle)
    rc, out, _ = run(capsys, "--output-format", "sarif", "train.py", "broken.py")
    assert rc == 2
    log = json.loads(out)
    jsonschema.validate(log, schema)
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["TFP106", "TFP202", "TFP101"]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert rules[results[0]["ruleIndex"]]["id"] == "TFP106"
    notification = log["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]
    assert "syntax error" in notification["message"]["text"]


def test_sarif_schema_rejects_a_broken_log(project, capsys):
    """The schema test has teeth: a result without a message is invalid."""
    with open(os.path.join(HERE, "..", "schemas", "sarif-2.1.0.json"), encoding="utf-8") as handle:
        schema = json.load(handle)
    _, out, _ = run(capsys, "--output-format", "sarif", "train.py")
    log = json.loads(out)
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, schema)


def test_junit(project, capsys):
    _, out, _ = run(capsys, "--output-format", "junit", "train.py", "broken.py")
    root = ET.fromstring(out)
    assert root.get("failures") == "3" and root.get("errors") == "1"
    cases = root.findall(".//testcase")
    assert [c.get("name") for c in cases][:3] == ["tfperf.TFP106", "tfperf.TFP202", "tfperf.TFP101"]


def test_syntax_errors_are_path_row_col_and_json_entries(project, capsys):
    rc, _, err = run(capsys, "broken.py")
    assert rc == 2
    assert "broken.py:2:1: syntax error" in err  # no space after the path's colon
    _, out, _ = run(capsys, "--output-format", "json", "broken.py", "train.py")
    entries = json.loads(out)
    error = [e for e in entries if e["code"] is None][0]
    assert error["filename"] == "broken.py" and error["location"] == {"row": 2, "column": 1}
    assert error["message"].startswith("syntax error")


def test_statistics(project, capsys):
    rc, out, _ = run(capsys, "--statistics", "train.py")
    assert rc == 1
    assert out.splitlines() == ["1\tTFP101\t    python-scalar-argument", "1\tTFP106\t[*] deprecated-relax-shapes", "1\tTFP202\t    python-side-effect"]


def test_quiet_and_silent(project, capsys):
    rc, out, err = run(capsys, "--quiet", "train.py")
    assert rc == 1 and out.count("\n") == 3 and err == ""
    rc, out, err = run(capsys, "--silent", "train.py")
    assert rc == 1 and out == "" and err == ""


def test_colour_honours_no_color_and_force_color(project, capsys, monkeypatch):
    assert "\x1b[" not in run(capsys, "train.py")[1]  # captured output is no terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[1;31mTFP106\x1b[0m" in run(capsys, "train.py")[1]
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run(capsys, "train.py")[1]
    monkeypatch.delenv("NO_COLOR")
    assert "\x1b[" not in run(capsys, "--output-format", "json", "train.py")[1]


def test_diff_counts_unsafe_only_findings_and_exits_one(project, capsys):
    rc, out, err = run(capsys, "--diff", "--select", "TFP101", "train.py")
    assert rc == 1 and out == ""
    assert "1 finding has only unsafe fixes" in err
    rc, out, _ = run(capsys, "--diff", "--unsafe-fixes", "--select", "TFP101", "train.py")
    assert rc == 1 and "tf.constant(i)" in out


def test_a_broken_pipe_keeps_the_findings_exit_code(project):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (`head`) is gone before tfperf writes
    try:
        proc = subprocess.run([sys.executable, "-c", "import sys; from tfperf_lsp.cli import main; sys.exit(main())", "check", "train.py"], stdout=write_end,
                              stderr=subprocess.PIPE, cwd=project, timeout=600)
    finally:
        os.close(write_end)
    assert proc.returncode == 1, proc.stderr
    assert b"Traceback" not in proc.stderr
