"""Drives a real JupyterLab + jupyterlab-lsp in headless Chromium against tfperf's language server.

Run with the Python of the JupyterLab environment (scripts/setup-jupyterlab makes it; it has
jupyterlab, jupyterlab-lsp, playwright and tfperf):

    python jupyterlab_drive.py --config jupyter_server_config.json --workdir DIR --out result.json

It starts ``jupyter lab`` on a free port with a token and the given server configuration, opens a
notebook whose cells tfperf flags, and records into the result JSON what a person would see: the
squiggles in each cell, the tooltip over the squiggle, the rows of jupyterlab-lsp's diagnostics
panel; and what went over jupyter-lsp's websocket (initialize's answer, didOpen, the
publishDiagnostics). It takes a screenshot of the notebook and of the panel. The test
(tests/editors/test_jupyterlab.py) makes the assertions; this script only reports (``error`` when
a step could not run).
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import traceback
import urllib.request

TOKEN = "tfperf-e2e"

CELLS = [
    ("markdown", "# Training"),
    ("code", "import tensorflow as tf\n\n@tf.function\ndef f(x, step):\n    return x * tf.cast(step, tf.float32)"),
    ("code", "%matplotlib inline\nfor i in range(3):\n    f(tf.ones([2]), i * 0.5)"),
]


def write_notebook(path):
    cells = []
    for kind, source in CELLS:
        cell = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    node = {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                         "language_info": {"name": "python", "mimetype": "text/x-python",
                                           "codemirror_mode": {"name": "ipython", "version": 3}}}}
    with open(path, "w") as f:
        json.dump(node, f, indent=1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(args, port):
    root, config = os.path.join(args.workdir, "root"), os.path.join(args.workdir, "config")
    settings = os.path.join(args.workdir, "user-settings", "@jupyterlab", "apputils-extension")
    for d in (root, config, settings):
        os.makedirs(d, exist_ok=True)
    name = "jupyter_server_config" + os.path.splitext(args.config)[1]  # .json or .py
    with open(args.config) as src, open(os.path.join(config, name), "w") as dst:
        dst.write(src.read())
    # No "news" toast over the notebook, no update check: nothing a headless run should fetch.
    with open(os.path.join(settings, "notification.jupyterlab-settings"), "w") as f:
        json.dump({"fetchNews": "false", "checkForUpdates": False}, f)
    if args.lsp_settings:  # jupyterlab-lsp's user settings (Settings > Language Servers), e.g. a priority
        plugin = os.path.join(args.workdir, "user-settings", "@jupyter-lsp", "jupyterlab-lsp")
        os.makedirs(plugin, exist_ok=True)
        with open(args.lsp_settings) as src, open(os.path.join(plugin, "plugin.jupyterlab-settings"), "w") as dst:
            dst.write(src.read())
    write_notebook(os.path.join(root, "train.ipynb"))
    bindir = os.path.dirname(sys.executable)
    env = {**os.environ,
           # as if the environment were activated (--not-activated: as if jupyter were run by its full path)
           "PATH": os.pathsep.join(([] if args.not_activated else [bindir]) + [os.environ.get("PATH", "")]),
           "JUPYTER_CONFIG_DIR": config,  # replaces ~/.jupyter: our jupyter_server_config.json is read from here
           "JUPYTER_DATA_DIR": os.path.join(args.workdir, "data"),
           "JUPYTER_RUNTIME_DIR": os.path.join(args.workdir, "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": os.path.join(args.workdir, "user-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": os.path.join(args.workdir, "workspaces"),
           "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
            f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
            "--LabApp.expose_app_in_browser=True", "--log-level=DEBUG"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")
    log = open(os.path.join(args.workdir, "jupyterlab.log"), "w")
    return subprocess.Popen(argv, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def wait_ready(port, proc, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {proc.returncode} (see jupyterlab.log)")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={TOKEN}", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"jupyter lab did not answer within {timeout}s")


def lsp_status(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/lsp/status?token={TOKEN}", timeout=60) as r:
        status = json.load(r)
    return {name: s["status"] for name, s in status["sessions"].items()}


def drive(args, port, result):
    from playwright.sync_api import sync_playwright

    frames = []  # (direction, decoded JSON-RPC message) on jupyter-lsp's websocket

    def on_websocket(ws):
        if "/lsp/ws/" not in ws.url:
            return
        result["lsp_websockets"].append(ws.url.split("?")[0].rsplit("/", 1)[-1])
        for event, direction in (("framereceived", "in"), ("framesent", "out")):
            ws.on(event, lambda payload, d=direction: frames.append((d, json.loads(payload)))
                  if isinstance(payload, str) else None)

    def published():
        return [m["params"] for d, m in frames if d == "in" and m.get("method") == "textDocument/publishDiagnostics"]

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                          "--disable-component-update", "--no-first-run"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on("console", lambda m: result["console_errors"].append(m.text[:300]) if m.type == "error" else None)
            page.on("websocket", on_websocket)
            t0 = time.time()
            page.goto(f"http://127.0.0.1:{port}/lab/tree/train.ipynb?token={TOKEN}")
            page.wait_for_selector(".jp-Notebook .jp-CodeCell .cm-content", timeout=args.timeout * 1000)
            result["timings"]["notebook_shown_s"] = round(time.time() - t0, 1)
            # The squiggle: CodeMirror's lint decoration that jupyterlab-lsp adds for each diagnostic.
            page.wait_for_selector(".jp-Notebook .cm-lintRange", timeout=args.timeout * 1000)
            result["timings"]["first_squiggle_s"] = round(time.time() - t0, 1)
            while time.time() - t0 < args.timeout and not any(p_["diagnostics"] for p_ in published()):
                time.sleep(0.2)
            page.wait_for_timeout(1000)  # let a late re-publication settle before reading the cells
            result["squiggles"] = page.eval_on_selector_all(
                ".jp-Notebook .jp-Cell", """cells => cells.map((cell, i) => ({
                    cell: i + 1,
                    type: cell.classList.contains('jp-CodeCell') ? 'code' : 'markdown',
                    ranges: [...cell.querySelectorAll('.cm-lintRange')].map(r => ({text: r.textContent, cls: r.className})),
                }))""")
            page.screenshot(path=os.path.join(args.shots, "jupyterlab-notebook.png"))
            # The tooltip over the squiggle (jupyterlab-lsp shows the diagnostic's message there).
            squiggle = page.locator(".jp-Notebook .cm-lintRange").first
            squiggle.hover()
            try:
                page.wait_for_selector(".cm-tooltip", timeout=args.timeout * 1000)
                result["tooltip"] = page.inner_text(".cm-tooltip")
            except Exception as e:  # reported, not fatal: the panel and the squiggle are the main checks
                result["tooltip_error"] = str(e).splitlines()[0]
            page.screenshot(path=os.path.join(args.shots, "jupyterlab-tooltip.png"))
            page.mouse.move(5, 450)
            # jupyterlab-lsp's diagnostics panel, opened as a user would from the cell's context menu.
            page.locator(".jp-Notebook .jp-CodeCell .cm-content").nth(1).click()
            page.evaluate("window.jupyterapp.commands.execute('lsp:show-diagnostics-panel')")
            page.wait_for_selector(".lsp-diagnostics-listing tbody tr", timeout=args.timeout * 1000)
            result["panel_rows"] = page.eval_on_selector_all(
                ".lsp-diagnostics-listing tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))")
            result["panel_headers"] = page.eval_on_selector_all(
                ".lsp-diagnostics-listing thead th", "ths => ths.map(t => t.innerText.trim())")
            page.screenshot(path=os.path.join(args.shots, "jupyterlab-diagnostics-panel.png"))
        finally:
            browser.close()
    result["published"] = published()
    result["opened"] = [m["params"]["textDocument"] for d, m in frames if d == "out" and m.get("method") == "textDocument/didOpen"]
    result["server_info"] = next((m["result"].get("serverInfo") for d, m in frames
                                  if d == "in" and m.get("id") == 0 and "result" in m), None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True, help="the jupyter_server_config.json to run JupyterLab with")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--not-activated", action="store_true", help="leave the environment's bin/ off PATH")
    parser.add_argument("--lsp-settings", help="a plugin.jupyterlab-settings for @jupyter-lsp/jupyterlab-lsp")
    parser.add_argument("--out", required=True)
    parser.add_argument("--shots", help="folder for the screenshots (default: WORKDIR)")
    parser.add_argument("--chromium", default=os.environ.get("TFPERF_CHROMIUM", "/usr/bin/chromium"))
    # Each wait ends as soon as its condition holds (a few seconds here); the bound is for a broken
    # session, set above what a stalled CI machine needed (JupyterLab alone took more than 90 s there).
    parser.add_argument("--timeout", type=int, default=300, help="seconds for each wait")
    args = parser.parse_args()
    args.shots = args.shots or args.workdir
    os.makedirs(args.shots, exist_ok=True)
    result = {"ok": False, "timings": {}, "console_errors": [], "lsp_websockets": []}
    t0 = time.time()
    port = free_port()
    proc = start_lab(args, port)
    try:
        wait_ready(port, proc, args.timeout)
        result["timings"]["jupyterlab_up_s"] = round(time.time() - t0, 1)
        result["lsp_sessions_before"] = lsp_status(port)
        drive(args, port, result)
        result["lsp_sessions_after"] = lsp_status(port)
        result["ok"] = True
    except Exception:
        result["error"] = traceback.format_exc()
        print(result["error"], file=sys.stderr)
    finally:
        result["timings"]["total_s"] = round(time.time() - t0, 1)
        try:  # the server and its children (kernel, tfperf-lsp) are in its own process group
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
