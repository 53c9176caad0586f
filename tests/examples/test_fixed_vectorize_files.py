"""`tfperf check --fix --unsafe-fixes` on copies of the vectorize examples and seed programs:
the rewritten files are valid Python, run to the end under TensorFlow, and keep their claims."""
import pathlib
import shutil
import subprocess
import sys

import pytest

from tfperf_lsp.cli import main

REPO = pathlib.Path(__file__).resolve().parents[2]
PROGRAMS = {
    "vectorize.py": "V4 concat loop == list + one concat: True",
    "seed000_einsum_batch_matmul.py": "loop and einsum results equal: True",
    "seed001_tf_function_decorator.py": "tf.Tensor(",
}


@pytest.mark.tf
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_fixed_program_runs(tmp_path, name, capsys):
    path = tmp_path / name
    shutil.copy(REPO / "examples" / name, path)
    original = path.read_text(encoding="utf-8")
    main(["check", "--fix", "--unsafe-fixes", "--select", "vectorize", "--exit-zero", str(path)])
    capsys.readouterr()
    rewritten = path.read_text(encoding="utf-8")
    assert rewritten != original, "the example has fixable vectorize findings"
    compile(rewritten, name, "exec")
    run = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert PROGRAMS[name] in run.stdout
