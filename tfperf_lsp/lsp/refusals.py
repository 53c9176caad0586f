"""Expected refusals (untrusted workspace, unopened file, stale fix): their own error codes, an
info-level log line, no traceback. Internal errors stay -32603 with a traceback."""
from __future__ import annotations

from pygls.exceptions import JsonRpcContentModified, JsonRpcException


class Refusal(JsonRpcException):
    """The request was understood and declined (LSP RequestFailed)."""

    CODE = -32803

    def __init__(self, message: str):
        super().__init__(message=message)


class ContentModified(JsonRpcContentModified):
    """The document changed after the request was made: ask again (LSP ContentModified)."""

    def __init__(self, message: str):
        super().__init__(message=message)


def is_refusal(error: BaseException) -> bool:
    return isinstance(error, (Refusal, ContentModified))
