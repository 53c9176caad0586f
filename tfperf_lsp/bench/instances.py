"""Where a benchmark of a method gets its instance, and the method its arguments (no TensorFlow).

The instance of class ``C`` comes from, in order:

1. a declaration comment: ``# tfperf: model=MyModel(units=64)``;
2. a module-level construction: ``model = MyModel(units=64)``;
3. a constructor call anywhere in the file (``model = MyModel(64)`` inside ``main()``), whose
   arguments are then resolved where that call is, as any other input.

The method's arguments come from declarations of its parameter names (``# tfperf:
inputs=float32[8,32]``, ``data=(float32[32,20], float32[32,10])``) or, for ``call``, from a call of
the instance in the file (``model(features)``).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_DECLARATION = re.compile(r"#\s*tfperf:\s*(.*)$")


@dataclass
class Construction:
    name: str            # the instance's name in the file (or in the declaration)
    call: ast.Call       # the constructor call (parsed from the comment for a declaration)
    at: ast.AST | None   # where its arguments are resolved (None: a declaration, literals only)
    source: str          # "declared", "module", "call site"


def declared_construction(lines: list[str], class_name: str) -> Construction | None:
    for line in lines:
        match = _DECLARATION.search(line)
        if not match:
            continue
        text = match.group(1)
        for found in re.finditer(rf"([A-Za-z_]\w*)\s*=\s*{re.escape(class_name)}\(", text):
            start = found.start(0) + found.group(0).index(class_name)
            depth, end = 0, None
            for i in range(start, len(text)):
                if text[i] == "(":
                    depth += 1
                elif text[i] == ")":
                    depth -= 1
                    if depth == 0:
                        end = i + 1
                        break
            if end is None:
                continue
            try:
                call = ast.parse(text[start:end], mode="eval").body
            except SyntaxError:
                continue
            if isinstance(call, ast.Call):
                return Construction(found.group(1), call, None, "declared")
    return None


def find_construction(facts, cls: ast.ClassDef) -> Construction | None:
    declared = declared_construction(facts.source.lines, cls.name)
    if declared is not None:
        return declared
    candidates = []
    for call in facts.calls:
        if isinstance(call.func, ast.Name) and call.func.id == cls.name:
            if any(a is cls for a in facts.ancestors(call)):
                continue  # inside the class itself
            stmt = facts.statement_of(call)
            name = None
            if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
            at_module = facts.enclosing_function(call) is None
            candidates.append((not at_module, name is None, call.lineno, name, call))
    if not candidates:
        return None
    _, _, _, name, call = min(candidates, key=lambda c: c[:3])
    return Construction(name or "", call, call, "module" if facts.enclosing_function(call) is None else "call site")


def instance_call(facts, construction: Construction) -> ast.Call | None:
    """A call of the instance as the file makes it (``model(features)``), for ``call``'s inputs."""
    if not construction.name or construction.at is None:
        return None
    scope = facts.enclosing_function(construction.at)
    for call in facts.calls:
        if isinstance(call.func, ast.Name) and call.func.id == construction.name \
                and facts.enclosing_function(call) is scope and call.lineno >= construction.call.lineno:
            return call
    return None


def compile_call(facts, construction: Construction) -> ast.Call | None:
    """``model.compile(...)`` of this instance in the file (a train_step needs its optimizer)."""
    if not construction.name:
        return None
    for call in facts.calls:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "compile" and isinstance(func.value, ast.Name) \
                and func.value.id == construction.name:
            return call
    return None
