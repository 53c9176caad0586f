"""The zero-install remote worker: through a stand-in for ssh, to a Python that has TensorFlow but
not tfperf, in a fresh directory. Nothing of tfperf is installed or written on the other side."""
import os
import shlex
import stat
import sys
import sysconfig
import textwrap

import pytest

from tfperf_lsp.bench import ship
from tfperf_lsp.bench.service import BenchSettings

FAKE_SSH = textwrap.dedent('''\
    #!{python}
    """A stand-in for ssh: `fake-ssh HOST COMMAND...` joins COMMAND with spaces and hands it to a
    shell (as ssh does), in a fresh empty directory, with a clean environment."""
    import os, subprocess, sys, tempfile
    host, words = sys.argv[1], sys.argv[2:]
    home = tempfile.mkdtemp(prefix="fake-remote-")
    env = {{"PATH": "/usr/bin:/bin", "HOME": home}}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "remote.log"), "a") as log:
        log.write(home + "\\n")
    sys.exit(subprocess.call(["/bin/sh", "-c", " ".join(words)], cwd=home, env=env))
''')

# "python3" on the remote: TensorFlow (site-packages on the path), but no tfperf: -S skips the
# site module, so the editable install's import hook (.pth) is never loaded.
REMOTE_PYTHON = textwrap.dedent('''\
    #!/bin/sh
    PYTHONPATH={site} exec {python} -S "$@"
''')


@pytest.fixture
def fake_remote(tmp_path):
    ssh = tmp_path / "ssh"  # named ssh: the command goes through a remote shell
    ssh.write_text(FAKE_SSH.format(python=sys.executable))
    remote_python = tmp_path / "python3"
    remote_python.write_text(REMOTE_PYTHON.format(site=sysconfig.get_paths()["purelib"], python=sys.executable))
    for path in (ssh, remote_python):
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return [str(ssh), "gpu-box", str(remote_python)], tmp_path


def test_the_remote_python_cannot_import_tfperf(fake_remote):
    import subprocess

    command, _ = fake_remote
    out = subprocess.run(command + ["-c", shlex.quote("import tfperf_lsp")], capture_output=True, text=True, timeout=600)
    assert out.returncode != 0 and "No module named 'tfperf_lsp'" in out.stderr


def test_worker_command_is_a_list_or_a_shell_string():
    assert BenchSettings.from_options({"workerCommand": "ssh gpu 'python3 -X dev'"}).worker_command == [
        "ssh", "gpu", "python3 -X dev"]
    assert BenchSettings.from_options({"workerCommand": ["ssh", "my host", "python3"]}).worker_command == [
        "ssh", "my host", "python3"]
    assert BenchSettings.from_options({"workerCommand": "ssh 'unclosed"}).worker_command == []
    argv = ship.shipped_argv(["ssh", "gpu", "python3"], 2048)
    assert argv[:4] == ["ssh", "gpu", "python3", "-c"] and argv[4] == shlex.quote(ship.BOOTSTRAP)
    assert ship.shipped_argv(["/opt/py/bin/python3"], None) == ["/opt/py/bin/python3", "-c", ship.BOOTSTRAP]
    # an interpreter gets the shipped worker; a command ending in a script is a worker of its own
    assert ship.ships(["ssh", "gpu", "python3"]) and ship.ships(["/opt/py/bin/python3", "-X", "dev"])
    assert not ship.ships(["python3", "my_worker.py"]) and not ship.ships([])


def test_the_payload_holds_every_module_the_worker_imports():
    import ast

    here = os.path.dirname(os.path.abspath(ship.__file__))
    for name in ship.MODULES:
        with open(os.path.join(here, f"{name}.py"), encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                targets = [node.module] if node.module else [a.name for a in node.names]
                for target in targets:
                    assert target.split(".")[0] in ship.MODULES, f"{name} imports .{target}, not shipped"
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tfperf_lsp"):
                raise AssertionError(f"{name} imports {node.module} absolutely: not shipped")


@pytest.mark.tf
def test_a_job_runs_through_ssh_with_nothing_of_tfperf_on_the_other_side(fake_remote):
    from tfperf_lsp.bench import Job, Variant, WorkerPool

    command, tmp = fake_remote
    prelude = "import tensorflow as tf\nx = tf.random.uniform([32, 32])\n"
    job = Job(prelude=prelude, variants=[
        Variant("original", "def __tfperf_run__():\n    return tf.matmul(x, x)\n"),
        Variant("rewritten", "g = tf.function(lambda a: tf.matmul(a, a))\ndef __tfperf_run__():\n    return g(x)\n")],
        budget_s=0.3)
    with WorkerPool(command=command, keep_spare=False, timeout_s=300, memory_limit_mb=3000) as pool:
        info = pool.worker_info()
        result = pool.run_job(job)
    assert info.tf_version and result.verdict != "error", result.summary
    assert result.outputs_match is True
    remote_dirs = (tmp / "remote.log").read_text().split()
    assert remote_dirs
    for d in remote_dirs:  # the fresh remote directories stay empty: nothing installed or written
        leftovers = [p for p in os.listdir(d) if p != ".keras"]
        assert leftovers == [], leftovers
