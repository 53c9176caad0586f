"""A stand-in tfperf server that follows docs/contract.md section 1, for the e2e's `--server fake` mode.

It exercises the client's side of the contract (diagnostics with data, hover, quickfix with resolve,
tfperf.benchmark with cancellable work-done progress, tfperf/status, tfperf/benchmarkResult, trust)
without TensorFlow and independently of the real server's rules. One finding kind only:
`experimental_relax_shapes=True` -> TFP107 (fix: `reduce_retracing=True`).
Run through e2e/fake-python, which the e2e sets as tfperf.interpreter.
"""
import asyncio
import re
import uuid

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("tfperf-fake", "v0")
PATTERN = re.compile(r"experimental_relax_shapes\s*=\s*True")
state = {"trusted": False, "results": {}, "rules": {}}  # results: finding id -> markdown


def findings(uri):
    doc = server.workspace.get_text_document(uri)
    out = []
    if state["rules"].get("TFP107") == "off":
        return out
    for line_no, line in enumerate(doc.lines):
        for m in PATTERN.finditer(line):
            fid = "TFP107:%d:%d" % (line_no, m.start())
            rng = types.Range(types.Position(line_no, m.start()), types.Position(line_no, m.end()))
            out.append((fid, rng))
    return out


def publish(uri):
    diags = [
        types.Diagnostic(
            range=rng, message="experimental_relax_shapes is deprecated; use reduce_retracing",
            severity=types.DiagnosticSeverity.Warning, source="tfperf", code="TFP107",
            code_description=types.CodeDescription(href="https://example.invalid/rules/TFP107"),
            data={"id": fid, "code": "TFP107", "fixable": True, "benchmarkable": True},
        )
        for fid, rng in findings(uri)
    ]
    doc = server.workspace.get_text_document(uri)
    server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=doc.version))


def status(state_name):
    server.protocol.notify("tfperf/status", {"state": state_name, "device": "CPU: fake device", "tensorflow": None, "message": None})


def apply_settings(value):
    if isinstance(value, dict) and "workspaceTrusted" in value:
        state["trusted"] = bool(value["workspaceTrusted"])
    if isinstance(value, dict) and isinstance(value.get("rules"), dict):
        state["rules"] = value["rules"]


@server.feature(types.INITIALIZE)
def on_initialize(params: types.InitializeParams):
    apply_settings(params.initialization_options)


@server.feature(types.INITIALIZED)
async def on_initialized(params):
    status("ready")


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_config(params):
    result = await server.workspace_configuration_async(types.ConfigurationParams(items=[types.ConfigurationItem(section="tfperf")]))
    apply_settings(result[0])
    for uri in list(server.workspace.text_documents):
        publish(uri)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(params):
    publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(params):
    publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(params: types.HoverParams):
    for fid, rng in findings(params.text_document.uri):
        if rng.start.line == params.position.line and rng.start.character <= params.position.character <= rng.end.character:
            text = "**tfperf TFP107** experimental_relax_shapes is deprecated.\n\n" + state["results"].get(fid, "Not benchmarked yet.")
            return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text), range=rng)
    return None


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=True))
def code_action(params: types.CodeActionParams):
    actions = []
    for d in params.context.diagnostics:
        if d.source == "tfperf":
            actions.append(types.CodeAction(title="tfperf: use reduce_retracing=True", kind=types.CodeActionKind.QuickFix,
                                            diagnostics=[d], data={"uri": params.text_document.uri, "range": [d.range.start.line, d.range.start.character, d.range.end.character]}))
    return actions


@server.feature(types.CODE_ACTION_RESOLVE)
def resolve(action: types.CodeAction):
    line, start, end = action.data["range"]
    edit = types.TextEdit(range=types.Range(types.Position(line, start), types.Position(line, end)), new_text="reduce_retracing=True")
    action.edit = types.WorkspaceEdit(changes={action.data["uri"]: [edit]})
    return action


@server.command("tfperf.benchmark")
async def benchmark(uri: str, finding_id: str):
    if not state["trusted"]:
        raise RuntimeError("Benchmarks run your code; trust this workspace to enable them.")
    token = str(uuid.uuid4())
    await server.work_done_progress.create_async(token)
    server.work_done_progress.begin(token, types.WorkDoneProgressBegin(title="tfperf: benchmarking TFP107", percentage=0, cancellable=True))
    status("benchmarking")
    cancelled = False
    for i in range(1, 11):
        await asyncio.sleep(0.3)
        if server.work_done_progress.tokens[token].cancelled():
            cancelled = True
            break
        server.work_done_progress.report(token, types.WorkDoneProgressReport(percentage=i * 10, message="pair %d/10" % i))
    server.work_done_progress.end(token, types.WorkDoneProgressEnd(message="cancelled" if cancelled else "done"))
    status("ready")
    if cancelled:
        return {"cancelled": True}
    state["results"][finding_id] = "**Benchmark** (CPU: fake device): original 12.40 ms, rewrite 4.10 ms, **3.02x faster**"
    server.protocol.notify("tfperf/benchmarkResult", {"uri": uri, "findingId": finding_id, "code": "TFP107", "verdict": "faster", "summary": "3.02x faster (12.40 ms -> 4.10 ms)"})
    return None


@server.command("tfperf.benchmarkFile")
async def benchmark_file(uri: str):
    answer = None
    for fid, _ in findings(uri):
        answer = await benchmark(uri, fid)
        if answer and answer.get("cancelled"):
            return answer
    return {"results": []}


@server.command("tfperf.clearBenchmarks")
def clear(*args):
    state["results"].clear()


if __name__ == "__main__":
    server.start_io()
