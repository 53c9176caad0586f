"""Benchmarking from the editor, end to end with a real worker (TensorFlow): code action ->
command -> work-done progress -> the finding's hover, inlay hint and message show the timings."""
import os
import sys
import textwrap

import pytest

from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from tests.lsp.helpers import diagnostics, record_versions

pytestmark = [pytest.mark.tf, pytest.mark.slow]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

COSTLY = textwrap.dedent(
    """\
    import tensorflow as tf

    def costly(x):
        aux = tf.eye(32)
        result = tf.zeros([32, 32])
        for i in range(1, 30):
            aux = tf.matmul(x, aux) / i
            result = result + aux
        return result

    x = tf.random.uniform([32, 32], minval=-1, maxval=1)
    for _ in range(100):
        y = costly(x)
    """
)


@pytest.fixture
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("bench-cache")


def server_config(cache_dir):
    env = {**os.environ, "TFPERF_CACHE_DIR": str(cache_dir)}
    return ClientServerConfig(server_command=[sys.executable, os.path.join(ROOT, "server", "tfperf_server.py")], server_env=env)


# A 1 s budget per side; the time limit only catches a hang: a stalled machine took more than the
# default 60 s for the first XLA call.
SETTINGS = {"timeBudget": 1.0, "timeout": 900}


async def start(lsp_client, tmp_path, trusted=True):
    record_versions(lsp_client)
    lsp_client.set_configuration({"tfperf": {"benchmark": SETTINGS}})
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp_path.as_uri(),
            initialization_options={"workspaceTrusted": trusted, "benchmark": SETTINGS},
        )
    )




async def open_costly(client, tmp_path):
    path = tmp_path / "costly.py"
    path.write_text(COSTLY)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=COSTLY))
    )
    found = await diagnostics(client, uri, version=1)
    finding = next(d for d in found if d.code == "TFP303")
    return uri, finding


async def test_benchmark_from_code_action_to_hover(tmp_path, cache_dir):
    client = await server_config(cache_dir).start()
    try:
        await start(client, tmp_path)
        uri, diagnostic = await open_costly(client, tmp_path)
        assert diagnostic.data["benchmarkable"] is True
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
                context=types.CodeActionContext(diagnostics=[diagnostic]),
            )
        )
        bench = next(a for a in actions if a.title == "Benchmark eager vs tf.function vs XLA")
        command = bench.command if isinstance(bench, types.Command) else bench.command
        name = command if isinstance(command, str) else command.command
        assert "tfperf.benchmark" in str(name)
        answer = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tfperf.benchmark", arguments=[uri, diagnostic.data["id"]])
        )
        result = answer["results"][0]
        assert result["verdict"] in ("faster", "slower", "equivalent", "inconclusive", "noisy-machine"), result
        # Progress: begin, reports with percentages, end.
        reports = [r for values in client.progress_reports.values() for r in values]
        assert any(isinstance(r, types.WorkDoneProgressBegin) and r.cancellable for r in reports)
        assert any(isinstance(r, types.WorkDoneProgressReport) and r.percentage is not None for r in reports)
        assert any(isinstance(r, types.WorkDoneProgressEnd) for r in reports)
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=diagnostic.range.start)
        )
        text = hover.contents.value
        assert text.index("**Benchmark**") < text.index("**TFP303**")  # measured result first
        for expected in ("eager", "tf.function", "tf.function+XLA", "first call", "TF 2.", "Python 3.", "inputs: x: float32[32,32]", "█"):
            assert expected in text, expected
        # The message and the inlay hint say the measured ratio too: the server republished the
        # diagnostics before it answered the command.
        refreshed = await diagnostics(client, uri)
        assert "measured" in next(d for d in refreshed if d.code == "TFP303").message
        hints = await client.text_document_inlay_hint_async(
            types.InlayHintParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=14, character=0)),
            )
        )
        assert any("measured" in h.label for h in hints)
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_result_survives_a_restart_and_goes_when_the_code_changes(tmp_path, cache_dir):
    first = await server_config(cache_dir).start()
    try:
        await start(first, tmp_path)
        uri, diagnostic = await open_costly(first, tmp_path)
        await first.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tfperf.benchmark", arguments=[uri, diagnostic.data["id"]])
        )
    finally:
        await first.shutdown_session()
        await first.stop()
    second = await server_config(cache_dir).start()
    try:
        await start(second, tmp_path)
        uri, diagnostic = await open_costly(second, tmp_path)
        assert "measured" in diagnostic.message  # from the disk cache, no worker started
        changed = COSTLY.replace("range(1, 30)", "range(1, 31)")
        second.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=changed)],
            )
        )
        after = await diagnostics(second, uri, version=2)
        assert "measured" not in next(d for d in after if d.code == "TFP303").message
    finally:
        await second.shutdown_session()
        await second.stop()


async def test_untrusted_workspace_refuses(tmp_path, cache_dir):
    client = await server_config(cache_dir).start()
    try:
        await start(client, tmp_path, trusted=False)
        uri, diagnostic = await open_costly(client, tmp_path)
        with pytest.raises(Exception, match="trust this workspace"):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="tfperf.benchmark", arguments=[uri, diagnostic.data["id"]])
            )
    finally:
        await client.shutdown_session()
        await client.stop()


SLOW = COSTLY.replace("range(1, 30)", "range(1, 400)").replace("[32, 32]", "[256, 256]").replace("tf.eye(32)", "tf.eye(256)").replace("tf.zeros([32, 32])", "tf.zeros([256, 256])")


async def test_cancel_stops_the_worker_and_the_editor_stays_responsive(tmp_path, cache_dir):
    import asyncio
    import time

    client = await server_config(cache_dir).start()
    try:
        await start(client, tmp_path)
        client.set_configuration({"tfperf": {"benchmark": {"timeBudget": 10.0}}})
        path = tmp_path / "slow.py"
        path.write_text(SLOW)
        uri = path.as_uri()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SLOW))
        )
        diagnostic = next(d for d in await diagnostics(client, uri, version=1) if d.code == "TFP303")
        command = asyncio.ensure_future(client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tfperf.benchmark", arguments=[uri, diagnostic.data["id"]])
        ))
        while not any(isinstance(r, types.WorkDoneProgressReport) for v in client.progress_reports.values() for r in v):
            await asyncio.sleep(0.1)  # the worker is running
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=diagnostic.range.start)
        )
        assert "TFP303" in hover.contents.value
        assert not command.done(), "the hover waited for the benchmark instead of answering beside it"
        server_pid = client._server.pid  # noqa: SLF001
        running = _workers_of(server_pid)
        assert running, "a worker should be running the job"
        token = next(iter(client.progress_reports))
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        # A cancel that did not land lets the job finish (10 s budget) and answer cancelled=False.
        # The bounds are loose on purpose: a loaded CI machine runs Python ~15x slower than usual.
        answer = await asyncio.wait_for(command, timeout=120)
        assert answer["cancelled"] is True
        def alive():
            return [pid for pid in running if os.path.exists(f"/proc/{pid}")]

        deadline = time.monotonic() + 30
        while alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert not alive(), "the job's worker must be gone"
    finally:
        await client.shutdown_session()
        await client.stop()


def _workers_of(server_pid):
    """Benchmark workers whose parent is the server (other processes on the machine do not count)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as handle:
                parent = int(handle.read().split(")")[-1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                command = handle.read().decode(errors="replace")
        except (OSError, ValueError):
            continue
        if parent == server_pid and "tfperf_lsp.bench.worker" in command:
            found.append(pid)
    return found
