"""The tfperf language server: pygls wiring. Each feature lives in its own module under features/."""
from __future__ import annotations

import asyncio
import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from tfperf_lsp import __version__
from tfperf_lsp.lsp.refusals import is_refusal
from tfperf_lsp.lsp.state import ServerState

log = logging.getLogger("tfperf_lsp")


class TfperfProtocol(LanguageServerProtocol):
    """pygls (2.1) files the future of every handler it runs in ``_request_futures``, under the
    request's id or, for a notification and for each handler a built-in feature chains to
    (didOpen, didChange, didClose, executeCommand ...), under a fresh uuid. Only a request's own
    entry is removed when it is answered: the others stayed forever, a future with its lock and
    condition (and an asyncio task for an async handler) per notification, 8-14 KB per
    document opened, edited and closed (issue 15, point 17). A finished handler's entry is
    dropped here; a running one stays, so $/cancelRequest still finds it."""

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        super()._execute_handler(msg_id, handler, callback, args=args, kwargs=kwargs)
        future = self._request_futures.get(msg_id)
        if future is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop to drop it on: keep pygls's behaviour
        # Dropped later, on the event loop: a thread-pool future finishes on a worker thread, and
        # pygls's shutdown cancels futures while it iterates this table (a concurrent future
        # runs its callbacks inside cancel()); removing the entry there would break its loop.
        future.add_done_callback(lambda done: _call_soon(loop, self._drop_finished, msg_id, done))

    def _drop_finished(self, msg_id, future) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]


def _call_soon(loop: asyncio.AbstractEventLoop, function, *args) -> None:
    try:
        loop.call_soon_threadsafe(function, *args)
    except RuntimeError:
        pass  # the loop is closed: the server is gone, and its table with it


class TfperfServer(LanguageServer):
    def __init__(self):
        from tfperf_lsp.lsp.notebooks import SELECTOR

        super().__init__(
            "tfperf", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=SELECTOR, protocol_cls=TfperfProtocol,
        )
        self.state = ServerState(self)

    def report_server_error(self, error, source):
        # Log every internal error with its traceback instead of a popup per failure; the
        # request that failed still gets its error response. Expected refusals are not errors.
        if is_refusal(error):
            log.info("%s", error)
            return
        log.exception("internal error (%s): %s", getattr(source, "__name__", source), error, exc_info=error)


class _ClientLogHandler(logging.Handler):
    """Python logging -> window/logMessage, so the editor's output panel shows the server log."""

    _TYPES = {
        logging.ERROR: types.MessageType.Error,
        logging.WARNING: types.MessageType.Warning,
        logging.INFO: types.MessageType.Info,
        logging.DEBUG: types.MessageType.Log,
    }

    def __init__(self, server: TfperfServer):
        super().__init__()
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        try:
            kind = self._TYPES.get(record.levelno, types.MessageType.Log)
            self.server.window_log_message(types.LogMessageParams(type=kind, message=self.format(record)))
        except Exception:  # noqa: BLE001 - logging must never take the server down
            pass


def create_server() -> TfperfServer:
    from tfperf_lsp.lsp.features import register_all

    server = TfperfServer()
    handler = _ClientLogHandler(server)
    handler.setFormatter(logging.Formatter("%(message)s"))  # the message type carries the level
    logger = logging.getLogger("tfperf_lsp")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    register_all(server)
    return server
