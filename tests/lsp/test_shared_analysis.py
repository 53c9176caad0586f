"""Issue 15 point 12: requests that arrive together for the same version share one analysis;
point 11/16: a request for a document the editor did not open is refused, never read from disk."""
import asyncio
import threading
from types import SimpleNamespace

import pytest

from tfperf_lsp.lsp.features.documents import current_result
from tfperf_lsp.lsp.refusals import Refusal


class State:
    def __init__(self):
        self.inflight = {}
        self.calls = 0
        self.release = threading.Event()
        self.settings_pulled = None  # the client was not asked for settings: nothing to wait for

    def cached(self, uri, version):
        return None

    def analyze(self, uri, version, text):
        self.calls += 1
        self.release.wait(10)
        return ("analysis of", version)


def server_with(text="x = 1\n", version=3):
    doc = SimpleNamespace(version=version, source=text)
    return SimpleNamespace(workspace=SimpleNamespace(text_documents={"file:///a.py": doc}), state=State())


async def test_four_requests_for_one_version_run_one_analysis():
    server = server_with()
    requests = [asyncio.ensure_future(current_result(server, "file:///a.py")) for _ in range(4)]
    await asyncio.sleep(0.05)
    server.state.release.set()
    results = await asyncio.gather(*requests)
    assert results == [("analysis of", 3)] * 4
    assert server.state.calls == 1
    assert server.state.inflight == {}


async def test_a_cancelled_request_does_not_cancel_the_shared_analysis():
    server = server_with()
    first = asyncio.ensure_future(current_result(server, "file:///a.py"))
    second = asyncio.ensure_future(current_result(server, "file:///a.py"))
    await asyncio.sleep(0.05)
    first.cancel()
    server.state.release.set()
    assert await second == ("analysis of", 3)


async def test_an_unopened_document_is_refused_not_read_from_disk():
    server = server_with()
    with pytest.raises(Refusal, match="not open"):
        await current_result(server, "file:///fifo.py")


async def test_a_result_taken_from_the_cache_before_its_analysis_resumed_still_gets_its_lookups_run():
    """The analysis thread stores its result before the coroutine that awaits it resumes (and
    starts the cross-file lookups it skipped). A request in that window takes the result from the
    cache: the lookups must be under way for it too, or a pull client that cannot be asked to pull
    again never sees the cross-file findings (seen in CI, Neovim 0.10)."""
    from tfperf_lsp.lsp.state import DocumentResult

    ran = threading.Event()
    stored = DocumentResult(3, analysis=SimpleNamespace(findings=[]), dependencies=frozenset())
    stored.pending = ("a lookup",)

    class CachingState(State):
        refine_rounds = {}
        index = SimpleNamespace(run_lookups=lambda lookups: ran.set() or len(lookups))
        results = {"file:///a.py": stored}

        def cached(self, uri, version):
            return self.results.get(uri)

        def analyze(self, uri, version, text):  # the analysis again, once the lookups are answered
            return DocumentResult(version, analysis=SimpleNamespace(findings=[]), dependencies=frozenset())

    server = server_with()
    server.state = CachingState()
    assert await current_result(server, "file:///a.py") is stored
    assert stored.refining is not None
    await stored.refining
    assert ran.is_set()
