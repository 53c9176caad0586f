"""Does a value read in a loop body come from an earlier iteration of that loop?

``model.predict(x)`` in a loop can be replaced by one batched call only when each iteration's
``x`` is made in that iteration (from the loop's item, or from values set before the loop); a
greedy decoder or an autoregressive forecast feeds each prediction into the next input, and
stacking those calls changes the results. The question is a reaching-definitions one, answered
on the loop body in source order:

- a name bound unconditionally earlier in the same iteration (``sample = gray2rgb(sample)``
  after ``for sample in X``) holds this iteration's value: follow what that binding read;
- a name the loop changes, but not before the read in this iteration (``tokens.append(t)``
  after ``predict(tokens)``, ``df["y"][i] = y_pred`` with ``X = df.values`` read again), holds
  what an earlier iteration left: the value is carried;
- a name the loop never changes comes from outside the loop: the same every iteration.

A binding under an ``if`` that does not also hold the read may not run, so it does not end the
search: the error that costs less is "carried" (then the advice never says "stack the inputs",
which would change what the code computes).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tfperf_lsp.analysis.astutil import int_literal
from tfperf_lsp.analysis.facts import ModuleFacts, position, target_names, walk_same_scope

_MUTATORS = frozenset({"append", "extend", "insert"})
_CONCATENATORS = ("concat", "concatenate", "append", "hstack", "column_stack", "vstack")
Position = tuple[int, int]
# Blocks whose body may not run on a given iteration (a ``try`` body does, barring an error).
_MAY_NOT_RUN = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.IfExp, ast.BoolOp, ast.match_case)


@dataclass(frozen=True)
class _Change:
    """One change of a name in the loop body: a binding (``x = ...``, a loop target) replaces
    the value; an update (``x += ...``, ``x.append(...)``, ``x[i] = ...``) changes it in place."""

    at: Position            # when it takes effect, in source order
    replaces: bool
    reads: tuple[ast.AST, ...]  # the expressions the new value is made of
    length: int             # +1 appends to the value it had (``seq.append(t)``, ``x = concat([x, t])``),
                            # -1 drops from it (``x = np.delete(x, 0, axis=0)``, ``p = p[1:]``), 0 neither
    node: ast.AST


@dataclass
class Carry:
    """What the loop body does to one read: ``carried``, its value comes (in part) from an
    earlier iteration; ``grows``, and that value gets longer every iteration; ``from_item``, it is
    made from the item the loop is on."""

    carried: bool = False
    grows: bool = False
    from_item: bool = False  # made (in part) from the loop's own item (``sample = x.reshape(...)`` of ``for x in X``)


@dataclass
class LoopFlow:
    """The changes a loop's body makes to each name (nested defs and lambdas left out)."""

    facts: ModuleFacts
    loop: ast.AST
    changes: dict[str, list[_Change]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        loop = self.loop
        if isinstance(loop, (ast.For, ast.AsyncFor)):
            for name in target_names(loop.target):  # a new item every iteration, from the iterable made once
                self._add(name, _Change(position(loop), True, (), 0, loop))
        for stmt in getattr(loop, "body", []):
            for node in walk_same_scope(stmt):
                self._record(node)
        for found in self.changes.values():
            found.sort(key=lambda change: change.at)

    def carry(self, expr: ast.AST) -> Carry:
        """Whether the value of ``expr``, read where it stands in the body, comes from an
        earlier iteration, and whether it grows from one to the next."""
        result = Carry()
        seen: set[tuple[str, Position, bool]] = set()
        # (a name, where it is read, the node that reads it, whether its length reaches ``expr``)
        todo = [(name, position(expr), expr, _keeps_length(self.facts, expr)) for name in _names_read(expr)]
        while todo and len(seen) < 500:
            name, at, reader, length_reaches = todo.pop()
            if (name, at, length_reaches) in seen:
                continue
            seen.add((name, at, length_reaches))
            changes = self.changes.get(name)
            if not changes:
                continue  # set outside the loop: the same every iteration
            before = [c for c in changes if c.at < at and c.replaces and self._always_runs_before(c.node, reader)]
            if before:  # made in this iteration: from what that binding and the updates after it read
                sources = [before[-1]] + [c for c in changes if before[-1].at < c.at < at]
                result.from_item = result.from_item or before[-1].node is self.loop
            else:  # nothing in this iteration set it before the read: what the last iteration left
                result.carried = True
                # longer each time when it gains more than it loses (not ``pattern.append(index)``
                # then ``pattern = pattern[1:]``: a window that keeps its length)
                result.grows = result.grows or (length_reaches and sum(c.length for c in changes) > 0
                                                and not self._emptied_after(name, changes, at, reader))
                sources = changes
            for change in sources:
                for value in change.reads:
                    keeps_length = length_reaches and _keeps_length(self.facts, value)
                    todo.extend((read, position(change.node), change.node, keeps_length) for read in _names_read(value))
        return result

    def _emptied_after(self, name: str, changes: list[_Change], at: Position, reader: ast.AST) -> bool:
        """After each read the loop starts the value afresh (``batch = []`` in the block that
        reads ``batch`` when it is full): every read sees what was gathered since the last one,
        not a value longer than the last."""
        return any(c.replaces and c.at > at and self._always_runs_before(c.node, reader)
                   and name not in (n for value in c.reads for n in _names_read(value)) for c in changes)

    def _always_runs_before(self, node: ast.AST, reader: ast.AST) -> bool:
        """The change runs on every iteration that reaches ``reader``: every branch or inner
        loop around it below the loop holds the reader too."""
        around_reader = set(self.facts.ancestors(reader))
        for block in (node, *self.facts.ancestors(node)):
            if block is self.loop:
                return True
            if isinstance(block, _MAY_NOT_RUN) and block not in around_reader:
                return False
        return node is self.loop

    def _record(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._record_store(target, node.value, node)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._record_store(node.target, node.value, node)
        elif isinstance(node, ast.NamedExpr):
            self._record_store(node.target, node.value, node)
        elif isinstance(node, ast.AugAssign):
            root = _root_name(node.target)
            if root is not None:
                self._add(root, _Change(_end(node), False, (node.value,), int(isinstance(node.op, ast.Add)), node))
        elif isinstance(node, (ast.For, ast.AsyncFor)):  # an inner loop: its target, from its iterable
            for name in target_names(node.target):
                self._add(name, _Change(position(node), True, (node.iter,), 0, node))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            for name in target_names(node.optional_vars):
                self._add(name, _Change(position(node.context_expr), True, (node.context_expr,), 0, node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            root = _root_name(node.func.value)
            if root == "self":
                # ``self.history.append(move)``, or ``self.record(move)`` which appends to it
                if node.func.attr in _MUTATORS and isinstance(node.func.value, ast.Attribute) or self._changes_self(node):
                    self._add(root, _Change(_end(node), False, tuple(node.args), 0, node))
            elif node.func.attr in _MUTATORS and root is not None and root not in self.facts.imports.bindings:
                self._add(root, _Change(_end(node), False, tuple(node.args), 1, node))  # not ``np.append(a, b)``
            elif node.func.attr == "pop" and root is not None and root not in self.facts.imports.bindings:
                self._add(root, _Change(_end(node), False, (), -1, node))

    def _changes_self(self, call: ast.Call) -> bool:
        """``self.method(...)`` where the class's ``method`` stores into or appends to an
        attribute of ``self`` (not ``self.preprocess(img)``, which only computes)."""
        func = call.func
        cls = self.facts.enclosing_class(call)
        if cls is None or not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return False
        method = next((s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == func.attr), None)
        if method is None:
            return False
        for node in walk_same_scope(method):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
            if any(isinstance(t, (ast.Attribute, ast.Subscript)) and _root_name(t) == "self" for t in targets):
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS \
                    and isinstance(node.func.value, ast.Attribute) and _root_name(node.func.value) == "self":
                return True
        return False

    def _record_store(self, target: ast.AST, value: ast.AST, node: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._record_store(element.value if isinstance(element, ast.Starred) else element, value, node)
        elif isinstance(target, ast.Name):
            self._add(target.id, _Change(_end(node), True, (value,), self._length_change(target.id, value), node))
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            # ``x_pred[0, t, idx] = 1.``, ``df["cnt"][i] = y_pred``: the object holds what is stored
            root = _root_name(target)
            if root is not None:
                self._add(root, _Change(_end(node), False, (value, target), 0, node))

    def _length_change(self, name: str, value: ast.AST) -> int:
        """``seq = tf.concat([seq, note], axis=1)``: +1, the name with more appended (not a
        window, ``np.append(batch[:, 1:], [[y]], axis=1)``); ``x = np.delete(x, 0, axis=0)``,
        ``p = p[1:]``: -1, the name with its first items dropped; 0 otherwise."""
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id == name:
            return -1 if any(isinstance(p, ast.Slice) and (int_literal(p.lower) or 0) > 0 for p in _slice_parts(value)) else 0
        if not isinstance(value, ast.Call):
            return 0
        qualname = self.facts.qualname(value.func) or ""
        first = value.args[0] if value.args else None
        if qualname.endswith(".delete") and isinstance(first, ast.Name) and first.id == name:
            return -1
        if not qualname.endswith(_CONCATENATORS):
            return 0
        for argument in value.args:
            for node in ast.walk(argument):
                if isinstance(node, ast.Name) and node.id == name \
                        and not isinstance(self.facts.parent(node), ast.Subscript):
                    return 1
        return 0

    def _add(self, name: str, change: _Change) -> None:
        self.changes.setdefault(name, []).append(change)


def _keeps_length(facts: ModuleFacts, value: ast.AST) -> bool:
    """Whether a value made from a growing one grows with it: an array built from it
    (``np.array([tokens])``, ``x.reshape(1, -1, 1)``, ``x / n``) does; one padded to a length
    (``pad_sequences([t], maxlen=40)``), its last items (``tokens[-40:]``), one item of it
    (``predictions[-1]``) or the result of a call tfperf does not know (a ``TextVectorization``
    layer, which may pad) do not, as far as tfperf can tell."""
    if isinstance(value, ast.Subscript):
        parts = _slice_parts(value)
        if any(isinstance(p, ast.Slice) and p.upper is None and p.step is None and isinstance(p.lower, ast.UnaryOp)
               and isinstance(p.lower.op, ast.USub) for p in parts):
            return False
        if isinstance(value.value, ast.Name):
            # ``seq[:, :8]`` keeps the growing axis as far as tfperf can tell; ``predictions[-1]``
            # is one item of the list
            return any(isinstance(p, ast.Slice) for p in parts)
        # ``texts_to_sequences([text])[0]``: as long as what it indexes
        return _keeps_length(facts, value.value)
    if isinstance(value, ast.Call):
        qualname = facts.qualname(value.func) or ""
        if qualname.endswith("pad_sequences"):
            return not any(k.arg == "maxlen" for k in value.keywords)
        return qualname in _KEEP_LENGTH or (isinstance(value.func, ast.Attribute) and value.func.attr in _KEEP_LENGTH_METHODS)
    return True


_KEEP_LENGTH = frozenset({"numpy.array", "numpy.asarray", "numpy.expand_dims", "numpy.reshape", "numpy.concatenate",
                          "numpy.vstack", "numpy.hstack", "numpy.append", "tensorflow.expand_dims", "tensorflow.constant",
                          "tensorflow.convert_to_tensor", "tensorflow.reshape", "tensorflow.concat", "tensorflow.cast",
                          "list", "tuple"})
_KEEP_LENGTH_METHODS = frozenset({"reshape", "astype", "copy", "texts_to_sequences", "split"})


def _slice_parts(subscript: ast.Subscript) -> list[ast.expr]:
    """``x[:, 1:]`` -> the index of each axis."""
    return list(subscript.slice.elts) if isinstance(subscript.slice, ast.Tuple) else [subscript.slice]


def _names_read(expr: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _root_name(target: ast.AST) -> str | None:
    """``df["cnt"][i]`` -> ``df``; ``x`` -> ``x``; ``self.buf[i]`` -> ``self`` (the object's
    state is one value: a change to any attribute, or a method call, may change what is read)."""
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def _end(node: ast.AST) -> Position:
    """A binding takes effect once its right-hand side has run: ``x = model.predict(x)`` reads
    the ``x`` from before."""
    return (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
