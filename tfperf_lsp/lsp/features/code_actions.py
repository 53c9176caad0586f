"""Code actions: the rule's quick fix (edits built lazily on resolve), ignore-this-line, docs."""
from __future__ import annotations

import asyncio
import logging

from lsprotocol import types

from tfperf_lsp.engine import suppression_edit_text
from tfperf_lsp.lsp.convert import SOURCE, from_position, to_diagnostic, workspace_edit
from tfperf_lsp.lsp.features.benchmark import benchmark_actions
from tfperf_lsp.lsp.features.documents import codec, current_result
from tfperf_lsp.lsp.refusals import ContentModified, Refusal
from tfperf_lsp.lsp.notebooks import cell_fix
from tfperf_lsp.model import Edit, Pos, Span

log = logging.getLogger("tfperf_lsp")

FIX_KIND = types.CodeActionKind.QuickFix
IGNORE_KIND = types.CodeActionKind.QuickFix
DOCS_KIND = types.CodeActionKind.Empty
# `"editor.codeActionsOnSave": {"source.fixAll.tfperf": "explicit"}` applies the safe fixes on save.
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.tfperf"


class StaleDocument(ContentModified):
    """The document changed after the action was offered: its edit would land in the wrong place.
    ContentModified (-32801): clients drop the answer quietly and ask again."""


def register(server) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True),
    )
    async def code_actions(ls, params: types.CodeActionParams):
        uri = params.text_document.uri
        result = await current_result(ls, uri)
        if result is None:
            return []
        analysis = result.analysis
        position_codec = codec(ls, uri)
        start = from_position(position_codec, analysis.source, params.range.start)
        end = from_position(position_codec, analysis.source, params.range.end)
        wanted_ids = {d.data.get("id") for d in params.context.diagnostics if d.source == SOURCE and isinstance(d.data, dict)}
        findings = [
            f for f in analysis.findings
            if f.id in wanted_ids or (f.span.start <= end and start <= f.span.end)
        ]
        only = params.context.only
        actions: list[types.CodeAction] = []
        if only is not None and _wanted(only, FIX_ALL_KIND):
            fix_all = await asyncio.to_thread(_fix_all_action, ls, uri, result)
            if fix_all is not None:
                actions.append(fix_all)
        lazy = _resolves_edits(ls)
        for finding in findings:
            diagnostic = to_diagnostic(position_codec, analysis.source, finding)
            if finding.fix_title and not analysis.stale and _wanted(only, FIX_KIND):
                measured = result.measured.get(finding.id)
                differs = measured is not None and measured[1].outputs_match is False
                action = types.CodeAction(
                    title=f"{finding.fix_title} ({finding.code}){' - changes results (measured)' if differs else ''}",
                    kind=FIX_KIND,
                    diagnostics=[diagnostic],
                    is_preferred=finding.fix_applicability == "safe" and not differs,
                    data={"uri": uri, "version": result.version, "id": finding.id, "action": "fix"},
                )
                if not lazy:
                    action = _resolved_or_none(ls, action, finding)
                if action is not None:
                    actions.append(action)
            if _wanted(only, IGNORE_KIND):
                actions.append(_ignore_action(ls, uri, result, finding, diagnostic))
            if _wanted(only, DOCS_KIND) and only is None:
                actions.append(
                    types.CodeAction(
                        title=f"Show documentation for {finding.code}",
                        kind=DOCS_KIND,
                        diagnostics=[diagnostic],
                        command=types.Command(title="Show rule docs", command="tfperf.showRuleDocs", arguments=[finding.code]),
                    )
                )
            if _wanted(only, types.CodeActionKind.QuickFix):
                actions.extend(benchmark_actions(ls, uri, result, finding, diagnostic))
        return actions

    @server.feature(types.CODE_ACTION_RESOLVE)
    def resolve_action(ls, action: types.CodeAction):
        return resolve(ls, action)


def _resolved_or_none(ls, action: types.CodeAction, finding) -> types.CodeAction | None:
    """The action with its edit, or None when the fix cannot be built here (LibCST refuses a
    tab-indented file, say): that one action drops out, the others stay."""
    try:
        return resolve(ls, action)
    except (StaleDocument, Refusal):
        return None
    except Exception:  # noqa: BLE001 - one broken fix must not take the whole answer
        log.exception("the fix for %s (%s) could not be built", finding.code, finding.id)
        return None


def resolve(ls, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    if data.get("action") != "fix":
        return action
    uri = data["uri"]
    document = ls.workspace.get_text_document(uri)
    result = ls.state.cached(uri, data.get("version"))
    if document.version != data.get("version") or result is None:
        raise StaleDocument(f"{uri} changed since this fix was offered; ask for code actions again")
    finding = result.analysis.finding(data["id"])
    try:
        fix = cell_fix(result.analysis, finding) if finding else None  # fix_for, mapped into a cell
    except Exception as exc:  # noqa: BLE001 - the rewrite cannot be built for this text
        log.info("the fix for %s cannot be built: %s", data["id"], exc)
        raise Refusal(f"this fix cannot be applied to this file ({type(exc).__name__}: {exc})") from exc
    if finding is None:
        raise StaleDocument(f"the fix for {data['id']} is no longer available")
    if fix is None:  # engine.fix_for logged why the rule's fix could not be built
        raise Refusal("this fix cannot be applied to this file (the server's log says why)")
    action.edit = workspace_edit(
        codec(ls, uri), result.analysis.source, uri, result.version, fix.edits, versioned=_versioned_edits(ls)
    )
    return action


def _fix_all_action(ls, uri, result) -> types.CodeAction | None:
    """Every safe fix, to a fixed point, as one edit of the whole document (what --fix writes)."""
    from tfperf_lsp.checker import fix_until_stable

    analysis = result.analysis
    if analysis.stale or analysis.ctx is None or not any(f.fix_title and f.fix_applicability == "safe" for f in analysis.findings):
        return None
    source = analysis.source
    ctx = analysis.ctx
    new_text, _ = fix_until_stable(source.text, analysis, ctx.path, ctx.settings, ctx.workspace)
    if new_text == source.text:
        return None
    last = len(source.lines) - 1
    edit = Edit(Span(Pos(0, 0), Pos(last, len(source.line(last)))), new_text)
    return types.CodeAction(
        title="tfperf: apply all safe fixes",
        kind=FIX_ALL_KIND,
        edit=workspace_edit(codec(ls, uri), source, uri, result.version, [edit], versioned=_versioned_edits(ls)),
    )


def _ignore_action(ls, uri, result, finding, diagnostic) -> types.CodeAction:
    source = result.analysis.source
    line = finding.span.start.line
    new_line = suppression_edit_text(source.line(line), finding.code)
    edit = Edit(Span(Pos(line, 0), Pos(line, len(source.line(line)))), new_line)
    return types.CodeAction(
        title=f"Ignore {finding.code} on this line",
        kind=IGNORE_KIND,
        diagnostics=[diagnostic],
        edit=workspace_edit(codec(ls, uri), source, uri, result.version, [edit], versioned=_versioned_edits(ls)),
    )


def _wanted(only, kind) -> bool:
    return only is None or any(kind == k or str(kind).startswith(str(k) + ".") for k in only)


def _resolves_edits(ls) -> bool:
    capability = ls.client_capabilities.text_document
    code_action = capability.code_action if capability else None
    support = code_action.resolve_support if code_action else None
    return bool(support and "edit" in support.properties)


def _versioned_edits(ls) -> bool:
    workspace = ls.client_capabilities.workspace
    edit = workspace.workspace_edit if workspace else None
    return bool(edit and edit.document_changes)
