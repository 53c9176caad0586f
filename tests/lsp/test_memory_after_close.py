"""Issue 15 point 17: the server grew 8-14 KB with every document opened, edited and closed.

The server runs in this process and gets its messages through pygls's own dispatch (the path a
message read from stdin takes), so the real handlers run: pygls's built-in didOpen / didChange /
didClose, which chain to ours, our requests, the debounce. After many distinct documents are
opened and closed, nothing may remember them: pygls's table of running handlers (it kept the
future of every notification), our per-document state, the workspace index.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os

from tfperf_lsp.lsp.server import create_server

DOCUMENTS = 30
TEXT = """\
import tensorflow as tf
from helpers import step

for i in range(3):
    step(tf.ones([2]), i)
x{n} = {n}
"""


class Client:
    """What an editor does over the pipe: its messages go through pygls's dispatch; it answers the
    server's requests (configuration, progress) and keeps the responses to its own."""

    def __init__(self, server):
        self.server = server
        self.protocol = server.protocol
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future] = {}
        self.protocol.set_writer(self, include_headers=False)

    def write(self, data: bytes) -> None:
        message = json.loads(data)
        if "method" in message and "id" in message:  # the server asks: answer as an editor would
            result = [None] if message["method"] == "workspace/configuration" else None
            asyncio.get_running_loop().call_soon(self._deliver, {"id": message["id"], "result": result})
        elif "id" in message and message["id"] in self.waiting:
            self.waiting.pop(message["id"]).set_result(message)

    def close(self) -> None:
        pass

    def _deliver(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message})
        self.protocol.handle_message(json.loads(body, object_hook=self.protocol.structure_message))

    def notify(self, method: str, params) -> None:
        self._deliver({"method": method, "params": params})

    async def request(self, method: str, params) -> dict:
        self.next_id += 1
        answer = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = answer
        self._deliver({"id": self.next_id, "method": method, "params": params})
        return await asyncio.wait_for(answer, 30)


async def settle() -> None:
    """Until every task but this one has finished (analyses, debounced pushes, handlers)."""
    for _ in range(600):
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
        if not others:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"tasks still running: {others}")


async def session(root, pull: bool) -> object:
    server = create_server()
    client = Client(server)
    capabilities = {"textDocument": {"diagnostic": {}} if pull else {}, "workspace": {"configuration": True},
                    "window": {"workDoneProgress": True}}
    await client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities,
                                        "initializationOptions": {"workspaceTrusted": False}})
    client.notify("initialized", {})
    await settle()
    for n in range(DOCUMENTS):
        uri = (root / f"doc{n}.py").as_uri()
        text = TEXT.format(n=n)
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 5, "character": 0}, "end": {"line": 5, "character": 0}}, "text": "# edited\n"}]})
        if pull:
            answer = await client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            assert "result" in answer, answer
        answer = await client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 4}})
        assert "result" in answer, answer
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        await settle()
    return server


def run_session(tmp_path, pull: bool):
    (tmp_path / "helpers.py").write_text("import tensorflow as tf\n\n@tf.function\ndef step(x, i):\n    return x * i\n")
    logger = logging.getLogger("tfperf_lsp")  # create_server routes this logger to the client
    saved = logger.handlers[:], logger.level, logger.propagate
    try:
        return asyncio.run(session(tmp_path, pull))
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved


def assert_nothing_kept(server):
    futures = server.protocol._request_futures  # pygls's table of running handlers
    assert not futures, f"{len(futures)} finished handlers kept after {DOCUMENTS} documents: {list(futures.values())[:3]}"
    state = server.state
    assert not server.workspace.text_documents
    for name in ("sessions", "results", "recent", "pending", "inflight", "too_large", "problems"):
        assert not getattr(state, name), f"state.{name} keeps {getattr(state, name)}"
    index = state.index
    for name in ("_facts", "_answers", "consulted"):
        kept = [key for key in getattr(index, name) if os.path.basename(key[0] if isinstance(key, tuple) else key).startswith("doc")]
        assert not kept, f"index.{name} keeps closed documents: {kept[:3]}"


def test_push_client_keeps_nothing_of_closed_documents(tmp_path):
    assert_nothing_kept(run_session(tmp_path, pull=False))


def test_pull_client_keeps_nothing_of_closed_documents(tmp_path):
    assert_nothing_kept(run_session(tmp_path, pull=True))


def test_shutdown_while_a_chained_handler_still_runs_answers_without_error(tmp_path):
    """pygls's shutdown cancels the handlers still running while it iterates its table; a
    generator handler's future (pygls's built-ins chain to ours this way) runs its done callbacks
    inside cancel(), so dropping finished entries there broke shutdown ("dictionary changed size
    during iteration", seen once in CI)."""

    async def scenario():
        server = create_server()
        client = Client(server)
        await client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        await settle()
        release = asyncio.Event()

        async def waits():
            await release.wait()

        def chained():
            yield waits, (), None

        server.protocol._execute_handler("still-running", chained, callback=lambda future: None)
        answer = await client.request("shutdown", None)
        release.set()
        await settle()
        return answer

    logger = logging.getLogger("tfperf_lsp")
    saved = logger.handlers[:], logger.level, logger.propagate
    try:
        answer = asyncio.run(scenario())
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved
    assert "error" not in answer, answer
