"""``tfperf check`` over a process pool with a content-hash cache: same findings, same order,
and a cached result is used only while the file and the workspace files it consulted are unchanged."""
import json
import os
import textwrap
import time

import pytest

from tfperf_lsp import parallel
from tfperf_lsp.analysis.workspace import WorkspaceIndex
from tfperf_lsp.checker import check_file, finding_json
from tfperf_lsp.cli import main

STEPS = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def train_step(x, step):
        return x * tf.cast(step, tf.float32)
    """
)
CALLER = "import tensorflow as tf\nfrom steps import train_step\nfor i in range(3):\n    train_step(tf.ones([2]), i)\n"
LOCAL = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def f(x, step):
        return x * step

    for i in range(10):
        f(tf.ones([2]), i)
    ds = tf.data.Dataset.range(10).map(lambda x: x * 2)
    """
)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "main.py").write_text(CALLER)
    for n in range(6):
        (tmp_path / f"local_{n}.py").write_text(f"# copy {n}\n" + LOCAL)
    return tmp_path


def analysed(monkeypatch):
    """Paths analysed (not taken from the cache) in this process."""
    seen = []
    real = parallel._check_one

    def recording(item):
        seen.append(item[0])
        return real(item)

    monkeypatch.setattr(parallel, "_check_one", recording)
    return seen


def sequential(paths, root):
    index = WorkspaceIndex([str(root)])
    return [[finding_json(p, f, r) for f in r.findings] for p in paths for r in [check_file(p, open(p).read(), {}, index)]]


def test_pool_gives_the_sequential_findings_in_file_order(project):
    paths = sorted(str(p) for p in project.glob("*.py"))
    expected = sequential(paths, project)  # jedi used in this process first: workers must not inherit it
    pooled = [[finding_json(p, f, r) for f in r.findings]
              for p, _, r in parallel.check_all(paths, {}, [str(project)], fixes=True, cache=False, jobs=2)]
    assert pooled == expected
    assert any(f["code"] == "TFP101" and f["filename"].endswith("main.py") for fs in pooled for f in fs)
    assert any(f["fix"] for fs in pooled for f in fs)  # fixes built in the workers come back


def test_unchanged_files_come_from_the_cache(project, monkeypatch):
    paths = sorted(str(p) for p in project.glob("*.py"))
    first = [r.findings for _, _, r in parallel.check_all(paths, {}, [str(project)], jobs=1)]
    seen = analysed(monkeypatch)
    second = [r.findings for _, _, r in parallel.check_all(paths, {}, [str(project)], jobs=1)]
    assert seen == [] and second == first
    (project / "local_0.py").write_text("# edited\n" + LOCAL)
    list(parallel.check_all(paths, {}, [str(project)], jobs=1))
    assert seen == [str(project / "local_0.py")]


def test_settings_are_part_of_the_key(project, monkeypatch):
    paths = [str(project / "local_0.py")]
    list(parallel.check_all(paths, {}, [str(project)], jobs=1))
    seen = analysed(monkeypatch)
    (result,) = [r for _, _, r in parallel.check_all(paths, {"ignore": ["TFP101"]}, [str(project)], jobs=1)]
    assert seen == paths and "TFP101" not in {f.code for f in result.findings}


def test_a_change_in_a_consulted_file_invalidates_its_callers(project, monkeypatch):
    paths = [str(project / "main.py")]
    codes = lambda: [f.code for _, _, r in parallel.check_all(paths, {}, [str(project)], jobs=1) for f in r.findings]  # noqa: E731
    assert codes() == ["TFP101"]
    (project / "steps.py").write_text(STEPS.replace("@tf.function\n", ""))
    assert codes() == []
    (project / "steps.py").write_text(STEPS)
    assert codes() == ["TFP101"]


def test_a_module_created_later_invalidates_a_failed_lookup(project):
    (project / "steps.py").unlink()
    paths = [str(project / "main.py")]
    codes = lambda: [f.code for _, _, r in parallel.check_all(paths, {}, [str(project)], jobs=1) for f in r.findings]  # noqa: E731
    assert codes() == []
    (project / "steps.py").write_text(STEPS)
    assert codes() == ["TFP101"]


def test_cli_output_is_the_same_cold_warm_and_without_cache(project, capsys):
    outputs = []
    for extra in ([], [], ["--no-cache"]):
        assert main(["check", "--format", "json", *extra, "."]) == 1
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] == outputs[1] == outputs[2]
    assert [f["filename"] for f in outputs[0]] == sorted(f["filename"] for f in outputs[0])
    assert (project / ".tfperf_cache" / "CACHEDIR.TAG").exists()


def test_no_cache_writes_nothing(project, capsys):
    assert main(["check", "--no-cache", "."]) == 1
    assert not (project / ".tfperf_cache").exists()


def test_a_read_only_folder_is_checked_without_a_cache(project, monkeypatch, capsys):
    monkeypatch.setattr(parallel.ResultCache, "_create_root", lambda self: (_ for _ in ()).throw(PermissionError("read-only")))
    assert main(["check", "."]) == 1
    assert "TFP101" in capsys.readouterr().out




def test_notebooks_come_from_the_cache_too_with_the_same_output(project, monkeypatch, capsys):
    """A warm run analysed every notebook again (most TF code is in notebooks)."""
    import nbformat

    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(LOCAL), nbformat.v4.new_code_cell("x = (")]  # one cell does not parse
    nbformat.write(book, str(project / "train.ipynb"))
    monkeypatch.setattr(parallel, "MIN_FILES_FOR_POOL", 10**6)  # in this process, to see what is analysed
    seen = analysed(monkeypatch)
    outputs, analysed_per_run = [], []
    for extra in ([], [], ["--no-cache"]):
        seen.clear()
        for fmt in ("json", "text"):
            main(["check", "--format", fmt, *extra, "."])
            captured = capsys.readouterr()
            outputs.append((captured.out, captured.err))
        analysed_per_run.append("./train.ipynb" in seen)
    assert outputs[0:2] == outputs[2:4] == outputs[4:6]
    assert "train.ipynb" in outputs[0][0] and "cell 1" in outputs[1][0]
    assert "cell 2" in outputs[1][0] + outputs[1][1]  # the broken cell is reported, from the cache as well
    assert analysed_per_run == [True, False, True]


def test_a_warm_run_loads_no_analysis_module(project, tmp_path):
    """With every file in the cache, `tfperf check` only hashes, reads and prints (0.41 -> 0.21 s
    on 277 real files): the workspace index, LibCST (fixes come built) and jedi are not loaded."""
    import subprocess
    import sys

    command = [sys.executable, "-c", "import sys; from tfperf_lsp.cli import main; code = main(sys.argv[1:]); "
               "print(sorted(m for m in sys.modules if m in ('tfperf_lsp.analysis.workspace', 'libcst', 'jedi')), file=sys.stderr); "
               "sys.exit(code)", "check", "--format", "json", "."]
    import os

    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    cold = subprocess.run(command, cwd=project, capture_output=True, text=True, env=env)
    warm = subprocess.run(command, cwd=project, capture_output=True, text=True, env=env)
    assert cold.stdout == warm.stdout and "TFP101" in warm.stdout
    fixing = subprocess.run(command + ["--diff", "--unsafe-fixes"], cwd=project, capture_output=True, text=True, env=env)
    assert "tfperf_lsp.analysis.workspace" in fixing.stderr  # the probe sees an analysis in this process
    assert warm.stderr.strip().splitlines()[-1] == "[]"


def test_results_of_other_versions_are_removed_when_this_one_starts_its_folder(project, capsys):
    cache = project / ".tfperf_cache"
    old = cache / "0.0.1-0123456789abcdef" / "ab"
    old.mkdir(parents=True)
    (old / "result").write_bytes(b"stale")
    busy = cache / "0.0.2-fedcba9876543210" / "cd"  # another version writing right now
    busy.mkdir(parents=True)
    stale = time.time() - 3600
    os.utime(old, (stale, stale))
    os.utime(old.parent, (stale, stale))
    assert main(["check", "."]) == 1
    capsys.readouterr()
    versions = sorted(p.name for p in cache.iterdir() if p.is_dir())
    assert "0.0.1-0123456789abcdef" not in versions  # stale: removed
    assert "0.0.2-fedcba9876543210" in versions  # written a moment ago: kept
    assert len(versions) == 2  # and this version's own folder
