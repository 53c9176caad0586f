"""server/: what an editor extension runs with the user's interpreter, whatever that is."""
import glob
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, "server", "check_env.py")
LAUNCHER = os.path.join(ROOT, "server", "tfperf_server.py")
OLD = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/2.7*/bin/python")) + glob.glob(os.path.expanduser("~/.pyenv/versions/3.[6-9].*/bin/python")))


def test_check_env_describes_this_interpreter():
    info = json.loads(subprocess.run([sys.executable, CHECK], capture_output=True, text=True, check=True).stdout)
    assert info["python_ok"] is True and info["missing"] == []
    assert info["tfperf"] and info["executable"] == sys.executable


@pytest.mark.skipif(not OLD, reason="no old Python installed to try")
@pytest.mark.parametrize("python", OLD)
def test_old_pythons_get_a_clear_answer_not_a_crash(python):
    run = subprocess.run([python, CHECK], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["python_ok"] is False
    launch = subprocess.run([python, LAUNCHER], capture_output=True, text=True)
    assert launch.returncode == 3 and "needs Python 3.10 or newer" in launch.stderr


def test_missing_dependencies_are_named_with_the_install_command(tmp_path):
    # A bare interpreter (isolated: no site-packages) finds the checkout's tfperf but not pygls.
    run = subprocess.run([sys.executable, "-I", "-S", LAUNCHER], capture_output=True, text=True, timeout=600)
    assert run.returncode == 4
    assert "tfperf cannot start" in run.stderr and "No module named" in run.stderr
    assert f'-m pip install "{ROOT}"' in run.stderr  # a checkout: install it, it is not on PyPI


def _fake_bundle(tmp_path):
    """A bundled/libs as scripts/package.sh makes it (pip install --target), reduced to tfperf."""
    libs = tmp_path / "bundled" / "libs"
    (libs / "tfperf_lsp").mkdir(parents=True)
    (libs / "tfperf_lsp" / "__init__.py").write_text('__version__ = "9.9.9"\n')
    (libs / "tfperf-9.9.9.dist-info").mkdir()
    (libs / "tfperf-9.9.9.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: tfperf\nVersion: 9.9.9\n")
    return str(libs)


def test_check_env_reports_the_bundled_tfperf_for_import_strategy_use_bundled(tmp_path):
    # What the extension does for tfperf.importStrategy "useBundled": PYTHONPATH=bundled/libs.
    libs = _fake_bundle(tmp_path)
    env = {**os.environ, "PYTHONPATH": libs, "TFPERF_BUNDLED_LIBS": libs}
    info = json.loads(subprocess.run([sys.executable, CHECK], capture_output=True, text=True, check=True, env=env).stdout)
    assert info["tfperf"] == "9.9.9" and info["tfperf_source"] == "bundled"
    env.pop("TFPERF_BUNDLED_LIBS")  # the same path without the extension's marker: an ordinary install
    info = json.loads(subprocess.run([sys.executable, CHECK], capture_output=True, text=True, check=True, env=env).stdout)
    assert info["tfperf"] == "9.9.9" and info["tfperf_source"] == "environment"


def test_launcher_takes_the_bundle_off_pythonpath_for_the_processes_it_starts(tmp_path, monkeypatch):
    # The benchmark worker inherits the server's environment: it must see the user's packages, not the bundle's.
    import importlib.util

    spec = importlib.util.spec_from_file_location("tfperf_server_under_test", LAUNCHER)
    launcher = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launcher)
    libs = _fake_bundle(tmp_path)
    monkeypatch.setenv("TFPERF_BUNDLED_LIBS", libs)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([libs, "/user/path"]))
    launcher._forget_bundled_pythonpath()
    assert os.environ["PYTHONPATH"] == "/user/path" and "TFPERF_BUNDLED_LIBS" not in os.environ
    monkeypatch.setenv("TFPERF_BUNDLED_LIBS", libs)
    monkeypatch.setenv("PYTHONPATH", libs)
    launcher._forget_bundled_pythonpath()
    assert "PYTHONPATH" not in os.environ


def test_benchmark_worker_imports_with_only_tfperf_lsp_on_its_path(tmp_path):
    # With the bundled server, the worker runs in the user's environment with only a link to
    # tfperf_lsp on PYTHONPATH (bench/procs.py package_path): none of tfperf's dependencies.
    (tmp_path / "tfperf_lsp").symlink_to(os.path.join(ROOT, "tfperf_lsp"))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import tfperf_lsp.bench.worker; "
            "print(sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names) - {'__main__'}))")
    run = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "['tfperf_lsp']"
