"""Observed facts in the editor: the "tfperf.observe" command runs the file (on request only,
never in an untrusted workspace) and its facts appear as diagnostics, hovers and inlay hints
marked "observed", with the run's command and date. Facts are looked up by the document's
content (observe/store.py), so they disappear when the code changes. A static retrace hint on
a line the run saw is marked confirmed or refuted.

The other feature modules call the small hooks at the bottom (diagnostics, hover, inlay hints).
"""
from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
import uuid

from lsprotocol import types
from pygls.uris import to_fs_path

from tfperf_lsp.lsp.convert import to_range
from tfperf_lsp.model import Pos, Span
from tfperf_lsp.observe.facts import facts_from_run, line_verdicts
from tfperf_lsp.observe.runner import CommandError, ObserveOptions, run_observed
from tfperf_lsp.observe.store import ObservationStore, content_key

log = logging.getLogger("tfperf_lsp")

UNTRUSTED = "Observing runs your code; trust this workspace to enable it."
SOURCE = "tfperf (observed)"
RETRACE_CODES = frozenset({"TFP101", "TFP102", "TFP103", "TFP104", "TFP105"})
DEFAULT_MAX_SECONDS = 300.0
_SEVERITY = {"warning": types.DiagnosticSeverity.Warning, "information": types.DiagnosticSeverity.Information,
             "hint": types.DiagnosticSeverity.Hint}


def register(server) -> None:
    server.observations = ObservationStore()
    server.observed_memo = {}  # (uri, content sha) -> entry or None

    @server.command("tfperf.observe")
    async def observe(ls, uri: str, *args):
        options = args[0] if args and isinstance(args[0], dict) else {}
        return await _observe(ls, uri, options)

    @server.command("tfperf.clearObservations")
    async def clear(ls, *args):
        removed = ls.observations.clear()
        ls.observed_memo.clear()
        await _refresh(ls)
        return {"removed": removed}


async def _refresh(ls) -> None:
    from tfperf_lsp.lsp.features.diagnostics import refresh_all

    await refresh_all(ls)


def _command_label(command: list[str], cwd: str) -> str:
    shown = [os.path.basename(command[0])] + [os.path.relpath(c, cwd) if os.path.isabs(c) else c for c in command[1:]]
    return " ".join(shown)


async def _observe(ls, uri: str, options: dict) -> dict:
    if not ls.state.trusted:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=UNTRUSTED))
        raise PermissionError(UNTRUSTED)
    path = to_fs_path(uri)
    if not path or not os.path.isfile(path):
        raise ValueError("save the file first: observing runs it from disk")
    python = ls.state.bench.settings.worker_command or [sys.executable]
    cwd = os.path.dirname(path)
    command = [python[0], path]
    settings = ObserveOptions(max_seconds=float(options.get("maxSeconds") or DEFAULT_MAX_SECONDS),
                              max_steps=options.get("maxSteps"), cwd=cwd, python=list(python),
                              memory_limit_mb=int(ls.state.bench.settings.memory_limit_mb))
    cancel = threading.Event()
    token = str(uuid.uuid4())
    progress = await _start_progress(ls, token, os.path.basename(path))
    if progress:
        signal = ls.work_done_progress.tokens.get(token)
        if signal is not None:
            signal.add_done_callback(lambda f: cancel.set() if f.cancelled() else None)
    output: list[str] = []
    started = time.monotonic()

    def on_output(chunk: bytes) -> None:
        text = chunk.decode("utf-8", "replace").strip()
        if text:
            output.append(text[-200:])

    async def ticker():
        while True:
            await asyncio.sleep(1.0)
            if progress:
                last = output[-1] if output else "running"
                ls.work_done_progress.report(token, types.WorkDoneProgressReport(
                    message=f"{time.monotonic() - started:.0f} s: {last}", cancellable=True))

    tick = asyncio.ensure_future(ticker())
    try:
        outcome = await asyncio.to_thread(run_observed, command, settings, on_output=on_output,
                                          on_stderr=lambda line: log.debug("observed: %s", line), cancel=cancel)
    except asyncio.CancelledError:
        cancel.set()
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="Cancelled"))
        return {"cancelled": True}
    except CommandError as exc:
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=str(exc)))
        raise ValueError(str(exc)) from exc
    finally:
        tick.cancel()
    label = _command_label(outcome.command if not settings.python else [python[0], path], cwd)
    if outcome.run is None:
        message = outcome.problem or "no report"
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        return {"status": "error", "problem": message, "cancelled": cancel.is_set()}
    facts = facts_from_run(outcome.run)
    stored = ls.observations.put_run(outcome.run, facts, [label], outcome.date)
    ls.observed_memo.clear()
    summary = f"{sum(1 for f in facts if f['kind'] == 'retrace' and f['diagnostic'])} retrace sites, " \
              f"{sum(1 for f in facts if f['kind'] in ('sync', 'stall') and f['diagnostic'])} sync/stall lines"
    if progress:
        ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=f"{outcome.run.get('status')}: {summary}"))
    await _refresh(ls)
    return {"status": outcome.run.get("status"), "problem": outcome.problem or outcome.run.get("error"),
            "cancelled": cancel.is_set(), "files": stored, "facts": len(facts), "summary": summary}


async def _start_progress(ls, token: str, name: str) -> bool:
    from tfperf_lsp.lsp.features.benchmark import start_progress

    return await start_progress(ls, token, types.WorkDoneProgressBegin(
        title=f"tfperf: observing {name}", percentage=None, cancellable=True))


# ---------------------------------------------------------------------------------- lookups
def observed(ls, uri: str, text: str) -> dict | None:
    """The stored facts for exactly this text of the document, or None."""
    store = getattr(ls, "observations", None)
    if store is None:
        return None
    key = (uri, content_key(text))
    memo = ls.observed_memo
    entry = memo.get(key)
    if entry is None:  # misses are not remembered: a CLI or pytest run may store facts any time
        entry = store.get(key[1])
        if entry is not None:
            if len(memo) > 256:
                memo.clear()
            memo[key] = entry
    return entry


def _mark(entry: dict) -> str:
    run = entry.get("run", {})
    command = " ".join(run.get("command") or [])
    return f"observed: `{command}`, {run.get('date', '')}" if command else "observed"


# ---------------------------------------------------------------------------------- hooks
def decorate_diagnostics(ls, uri: str, result, diagnostics: list) -> None:
    """Mark static retrace hints the run confirms or refutes; add the observed facts."""
    if result is None:
        return
    source = result.analysis.source
    entry = observed(ls, uri, source.text)
    if entry is None:
        return
    mark = _mark(entry)
    verdicts = line_verdicts(entry["facts"], entry["path"])
    for diagnostic in diagnostics:
        if diagnostic.code not in RETRACE_CODES:
            continue
        verdict = verdicts.get(diagnostic.range.start.line + 1)
        if verdict is None:
            continue
        kind, traces = verdict
        if kind == "confirmed":
            diagnostic.message += f" Confirmed by a run: traced {traces}x here ({mark})."
        else:
            diagnostic.message += f" Refuted by a run: traced once here ({mark})."
            diagnostic.severity = types.DiagnosticSeverity.Hint
        if isinstance(diagnostic.data, dict):
            diagnostic.data["observed"] = kind
    codec = ls.workspace.get_text_document(uri).position_codec
    for fact in entry["facts"]:
        if not fact.get("diagnostic"):
            continue
        line = fact["line"] - 1
        if not 0 <= line < len(source.lines):
            continue
        text = source.line(line)
        start = len(text) - len(text.lstrip())
        span = Span(Pos(line, start), Pos(line, len(text.rstrip())))
        diagnostics.append(types.Diagnostic(
            range=to_range(codec, source, span), message=f"{fact['message']} ({mark})",
            severity=_SEVERITY.get(fact["severity"], types.DiagnosticSeverity.Information),
            code=f"observed-{fact['kind']}", source=SOURCE, data={"observed": fact["kind"]}))


def hover_parts(ls, uri: str, result, line: int) -> list[str]:
    """Markdown for the observed facts on a 0-based line."""
    entry = observed(ls, uri, result.analysis.source.text) if result is not None else None
    if entry is None:
        return []
    facts = [f for f in entry["facts"] if f["line"] == line + 1]
    if not facts:
        return []
    lines = [f"**Observed** ({_mark(entry)[len('observed: '):] if _mark(entry) != 'observed' else 'a run'})"]
    lines += [f"- {f['message']}" for f in facts]
    return ["\n".join(lines)]


def inlay_labels(ls, uri: str, result, first: int, last: int) -> dict[int, list[str]]:
    """0-based line -> short labels, each ending in "(observed)"."""
    entry = observed(ls, uri, result.analysis.source.text) if result is not None else None
    labels: dict[int, list[str]] = {}
    if entry is None:
        return labels
    for fact in entry["facts"]:
        line = fact["line"] - 1
        if first <= line <= last and fact["kind"] != "trace":
            text = f"{fact['short']} (observed)"
            if text not in labels.setdefault(line, []):
                labels[line].append(text)
    return labels
