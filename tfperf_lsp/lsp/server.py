"""The tfperf language server: pygls wiring. Each feature lives in its own module under features/."""
from __future__ import annotations

import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from tfperf_lsp import __version__
from tfperf_lsp.lsp.refusals import is_refusal
from tfperf_lsp.lsp.state import ServerState

log = logging.getLogger("tfperf_lsp")


class TfperfServer(LanguageServer):
    def __init__(self):
        from tfperf_lsp.lsp.notebooks import SELECTOR

        super().__init__(
            "tfperf", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental, notebook_document_sync=SELECTOR
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
