"""Benchmarks from the editor: code action / code lens -> command -> progress -> results in hovers.

Only on explicit request, never in a workspace the client says is untrusted. No process starts
before the first explicit benchmark or probe of the session (a code action or a hover starts
nothing); after it the pool keeps a spare worker warm. The worker runs in
another process; nothing here waits on it except the command's own request. Results come back
through the on-disk cache (bench/service.py), so they follow the code: when the snippet
changes, its result is no longer found.
"""
from __future__ import annotations

import asyncio
import logging
import uuid

from lsprotocol import types

from tfperf_lsp.analysis.environment import TENSORFLOW_DISTRIBUTIONS, installed_version
from tfperf_lsp.bench.titles import benchmark_title
from tfperf_lsp.bench.service import short_verdict
from tfperf_lsp.lsp.convert import to_range
from tfperf_lsp.lsp.features.documents import codec, current_result
from tfperf_lsp.lsp.refusals import Refusal
from tfperf_lsp.lsp.notebooks import module_finding, results_uri

log = logging.getLogger("tfperf_lsp")

UNTRUSTED = "Benchmarks run your code; trust this workspace to enable them."
BENCHMARK_KIND = "quickfix.tfperf.benchmark"


def register(server) -> None:
    state = server.state

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    async def code_lens(ls, params: types.CodeLensParams):
        uri = params.text_document.uri
        # One mark per finding is enough (squiggle + inlay hint): a lens only where a benchmark
        # can run here (trusted workspace, inputs known), and `codeLens: false` turns them off.
        if not state.trusted or not state.settings(uri).code_lens:
            return []
        result = await current_result(ls, uri)
        if result is None or result.analysis.stale:
            return []
        lenses, seen_lines = [], set()
        for finding in result.analysis.findings:
            title = benchmark_title(finding)
            line = finding.span.start.line
            if title is None or line in seen_lines or not _can_run(state, result, finding):
                continue
            seen_lines.add(line)
            measured = result.measured.get(finding.id)
            label = f"{short_verdict(measured[1])} · benchmark again" if measured else title
            lenses.append(
                types.CodeLens(
                    range=to_range(codec(ls, uri), result.analysis.source, finding.span),
                    command=types.Command(title=label, command="tfperf.benchmark", arguments=[uri, finding.id]),
                )
            )
        return lenses

    def _can_run(state, result, finding) -> bool:
        if finding.id in result.measured:
            return True
        try:
            return state.bench.plan(result.analysis, finding).job is not None
        except Exception:  # noqa: BLE001 - a plan that cannot be built gets no lens
            return False

    @server.command("tfperf.benchmark")
    async def benchmark(ls, uri: str, finding_id: str):
        return await _benchmark(ls, uri, [finding_id])

    @server.command("tfperf.benchmarkFile")
    async def benchmark_file(ls, uri: str):
        result = await current_result(ls, uri)
        ids = [f.id for f in result.analysis.findings if benchmark_title(f)] if result else []
        if not ids:
            return {"results": [], "message": "no finding in this file can be benchmarked"}
        return await _benchmark(ls, uri, ids)

    @server.command("tfperf.probeDevice")
    async def probe_device(ls):
        """Start a worker and learn the device. It runs code (the worker command, TensorFlow's
        import, whatever the environment loads): refused like a benchmark."""
        _check_may_run(ls)
        log.info("starting the benchmark worker: %s", state.worker_command_line())
        try:
            device, tf_version = await asyncio.to_thread(state.bench.probe)
        except Exception as exc:  # noqa: BLE001 - no TF in this environment, a bad worker command
            raise Refusal(f"cannot start a benchmark worker: {exc}") from exc
        notify_status(ls, "ready")
        await _refresh(ls)  # device-dependent rules (mixed precision) may now speak
        return {"device": device.label(), "tensorflow": tf_version, "compute_capability": device.compute_capability}

    @server.command("tfperf.clearBenchmarks")
    async def clear(ls, *args):  # [uri] or nothing (pygls needs *args for an optional argument)
        uri = args[0] if args else None
        removed = state.bench.cache.clear(uri or None)
        state.bench.forget_session_results()
        await _refresh(ls)
        return {"removed": removed}


def notify_status(ls, state: str, message: str | None = None) -> None:
    """tfperf/status: server state, the benchmark device once known, the installed TensorFlow."""
    ls.protocol.notify("tfperf/status", {
        "state": state,
        "device": ls.state.device_label(),
        "tensorflow": installed_version(*TENSORFLOW_DISTRIBUTIONS),
        "message": message,
    })


def benchmark_actions(ls, uri, result, finding, diagnostic) -> list[types.CodeAction]:
    title = benchmark_title(finding)
    if title is None or result.analysis.stale:
        return []
    trusted = ls.state.trusted  # nothing starts here: a code action is not a request to run code
    return [
        types.CodeAction(
            title=title,
            kind=BENCHMARK_KIND,
            diagnostics=[diagnostic],
            disabled=None if trusted else types.CodeActionDisabled(reason=UNTRUSTED),
            command=types.Command(title=title, command="tfperf.benchmark", arguments=[uri, finding.id]),
        )
    ]


def _check_may_run(ls) -> None:
    """Raise a Refusal unless this workspace may run code, with the worker command it has."""
    state = ls.state
    if not state.trusted:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=UNTRUSTED))
        raise Refusal(UNTRUSTED)
    inside = state.worker_command_inside_workspace()
    if inside and not state.trust_explicit:
        message = (f"The benchmark worker command {inside} lives inside the workspace: set "
                   "workspaceTrusted to true (or trust the workspace in your editor) to run it.")
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))
        raise Refusal(message)


def _cancel_with_request(ls, task) -> None:
    """$/cancelRequest cancels pygls's future for workspace/executeCommand, not the task running
    the command (a separate task): forward the cancel, so the worker is killed at once."""
    try:
        msg_id = ls.protocol._ctx_msg_id.get()  # noqa: SLF001 - set by pygls for this request
        request = ls.protocol._request_futures.get(msg_id)  # noqa: SLF001
    except (AttributeError, LookupError):
        return
    if request is not None:
        request.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)


async def _benchmark(ls, uri: str, finding_ids: list[str]) -> dict:
    state = ls.state
    _check_may_run(ls)
    result = await current_result(ls, uri)
    if result is None or result.analysis.stale:
        raise Refusal("the file does not parse: fix the syntax error first")
    findings = [result.analysis.finding(i) for i in finding_ids]
    findings = [f for f in findings if f is not None]
    if not findings:
        raise Refusal("the finding is gone (the file changed): ask again from the current text")
    task = asyncio.current_task()
    _cancel_with_request(ls, task)
    token = str(uuid.uuid4())
    command = state.worker_command_line()
    if not state.worker_announced:
        state.worker_announced = True
        log.info("benchmark worker command: %s", command)
    progress = await _start_progress(ls, token, findings, command)
    cancel = ls.work_done_progress.tokens.get(token) if progress else None
    if cancel is not None:
        cancel.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)
    notify_status(ls, "benchmarking")
    answers = []
    # Several findings: a warm worker for each queued one (one TensorFlow import, not one each).
    state.bench.expect(len(findings))
    try:
        for index, finding in enumerate(findings):
            # A cell's plan is built on the notebook's module: earlier cells give the inputs.
            plan = await asyncio.to_thread(state.bench.plan, *module_finding(result.analysis, finding))
            if plan.job is None:
                state.bench.expect(max(0, len(findings) - index - 1))
                answers.append({"findingId": finding.id, "code": finding.code, "verdict": "error", "summary": plan.problem})
                state.remember_problem(uri, finding.id, plan.problem)
                continue

            def report(fraction, message, index=index, finding=finding):
                if progress:
                    overall = (index + fraction) / len(findings)
                    # The title names the code when there is one finding; name it per step otherwise.
                    text = message if len(findings) == 1 else f"{finding.code}: {message}"
                    ls.work_done_progress.report(
                        token, types.WorkDoneProgressReport(message=text, percentage=int(overall * 100), cancellable=True)
                    )

            # A cell's results are stored under its notebook, whose analysis shows them in every cell.
            outcome = await state.bench.run_async(plan, results_uri(ls, uri), on_progress=report)
            summary = outcome.result.summary
            answer = {"findingId": finding.id, "code": finding.code, "verdict": outcome.result.verdict, "summary": summary, "cached": outcome.cached}
            answers.append(answer)
            ls.protocol.notify("tfperf/benchmarkResult", {"uri": uri, **answer})
            if outcome.result.verdict == "error":
                state.remember_problem(uri, finding.id, summary)
    except asyncio.CancelledError:
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="Cancelled"))
        log.info("benchmark cancelled")
        return {"cancelled": True, "results": answers}
    finally:
        state.bench.expect(0)
        notify_status(ls, "ready")
    if progress:
        ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=answers[-1]["summary"] if answers else "done"))
    await _refresh(ls)
    return {"results": answers}


async def start_progress(ls, token: str, begin: types.WorkDoneProgressBegin) -> bool:
    """Open a cancellable progress report in clients that support one (shared by observe)."""
    window = ls.client_capabilities.window
    if not (window and window.work_done_progress):
        return False
    try:
        await ls.work_done_progress.create_async(token)
    except Exception as exc:  # noqa: BLE001 - no progress UI is not a reason to fail
        log.debug("no work done progress: %s", exc)
        return False
    ls.work_done_progress.begin(token, begin)
    return True


async def _start_progress(ls, token: str, findings, command: str) -> bool:
    title = "tfperf: benchmarking " + (findings[0].code if len(findings) == 1 else f"{len(findings)} findings")
    # The first message names the command that runs: project-local editor settings can choose it.
    return await start_progress(ls, token, types.WorkDoneProgressBegin(
        title=title, message=f"worker: {command}", percentage=0, cancellable=True))


async def _refresh(ls) -> None:
    """Results changed: diagnostics, inlay hints and code lenses show them."""
    from tfperf_lsp.lsp.features.diagnostics import refresh_all

    await refresh_all(ls)
    workspace = ls.client_capabilities.workspace
    if workspace and workspace.code_lens and workspace.code_lens.refresh_support:
        ls.workspace_code_lens_refresh(None)
