"""Inlay hints: a short label at the end of each flagged line."""
from __future__ import annotations

from lsprotocol import types

from tfperf_lsp.lsp.convert import to_position
from tfperf_lsp.lsp.features import observe
from tfperf_lsp.lsp.features.documents import codec, current_result
from tfperf_lsp.model import Pos


def register(server) -> None:
    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
    async def inlay_hints(ls, params: types.InlayHintParams):
        uri = params.text_document.uri
        if not ls.state.settings(uri).inlay_hints:
            return []
        result = await current_result(ls, uri)
        if result is None:
            return []
        source = result.analysis.source
        position_codec = codec(ls, uri)
        first, last = params.range.start.line, params.range.end.line
        labels: dict[int, list[str]] = {}
        for finding in result.analysis.findings:
            line = finding.span.start.line
            if first <= line <= last and finding.label:
                label = ls.state.inlay_label(uri, finding)
                if label not in labels.setdefault(line, []):
                    labels[line].append(label)
        for line, texts in observe.inlay_labels(ls, uri, result, first, last).items():
            labels.setdefault(line, []).extend(texts)
        hints = []
        for line, texts in sorted(labels.items()):
            end = Pos(line, len(source.line(line).rstrip()))
            hints.append(
                types.InlayHint(
                    position=to_position(position_codec, source, end),
                    label="tfperf: " + "; ".join(texts),
                    padding_left=True,
                )
            )
        return hints
