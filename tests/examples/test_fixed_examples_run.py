"""Every shipped example, with every fix applied (`tfperf check --fix --unsafe-fixes`), is still
valid Python that runs to the end under TensorFlow, like the original."""
import os
import pathlib
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (REPO / "examples").glob("*.py"))

pytestmark = [pytest.mark.tf, pytest.mark.slow]


@pytest.fixture(scope="module")
def fixed_runs(tmp_path_factory):
    work = tmp_path_factory.mktemp("fixed-examples")
    for name in EXAMPLES:
        shutil.copy(REPO / "examples" / name, work / name)
    before = {name: (work / name).read_text() for name in EXAMPLES}
    check = subprocess.run(
        [sys.executable, "-m", "tfperf_lsp.cli", "check", "--fix", "--unsafe-fixes", str(work)],
        capture_output=True, text=True, cwd=REPO,
    )
    assert check.returncode in (0, 1), check.stderr

    def run(name):
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(work)}
        return name, subprocess.run([sys.executable, name], cwd=work, capture_output=True, text=True, timeout=1200, env=env)  # a hang guard

    with ThreadPoolExecutor(max_workers=2) as pool:  # two cores
        runs = dict(pool.map(run, EXAMPLES))
    changed = [name for name in EXAMPLES if (work / name).read_text() != before[name]]
    return runs, changed


def test_fixes_changed_the_examples(fixed_runs):
    _, changed = fixed_runs
    assert len(changed) >= len(EXAMPLES) - 2, f"only {changed} were rewritten"


@pytest.mark.parametrize("name", EXAMPLES)
def test_fixed_example_runs(fixed_runs, name):
    runs, _ = fixed_runs
    run = runs[name]
    assert run.returncode == 0, f"{name} after all fixes:\n{run.stderr[-3000:]}"
