"""Issue 15, end to end over stdio: nothing runs unasked (1, 2), refusals are not errors (16),
stale resolves say ContentModified (5), a broken fix drops out alone (6), $/cancelRequest kills
the worker (10), unopened and special files (11), huge documents (13), bad settings (14), and
edits below a form feed land where the editor put them (4). The worker is a TensorFlow-free
stand-in (fake_worker.py) that leaves a marker file when it starts."""
import asyncio
import os
import shutil
import sys
import textwrap

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, client_capabilities

from tests.lsp.helpers import apply_text_edits, diagnostics, edits_for, record_versions

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FAKE = os.path.join(HERE, "fake_worker.py")

CODE = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def g(x, step):
        return x * tf.cast(step, tf.float32)

    for step in range(3):
        g(tf.ones([2]), step)
    """
)


def started(markers):
    return sorted(p for p in os.listdir(markers) if p.startswith("started-"))


async def session(tmp_path, *, options=None, capabilities="neovim@v0.7.0", server="tfperf_server", mode="ok"):
    markers = tmp_path / "markers"
    markers.mkdir(exist_ok=True)
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    env = {**os.environ, "TFPERF_CACHE_DIR": str(tmp_path / "cache"), "FAKE_MARKER_DIR": str(markers),
           "FAKE_MODE": mode, "PYTHONPATH": ROOT}
    script = os.path.join(ROOT, "server", "tfperf_server.py") if server == "tfperf_server" else os.path.join(HERE, server)
    client = await ClientServerConfig(server_command=[sys.executable, script], server_env=env).start()
    record_versions(client)
    opts = {"benchmark": {"workerCommand": [sys.executable, FAKE], "timeBudget": 0.5}}
    for key, value in (options or {}).items():
        opts[key] = {**opts.get(key, {}), **value} if isinstance(value, dict) else value
    client.set_configuration({"tfperf": opts})
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(capabilities), root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        initialization_options=opts))
    return client, workspace, markers


def open_doc(client, path, text, version=1):
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))
    return uri


async def refused(coro):
    with pytest.raises(JsonRpcException) as info:
        await coro
    return info.value


def command(client, name, *args):
    return client.workspace_execute_command_async(types.ExecuteCommandParams(command=name, arguments=list(args)))


def errors_logged(client):
    return [m.message for m in client.log_messages if m.type == types.MessageType.Error]


async def test_code_actions_and_hovers_start_no_worker_only_a_benchmark_does(tmp_path):
    client, ws, markers = await session(tmp_path)
    try:
        uri = open_doc(client, ws / "a.py", CODE)
        found = await diagnostics(client, uri, version=1)
        finding = next(d for d in found if d.code == "TFP101")
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=finding.range,
            context=types.CodeActionContext(diagnostics=[finding])))
        assert any(a.title.startswith("Benchmark") for a in actions)
        await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=finding.range.start))
        await asyncio.sleep(1.0)  # the old warm-up started at once, in the background
        assert started(markers) == [], "a code action or a hover started the benchmark worker"
        answer = await command(client, "tfperf.benchmark", uri, finding.data["id"])
        assert answer["results"][0]["verdict"] == "faster"
        assert len(started(markers)) >= 1
        # the worker ran in a private directory, not the server's or the workspace's
        cwd = (markers / started(markers)[0]).read_text()
        assert cwd not in (str(ws), os.getcwd())
    finally:
        await client.shutdown_session()


async def test_the_probe_runs_code_and_is_refused_when_untrusted_at_info_level(tmp_path):
    client, ws, markers = await session(tmp_path, options={"workspaceTrusted": False})
    try:
        error = await refused(command(client, "tfperf.probeDevice"))
        assert error.code == -32803 and "trust" in error.message
        uri = (ws / "nothing.py").as_uri()  # a file the editor never opened
        error = await refused(client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 0))))
        assert error.code == -32803 and "not open" in error.message
        await asyncio.sleep(0.2)
        assert started(markers) == []
        assert errors_logged(client) == []  # expected refusals, no tracebacks
        assert any("trust" in m.message and m.type == types.MessageType.Info for m in client.log_messages)
    finally:
        await client.shutdown_session()


async def test_a_worker_command_inside_the_workspace_needs_explicit_trust_and_is_shown(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    shutil.copy(FAKE, workspace / "evil_worker.py")
    evil = [sys.executable, str(workspace / "evil_worker.py")]
    client, ws, markers = await session(tmp_path, options={"benchmark": {"workerCommand": evil}},
                                        capabilities="visual-studio-code")
    try:
        uri = open_doc(client, ws / "a.py", CODE)
        found = await diagnostics(client, uri, version=1)
        finding = next(d for d in found if d.code == "TFP101")
        for name, args in (("tfperf.benchmark", [uri, finding.data["id"]]), ("tfperf.probeDevice", [])):
            error = await refused(command(client, name, *args))
            assert error.code == -32803 and "evil_worker.py" in error.message
        assert started(markers) == []
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"tfperf": {"workspaceTrusted": True}}))
        client.set_configuration({"tfperf": {"workspaceTrusted": True, "benchmark": {"workerCommand": evil}}})
        answer = await command(client, "tfperf.benchmark", uri, finding.data["id"])
        assert answer["results"][0]["verdict"] == "faster"
        assert len(started(markers)) >= 1
        begins = [r for reports in client.progress_reports.values() for r in reports
                  if isinstance(r, types.WorkDoneProgressBegin)]
        assert begins and "evil_worker.py" in begins[0].message
        assert any("evil_worker.py" in m.message for m in client.log_messages)
    finally:
        await client.shutdown_session()


async def test_cancel_request_kills_the_worker(tmp_path):
    client, ws, markers = await session(tmp_path, mode="hang")
    try:
        uri = open_doc(client, ws / "a.py", CODE)
        found = await diagnostics(client, uri, version=1)
        finding = next(d for d in found if d.code == "TFP101")
        known = set(client.protocol._request_futures)
        request = asyncio.ensure_future(command(client, "tfperf.benchmark", uri, finding.data["id"]))
        for _ in range(400):  # until the stand-in worker reports its (endless) job
            if any(isinstance(r, types.WorkDoneProgressReport) for rs in client.progress_reports.values() for r in rs):
                break
            await asyncio.sleep(0.05)
        pids = [int(name.split("-")[1]) for name in started(markers)]
        assert pids
        msg_id = next(i for i in client.protocol._request_futures if i not in known)
        client.protocol.notify("$/cancelRequest", types.CancelParams(id=msg_id))
        for _ in range(100):
            alive = [p for p in pids if _alive(p)]
            if not alive:
                break
            await asyncio.sleep(0.05)
        assert not [p for p in pids if _alive(p)], "the worker outlived $/cancelRequest"
        with pytest.raises(JsonRpcException):
            await request
    finally:
        await client.shutdown_session()


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def test_a_fix_that_cannot_be_built_drops_out_alone(tmp_path):
    client, ws, markers = await session(tmp_path, server="broken_fix_server.py", capabilities="emacs")
    try:
        uri = open_doc(client, ws / "a.py", CODE)
        found = await diagnostics(client, uri, version=1)
        finding = next(d for d in found if d.code == "TFP101")
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=finding.range,
            context=types.CodeActionContext(diagnostics=[finding])))
        titles = [a.title for a in actions]
        assert any(t.startswith("Ignore TFP101") for t in titles)
        assert any(t.startswith("Show documentation") for t in titles)
        assert not any("(TFP101)" in t for t in titles)  # the fix itself is gone
        assert any("cannot be built" in m.message for m in client.log_messages)  # said, not hidden
    finally:
        await client.shutdown_session()


async def test_resolving_after_a_change_says_content_modified(tmp_path):
    client, ws, markers = await session(tmp_path, capabilities="visual-studio-code")
    try:
        uri = open_doc(client, ws / "a.py", CODE)
        found = await diagnostics(client, uri, version=1)
        finding = next(d for d in found if d.code == "TFP101")
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=finding.range,
            context=types.CodeActionContext(diagnostics=[finding])))
        fix = next(a for a in actions if "(TFP101)" in a.title)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)), text="# x\n")]))
        error = await refused(client.code_action_resolve_async(fix))
        assert error.code == -32801
        assert errors_logged(client) == []
    finally:
        await client.shutdown_session()


async def test_resolving_a_fix_that_cannot_be_built_is_refused_with_the_reason(tmp_path):
    """A client that resolves edits lazily (VS Code) asks for the fix after listing it: a fix that
    cannot be built is refused (RequestFailed, saying so), not passed off as a changed document."""
    client, ws, markers = await session(tmp_path, server="broken_fix_server.py", capabilities="visual-studio-code")
    try:
        uri = open_doc(client, ws / "a.py", CODE)
        found = await diagnostics(client, uri, version=1)
        finding = next(d for d in found if d.code == "TFP101")
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=finding.range,
            context=types.CodeActionContext(diagnostics=[finding])))
        fix = next(a for a in actions if "(TFP101)" in a.title)
        error = await refused(client.code_action_resolve_async(fix))
        assert error.code == -32803 and "cannot be applied" in error.message
        assert any("cannot be built" in m.message for m in client.log_messages)
    finally:
        await client.shutdown_session()


async def test_an_edit_below_a_form_feed_lands_where_the_editor_put_it(tmp_path):
    """The issue's repro: delete `z = f(x, i)` below a \\f, then "Ignore" must not bring it back."""
    text = textwrap.dedent(
        """\
        import tensorflow as tf

        @tf.function
        def g(x, step):
            return x * tf.cast(step, tf.float32)
        \x0c
        for step in range(3):
            z = f(x, i)
            g(tf.ones([2]), step)
        """
    )
    client, ws, markers = await session(tmp_path)
    try:
        uri = open_doc(client, ws / "a.py", text)
        await diagnostics(client, uri, version=1)
        line = text.split("\n").index("    z = f(x, i)")
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line, 0), end=types.Position(line + 1, 0)), text="")]))
        shadow = text.replace("    z = f(x, i)\n", "")
        found = await diagnostics(client, uri, version=2)
        finding = next(d for d in found if d.code == "TFP101")
        assert shadow.split("\n")[finding.range.start.line].strip().startswith("g(")
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=finding.range,
            context=types.CodeActionContext(diagnostics=[finding])))
        ignore = next(a for a in actions if a.title.startswith("Ignore TFP101"))
        after = apply_text_edits(shadow, edits_for(ignore.edit, uri, version=2))
        assert "z = f(x, i)" not in after
        assert "# tfperf: ignore[TFP101]" in after
    finally:
        await client.shutdown_session()


async def test_a_document_grown_past_the_limit_has_its_diagnostics_cleared(tmp_path):
    client, ws, markers = await session(tmp_path)
    try:
        uri = open_doc(client, ws / "a.py", CODE)
        assert await diagnostics(client, uri, version=1)
        from tfperf_lsp.lsp.state import MAX_DOCUMENT_CHARS

        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=CODE + "#" * MAX_DOCUMENT_CHARS + "\n")]))
        assert list(await diagnostics(client, uri, version=2)) == []
    finally:
        await client.shutdown_session()


async def test_a_bad_setting_is_reported_once_and_the_last_good_value_kept(tmp_path):
    client, ws, markers = await session(tmp_path)
    try:
        uri = open_doc(client, ws / "a.py", CODE)
        await diagnostics(client, uri, version=1)
        bad = {"tfperf": {"benchmark": {"timeout": "abc"}, "inlayHints": True}}
        client.set_configuration(bad)
        before = len(client.log_messages)
        for _ in range(2):
            client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=bad))
        client.diagnostics.pop(uri, None)
        assert await diagnostics(client, uri)  # refreshed after the change
        await asyncio.sleep(0.2)
        mentions = [m for m in client.log_messages[before:] if "benchmark.timeout" in m.message]
        assert len(mentions) == 1 and mentions[0].type == types.MessageType.Warning
        assert errors_logged(client) == []
    finally:
        await client.shutdown_session()
