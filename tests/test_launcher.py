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
    run = subprocess.run([sys.executable, "-I", "-S", LAUNCHER], capture_output=True, text=True, timeout=60)
    assert run.returncode == 4
    assert "tfperf cannot start" in run.stderr and "No module named" in run.stderr
    assert f'-m pip install "{ROOT}"' in run.stderr  # a checkout: install it, it is not on PyPI
