"""Hover on a finding: what is wrong, why it is slow, the fix, the docs (and measured timings)."""
from __future__ import annotations

import re

from lsprotocol import types

from tfperf_lsp.lsp.convert import from_position, to_range
from tfperf_lsp.lsp.features import observe
from tfperf_lsp.lsp.features.documents import codec, current_result
from tfperf_lsp.model import Finding
from tfperf_lsp.rules import rule_by_code


def register(server) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls, params: types.HoverParams):
        uri = params.text_document.uri
        result = await current_result(ls, uri)
        if result is None:
            return None
        source = result.analysis.source
        position_codec = codec(ls, uri)
        pos = from_position(position_codec, source, params.position)
        hits = [f for f in result.analysis.findings if _contains(f, pos)]
        parts = observe.hover_parts(ls, uri, result, pos.line)
        if not hits and not parts:
            return None
        parts += [hover_markdown(ls, uri, f, result.analysis.stale) for f in hits]
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)),
            range=to_range(position_codec, source, hits[0].span) if hits else None,
        )


def _contains(finding: Finding, pos) -> bool:
    return finding.span.start <= pos <= finding.span.end


def hover_markdown(ls, uri: str, finding: Finding, stale: bool) -> str:
    rule = rule_by_code(finding.code)
    lines = []
    benchmark = ls.state.benchmark_markdown(uri, finding)
    if benchmark:
        lines += [benchmark, ""]
    lines.append(f"**{finding.code}** `{rule.name}` · {finding.category} · {finding.severity.value}")
    lines += ["", finding.message]
    why = _section(rule.docs, "Why is this slow") if rule else None
    if why:
        lines += ["", f"**Why:** {why}"]
    if finding.fix_title and not stale:
        note = " (changes behaviour: review it)" if finding.fix_applicability == "unsafe" else ""
        lines += ["", f"**Fix:** {finding.fix_title}{note}: a quick fix is available."]
    elif stale:
        lines += ["", "_From the last version that parsed: fix the syntax error to refresh._"]
    if rule:
        lines += ["", f"[TensorFlow guide]({rule.doc_url}) · `tfperf rule {finding.code}` · silence with `# tfperf: ignore[{finding.code}]`"]
    return "\n".join(lines)


def _section(docs: str, heading: str) -> str | None:
    """The first paragraph under ``## heading`` of a rule's docs, on one line."""
    match = re.search(rf"##\s*{re.escape(heading)}\s*\n(.*?)(\n\s*\n|\n\s*##|$)", docs, re.S)
    if not match:
        return None
    return " ".join(line.strip() for line in match.group(1).strip().splitlines())
