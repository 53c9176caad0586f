"""What the server remembers between requests: settings, one session per open document, the
latest analysis of each, and the workspace index for cross-file facts."""
from __future__ import annotations

import asyncio
import logging
import os
import shlex
import shutil
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from pygls.uris import to_fs_path

from tfperf_lsp import settings_schema as schema
from tfperf_lsp.analysis.workspace import WorkspaceIndex
from tfperf_lsp.bench.titles import benchmark_title
from tfperf_lsp.bench.service import BenchService, BenchSettings, result_markdown, short_verdict
from tfperf_lsp.config import Settings, settings_for
from tfperf_lsp.engine import Analysis
from tfperf_lsp.session import DocumentSession

log = logging.getLogger("tfperf_lsp")

# After a change, analysis waits until typing pauses: as long as the document's last analysis
# took, within these bounds. A small file shows its findings ~60 ms after a keystroke; a file
# whose analysis is slow waits longer, so that re-analysing text that is still changing takes at
# most about half of a core while someone types.
DEBOUNCE_SECONDS = (0.05, 0.2)
KEEP_TREES = 4  # documents whose syntax trees stay in memory (the others' are rebuilt on demand)
MAX_DOCUMENT_CHARS = 3_000_000  # beyond this a document is data or generated code: say so, skip it


@dataclass
class DocumentResult:
    version: int | None
    analysis: Analysis
    dependencies: frozenset[str]
    # finding id -> (Plan, Result, cached?) for findings measured on this device (bench cache)
    measured: dict = field(default_factory=dict)
    # Cross-file lookups this analysis skipped (jedi runs off the request path: they are answered
    # in the background, and the document is analysed again; documents.refine_later)
    pending: tuple = ()
    refining: Any = None  # the background task answering them


class ServerState:
    def __init__(self, server):
        self.server = server
        self.options: dict[str, Any] = {}
        # Benchmarks run user code: refused only when the client says the workspace is untrusted
        # (VS Code does); editors without workspace trust (Neovim, Helix) send nothing.
        self.trusted = True
        # A worker command inside the workspace runs only when trust was said explicitly
        # (project-local editor settings can choose the command).
        self.trust_explicit = False
        self.worker_announced = False
        self.roots: list[str] = []
        self.reported_problems: set[str] = set()
        self.pull_diagnostics = False
        self.sessions: dict[str, DocumentSession] = {}
        self.recent: OrderedDict[str, None] = OrderedDict()  # documents whose trees are kept
        self.results: dict[str, DocumentResult] = {}
        self.pending: dict[str, asyncio.Task] = {}
        self.inflight: dict[tuple[str, int | None], asyncio.Future] = {}  # shared analyses
        self.too_large: set[str] = set()
        self.defer_lookups = True  # jedi off the request path (documents.refine_later)
        self.refine_rounds: dict[str, tuple[int | None, int]] = {}  # uri -> (version, rounds)
        self.generation = 0  # bumped when findings change for reasons other than the text
        self._lock = threading.Lock()
        self.index = WorkspaceIndex([], self._open_text)
        # The worker's stderr is mostly TensorFlow's start-up chatter: debug level.
        self.bench = BenchService(log_line=lambda line: log.debug("benchmark worker: %s", line))
        self.problems: dict[tuple[str, str], str] = {}  # (uri, finding id) -> why a benchmark failed
        # Set once the client's settings asked for on `initialized` have arrived (None: not asked).
        # Neovim and Helix pass `settings` only that way: the first analyses wait for them.
        self.settings_pulled: asyncio.Event | None = None

    # ------------------------------------------------------------------ settings
    def set_roots(self, roots: list[str]) -> None:
        self.roots = [os.path.realpath(r) for r in roots]
        self.index = WorkspaceIndex(roots, self._open_text)

    def update_options(self, options: dict[str, Any] | None) -> None:
        """Merge new options; a bad value is reported once and the last good one is kept."""
        if not isinstance(options, dict):
            return
        merged = {**self.options, **options}
        if "workspaceTrusted" in options:
            self.trusted = options["workspaceTrusted"] is not False
            self.trust_explicit = options["workspaceTrusted"] is True
        bench, problems = BenchSettings.parse(merged.get("benchmark"), self.bench.settings)
        if merged.get("logLevel") is not None:
            level, problem = schema.check_enum("logLevel", merged["logLevel"], self.options.get("logLevel", schema.default("logLevel")),
                                               aliases={"warn": "warning"})
            merged["logLevel"] = level
            problems += [problem] if problem else []
        try:  # the editor's booleans, rules and selectors: config.Settings checks them against the schema
            problems += settings_for(None, merged).problems
        except Exception as exc:  # noqa: BLE001 - a value the settings cannot take: keep the old ones
            problems.append(f"settings: {exc}; keeping the previous settings")
            merged = {**self.options, "benchmark": merged.get("benchmark")}
        self.options = merged
        self.bench.configure(bench)
        logging.getLogger("tfperf_lsp").setLevel(getattr(logging, str(merged.get("logLevel") or schema.default("logLevel")).upper()))
        for problem in problems:
            if problem not in self.reported_problems:
                self.reported_problems.add(problem)
                log.warning("settings: %s", problem)

    def settings(self, uri: str) -> Settings:
        try:
            settings = settings_for(to_fs_path(uri), self.options)
        except Exception as exc:  # noqa: BLE001 - a bad project file must not stop the analysis
            log.debug("settings for %s: %s", uri, exc)
            settings = settings_for(None, {})
        return settings.with_probe(self.bench.device_facts())

    # ------------------------------------------------------------------ the worker command
    def worker_command_line(self) -> str:
        from tfperf_lsp.bench import ship
        from tfperf_lsp.bench.procs import worker_argv

        command = self.bench.settings.worker_command
        if command and ship.ships(command):
            return shlex.join(command) + " (the worker's code is sent on its standard input)"
        return shlex.join(worker_argv(command or None, None))

    def worker_command_inside_workspace(self) -> str | None:
        """The first part of the configured worker command (its program, or a file it is given)
        that lives inside a workspace folder, or None."""
        command = self.bench.settings.worker_command
        if not command or not self.roots:
            return None
        candidates = [shutil.which(command[0]) or command[0]] + list(command[1:])
        for part in candidates:
            if os.sep not in part and part is not candidates[0]:
                continue
            path = os.path.realpath(os.path.abspath(part))
            if not os.path.exists(path):
                continue
            for root in self.roots:
                if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
                    return part
        return None

    # ------------------------------------------------------------------ analysis
    def cached(self, uri: str, version: int | None) -> DocumentResult | None:
        result = self.results.get(uri)
        return result if result is not None and version is not None and result.version == version else None

    def analyze(self, uri: str, version: int | None, text: str, defer: bool | None = None) -> DocumentResult | None:
        """Analyse one version of a document (called in a worker thread; cached per version).

        The caller reads ``version`` and ``text`` together on the event loop, so a change that
        arrives meanwhile cannot pair new text with an old version number.

        ``defer`` (``defer_lookups`` when None): cross-file facts come from the index's cache
        only; the jedi lookups it could not answer are left in ``pending`` for the caller to run
        in the background (documents.refine_later).
        """
        defer = self.defer_lookups if defer is None else defer
        cached = self.cached(uri, version)
        if cached is not None:
            return cached
        if len(text) > MAX_DOCUMENT_CHARS:
            if uri not in self.too_large:
                self.too_large.add(uri)
                log.warning("%s is %d characters long: tfperf skips files over %d", uri, len(text), MAX_DOCUMENT_CHARS)
            return None
        self.too_large.discard(uri)
        with self._lock:
            session = self.sessions.setdefault(uri, DocumentSession(to_fs_path(uri)))
            workspace = self.index.deferred() if defer else self.index
            analysis = session.update(text, self.settings(uri), workspace)
        for code, trace in analysis.rule_errors:
            log.error("internal error in rule %s on %s (other rules still report):\n%s", code, uri, trace)
        if analysis.parse_error:
            log.debug("%s does not parse (line %d): keeping %d findings on unchanged lines",
                      uri, analysis.parse_error.line + 1, len(analysis.findings))
        dependencies = frozenset(analysis.ctx.dependencies) if analysis.ctx else frozenset()
        result = DocumentResult(version, analysis, dependencies)
        if defer:
            result.pending = tuple(workspace.pending.values())
        self._attach_measurements(uri, result)
        self.results[uri] = result
        self._keep_trees(uri)
        return result

    def _keep_trees(self, uri: str) -> None:
        """Syntax trees for the documents analysed last only (see session.Rebuildable)."""
        with self._lock:
            self.recent.pop(uri, None)
            self.recent[uri] = None
            while len(self.recent) > KEEP_TREES:
                self.recent.popitem(last=False)
            for other, session in list(self.sessions.items()):
                if other not in self.recent:
                    session.drop_trees()

    def _attach_measurements(self, uri: str, result: DocumentResult) -> None:
        """Results of earlier benchmarks of exactly this code (the cache key is the code)."""
        if result.analysis.stale or not self.bench.has_results(uri):
            return
        for finding in result.analysis.findings:
            if benchmark_title(finding) is None:
                continue
            try:
                plan = self.bench.plan(result.analysis, finding)
                cached = self.bench.cached(plan)
            except Exception as exc:  # noqa: BLE001 - a plan that cannot be built shows no result
                log.debug("no plan for %s: %s", finding.id, exc)
                continue
            if cached is not None:
                result.measured[finding.id] = (plan, cached, not self.bench.measured_now(plan))

    def benchmarkable(self, result: DocumentResult, finding) -> bool:
        return benchmark_title(finding) is not None

    def benchmark_markdown(self, uri: str, finding) -> str | None:
        """The measured result (or why the benchmark failed), shown first in the hover."""
        result = self.results.get(uri)
        measured = result.measured.get(finding.id) if result else None
        if measured is not None:
            plan, outcome, cached = measured
            return result_markdown(plan, outcome, cached)
        problem = self.problems.get((uri, finding.id))
        return f"**Benchmark:** {problem}" if problem else None

    def inlay_label(self, uri: str, finding) -> str:
        result = self.results.get(uri)
        measured = result.measured.get(finding.id) if result else None
        return f"{finding.label} · {short_verdict(measured[1])}" if measured else finding.label

    def diagnostic_message(self, result: DocumentResult, finding) -> str:
        measured = result.measured.get(finding.id)
        return f"{finding.message} ({short_verdict(measured[1])})" if measured else finding.message

    def remember_problem(self, uri: str, finding_id: str, problem: str | None) -> None:
        if problem:
            self.problems[(uri, finding_id)] = problem

    def device_label(self) -> str | None:
        return self.bench.worker[0].label() if self.bench.worker else None

    def debounce_seconds(self, uri: str) -> float:
        session = self.sessions.get(uri)
        low, high = DEBOUNCE_SECONDS
        return high if session is None else min(high, max(low, session.last_seconds))

    def forget(self, uri: str) -> None:
        """The document was closed: keep nothing of it (memory grew with every document)."""
        self.sessions.pop(uri, None)
        self.recent.pop(uri, None)
        self.results.pop(uri, None)
        self.too_large.discard(uri)
        self.refine_rounds.pop(uri, None)
        for key in [k for k in self.problems if k[0] == uri]:
            del self.problems[key]
        task = self.pending.pop(uri, None)
        if task:
            task.cancel()
        path = to_fs_path(uri)
        if path:
            self.index.forget(path)

    def dependents_of(self, uri: str) -> list[str]:
        """Open documents whose findings used facts from ``uri``."""
        path = to_fs_path(uri)
        return [other for other, result in self.results.items() if other != uri and path in result.dependencies]

    def _open_text(self, path: str) -> str | None:
        for uri in list(self.sessions):
            if to_fs_path(uri) == path:
                try:
                    return self.server.workspace.get_text_document(uri).source
                except Exception:  # noqa: BLE001 - closed meanwhile: read from disk instead
                    return None
        return None
