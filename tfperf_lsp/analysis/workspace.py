"""Facts about other files of the workspace: which imported names are tf.functions.

A call ``train_step(x, epoch)`` in ``train.py`` retraces if ``train_step`` is a tf.function
defined in ``steps.py``. Jedi resolves the imported name to its definition (any import form,
relative imports, re-exports through ``__init__``); we then parse that file with our own fast
analysis (cached by modification time or editor version) and look the definition up.

Most imports need no jedi: ``from steps import train_step`` where ``steps.py`` is one workspace
file that defines ``train_step`` once at its top level (or a package ``__init__`` re-exports it
with one ``from .steps import train_step``) is resolved by reading that file
(``_plain_definition``); on the shared corpus this answers 217 of 233 such names, each the same
definition jedi finds. Jedi decides the rest: a name defined twice or inside an ``if``/``try``,
star imports, stubs, namespace packages.

Jedi is slow (it parses the whole file), so it is only asked about names that can resolve into a
workspace file: relative imports, or a top-level module that exists in a workspace root or in a
folder on the file's package path. ``from time import time`` or ``termcolor.cprint`` never reach
it. An answer depends on the import, not on the rest of the text, so it is cached per binding and
kept while the files it went through (the import chain and the definition's file) are unchanged:
typing in a file does not pay for jedi again.

The language server keeps jedi off the request path: it analyses through ``deferred()``, a view
that answers from the cache only and records each lookup it could not answer (``Lookup``). The
diagnostics publish without those facts, ``run_lookups`` computes them in the background, and the
document is analysed again, from the cache. The CLI uses the index itself: every lookup runs
synchronously, so its findings never depend on timing.
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


@dataclass(frozen=True)
class Lookup:
    """A jedi lookup an analysis skipped (see ``WorkspaceIndex.deferred``)."""

    path: str
    qualname: str
    name: str
    line: int  # 1-based, as jedi wants it
    column: int  # in characters
    text: str  # the caller's text when it was skipped
    chain: tuple[str, ...]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.path, self.qualname, self.name)


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
        # (path, qualname, local name) -> (stamps of the files the answer went through, answer)
        self._answers: dict[tuple[str, str, str], tuple[tuple, tuple[str, int] | None]] = {}
        self._lock = threading.Lock()
        self._projects: dict[str, object] = {}
        self._jedi_lock = threading.Lock()  # background lookups run one at a time
        # caller path -> the files and folders its lookups went through (the CLI's cache
        # checks they are unchanged before it reuses a result)
        self.consulted: dict[str, set[str]] = {}

    def forget(self, path: str) -> None:
        """A document was closed: drop what was kept for its texts (jedi answers per text
        version, parso's parse tree of it). Without this the server grew with every edit."""
        with self._lock:
            self._facts.pop(path, None)
            self.consulted.pop(path, None)  # read by the CLI's cache only; a server kept one per file ever opened
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
    def stamp_of(self, path: str) -> object | None:
        """The version of a file: its editor text's hash when open, else its size and mtime."""
        text = self._open_text(path)
        if text is not None:
            return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
        try:
            stat = os.stat(path)
        except OSError:
            return None
        return (stat.st_size, stat.st_mtime_ns)

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
    def deferred(self) -> DeferredIndex:
        """A view for one analysis that never waits for jedi (see the module's docstring)."""
        return DeferredIndex(self)

    def resolve_imported_tf_function(self, facts: ModuleFacts, name: ast.Name, path: str | None,
                                     pending: dict | None = None) -> RemoteFunction | None:
        """If ``name`` (a Name at a call site) is imported and is a tf.function elsewhere, return it.

        ``pending``: answer from the cache only; a lookup the cache cannot answer for the current
        versions of its files is added to it (by key) and the name resolves to nothing for now.
        """
        qualname = facts.imports.bindings.get(name.id)
        chain = self._workspace_chain(qualname, path)
        if chain is None or qualname is None or path is None:
            return None
        consulted = self.consulted[path]
        plain = self._plain_definition(qualname, path, consulted)
        if plain is not _UNKNOWN:
            location = plain
        elif pending is not None:
            hit, location = self._cached_definition((path, qualname, name.id), chain)
            if not hit:
                column = facts.source.char_col(name.lineno - 1, name.col_offset)
                lookup = Lookup(path, qualname, name.id, name.lineno, column, facts.source.text, tuple(chain))
                pending.setdefault(lookup.key, lookup)
                return None
        else:
            location = self._definition_of(facts, name, path, qualname, chain)
        found = self._other_file(location, path, consulted)
        if found is None:
            return None
        target, target_path, line = found
        for fn in target.tf_functions:
            if fn.stmt.lineno == line or (fn.node is not None and fn.node.lineno == line):
                return RemoteFunction(fn, target, target_path)
        return None

    def imported_definition(self, facts: ModuleFacts, name: str, path: str | None,
                            attribute: str | None = None) -> tuple[ModuleFacts, ast.AST, str] | None:
        """The top-level def or class that ``name``, imported by the file at ``path``, binds in
        another workspace file (or, with ``attribute``, that the module ``name`` binds under that
        name: ``srgan.vgg_54``), found without jedi (``_plain_definition``): (that file's facts,
        the node, its path). None for a library, or when only jedi could tell."""
        qualname = facts.imports.bindings.get(name)
        if qualname is not None and attribute is not None:
            qualname = f"{qualname}.{attribute}"
        if qualname is None or path is None or self._workspace_chain(qualname, path) is None:
            return None
        location = self._plain_definition(qualname, path, self.consulted[path])
        found = None if location is _UNKNOWN else self._other_file(location, path, self.consulted[path])
        if found is None:
            return None
        target, target_path, line = found
        node = next((stmt for stmt in target.tree.body if stmt.lineno == line
                     and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))), None)
        return (target, node, target_path) if node is not None else None

    def _workspace_chain(self, qualname: str | None, path: str | None) -> list[str] | None:
        """The workspace files an import of ``qualname`` from ``path`` may go through, recorded in
        ``consulted[path]``; None for a library, or when none exists (then the folders where one
        created later would change that are recorded: jedi would only find the stdlib or a
        library)."""
        if qualname is None or qualname.split(".")[0] in _LIBRARY_ROOTS or path is None:
            return None
        chain = self.module_files(qualname, path)
        consulted = self.consulted.setdefault(path, set())
        if not chain:
            consulted.update(self._search_dirs(path) if not qualname.startswith(".") else [os.path.dirname(os.path.abspath(path))])
            return None
        consulted.update(chain)
        return chain

    def _other_file(self, location: tuple[str, int] | None, path: str,
                    consulted: set[str]) -> tuple[ModuleFacts, str, int] | None:
        """(facts, path, line) of a definition found at ``location`` in another file than ``path``."""
        if location is None:
            return None
        target_path, line = location
        consulted.add(target_path)
        if os.path.abspath(target_path) == os.path.abspath(path):
            return None
        target = self.facts_for(target_path)
        return (target, target_path, line) if target is not None else None

    def _plain_definition(self, qualname: str, path: str, consulted: set[str], depth: int = 0):
        """Where ``from pkg.mod import f`` finds ``f`` when nothing but one file is involved, the
        case jedi answers the same way without its cost (it parses the importing file again):
        ``pkg.mod`` is exactly one workspace file (no stub, no package of the same name, not in
        two search folders), and it binds ``f`` once, at its top level, with a def or a plain
        assignment, and imports no ``f`` and no ``*``; or it re-exports ``f`` with one top-level
        ``from ... import f`` that leads, the same way, to such a file (a package's
        ``__init__``). (file, line) of the binding; _UNKNOWN otherwise (jedi decides). Every path
        looked at is recorded in ``consulted``, existing or not: creating one of them changes the
        answer."""
        parts, bases = self._import_bases(qualname, path)
        if not parts:
            return _UNKNOWN
        module, name = parts[:-1], parts[-1]
        found = []
        for base in bases:
            if not module:
                init = os.path.join(base, "__init__.py")
                consulted.add(init)
                if os.path.isfile(init):
                    found.append(init)
                continue
            directory = os.path.join(base, *module[:-1])
            if not os.path.isdir(directory):
                continue
            stem = os.path.join(directory, module[-1])
            candidates = [stem + ".py", stem + ".pyi", os.path.join(stem, "__init__.py")]
            consulted.update(candidates)
            existing = [c for c in candidates if os.path.isfile(c)]
            if len(existing) > 1 or os.path.isdir(stem) and not existing:
                return _UNKNOWN  # a stub, a package beside a module, a namespace package
            found += existing
        if len(found) != 1:
            return _UNKNOWN
        target = found[0]
        facts = self.facts_for(target)
        if facts is None or any(name in g.names for g in facts.global_statements):
            return _UNKNOWN
        binders = [stmt for stmt in facts.tree.body if _binds(stmt, name)]
        if name in facts.imports.bindings:
            reexport = len(binders) == 1 and isinstance(binders[0], ast.ImportFrom) and \
                facts.imports.import_nodes.get(name) is binders[0]
            if not reexport or depth >= 4:
                return _UNKNOWN
            return self._plain_definition(facts.imports.bindings[name], target, consulted, depth + 1)
        if len(binders) != 1 or not isinstance(binders[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign)):
            return _UNKNOWN  # bound twice, or inside an if/try/for/with, or by a star import
        return target, binders[0].lineno

    def module_files(self, qualname: str, path: str) -> list[str]:
        """Workspace files (and folders) an import of ``qualname`` from ``path`` may go through;
        empty when the import cannot resolve into the workspace."""
        parts, bases = self._import_bases(qualname, path)
        relative = qualname.startswith(".")
        found = []
        for base in bases:
            directory = base
            for index, part in enumerate(parts):
                module, package = os.path.join(directory, part + ".py"), os.path.join(directory, part)
                is_package = os.path.isdir(package)
                if os.path.isfile(module) or os.path.isfile(module + "i"):
                    found.append(module)
                if not is_package:
                    break
                found.append(package)
                init = os.path.join(package, "__init__.py")
                if os.path.isfile(init):
                    found.append(init)
                directory = package
            if relative and not parts:  # ``from . import x``: the package itself
                found.append(os.path.join(base, "__init__.py"))
        return found

    def _import_bases(self, qualname: str, path: str) -> tuple[list[str], list[str]]:
        """(the dotted parts of ``qualname``, the folders they are looked up from): the
        importing file's package for a relative import, else the search folders."""
        dots = len(qualname) - len(qualname.lstrip("."))
        parts = [p for p in qualname[dots:].split(".") if p]
        if not dots:
            return parts, self._search_dirs(path)
        base = os.path.dirname(os.path.abspath(path))
        for _ in range(dots - 1):
            base = os.path.dirname(base)
        return parts, [base]

    def _search_dirs(self, path: str) -> list[str]:
        """Where jedi looks for a workspace module: the roots, the file's folder and the folders
        above it up to the top of its package (a script's folder is on its sys.path)."""
        dirs = list(self.roots)
        directory = os.path.dirname(os.path.abspath(path))
        while True:
            dirs.append(directory)
            if not os.path.isfile(os.path.join(directory, "__init__.py")):
                break
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        return list(dict.fromkeys(dirs))

    def _cached_definition(self, key: tuple[str, str, str], chain: list[str] | tuple[str, ...]) -> tuple[bool, tuple[str, int] | None]:
        """(True, answer) when jedi's answer is cached for the current versions of its files."""
        with self._lock:
            cached = self._answers.get(key)
        if cached is not None:
            stamps, answer = cached
            if stamps == self._stamps(list(chain), answer):
                return True, answer
        return False, None

    def _definition_of(self, facts: ModuleFacts, name: ast.Name, path: str, qualname: str, chain: list[str]) -> tuple[str, int] | None:
        key = (path, qualname, name.id)
        hit, answer = self._cached_definition(key, chain)
        if hit:
            return answer
        column = facts.source.char_col(name.lineno - 1, name.col_offset)
        return self._jedi_definition(Lookup(path, qualname, name.id, name.lineno, column, facts.source.text, tuple(chain)))

    def run_lookups(self, lookups) -> int:
        """Answer lookups a deferred analysis skipped (in a background thread); returns how many
        went to jedi (the others were answered meanwhile)."""
        ran = 0
        with self._jedi_lock:
            for lookup in lookups:
                hit, _ = self._cached_definition(lookup.key, lookup.chain)
                if not hit:
                    self._jedi_definition(lookup)
                    ran += 1
        return ran

    def _jedi_definition(self, lookup: Lookup) -> tuple[str, int] | None:
        path = lookup.path
        answer = None
        try:
            import jedi  # imported lazily: only cross-file lookups pay for it

            script = jedi.Script(code=lookup.text, path=path, project=self._project_for(path, jedi))
            for definition in script.goto(lookup.line, lookup.column, follow_imports=True):
                if definition.module_path is not None and definition.line is not None:
                    answer = (str(definition.module_path), definition.line)
                    break
        except Exception as exc:  # noqa: BLE001 - jedi failing must not fail the analysis
            log.debug("jedi could not resolve %s in %s: %s", lookup.name, path, exc)
        with self._lock:
            if len(self._answers) >= MAX_ANSWERS:  # bounded: keep the newest
                for stale in list(self._answers)[: MAX_ANSWERS // 2]:
                    del self._answers[stale]
            self._answers[lookup.key] = (self._stamps(list(lookup.chain), answer), answer)
        return answer

    def _stamps(self, chain: list[str], answer: tuple[str, int] | None) -> tuple:
        files = chain + ([answer[0]] if answer else [])
        return tuple((f, self.stamp_of(f)) for f in files)

    def _project_for(self, path: str, jedi):
        root = next((r for r in self.roots if os.path.abspath(path).startswith(r + os.sep)), None)
        root = root or os.path.dirname(os.path.abspath(path))
        if root not in self._projects:
            self._projects[root] = jedi.Project(root, added_sys_path=[root], smart_sys_path=True, load_unsafe_extensions=False)
        return self._projects[root]


_UNKNOWN = object()  # _plain_definition: jedi must decide


def _binds(stmt: ast.stmt, name: str) -> bool:
    """Whether a top-level statement may bind ``name`` in the module: a def or class of that
    name, or anywhere in it outside nested defs and classes a target, an import alias (a star
    import may bind anything), an ``except ... as``, a pattern capture, a nested def or class."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name == name
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            if node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
                return True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return True
            continue  # their bodies bind their own names
        elif (isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name == name) or (
                isinstance(node, ast.alias) and (node.name == "*" or (node.asname or node.name.split(".")[0]) == name)):
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


class DeferredIndex:
    """The index as one server analysis sees it: cross-file answers come from the cache only, and
    the lookups it could not answer are collected in ``pending`` for ``run_lookups``."""

    def __init__(self, index: WorkspaceIndex):
        self.index = index
        self.pending: dict[tuple[str, str, str], Lookup] = {}

    def resolve_imported_tf_function(self, facts: ModuleFacts, name: ast.Name, path: str | None) -> RemoteFunction | None:
        return self.index.resolve_imported_tf_function(facts, name, path, pending=self.pending)

    def __getattr__(self, attribute: str):
        return getattr(self.index, attribute)
