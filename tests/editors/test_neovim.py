"""tfperf in a real editor: headless Neovim (0.7+) starts the server, shows the diagnostics,
the hover, the code actions, and applies the quick fix. Skipped where nvim is not installed."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CODE = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function(experimental_relax_shapes=True)
    def total(x, step):
        return tf.reduce_sum(x) * tf.cast(step, tf.float32)

    for step in range(3):
        total(tf.ones([2]), step)
    """
)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvim") is None, reason="Neovim is not installed (apt-get install neovim)")
def test_neovim_session(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(CODE)
    # TFP106 is opt-in: the project selects it, as the example of a safe rename fix
    (tmp_path / "pyproject.toml").write_text('[tool.tfperf]\nextend-select = ["TFP106"]\n')
    out = tmp_path / "out.json"
    env = {
        **os.environ,
        "TFPERF_PYTHON": sys.executable, "TFPERF_SERVER": os.path.join(ROOT, "server", "tfperf_server.py"),
        "TFPERF_FILE": str(path), "TFPERF_OUT": str(out), "TFPERF_FIX": "reduce_retracing",
        "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    run = subprocess.run(
        ["nvim", "--headless", "-u", "NONE", "-c", f"luafile {os.path.join(HERE, 'neovim_session.lua')}"],
        env=env, capture_output=True, text=True, timeout=600,  # above the session's own waits
    )
    result = json.loads(out.read_text())
    assert result["ok"], (result.get("error"), run.stderr[-2000:])
    codes = sorted(d["code"] for d in result["diagnostics"])
    assert codes == ["TFP101", "TFP106"]
    assert "**TFP106**" in result["hover"] and "reduce_retracing" in result["hover"]
    assert "Rename to reduce_retracing= (TFP106)" in result["actions"]
    assert "Ignore TFP106 on this line" in result["actions"]
    assert not any(a.startswith("Benchmark") for a in result["actions"])  # a rename: nothing to time
    assert result["applied"] == "Rename to reduce_retracing= (TFP106)"
    assert "@tf.function(reduce_retracing=True)" in result["text"]
    assert result["text"].count("\n") == CODE.count("\n") - 1  # nothing else changed
