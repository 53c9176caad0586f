"""Facts about other files of the workspace: which imported names are tf.functions.

A call ``train_step(x, epoch)`` in ``train.py`` retraces if ``train_step`` is a tf.function
defined in ``steps.py``. Jedi resolves the imported name to its definition (any import form,
relative imports, re-exports through ``__init__``); we then parse that file with our own fast
analysis (cached by modification time or editor version) and look the definition up.

Jedi is only asked about names that are imported from non-library modules and called where it
matters (rules ask lazily), and answers are cached per document text.
"""
from __future__ import annotations

import ast
import hashlib
import logging
import os
import threading
from dataclasses import dataclass
from typing import Callable

from tfperf_lsp.analysis.facts import ModuleFacts, TFFunction
from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.files import read_regular

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 2_000_000
MAX_ANSWERS = 4096
_LIBRARY_ROOTS = ("tensorflow", "keras", "tf_keras", "numpy", "jax", "torch")


@dataclass
class RemoteFunction:
    fn: TFFunction
    facts: ModuleFacts
    path: str


class WorkspaceIndex:
    def __init__(self, roots: list[str] | None = None, open_text: Callable[[str], str | None] | None = None):
        self.roots = [os.path.abspath(r) for r in (roots or [])]
        self._open_text = open_text or (lambda path: None)
        self._facts: dict[str, tuple[object, ModuleFacts | None]] = {}
        self._answers: dict[tuple[str, str, str], tuple[str, int] | None] = {}
        self._lock = threading.Lock()
        self._projects: dict[str, object] = {}

    def forget(self, path: str) -> None:
        """A document was closed: drop what was kept for its texts (jedi answers per text
        version, parso's parse tree of it). Without this the server grew with every edit."""
        with self._lock:
            self._facts.pop(path, None)
            for key in [k for k in self._answers if k[0] == path]:
                del self._answers[key]
        try:
            import sys
            from pathlib import Path

            parso_cache = sys.modules.get("parso.cache")
            for per_grammar in getattr(parso_cache, "parser_cache", {}).values():
                per_grammar.pop(Path(path), None)
                per_grammar.pop(path, None)
        except Exception:  # noqa: BLE001 - a cache layout we do not know: nothing to drop
            pass

    # ----------------------------------------------------------------- other files' facts
    def facts_for(self, path: str) -> ModuleFacts | None:
        text = self._open_text(path)
        stamp: object
        if text is None:
            try:
                if os.path.getsize(path) > MAX_FILE_BYTES:
                    return None
                stamp = os.path.getmtime(path)
            except OSError:
                return None
        else:
            stamp = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
        with self._lock:
            cached = self._facts.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
        if text is None:
            try:  # regular files only: a FIFO would block every analysis behind this one
                text = read_regular(path, MAX_FILE_BYTES).decode("utf-8")
            except (OSError, UnicodeDecodeError):
                return None
        source = SourceText(text, path)
        tree = source.parse()
        facts = ModuleFacts(tree, source) if isinstance(tree, ast.Module) else None
        with self._lock:
            self._facts[path] = (stamp, facts)
        return facts

    # ----------------------------------------------------------------- resolution
    def resolve_imported_tf_function(self, facts: ModuleFacts, name: ast.Name, path: str | None) -> RemoteFunction | None:
        """If ``name`` (a Name at a call site) is imported and is a tf.function elsewhere, return it."""
        qualname = facts.imports.bindings.get(name.id)
        if qualname is None or qualname.split(".")[0] in _LIBRARY_ROOTS or path is None:
            return None
        location = self._definition_of(facts, name, path)
        if location is None:
            return None
        target_path, line = location
        if os.path.abspath(target_path) == os.path.abspath(path):
            return None
        target = self.facts_for(target_path)
        if target is None:
            return None
        for fn in target.tf_functions:
            if fn.stmt.lineno == line or (fn.node is not None and fn.node.lineno == line):
                return RemoteFunction(fn, target, target_path)
        return None

    def _definition_of(self, facts: ModuleFacts, name: ast.Name, path: str) -> tuple[str, int] | None:
        text = facts.source.text
        key = (path, hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest(), name.id)
        with self._lock:
            if key in self._answers:
                return self._answers[key]
        answer = None
        try:
            import jedi  # imported lazily: only cross-file lookups pay for it

            script = jedi.Script(code=text, path=path, project=self._project_for(path, jedi))
            line = name.lineno
            col = facts.source.char_col(line - 1, name.col_offset)
            for definition in script.goto(line, col, follow_imports=True):
                if definition.module_path is not None and definition.line is not None:
                    answer = (str(definition.module_path), definition.line)
                    break
        except Exception as exc:  # noqa: BLE001 - jedi failing must not fail the analysis
            log.debug("jedi could not resolve %s in %s: %s", name.id, path, exc)
        with self._lock:
            if len(self._answers) >= MAX_ANSWERS:  # every edit is a new text: keep the newest
                for stale in list(self._answers)[: MAX_ANSWERS // 2]:
                    del self._answers[stale]
            self._answers[key] = answer
        return answer

    def _project_for(self, path: str, jedi):
        root = next((r for r in self.roots if os.path.abspath(path).startswith(r + os.sep)), None)
        root = root or os.path.dirname(os.path.abspath(path))
        if root not in self._projects:
            self._projects[root] = jedi.Project(root, added_sys_path=[root], smart_sys_path=True, load_unsafe_extensions=False)
        return self._projects[root]
