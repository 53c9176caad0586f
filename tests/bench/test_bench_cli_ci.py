"""`tfperf bench` for CI, with a fake worker (no TensorFlow): several paths, what was not
benchmarked and why, --fail-on, the JSON's metadata, --baseline regressions."""
import json
import os
import sys
import textwrap

import pytest

from tfperf_lsp.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = f"{sys.executable} {os.path.join(HERE, 'bench_fake_worker.py')}"
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
)  # TFP106 (a rename: not measurable), TFP202 (correctness), TFP101 (benchmarkable)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TFPERF_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("FAKE_VERDICT", "FAKE_SPEEDUP", "FAKE_CI", "FAKE_MODE"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "a.py").write_text(CODE)
    # TFP106 is opt-in: selected here as the example of a finding with nothing to time
    (tmp_path / "pyproject.toml").write_text('[tool.tfperf]\nextend-select = ["TFP106"]\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text(CODE)
    return tmp_path


def bench(capsys, *argv):
    rc = main(["bench", "--worker", WORKER, "--no-cache", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_several_paths_json_with_metadata_and_skipped(project, capsys):
    rc, out, _ = bench(capsys, "a.py", "pkg", "--output-format", "json")
    assert rc == 0
    data = json.loads(out)
    assert data["timestamp"].endswith("+00:00") and "git_commit" in data
    assert sorted({r["filename"] for r in data["results"]}) == ["a.py", "pkg/b.py"]
    assert {r["code"] for r in data["results"]} == {"TFP101"}
    assert all(r["from_cache"] is False for r in data["results"])
    assert all("samples_s" in v for r in data["results"] for v in r["variants"])
    reasons = {(s["filename"], s["code"]): s["reason"] for s in data["skipped"]}
    assert "renames" in reasons[("a.py", "TFP106")]
    assert "correctness" in reasons[("pkg/b.py", "TFP202")]


def test_text_lists_what_was_not_benchmarked(project, capsys):
    rc, out, _ = bench(capsys, "a.py")
    assert rc == 0
    assert "Not benchmarked (2):" in out and "a.py:3:14: TFP106 - nothing to time" in out


def test_fail_on_slower(project, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_VERDICT", "slower")
    monkeypatch.setenv("FAKE_SPEEDUP", "0.5")
    assert bench(capsys, "a.py")[0] == 0  # slower is not a failure unless asked
    rc, _, err = bench(capsys, "a.py", "--fail-on", "slower")
    assert rc == 1 and "failing on slower" in err
    assert bench(capsys, "a.py", "--fail-on", "fast")[0] == 2


def test_fail_on_outputs_differ_is_the_default(project, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_VERDICT", "outputs-differ")
    assert bench(capsys, "a.py")[0] == 1
    assert bench(capsys, "a.py", "--fail-on", "slower")[0] == 0


def test_baseline_flags_regressions_beyond_the_intervals(project, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_CI", "1")
    _, out, _ = bench(capsys, "a.py", "--output-format", "json")
    (project / "old.json").write_text(out)
    rc, out, _ = bench(capsys, "a.py", "--baseline", "old.json", "--output-format", "json")
    assert rc == 0 and json.loads(out)["results"][0]["baseline"]["regression"] is False
    monkeypatch.setenv("FAKE_SPEEDUP", "1.2")  # intervals [1.14, 1.26] vs [1.9, 2.1]
    rc, out, _ = bench(capsys, "a.py", "--baseline", "old.json")
    assert rc == 1 and "REGRESSION" in out
    assert bench(capsys, "a.py", "--baseline", "missing.json")[0] == 2


def test_select_takes_selectors(project, capsys):
    rc, _, err = bench(capsys, "a.py", "--select", "xla")
    assert rc == 2 and "no finding to benchmark" in err
    assert bench(capsys, "a.py", "--select", "retrace")[0] == 0
