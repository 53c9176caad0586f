"""tfperf in JupyterLab: a real JupyterLab + jupyterlab-lsp, configured with the README's
``jupyter_server_config.json``, in headless Chromium. The notebook's TFP101 is underlined in its
cell, shown in the tooltip and listed in jupyterlab-lsp's diagnostics panel.

Needs the environment that ``scripts/setup-jupyterlab`` makes (.venv-jupyterlab, or
TFPERF_JUPYTERLAB_VENV) and Chromium; skipped, with the reason, where either is missing, unless
TFPERF_REQUIRE_JUPYTERLAB=1 (scripts/test sets it: there a missing piece is a failure).
Screenshots go to TFPERF_JUPYTERLAB_SHOTS (default: the test's temporary folder)."""
import json
import os
import re
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV = os.environ.get("TFPERF_JUPYTERLAB_VENV", os.path.join(ROOT, ".venv-jupyterlab"))
PYTHON = os.path.join(VENV, "bin", "python")
CHROMIUM = os.environ.get("TFPERF_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def _missing():
    if not os.access(PYTHON, os.X_OK):
        return f"no JupyterLab environment at {VENV} (run scripts/setup-jupyterlab)"
    if not CHROMIUM:
        return "Chromium is not installed (apt-get install chromium, or set TFPERF_CHROMIUM)"
    return None


def readme_config() -> str:
    """The jupyter_server_config.json that the README's JupyterLab paragraph shows, verbatim."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return re.search(r"\*\*JupyterLab\*\*.*?```json\n(.*?)```", readme, re.S).group(1)


def test_readme_config_starts_tfperf_for_python():
    spec = json.loads(readme_config())["LanguageServerManager"]["language_servers"]["tfperf"]
    assert spec["argv"] == ["tfperf-lsp"] and spec["languages"] == ["python"] and spec["version"] == 2


@pytest.fixture
def drive(tmp_path):
    missing = _missing()
    if missing:
        if os.environ.get("TFPERF_REQUIRE_JUPYTERLAB") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    config = tmp_path / "jupyter_server_config.json"
    config.write_text(readme_config())
    shots = os.environ.get("TFPERF_JUPYTERLAB_SHOTS") or str(tmp_path / "shots")
    out = tmp_path / "result.json"
    run = subprocess.run(
        [PYTHON, os.path.join(HERE, "jupyterlab_drive.py"), "--config", str(config), "--workdir", str(tmp_path / "lab"),
         "--out", str(out), "--shots", shots, "--chromium", CHROMIUM],
        capture_output=True, text=True, timeout=1500,  # its waits are 300 s each; pytest-timeout is 1800
    )
    assert out.exists(), run.stderr[-3000:]
    result = json.loads(out.read_text())
    if not result["ok"]:
        log = tmp_path / "lab" / "jupyterlab.log"
        print(log.read_text()[-5000:] if log.exists() else "no jupyterlab.log")  # shown by pytest on failure
        pytest.fail(f"the JupyterLab session did not complete:\n{result.get('error', '')[-2500:]}")
    return result


@pytest.mark.slow  # JupyterLab and Chromium start: minutes on a loaded machine
def test_jupyterlab_shows_tfperf_diagnostics_in_the_cell(drive):
    result = drive
    message = "`f` is traced again for every value of `i`: pass a tensor (`tf.constant(...)`) instead of a Python number"
    # jupyter-lsp started tfperf from the README's configuration, and it was the server the notebook used.
    assert result["lsp_sessions_before"] == {"tfperf": "not_started"}
    assert result["lsp_websockets"] == ["tfperf"]
    assert result["server_info"]["name"] == "tfperf"
    # Protocol: jupyterlab-lsp sends the notebook as one Python document (magics rewritten into
    # get_ipython() calls), and tfperf publishes TFP101 on the loop's argument.
    [opened] = result["opened"]
    assert opened["languageId"] == "python" and opened["uri"].endswith("/.virtual_documents/train.ipynb")
    assert 'get_ipython().run_line_magic("matplotlib", " inline")' in opened["text"]
    final = [p for p in result["published"] if p["diagnostics"]][-1]
    [diagnostic] = final["diagnostics"]
    assert (diagnostic["code"], diagnostic["source"], diagnostic["severity"]) == ("TFP101", "tfperf", 2)
    line = opened["text"].splitlines()[diagnostic["range"]["start"]["line"]]
    start, end = diagnostic["range"]["start"]["character"], diagnostic["range"]["end"]["character"]
    assert line[start:end] == "i * 0.5"
    # UI: the squiggle is in the third cell, on `i * 0.5`, and nowhere else.
    assert [c["ranges"] for c in result["squiggles"]] == [[], [], [{"text": "i * 0.5", "cls": "cm-lintRange cm-lintRange-warning"}]]
    assert result.get("tooltip", "").startswith(message), result.get("tooltip_error")
    # The diagnostics panel lists it with its code, source and cell (3), row 2 of the cell (0-based ch 20).
    assert result["panel_headers"] == ["Message", "Code", "Severity", "Source", "Cell", "Line:Ch"]
    assert result["panel_rows"] == [[message, "TFP101", "Warning", "tfperf", "3", "2:20"]]
    assert not result["console_errors"], result["console_errors"]
