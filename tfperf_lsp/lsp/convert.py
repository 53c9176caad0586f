"""Engine values <-> LSP types. Positions: code points (engine) <-> the client's encoding."""
from __future__ import annotations

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.model import Edit, Finding, Pos, Severity, Span
from tfperf_lsp.rules import rule_by_code

SOURCE = "tfperf"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


def to_position(codec: PositionCodec, source: SourceText, pos: Pos) -> types.Position:
    return codec.position_to_client_units(source.lines, types.Position(line=pos.line, character=pos.col))


def to_range(codec: PositionCodec, source: SourceText, span: Span) -> types.Range:
    return types.Range(start=to_position(codec, source, span.start), end=to_position(codec, source, span.end))


def from_position(codec: PositionCodec, source: SourceText, position: types.Position) -> Pos:
    server = codec.position_from_client_units(source.lines, position)
    return Pos(server.line, server.character)


def to_diagnostic(codec: PositionCodec, source: SourceText, finding: Finding, benchmarkable: bool = False) -> types.Diagnostic:
    rule = rule_by_code(finding.code)
    return types.Diagnostic(
        range=to_range(codec, source, finding.span),
        message=finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=rule.doc_url) if rule else None,
        source=SOURCE,
        data={
            "id": finding.id,
            "code": finding.code,
            "fixable": finding.fix_title is not None,
            "benchmarkable": benchmarkable,
        },
    )


def to_text_edit(codec: PositionCodec, source: SourceText, edit: Edit) -> types.TextEdit:
    return types.TextEdit(range=to_range(codec, source, edit.span), new_text=edit.new_text)


def workspace_edit(
    codec: PositionCodec, source: SourceText, uri: str, version: int | None, edits, versioned: bool
) -> types.WorkspaceEdit:
    """A versioned TextDocumentEdit when the client supports it: a stale edit is then rejected."""
    text_edits = [to_text_edit(codec, source, e) for e in sorted(edits, key=lambda e: e.span.start)]
    if versioned:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                    edits=text_edits,
                )
            ]
        )
    return types.WorkspaceEdit(changes={uri: text_edits})
