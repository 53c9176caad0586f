"""Facts about one parsed module that many rules need, computed once per document version.

- parents of every node, so a rule can ask where a node sits;
- loops around a node (in the same function), and whether a node runs inside a tf.function;
- every ``tf.function``: decorated defs, ``g = tf.function(f, ...)``, with their options;
- module-level defs, classes and assignments, to follow a call to what it calls.

Everything here is a single walk over the tree plus lookups, to keep re-analysis in budget.
"""
from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast
from dataclasses import dataclass, field
from functools import cached_property

from tfperf_lsp.analysis.astutil import keyword, keywords_of
from tfperf_lsp.analysis.imports import ImportMap
from tfperf_lsp.analysis.source import SourceText

FunctionNode = (ast.FunctionDef, ast.AsyncFunctionDef)
Def = ast.FunctionDef | ast.AsyncFunctionDef
ScopeNode = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
LoopNode = (ast.For, ast.AsyncFor, ast.While)
ComprehensionNode = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)

TF_FUNCTION = "tensorflow.function"
# Decorators of other libraries that trace the def's body into a graph once, when it is defined
# (TensorFlow Federated: ``@tff.tensorflow.computation``, ``@tff.tf_computation``,
# ``@tff.federated_computation``); calls replay the graph. Matched on the last name under the
# library, as its own modules import them by several paths.
_TRACING_LIBRARIES = ("tensorflow_federated.",)
_TRACING_DECORATORS = frozenset({"computation", "tf_computation", "federated_computation", "tensorflow_computation"})


def _alias_of_tf_function(qualname: str) -> bool:
    """``@tf_utils.function`` / ``@utils.function``: a helper module's ``function = tf.function``
    (tf_geometric, libraries that switch between TensorFlow 1 and 2). Another file's alias cannot
    be told from here; a decorator of that name in TensorFlow code is one, so the def counts as
    traced and no rule asks to decorate it again."""
    return qualname != TF_FUNCTION and qualname.rsplit(".", 1)[-1] == "function" and "." in qualname


_SCOPE_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOP_TYPES = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_MODULE_ASSIGNMENT_TYPES = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)


@dataclass
class TFFunction:
    """A ``tf.function`` object in the source."""

    name: str | None  # the name call sites use; None for an anonymous ``tf.function(f)(x)``
    node: ast.FunctionDef | ast.AsyncFunctionDef | None  # its Python body, when known
    wrapper: ast.expr  # the decorator expression or the ``tf.function(...)`` call
    stmt: ast.stmt  # the statement that creates it
    owner_class: ast.ClassDef | None = None
    options: dict[str, ast.expr] = field(default_factory=dict)
    # False for a def another library traces into a graph once (a TensorFlow Federated
    # computation): its body runs at trace time like a tf.function's, but it is not one.
    is_tf_function: bool = True

    @property
    def params(self) -> list[str]:
        if self.node is None:
            return []
        args = self.node.args
        names = [a.arg for a in args.posonlyargs + args.args]
        if self.owner_class is not None and names and not _is_staticmethod(self.node):
            names = names[1:]  # self / cls
        return names

    @property
    def keyword_params(self) -> list[str]:
        return [] if self.node is None else [a.arg for a in self.node.args.kwonlyargs]

    def option_is_true(self, key: str) -> bool:
        value = self.options.get(key)
        return isinstance(value, ast.Constant) and value.value is True


def _is_staticmethod(node: ast.AST) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in getattr(node, "decorator_list", []))


class ModuleFacts:
    def __init__(self, tree: ast.Module, source: SourceText,
                 known_walks: Mapping[ast.stmt, _Walk] | None = None, known_imports: ImportMap | None = None,
                 known_structure: NodeStructure | None = None, known_parents: dict[ast.AST, ast.AST] | None = None):
        """``known_walks``: the statement walks of an earlier version of the file (its
        ``statement_walks``), re-used for the statements that are the same objects. None: one
        walk of the whole module, and no statement walks kept (the CLI analyses a text once).
        ``known_imports``: that version's import map, whose resolved names are re-used when
        the imports are the same. ``known_structure``: that version's ``structure``, each node's
        def and loops, which hold for the nodes of the statements both versions share.
        ``known_parents``: that version's parent of each node (``parents_map``), copied and
        patched for the statements that changed instead of merged from every statement's walk."""
        self.tree = tree
        self.source = source
        # Kept here, not on the statements: a walk holds its statement (as a parent, a def...),
        # and a tree whose nodes point back at it would wait for the cycle collector.
        self.statement_walks: dict[ast.stmt, _Walk] = {}
        # The earlier version's statements this one replaced, with their walks (statement by statement only).
        self._replaced: list[tuple[ast.stmt, _Walk]] = []
        # The one full traversal: parents, the node lists rules need, module-level assignments.
        walk = _Walk(tree) if known_walks is None else self._walk_statements(known_walks, known_parents)
        self._parents = walk.parents
        self.names = walk.names  # every identifier loaded or stored anywhere: its nodes
        self.calls, self.functions, self.classes, self.loops = walk.calls, walk.functions, walk.classes, walk.loops
        self.with_items, self.global_statements = walk.with_items, walk.global_statements
        self.module_assignments = walk.module_assignments
        # every ``x.name`` in the module, by name: merged only when asked (rarely, and a
        # keystroke's merge of every statement's names would cost more than the lookups)
        self._attribute_sets = [walk.attributes] if known_walks is None else [w.attributes for w in self.statement_walks.values()]
        self.constant_branches = walk.constant_branches  # ``if False:``... (hotness.dead_lines)
        self.module_defs: dict[str, ast.AST] = {
            stmt.name: stmt for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        }
        self.tf_functions: list[TFFunction] = []
        self._tf_function_by_def: dict[ast.AST, TFFunction] = {}
        self._assignments: dict[ast.AST, dict[str, list[ast.AST]]] = {}
        self._defs_by_scope: dict[ast.AST, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self._def_when_called_cache: dict[tuple[ast.AST, str], Def | None] = {}
        self._assignment_when_called_cache: dict[tuple[ast.AST, str], ast.AST | None] = {}
        self._passing: set[tuple[ast.AST, str]] = set()
        self._traced_by_def: dict[ast.AST, TFFunction | None] = {}
        kept = 4 * len(walk.parents)
        # Carried only from a version walked statement by statement: its walks list the nodes of
        # the statements this one replaced, whose answers are then forgotten.
        carry = bool(known_walks)
        self.structure = known_structure if carry and known_structure is not None and known_structure.size() <= kept \
            else NodeStructure()
        self._loops_of = self.structure.loops_of
        self._function_of = self.structure.function_of
        self.imports = ImportMap(tree, walk.imports)
        if carry and known_imports is not None and self.imports.resolves_like(known_imports):
            # the same imports: an earlier version's answers hold for the statements it shares
            self.imports.reuse_answers(known_imports, kept=kept)
        if carry:
            self._forget_replaced()
        self._traced_elsewhere: dict[ast.AST, TFFunction] = {}
        self._find_tf_functions()

    def parents_map(self) -> dict[ast.AST, ast.AST]:
        """Each node's parent (what the next version's facts copy: ``known_parents``)."""
        return self._parents

    def _forget_replaced(self) -> None:
        """Drop the carried answers for the nodes of the statements this version replaced: they
        would keep the old statements alive (a keystroke's def, each time) until the caches hit
        their bound and start empty, a keystroke that pays for every node again."""
        for cache in (self.structure.function_of, self.structure.loops_of, self.imports.reused_answers()):
            _forget_nodes(cache, self._replaced)

    @cached_property
    def attribute_names(self) -> set[str]:
        """Every name used as ``x.name`` in the module (read or written)."""
        return set().union(*self._attribute_sets)

    # ----------------------------------------------------------------- construction
    def _walk_statements(self, known_walks: Mapping[ast.stmt, _Walk],
                         known_parents: dict[ast.AST, ast.AST] | None = None) -> _Walk:
        """The walk of the module, statement by statement: after a keystroke the statements the
        edit did not touch are the same objects (``analysis.reparse``), and their walks are taken
        from the last version's facts; only the new statements are walked. The merged lists are
        exactly those of one walk of the module."""
        body = self.tree.body
        walks = []
        walked = []  # the statements new in this version
        for stmt in body:
            walk = known_walks.get(stmt)
            if walk is None:
                walk = _Walk(stmt)
                walked.append((stmt, walk))
            self.statement_walks[stmt] = walk
            walks.append(walk)
        self._replaced = [(stmt, walk) for stmt, walk in known_walks.items() if stmt not in self.statement_walks]
        merged = _Walk(None)
        if known_parents is not None and known_walks:
            # The last version's parents hold for the statements both share (a move shifts line
            # numbers, not parents): copy them, drop the replaced statements', add the new ones'.
            merged.parents = known_parents.copy()
            _forget_nodes(merged.parents, self._replaced)
            for stmt, walk in walked:
                merged.parents.update(walk.parents)
            merged.parents.update(dict.fromkeys(body, self.tree))  # this version's module object
        else:
            for stmt, walk in zip(body, walks):
                merged.parents[stmt] = self.tree
                merged.parents.update(walk.parents)
        for stmt, walk in zip(body, walks):
            merged.calls.extend(walk.calls)
            merged.functions.extend(walk.functions)
            merged.classes.extend(walk.classes)
            merged.loops.extend(walk.loops)
            merged.constant_branches.extend(walk.constant_branches)
            for name, stmts in walk.module_assignments.items():
                merged.module_assignments.setdefault(name, []).extend(stmts)
        # One walk of the module visits its statements last to first (a stack): these lists keep
        # that order, as rules have always seen it.
        for walk in reversed(walks):
            for name, uses in walk.names.items():
                known = merged.names.get(name)
                if known is None:
                    merged.names[name] = list(uses)
                else:
                    known.extend(uses)
            merged.with_items.extend(walk.with_items)
            merged.global_statements.extend(walk.global_statements)
            merged.imports.extend(walk.imports)
        return merged

    def _find_tf_functions(self) -> None:
        for fn in self.functions:
            for decorator in fn.decorator_list:
                call = decorator if isinstance(decorator, ast.Call) else None
                target = call.func if call else decorator
                qualname = self.qualname(target)
                if qualname is not None and (qualname.startswith(_TRACING_LIBRARIES)
                                             and qualname.rsplit(".", 1)[-1] in _TRACING_DECORATORS
                                             or _alias_of_tf_function(qualname)):
                    self._traced_elsewhere.setdefault(
                        fn, TFFunction(name=fn.name, node=fn, wrapper=decorator, stmt=fn, is_tf_function=False))
                if qualname == TF_FUNCTION:
                    owner = self.parent(fn)
                    self._add(
                        TFFunction(
                            name=fn.name,
                            node=fn,
                            wrapper=decorator,
                            stmt=fn,
                            owner_class=owner if isinstance(owner, ast.ClassDef) else None,
                            options=keywords_of(call),
                        )
                    )
        for call in self.calls_by_qualname.get(TF_FUNCTION, ()):
            if self._is_decorator(call):
                continue
            wrapped = call.args[0] if call.args else keyword(call, "func")
            stmt = self.statement_of(call)
            name = None
            if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name):
                    name = target.id
            node = self.resolve_def(wrapped, call) if wrapped is not None else None
            self._add(TFFunction(name=name, node=node, wrapper=call, stmt=stmt, options=keywords_of(call)))

    def _add(self, fn: TFFunction) -> None:
        self.tf_functions.append(fn)
        if fn.node is not None and fn.node not in self._tf_function_by_def:
            self._tf_function_by_def[fn.node] = fn

    def _is_decorator(self, call: ast.Call) -> bool:
        parent = self.parent(call)
        return isinstance(parent, FunctionNode) and call in parent.decorator_list

    # ----------------------------------------------------------------- navigation
    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(node)

    def ancestors(self, node: ast.AST):
        current = self._parents.get(node)
        while current is not None:
            yield current
            current = self._parents.get(current)

    def statement_of(self, node: ast.AST) -> ast.stmt:
        while not isinstance(node, ast.stmt):
            node = self._parents[node]
        return node

    def scope_of(self, node: ast.AST) -> ast.AST | None:
        """The innermost def, lambda or class around ``node``; None at module level."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, ScopeNode):
                return ancestor
        return None

    def enclosing_function(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost def around ``node`` (None at module level), worked out once per node:
        rules ask it, and ``in_tf_function``, of every call."""
        cache = self._function_of
        if node in cache:
            return cache[node]
        found = None
        parents = self._parents
        current = parents.get(node)
        while current is not None:
            if isinstance(current, FunctionNode):
                found = current
                break
            current = parents.get(current)
        cache[node] = found
        return found

    def enclosing_class(self, node: ast.AST) -> ast.ClassDef | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, ast.ClassDef):
                return ancestor
        return None

    def self_attribute_values(self, attribute: ast.Attribute) -> list[ast.expr]:
        """What the methods of the class around ``attribute`` (``self.x``) assign to ``self.x``
        (an agent's ``self.target_model = QNetwork(...)``); empty outside a class."""
        return [value for value, index in self.self_attribute_assignments(attribute) if index is None]

    def self_attribute_assignments(self, attribute: ast.Attribute) -> list[tuple[ast.expr, int | None]]:
        """Each value the methods of the class around ``attribute`` (``self.x``) assign to
        ``self.x``, with the position of ``self.x`` in a tuple target (``self.actor, self.critic =
        build()``: the call, 0) or None for a plain target; empty outside a class."""
        cls = self.enclosing_class(attribute)
        found: list[tuple[ast.expr, int | None]] = []
        for method in (s for s in cls.body if isinstance(s, FunctionNode)) if cls is not None else ():
            for node in walk_same_scope(method):
                if not (isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None):
                    continue
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if _is_self_attribute(target, attribute.attr):
                        found.append((node.value, None))
                    elif isinstance(target, ast.Tuple):
                        found += [(node.value, i) for i, item in enumerate(target.elts) if _is_self_attribute(item, attribute.attr)]
        return found

    def enclosing_loops(self, node: ast.AST) -> list[ast.AST]:
        """Loops (innermost first) whose every iteration runs ``node``, within its own scope.

        A node in a ``for`` loop's iterable or ``else`` runs once, so that loop is not counted.
        (Worked out once per node: about ten rules ask it of every call. Callers get a copy.)
        """
        cached = self._loops_of.get(node)
        if cached is None:
            cached = self._loops_of[node] = self._enclosing_loops(node)
        return list(cached)

    def _enclosing_loops(self, node: ast.AST) -> list[ast.AST]:
        loops: list[ast.AST] = []
        child = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, ScopeNode):
                break
            if isinstance(ancestor, (ast.For, ast.AsyncFor)):
                if child in ancestor.body:
                    loops.append(ancestor)
            elif isinstance(ancestor, ast.While):
                if child in ancestor.body or child is ancestor.test:
                    loops.append(ancestor)
            elif isinstance(ancestor, ComprehensionNode):
                if not (child is ancestor.generators[0]):
                    loops.append(ancestor)
                elif _is_inside(node, ancestor.generators[0].ifs, self):
                    loops.append(ancestor)
            child = ancestor
        return loops

    def loop_targets(self, loop: ast.AST) -> set[str]:
        if isinstance(loop, (ast.For, ast.AsyncFor)):
            return set(target_names(loop.target))
        if isinstance(loop, ComprehensionNode):
            names: set[str] = set()
            for gen in loop.generators:
                names |= set(target_names(gen.target))
            return names
        return set()

    def names_changed_by(self, loop: ast.AST, skip: ast.AST | None = None) -> set[str]:
        """Names that take a new value on each iteration: the loop's targets, names assigned in
        its body (``skip``, a statement, aside) and defs made in it (a new function each time)."""
        changed = set(self.loop_targets(loop))
        for node in getattr(loop, "body", []):
            for inner in walk_same_scope(node):
                if isinstance(inner, ast.Assign) and inner is not skip:
                    for target in inner.targets:
                        changed.update(target_names(target))
                elif isinstance(inner, (ast.AugAssign, ast.AnnAssign)):
                    changed.update(target_names(inner.target))
                elif isinstance(inner, ScopeNode) and hasattr(inner, "name"):
                    changed.add(inner.name)
        return changed

    # ----------------------------------------------------------------- names and calls
    def qualname(self, node: ast.AST | None) -> str | None:
        return self.imports.qualname(node) if node is not None else None

    @cached_property
    def calls_by_qualname(self) -> dict[str, list[ast.Call]]:
        """Calls by the qualified name of what they call (``tensorflow.Variable``), each list in
        source order: resolved once, for the rules and facts that look for particular APIs (ten
        of them went through every call of the file, each on every keystroke)."""
        index: dict[str, list[ast.Call]] = {}
        qualname = self.imports.qualname
        for call in self.calls:
            name = qualname(call.func)
            if name is not None:
                index.setdefault(name, []).append(call)
        return index

    def calls_to(self, *names: str) -> list[ast.Call]:
        """Calls of any of ``names`` (qualified), in source order."""
        index = self.calls_by_qualname
        if len(names) == 1:
            return list(index.get(names[0], ()))
        found = [call for name in names for call in index.get(name, ())]
        found.sort(key=lambda c: (c.lineno, c.col_offset))
        return found

    def call_name(self, call: ast.Call) -> str | None:
        return self.qualname(call.func)

    def resolve_def(self, expr: ast.AST, at: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The def that ``expr`` names, looking in enclosing function bodies, then the module."""
        if isinstance(expr, ast.Name):
            for scope in self._scopes_outward(at):
                if scope is self.tree:
                    return self._module_def_at(expr.id, at)
                found = self._defs_in(scope).get(expr.id)
                if found is not None:
                    return found
            return None
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in ("self", "cls"):
            cls = self.enclosing_class(at)
            if cls is not None:
                for stmt in cls.body:
                    if isinstance(stmt, FunctionNode) and stmt.name == expr.attr:
                        return stmt
        return None

    def _module_def_at(self, name: str, at: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The module-level def of ``name`` that a use at ``at`` calls. Module-level code runs
        in order, so it calls the last def above it (a notebook defines a function again in a
        later cell); code in a def sees the def above the lines that call it, else the last."""
        defs = self._module_defs_named(name)
        if not defs:
            return None
        last = defs[-1]
        if len(defs) == 1:
            return last
        if self.enclosing_function(at) is not None or isinstance(at, FunctionNode):
            return self._def_when_called(defs, at) or last
        return self._def_above(defs, position(at)[0]) or last

    @staticmethod
    def _def_above(defs: list[Def], line: int) -> Def | None:
        above = [d for d in defs if d.lineno < line]
        return above[-1] if above else None

    def _def_when_called(self, defs: list[Def], at: ast.AST) -> Def | None:
        """Which of ``defs`` (a name's module-level defs) code in a module-level def sees when it
        runs: the one above the module-level lines that call that def, when they all see the same
        one (a notebook's ``make_dataset()`` reads the ``preprocess`` of its own cells, not one
        defined again for another section later). None when its callers see different ones or
        there are none."""
        outer = self._outermost_module_def(at)
        if outer is None:
            return None
        key = (outer, defs[0].name)
        if key not in self._def_when_called_cache:
            seen = {self._def_above(defs, line) for line in self._module_level_call_lines(outer)}
            self._def_when_called_cache[key] = seen.pop() if len(seen) == 1 else None
        return self._def_when_called_cache[key]

    def _assignment_when_called(self, name: str, candidates: Sequence[ast.AST], at: ast.AST) -> ast.AST | None:
        """Which module-level assignment of ``name`` code in a module-level def reads when it
        runs: the last one above the module-level lines that call that def, when they all see
        the same one. None when its callers see different ones, none, or there are no callers.
        A call from another def counts as seeing the last one (it runs after the module has)."""
        outer = self._outermost_module_def(at)
        if outer is None:
            return None
        key = (outer, name)
        if key not in self._assignment_when_called_cache:
            seen = set()
            for line in self._module_level_call_lines(outer):
                above = [c for c in candidates if position(c)[0] < line]
                seen.add(max(above, key=position) if above else None)
            if any(self.enclosing_function(call) not in (None, outer) for call in self._calls_by_name.get(outer.name, ())):
                seen.add(max(candidates, key=position))
            self._assignment_when_called_cache[key] = seen.pop() if len(seen) == 1 else None
        return self._assignment_when_called_cache[key]

    def _outermost_module_def(self, at: ast.AST) -> Def | None:
        """The module-level def that ``at`` is in (or is), through nested defs."""
        outer = at if isinstance(at, FunctionNode) else self.enclosing_function(at)
        while outer is not None and (enclosing := self.enclosing_function(outer)) is not None:
            outer = enclosing
        return outer if outer is not None and self.parent(outer) is self.tree else None

    def _module_level_call_lines(self, fn: Def) -> list[int]:
        """Lines of the module-level code (outside any def) that calls ``fn`` by its name."""
        defs = self._module_defs_named(fn.name)
        return [call.lineno for call in self._calls_by_name.get(fn.name, ())
                if self.enclosing_function(call) is None and self._def_above(defs, call.lineno) is fn]

    def _module_defs_named(self, name: str) -> list[Def]:
        return self._module_defs_by_name.get(name, [])

    @cached_property
    def _module_defs_by_name(self) -> dict[str, list[Def]]:
        """The module-level defs of each name, in source order (one pass, not one per name):
        also those in a block of module-level code, such as a script's ``if __name__ ==
        "__main__":`` that defines its ``train_step`` and loops over it, or a ``try``."""
        defs: dict[str, list[Def]] = {}
        for fn in self.functions:  # in source order
            if self.parent(fn) is self.tree or self.scope_of(fn) is None:
                defs.setdefault(fn.name, []).append(fn)
        return defs

    def calls_named(self, *names: str) -> list[ast.Call]:
        """The calls whose callee's last name is one of ``names`` (``model.predict(...)``,
        ``predict(...)``), in source order: what a rule looking for ``predict`` walks instead of
        every call of the module (about fifty rule loops did, each a pass over thousands)."""
        index = self._calls_by_last_name
        if len(names) == 1:
            return index.get(names[0], [])
        found = [call for name in names for call in index.get(name, ())]
        found.sort(key=lambda c: (c.lineno, c.col_offset))
        return found

    def call_names(self) -> Iterable[str]:
        """Every callee's last name in the module (``predict`` for ``model.predict(...)``)."""
        return self._calls_by_last_name.keys()

    @cached_property
    def _calls_by_last_name(self) -> dict[str, list[ast.Call]]:
        index: dict[str, list[ast.Call]] = {}
        for call in self.calls:
            func = call.func
            name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
            if name is not None:
                calls = index.get(name)
                if calls is None:
                    index[name] = [call]
                else:
                    calls.append(call)
        return index

    @cached_property
    def _calls_by_name(self) -> dict[str, list[ast.Call]]:
        """Calls of a plain name (``train()``), by that name, in source order."""
        calls: dict[str, list[ast.Call]] = {}
        for call in self.calls:
            if isinstance(call.func, ast.Name):
                calls.setdefault(call.func.id, []).append(call)
        return calls

    def _defs_in(self, scope: ast.AST) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
        """Defs directly in a scope's body, by name (the last one wins, as at run time)."""
        defs = self._defs_by_scope.get(scope)
        if defs is None:
            defs = {s.name: s for s in getattr(scope, "body", []) if isinstance(s, FunctionNode)}
            self._defs_by_scope[scope] = defs
        return defs

    def _scopes_outward(self, node: ast.AST):
        fn = self.enclosing_function(node)
        while fn is not None:
            yield fn
            fn = self.enclosing_function(fn)
        yield self.tree

    def tf_function_for_def(self, node: ast.AST) -> TFFunction | None:
        return self._tf_function_by_def.get(node)

    def resolve_tf_function(self, expr: ast.AST, at: ast.AST) -> TFFunction | None:
        """The tf.function a call's callee refers to (``f(...)``, ``self.step(...)``), if local."""
        if isinstance(expr, ast.Name):
            assignment = self.reaching_assignment(expr)
            node = self.resolve_def(expr, at)
            # Whichever binds the name last before the use: a notebook assigns
            # ``tf_cube = tf.function(cube)`` and, cells later, defines ``@tf.function def tf_cube``.
            if assignment is not None and not (node is not None and position(assignment) < position(node) < position(at)):
                return next((fn for fn in self.tf_functions if fn.stmt is assignment and fn.owner_class is None), None)
        else:
            node = self.resolve_def(expr, at)
        fn = self.tf_function_for_def(node) if node is not None else None
        # ``g = tf.function(f)`` makes ``g`` a tf.function; ``f`` itself still runs eagerly.
        return fn if fn is not None and fn.stmt is node else None

    def reaching_assignment(self, name: ast.Name) -> ast.AST | None:
        """The assignment that ``name`` (a use) most likely reads, in its scope or the module."""
        return self.reaching_assignment_at(name.id, name)

    def reaching_assignment_at(self, name: str, at: ast.AST) -> ast.AST | None:
        """The assignment a use of ``name`` at ``at`` most likely reads.

        At module level: the last assignment before the use. Inside a function, for a name of an
        enclosing def: that def's last assignment; for a global: the one above the module-level
        lines that call the def around the use, when they all see the same one (a notebook's
        training loop runs ``train_step`` while ``model = build()`` holds, before a later cell
        saves and reloads ``model``); else the module's last assignment, since functions usually
        run after the module has run.
        """
        scope = self.enclosing_function(at)
        local = self.assignments_in(scope).get(name, []) if scope is not None else []
        if not local and scope is not None and name in parameter_names(scope):
            return self._passed_assignment(scope, name)
        if not local and scope is not None:
            # a closure: the enclosing defs' bindings (``model = build()`` in ``main``, read by
            # the ``train_step`` defined there), which the inner def runs after
            outer = self.enclosing_function(scope)
            while outer is not None:
                around = self.assignments_in(outer).get(name, [])
                if around:
                    return max(around, key=position)
                if name in parameter_names(outer):
                    return None
                outer = self.enclosing_function(outer)
        candidates = local or self.module_assignments.get(name, [])
        runs_later = scope is not None or isinstance(at, (*FunctionNode, ast.ClassDef))
        if runs_later and not local:
            if len(candidates) > 1:
                seen = self._assignment_when_called(name, candidates, at)
                if seen is not None:
                    return seen
            return max(candidates, key=position) if candidates else None
        # ``x = layer(x)``: the use on the right reads the binding before this statement
        before = [c for c in candidates if position(c) < position(at) and not _holds(c, at)]
        return max(before, key=position) if before else None

    def built_from_class(self, holder: ast.expr, cls: ast.ClassDef) -> bool:
        """``holder`` holds an object made by calling the file's class ``cls``: a name (``agent =
        DQNAgent(...)`` before ``agent.act(state)``), or ``self.x`` that every assignment in the
        methods of the class around it makes so (``self.model = ActionStateModel(...)`` before
        ``self.model.get_action(state)``), or the call itself (``Agent(env).train()``)."""
        built: Sequence[ast.AST | None]
        if isinstance(holder, ast.Name):
            assignment = self.reaching_assignment_at(holder.id, holder)
            built = [getattr(assignment, "value", None)] if assignment is not None else self._passed_for(holder)
        elif isinstance(holder, ast.Attribute) and _is_self_attribute(holder, holder.attr):
            built = self.self_attribute_values(holder)
        elif isinstance(holder, ast.Call):
            built = [holder]  # ``Agent(env).train()``: built and used in one expression
        else:
            return False
        return bool(built) and all(isinstance(b, ast.Call) and isinstance(b.func, ast.Name) and b.func.id == cls.name
                                   for b in built)

    def _passed_for(self, parameter: ast.Name) -> list[ast.AST | None]:
        """What each call of the top-level def around ``parameter`` (one of its parameters) passes
        for it, as the value the passed name was bound to: ``play_episode(env, agent)`` with
        ``agent = A2CAgent(env)`` at module level gives ``[A2CAgent(env)]``. Empty when unknown."""
        fn = self.enclosing_function(parameter)
        if not isinstance(fn, FunctionNode) or self.enclosing_function(fn) is not None \
                or parameter.id not in {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}:
            return []
        values: list[ast.AST | None] = []
        for call in self.calls_named(fn.name):
            if not isinstance(call.func, ast.Name) or self.resolve_def(call.func, call) is not fn:
                continue
            passed = argument_for(call, fn, parameter.id)
            if not isinstance(passed, ast.Name):
                return []
            values.append(getattr(self.reaching_assignment_at(passed.id, passed), "value", None))
        return values

    def in_exclusive_branches(self, a: ast.AST, b: ast.AST) -> bool:
        """``a`` and ``b`` lie in the two branches of one ``if``/``else``: one never runs after
        the other (``if training: ds = ds.repeat()`` does not reach the ``else`` branch)."""
        branch_of_b: dict[ast.AST, str] = {}
        child = b
        for ancestor in self.ancestors(b):
            if isinstance(ancestor, ast.If):
                branch_of_b[ancestor] = _branch(ancestor, child)
            child = ancestor
        if not branch_of_b:
            return False
        child = a
        for ancestor in self.ancestors(a):
            if ancestor in branch_of_b:  # the innermost if around both
                return {_branch(ancestor, child), branch_of_b[ancestor]} == {"body", "orelse"}
            child = ancestor
        return False

    def _passed_assignment(self, fn: ast.AST, param: str) -> ast.AST | None:
        """What a parameter holds: the assignment of the name every call site in this file
        passes for it (``generate(model)`` -> ``model = ...``); None when the callers disagree,
        pass an expression, or there are none (the value comes from elsewhere)."""
        key = (fn, param)
        if key in self._passing:
            return None  # recursion through the callers' own parameters
        self._passing.add(key)
        try:
            found: set[ast.AST | None] = set()
            for call in self.calls_by_def.get(fn, []):
                argument = argument_for(call, fn, param)
                found.add(self.reaching_assignment(argument) if isinstance(argument, ast.Name) else None)
                if None in found or len(found) > 1:
                    return None
            return found.pop() if found else None
        finally:
            self._passing.discard(key)

    def in_tf_function(self, node: ast.AST) -> TFFunction | None:
        """The tf.function whose trace runs ``node``, if any (directly or through local helpers);
        or the def another library traces once (``is_tf_function`` False: a TFF computation)."""
        fn_node = self.enclosing_function(node)
        return self._traced_by(fn_node) if fn_node is not None else None

    def traced_elsewhere(self, fn_node: ast.AST) -> bool:
        """A def that another decorator than ``tf.function`` traces: a TFF computation, or an
        alias of ``tf.function`` from a helper module (``@tf_utils.function``)."""
        return fn_node in self._traced_elsewhere

    def _traced_by(self, fn_node: ast.AST) -> TFFunction | None:
        """``in_tf_function`` of everything in the def ``fn_node``: the same for all of its body,
        so it is worked out once per def (rules ask it of every call)."""
        cache = self._traced_by_def
        if fn_node not in cache:
            fn = self.tf_function_for_def(fn_node) or self._traced_elsewhere.get(fn_node)
            if fn is None:
                fn = self.traced_helpers.get(fn_node)
            if fn is None:
                fn = self.in_tf_function(fn_node)
            cache[fn_node] = fn
        return cache[fn_node]

    @cached_property
    def traced_helpers(self) -> dict[ast.AST, TFFunction]:
        """Local defs called (transitively) from a tf.function body: their code runs at trace time."""
        found: dict[ast.AST, TFFunction] = {}
        work = [(fn.node, fn) for fn in self.tf_functions if fn.node is not None]
        work += [(fn.node, fn) for fn in self._traced_elsewhere.values() if fn.node is not None]
        while work:
            body, origin = work.pop()
            for node in calls_below(body):
                target = self.resolve_def(node.func, node)
                if target is not None and target not in found and target not in self._tf_function_by_def \
                        and target not in self._traced_elsewhere and not self._runs_eagerly_when_traced(target):
                    found[target] = origin
                    work.append((target, origin))
        return found

    def _runs_eagerly_when_traced(self, fn_node: ast.AST) -> bool:
        """``@tf.py_function(...)`` / ``@tf.numpy_function(...)``: the graph calls back into
        Python on every call, so the body is not traced."""
        for decorator in getattr(fn_node, "decorator_list", []):
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if self.qualname(target) in _EAGER_CALLBACKS:
                return True
        return False

    @cached_property
    def calls_by_def(self) -> dict[ast.AST, list[ast.Call]]:
        """Call sites of each local def: direct calls by name or ``self.method``, and a method of
        a module-level class called on an object of that class built in this file (``agent =
        A2CAgent(...)``, then ``agent.train_model(...)`` in the episode loop)."""
        result: dict[ast.AST, list[ast.Call]] = {}
        methods = self._methods_by_name
        # only a call by the name of one of the file's defs can resolve to one (most call library code)
        for call in self.calls_named(*{fn.name for fn in self.functions}):
            target = self.resolve_def(call.func, call)
            if target is None and methods and isinstance(call.func, ast.Attribute) \
                    and not (isinstance(call.func.value, ast.Name) and call.func.value.id in ("self", "cls")):
                target = next((fn for cls, fn in methods.get(call.func.attr, ())
                               if self.built_from_class(call.func.value, cls)), None)
            if target is not None:
                result.setdefault(target, []).append(call)
        return result

    def methods_named(self, name: str) -> list[tuple[ast.ClassDef, Def]]:
        """The methods called ``name`` of the module-level classes: (class, def)."""
        return self._methods_by_name.get(name, [])

    @cached_property
    def _methods_by_name(self) -> dict[str, list[tuple[ast.ClassDef, Def]]]:
        """The methods of the module-level classes, by name: (class, def)."""
        methods: dict[str, list[tuple[ast.ClassDef, Def]]] = {}
        for cls in self.tree.body:
            if isinstance(cls, ast.ClassDef):
                for stmt in cls.body:
                    if isinstance(stmt, FunctionNode):
                        methods.setdefault(stmt.name, []).append((cls, stmt))
        return methods

    def is_called_repeatedly(self, fn_node: ast.AST, _seen: frozenset = frozenset()) -> bool:
        """True when a def is called from a loop, or from a def that is itself called repeatedly."""
        if fn_node in _seen:
            return False
        for call in self.calls_by_def.get(fn_node, []):
            if self.enclosing_loops(call):
                return True
            caller = self.enclosing_function(call)
            if caller is not None and self.is_called_repeatedly(caller, _seen | {fn_node}):
                return True
        return False

    def assignments_in(self, scope: ast.AST) -> dict[str, list[ast.AST]]:
        """Name -> assigning nodes (Assign/AugAssign/For target/...) directly in ``scope``.

        Kept on a def node (it depends on the def's own text only, and a keystroke elsewhere
        leaves the node as it was: ``analysis.reparse``); the module's, in these facts."""
        on_node = isinstance(scope, ScopeNode)
        cached = scope.__dict__.get(_ASSIGNMENTS) if on_node else self._assignments.get(scope)
        if cached is not None:
            return cached
        result: dict[str, list[ast.AST]] = {}
        body = scope.body if hasattr(scope, "body") else []
        for stmt in body if isinstance(body, list) else [body]:
            for node in walk_same_scope(stmt):
                targets: list[ast.AST] = []
                if isinstance(node, ast.Assign):
                    targets = list(node.targets)
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
                    targets = [node.target]
                elif isinstance(node, (ast.For, ast.AsyncFor)):
                    targets = [node.target]
                # Comprehension variables are local to the comprehension (Python 3): not here.
                elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                    targets = [node.optional_vars]
                for target in targets:
                    for name in target_names(target):
                        result.setdefault(name, []).append(node)
        if on_node:
            setattr(scope, _ASSIGNMENTS, result)  # nodes below the def: no reference cycle
        else:
            self._assignments[scope] = result
        return result


def _is_self_attribute(target: ast.AST, name: str) -> bool:
    return isinstance(target, ast.Attribute) and target.attr == name and isinstance(target.value, ast.Name) \
        and target.value.id == "self"


def _branch(if_node: ast.If, child: ast.AST) -> str:
    return "body" if child in if_node.body else "orelse" if child in if_node.orelse else "test"


def argument_for(call: ast.Call, fn: ast.AST, param: str) -> ast.expr | None:
    """The argument ``call`` passes for ``fn``'s parameter ``param`` (``self.f(x)`` skips ``self``)."""
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value
    args = fn.args  # type: ignore[attr-defined]
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if isinstance(call.func, ast.Attribute) and positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
    if param not in positional or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    index = positional.index(param)
    return call.args[index] if index < len(call.args) else None


def argument_or_default(call: ast.Call, fn: ast.AST, param: str) -> ast.expr | None:
    """``argument_for``, or the parameter's default when the call visibly leaves it out (no
    ``*args`` or ``**kwargs`` at the call): ``predict_probas(model, X)`` runs with ``n=10``."""
    given = argument_for(call, fn, param)
    if given is not None or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(kw.arg is None for kw in call.keywords):
        return given
    return parameter_defaults(fn).get(param)


def parameter_defaults(fn: ast.AST) -> dict[str, ast.expr]:
    """Each parameter of the def or lambda ``fn`` that has a default, with it."""
    args = fn.args  # type: ignore[attr-defined]
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    return defaults


def siblings(facts: ModuleFacts, stmt: ast.AST) -> tuple[list[ast.stmt], int] | None:
    """The statement list holding ``stmt`` and its index there."""
    parent = facts.parent(stmt)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list):
            for index, item in enumerate(block):
                if item is stmt:
                    return block, index
    return None


def neighbour(facts: ModuleFacts, stmt: ast.AST, offset: int) -> ast.stmt | None:
    """The statement ``offset`` places after ``stmt`` in its block (before, when negative)."""
    found = siblings(facts, stmt)
    if found is None:
        return None
    block, index = found
    index += offset
    return block[index] if 0 <= index < len(block) else None


def parameter_names(fn: ast.AST) -> set[str]:
    """Every parameter name of the def ``fn``, ``*args`` and ``**kwargs`` included."""
    args = fn.args  # type: ignore[attr-defined]
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    return names


def _forget_nodes(cache: dict[ast.AST, Any], statements: list[tuple[ast.stmt, _Walk]]) -> None:
    """Remove from ``cache`` each of ``statements`` and every node below it (its walk's parents)."""
    for stmt, walk in statements:
        cache.pop(stmt, None)
        for node in walk.parents:
            cache.pop(node, None)


class NodeStructure:
    """Each node's innermost def and the loops around it (``enclosing_function``,
    ``enclosing_loops``), worked out once per node. Both depend on the node's ancestors only, and a
    statement a keystroke leaves alone keeps its nodes and their ancestors (``analysis.reparse``,
    which also moves statements in place without changing them), so a document session hands it
    from one version to the next. The answers for replaced statements' nodes stay until it holds
    four times the module's nodes (``ModuleFacts``), and then it starts empty."""

    __slots__ = ("function_of", "loops_of")

    def __init__(self) -> None:
        self.function_of: dict[ast.AST, ast.FunctionDef | ast.AsyncFunctionDef | None] = {}
        self.loops_of: dict[ast.AST, list[ast.AST]] = {}

    def size(self) -> int:
        return len(self.function_of) + len(self.loops_of)


class _Walk:
    """What the traversal collects below one node: the module, or one top-level statement
    (``ModuleFacts``, ``ModuleFacts._walk_statements``)."""

    __slots__ = ("parents", "names", "calls", "functions", "classes", "loops", "with_items",
                 "global_statements", "imports", "module_assignments", "attributes", "constant_branches",
                 "positioned")

    def __init__(self, root: ast.AST | None):
        """``root`` None: empty lists, to merge walks into."""
        self.parents: dict[ast.AST, ast.AST] = {}
        self.names: dict[str, list[ast.Name]] = {}
        self.calls: list[ast.Call] = []
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.classes: list[ast.ClassDef] = []
        self.loops: list[ast.AST] = []
        self.with_items: list[ast.withitem] = []
        self.global_statements: list[ast.Global] = []
        self.imports: list[ast.stmt] = []
        self.module_assignments: dict[str, list[ast.stmt]] = {}
        self.attributes: set[str] = set()  # every ``x.name`` read or written: the names
        self.constant_branches: list[ast.If | ast.While] = []  # ``if False:``, ``while 0:``, ``if True:``
        # The nodes with line numbers (``analysis.reparse`` shifts them when lines above change),
        # listed the first time it does: a statement below the edit moves on every new line.
        self.positioned: list[Any] | None = None
        parents = self.parents
        names = self.names
        attributes = self.attributes
        # (node, at module level?) - module level ends at the first def, lambda or class.
        stack: list[tuple[ast.AST, bool]] = [(root, True)] if root is not None else []
        while stack:
            node, module_level = stack.pop()
            kind = type(node)
            child_module_level = module_level and kind not in _SCOPE_TYPES
            for child in child_nodes(node):
                parents[child] = node
                stack.append((child, child_module_level))
            # Dispatch on the exact type (faster than isinstance chains); ``typed`` is the node
            # as the branch's type, which mypy cannot infer from ``kind is ...``.
            typed: Any = node
            if kind is ast.Name:
                uses = names.get(typed.id)
                if uses is None:
                    names[typed.id] = [typed]
                else:
                    uses.append(typed)
            elif kind is ast.Attribute:
                attributes.add(typed.attr)
            elif kind is ast.Call:
                self.calls.append(typed)
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef):
                self.functions.append(typed)
            elif kind is ast.ClassDef:
                self.classes.append(typed)
            elif kind in _LOOP_TYPES:
                self.loops.append(typed)
            elif kind is ast.withitem:
                self.with_items.append(typed)
            elif kind is ast.Global:
                self.global_statements.append(typed)
            elif (kind is ast.If or kind is ast.While) and type(typed.test) is ast.Constant:
                self.constant_branches.append(typed)
            elif kind in (ast.Import, ast.ImportFrom):
                self.imports.append(typed)
            if module_level and kind in _MODULE_ASSIGNMENT_TYPES:
                targets = typed.targets if kind is ast.Assign else [typed.target]
                for target in targets:
                    for name in target_names(target):
                        self.module_assignments.setdefault(name, []).append(typed)
        # Walk order is not source order; rules report in source order.
        for items in cast("tuple[list[Any], ...]", (self.calls, self.functions, self.classes, self.loops)):
            items.sort(key=lambda n: (n.lineno, n.col_offset))
        for stmts in self.module_assignments.values():
            stmts.sort(key=lambda n: n.lineno)


def walk_same_scope(node: ast.AST) -> list[ast.AST]:
    """ast.walk that does not descend into nested defs, lambdas or classes, in the same order.

    The list is kept on ``node``: about ten rules walk the same function bodies and loops (on
    the 2k-line examples file 16.5k nodes were yielded for 6.6k distinct ones), and the trees
    are never changed once parsed. It lives as long as the tree. Callers must not change it.

    The node keeps its strict descendants only: a list holding the node itself would be a
    reference cycle, and the whole tree would then wait for the garbage collector instead of
    being freed when the analysis is dropped (a full collection during the next parse doubled it)."""
    below = node.__dict__.get(_SAME_SCOPE)
    if below is None:
        below = list(_walk_same_scope(node))[1:]
        setattr(node, _SAME_SCOPE, below)
    return [node, *below]


def calls_below(node: ast.AST) -> list[ast.Call]:
    """Every call inside ``node`` (nested defs included), in ``walk_nodes`` order. Kept on the node
    as ``walk_same_scope`` keeps its list: ``traced_helpers`` reads every tf.function's body after
    each keystroke, and a def the keystroke did not touch is the same object with the same calls."""
    calls = node.__dict__.get(_CALLS_BELOW)
    if calls is None:
        calls = [n for n in walk_nodes(node) if isinstance(n, ast.Call) and n is not node]
        setattr(node, _CALLS_BELOW, calls)
    return [node, *calls] if isinstance(node, ast.Call) else calls


_CALLS_BELOW = "_tfperf_calls_below"
_SAME_SCOPE = "_tfperf_same_scope"
_ASSIGNMENTS = "_tfperf_assignments"


def _walk_same_scope(node: ast.AST):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in child_nodes(current):
            if not isinstance(child, ScopeNode):
                stack.append(child)


def walk_nodes(node: ast.AST):
    """``ast.walk`` (breadth first, the same order) without the expression contexts, and
    without its nested generators: about twice as fast."""
    todo = deque([node])
    while todo:
        current = todo.popleft()
        todo.extend(child_nodes(current))
        yield current


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))`` without the expression contexts (``Load``/``Store``:
    shared singletons no rule walks to), in the same order, and without its two nested generators
    (the walks that build the facts spend a third of their time in them)."""
    children: list[ast.AST] = []
    append = children.append
    kind = type(node)
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = tuple(f for f in node._fields if f not in _NEVER_CHILDREN)
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, _AST):
            append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, _AST):
                    append(item)
    return children


# Fields that never hold a node a rule looks for: the context singletons and plain strings/ints.
_NEVER_CHILDREN = frozenset({"ctx", "id", "attr", "name", "arg", "asname", "module", "level", "kind",
                             "type_comment", "conversion", "is_async", "simple"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_AST = ast.AST


_EAGER_CALLBACKS = frozenset({"tensorflow.py_function", "tensorflow.numpy_function", "tensorflow.compat.v1.py_func"})


def _holds(statement: ast.AST, node: ast.AST) -> bool:
    """``node`` lies inside ``statement`` (by their positions)."""
    end = (getattr(statement, "end_lineno", None) or 0, getattr(statement, "end_col_offset", None) or 0)
    return position(statement) <= position(node) <= end


def position(node: ast.AST) -> tuple[int, int]:
    """(line, column) of a node, for ordering nodes by where they start."""
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _is_inside(node: ast.AST, containers: Sequence[ast.AST], facts: ModuleFacts) -> bool:
    targets = set(map(id, containers))
    return any(id(a) in targets for a in facts.ancestors(node)) or id(node) in targets


def target_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for elt in target.elts for name in target_names(elt)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    return []


