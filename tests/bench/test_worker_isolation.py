"""Issue 15 points 1, 3, 15: the worker runs nothing from the directory it was started in, imports
the analysed file's sibling modules from that file's folder, and results follow those modules."""
import os
import stat
import sys

import pytest

from tfperf_lsp.bench import Job, Variant, WorkerPool
from tfperf_lsp.bench.cache import ResultCache, cache_key, workspace_imports
from tfperf_lsp.bench.procs import WorkerProcess, private_cwd, worker_argv, worker_env
from tfperf_lsp.bench.protocol import Device

PLANTED = ("tensorflow.py", "numpy.py")


def plant(folder, marker):
    """A hostile checkout: modules that leave a marker file when imported."""
    for name in PLANTED:
        (folder / name).write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    (folder / "tfperf_lsp").mkdir()
    (folder / "tfperf_lsp" / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write('pkg')\n")


def test_our_interpreter_is_started_with_a_safe_path():
    argv = worker_argv(None, None)
    if sys.version_info >= (3, 11):
        assert argv[1] == "-P"
    assert argv[-2:] == ["-m", "tfperf_lsp.bench.worker"]
    assert worker_env()["PYTHONSAFEPATH"] == "1"


def test_a_configured_command_keeps_its_own_arguments():
    assert worker_argv(["ssh", "gpu", "python3"], None) == ["ssh", "gpu", "python3", "-m", "tfperf_lsp.bench.worker"]


def test_workers_start_in_a_private_empty_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = WorkerProcess([sys.executable, "-c", "import os, sys; print(os.getcwd()); sys.stdout.flush()"])
    try:
        kind, line = w.next_message(30)
        assert kind == "line"
        cwd = line.decode().strip()
    finally:
        w.kill()
    assert cwd == private_cwd() != str(tmp_path)
    mode = os.stat(cwd).st_mode
    assert stat.S_IMODE(mode) == 0o700 and os.listdir(cwd) == []


def test_the_worker_imports_nothing_from_where_it_was_started(tmp_path, monkeypatch):
    """Before the job: `python -m tfperf_lsp.bench.worker` in a checkout with a tensorflow.py.
    Run with a stand-in TensorFlow-free interpreter check: the planted modules must not load
    even when the process is started in that folder (cwd given explicitly, as before the fix)."""
    marker = tmp_path / "marker"
    repo = tmp_path / "repo"
    repo.mkdir()
    plant(repo, marker)
    code = "import sys; import tfperf_lsp.bench.worker as w; w._safe_sys_path(); import numpy; print('ok')"
    argv = worker_argv(None, None)[:-2] + ["-c", code]
    w = WorkerProcess(argv, env=worker_env(), cwd=str(repo))
    try:
        item = w.next_message(60)
    finally:
        w.kill()
    assert item and item[0] == "line", w.stderr_tail(1.0)
    assert not marker.exists(), f"planted code ran: {marker.read_text()}"


@pytest.mark.tf
def test_a_real_job_imports_siblings_from_the_files_folder_and_nothing_from_the_cwd(tmp_path, monkeypatch):
    pytest.importorskip("tensorflow")
    marker = tmp_path / "marker"
    repo = tmp_path / "repo"
    repo.mkdir()
    plant(repo, marker)
    project = tmp_path / "project"
    project.mkdir()
    (project / "helpers.py").write_text("def double(v):\n    return v * 2\n")
    monkeypatch.chdir(repo)  # the editor's working directory is the hostile checkout
    job = Job(prelude="import tensorflow as tf\nfrom helpers import double\nx = tf.ones([4])\n",
              variants=[Variant("original", "def __tfperf_run__():\n    return double(x)\n"),
                        Variant("rewritten", "def __tfperf_run__():\n    return x + x\n")],
              budget_s=0.3, max_pairs=6, meta={"folder": str(project)})
    with WorkerPool(memory_limit_mb=None, keep_spare=False) as pool:
        result = pool.run_job(job)
    assert result.error is None, result.summary
    assert result.outputs_match is True
    assert not marker.exists(), f"planted code ran: {marker.read_text()}"


# ---- results follow the workspace modules the job imports (point 3) -------------------------
def job_importing(folder):
    return Job(prelude="import tensorflow as tf\nimport helpers\nfrom pkg import tools\n",
               variants=[Variant("a", "def __tfperf_run__():\n    return helpers.f()\n"),
                         Variant("b", "def __tfperf_run__():\n    return 1\n")],
               meta={"folder": str(folder)})


def test_the_key_changes_when_an_imported_workspace_module_changes(tmp_path):
    (tmp_path / "helpers.py").write_text("import deep\ndef f():\n    return 1\n")
    (tmp_path / "deep.py").write_text("X = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tools.py").write_text("Y = 1\n")
    job = job_importing(tmp_path)
    device = Device(kind="cpu", name="x")
    imports = workspace_imports(job, str(tmp_path))
    assert sorted(os.path.basename(p) for p in imports) == ["__init__.py", "deep.py", "helpers.py", "tools.py"]
    before = cache_key(job, device, "2.x", imports)
    for name in ("helpers.py", "deep.py", "pkg/tools.py"):
        path = tmp_path / name
        path.write_text(path.read_text() + "# changed, and longer\n")
        after = cache_key(job, device, "2.x", workspace_imports(job, str(tmp_path)))
        assert after != before, f"a change to {name} kept the old key"
        before = after


def test_the_cache_directory_is_private_and_ours(tmp_path):
    root = tmp_path / "cache"
    cache = ResultCache(root)
    assert cache.usable(create=True)
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    os.chmod(root, 0o777)  # anyone could plant a result: not used
    assert not cache.usable() and "writable by other users" in cache.problem
    assert cache.get("0" * 64) is None
    os.chmod(root, 0o755)  # an older tfperf's directory: made private again
    assert cache.usable() and stat.S_IMODE(os.stat(root).st_mode) == 0o700


def test_a_cache_directory_of_another_user_is_not_used(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    monkeypatch.setattr(os, "getuid", lambda: os.stat(root).st_uid + 1)
    cache = ResultCache(root)
    assert not cache.usable() and "another user" in cache.problem
