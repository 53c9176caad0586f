"""From a finding to a benchmark Job: which code runs, as written and as rewritten, on what inputs.

Two kinds of plan:

- **rewrite**: the finding has a quick fix. The benchmark runs the statements the fix touches
  (plus the finding's own statement), once as written and once with the fix's edits applied.
  Functions and classes they use are re-defined in each variant, so each variant gets its own
  tf.function objects; for retrace findings they are re-defined on every timed call, because
  the cost being measured is tracing from scratch. If the fix only touches a function (a
  decorator), a call of that function from the file is what runs.
- **call**: graph and XLA opportunities. A call of the function (or model) as the file makes
  it, run eagerly as written, as ``tf.function``, and as ``tf.function(jit_compile=True)``.

Outputs compared: the names both variants assign at the top level of the snippet (or the call's
result). Inputs: see inputs.py.
"""
from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field

from tfperf_lsp.analysis.facts import FunctionNode
from tfperf_lsp.bench.inputs import Inputs, InputResolver, MissingInputs, free_names, scale_ranges
from tfperf_lsp.bench.protocol import Job, Variant
from tfperf_lsp.bench.instances import compile_call, find_construction, instance_call
from tfperf_lsp.bench.safety import outside_calls, refusal
from tfperf_lsp.engine import Analysis, fix_for
from tfperf_lsp.model import Edit, Finding, Pos, Span
from tfperf_lsp.rewrite.edits import apply_edits
from tfperf_lsp.bench.titles import benchmark_title  # noqa: F401 - re-exported
from tfperf_lsp.rules import Rule, rule_by_code

RUN = "__tfperf_run__"


@dataclass
class Plan:
    finding_id: str
    code: str
    title: str
    job: Job | None = None
    inputs: Inputs | None = None
    problem: str | None = None  # why it cannot be benchmarked, in words for the user
    warnings: list[str] = field(default_factory=list)
    traces_per_call: bool = False  # functions re-created on every timed call (retrace findings)
    elements_per_call: int | None = None  # tf.data plans: dataset elements per timed call


def build_plan(analysis: Analysis, finding: Finding, *, max_input_mb: float = 512, budget_s: float = 3.0,
               device: str = "auto", seed: int = 0) -> Plan:
    title = benchmark_title(finding) or "Benchmark"
    plan = Plan(finding.id, finding.code, title)
    if analysis.ctx is None or analysis.stale:
        plan.problem = "the file does not parse: fix the syntax error first"
        return plan
    rule = rule_by_code(finding.code)
    if rule is None:
        plan.problem = f"cannot benchmark: no rule {finding.code}"
        return plan
    builder = _Builder(analysis, rule, finding, int(max_input_mb * 1024 * 1024))
    try:
        if builder.rule.benchmark in _CALL_PLANS:
            prelude, variants = builder.call_plan()
        elif builder.enclosing_method() is not None:
            prelude, variants = builder.method_plan()
        else:
            prelude, variants = builder.rewrite_plan()
    except MissingInputs as exc:
        plan.problem = f"cannot benchmark: {exc}"
        return plan
    except _CannotPlan as exc:
        plan.problem = f"cannot benchmark: {exc}"
        return plan
    plan.inputs = builder.inputs
    plan.warnings = builder.warnings
    plan.traces_per_call = builder.traces_per_call
    plan.elements_per_call = builder.elements_per_call
    plan.job = Job(
        prelude=prelude,
        variants=variants,
        budget_s=budget_s,
        device=device,
        seed=seed,
        inputs=builder.inputs.describe() if builder.inputs else None,
        meta={"code": finding.code, "finding": finding.id, **({"stateful": True} if builder.stateful else {}),
              **({"elements_per_call": builder.elements_per_call} if builder.elements_per_call else {})},
    ).validate()
    return plan


class _CannotPlan(Exception):
    pass


class _Builder:
    def __init__(self, analysis: Analysis, rule: Rule, finding: Finding, max_bytes: int):
        self.analysis = analysis
        self.rule = rule
        self.ctx = analysis.ctx
        self.facts = analysis.ctx.facts
        self.source = analysis.source
        self.finding = finding
        self.max_bytes = max_bytes
        self.inputs: Inputs | None = None
        self.warnings: list[str] = []
        self.traces_per_call = False
        self.elements_per_call: int | None = None  # tf.data plans: elements per timed call
        self.stateful = False  # the timed call changes state (train_step): compare first calls only

    # ------------------------------------------------------------------ rewrite plans
    def rewrite_plan(self) -> tuple[str, list[Variant]]:
        fix = fix_for(self.analysis, self.finding)
        if fix is None:
            raise _CannotPlan("this finding has no rewrite to compare")
        import_lines = [e.new_text.strip() for e in fix.edits if _is_import_edit(e)]
        edits = [e for e in fix.edits if not _is_import_edit(e)]
        touched = [self._statement_at(line) for e in edits for line in _lines_of(e)]
        definitions = {self._module_level(s) for s in touched if self._runs_as_call(s)}
        executable = [s for s in touched if not self._runs_as_call(s)]
        anchor = self._lift_to_loop(self._statement_at(self.finding.span.start.line))
        if not self._runs_as_call(anchor):
            executable.append(anchor)
        if executable:
            block, first, last = self._common_block(executable)
            last = _extend_to_uses(block, last)
            region = block[first : last + 1]
            original = _capture_result(self._text(region, []))
            rewritten = _capture_result(self._text(region, edits))
            at = region[0]
        else:  # only definitions changed: run a call of them as the file makes it
            call = self._call_of(definitions)
            region = [call]
            original = rewritten = f"{RESULT} = {ast.unparse(call)}"
            at = self.facts.statement_of(call)
        needed_defs = {d for d in self._definitions_used(region) if d not in definitions} | definitions
        fresh_per_call = self.traces_per_call = self.finding.category == "retrace"
        names = (free_names(ast.parse(original)) | set().union(*(free_names(d) for d in needed_defs))) - {
            d.name for d in needed_defs
        }
        self.inputs = InputResolver(self.facts, self.max_bytes).resolve(sorted(names), at)
        for extra in self.inputs.definitions:
            needed_defs.add(extra)
        self._refuse_outside(list(region) + list(needed_defs))
        outputs = _outputs(original, rewritten)
        if self.rule.benchmark == "pipeline" and outputs:
            original, rewritten, outputs = self._consume(original, rewritten, outputs)
        if not outputs:
            self.warnings.append("the snippet assigns nothing both versions share: only timings are compared")
        ordered_defs = sorted(needed_defs, key=lambda d: d.lineno)
        variants = []
        for name, body, apply in (("original", original, False), ("rewritten", rewritten, True)):
            defs = "\n".join(self._text([d], edits if apply and d in definitions else []) for d in ordered_defs)
            variants.append(Variant(name, self._variant_source(defs, body, outputs, fresh_per_call)))
        return self._prelude(import_lines), variants

    def _consume(self, original: str, rewritten: str, outputs: list[str]) -> tuple[str, str, list[str]]:
        """A tf.data finding is measured by iterating the dataset: a bounded number of elements
        (``repeat().take(N)``), so the time per call gives elements per second."""
        dataset = outputs[-1]
        loop = (f"\n{COUNT} = 0\n{FIRST} = None\n"
                f"for {ELEMENT} in {dataset}.repeat().take({PIPELINE_ELEMENTS}):\n"
                f"    if {FIRST} is None:\n        {FIRST} = {ELEMENT}\n    {COUNT} += 1")
        self.elements_per_call = PIPELINE_ELEMENTS
        return original + loop, rewritten + loop, [COUNT, FIRST]

    def _variant_source(self, defs: str, body: str, outputs: list[str], fresh_per_call: bool) -> str:
        dim_map = self.inputs.dim_map if self.inputs else {}
        defs, body = scale_ranges(defs, dim_map) if defs else "", scale_ranges(body, dim_map)
        inputs = [s.name for s in self.inputs.specs] if self.inputs else []
        # Inputs become default arguments: the snippet may re-assign them (x = x + 1) locally.
        signature = ", ".join(f"{n}={n}" for n in inputs)
        result = f"return ({', '.join(outputs)},)" if outputs else "return None"
        inner = (defs + "\n" if fresh_per_call and defs else "") + body + "\n" + result
        head = "" if fresh_per_call or not defs else defs + "\n"
        return f"{head}def {RUN}({signature}):\n{textwrap.indent(inner, '    ')}\n"

    # ------------------------------------------------------------------ method plans
    def enclosing_method(self):
        """(class, method) when the finding is inside a method of a module-level class."""
        stmt = self._statement_at(self.finding.span.start.line)
        top = stmt
        for ancestor in self.facts.ancestors(stmt):
            if isinstance(ancestor, ast.stmt):
                top = ancestor
        if not isinstance(top, ast.ClassDef):
            return None
        method = next((m for m in top.body if isinstance(m, FunctionNode)
                       and _first_line(m) <= self.finding.span.start.line + 1 <= m.end_lineno), None)
        return (top, method) if method is not None else None

    def method_plan(self) -> tuple[str, list[Variant]]:
        """Build the instance once (outside timing) and time the method, as written and as
        rewritten: ``obj(x)`` for ``call``, ``obj.method(args)`` otherwise."""
        cls, method = self.enclosing_method()
        fix = fix_for(self.analysis, self.finding)
        if fix is None:
            raise _CannotPlan("this finding has no rewrite to compare")
        import_lines = [e.new_text.strip() for e in fix.edits if _is_import_edit(e)]
        edits = [e for e in fix.edits if not _is_import_edit(e)]
        if any(not (_first_line(cls) - 1 <= line <= cls.end_lineno - 1) for e in edits for line in _lines_of(e)):
            raise _CannotPlan("the rewrite changes code outside the class")
        construction = find_construction(self.facts, cls)
        if construction is None:
            raise _CannotPlan(
                f"`{cls.name}` is never constructed in this file: declare an instance with a comment "
                f"such as `# tfperf: model={cls.name}(...)`")
        params = [a.arg for a in method.args.posonlyargs + method.args.args][1:]
        params += [a.arg for a in method.args.kwonlyargs if a.arg not in ("training", "mask")]
        resolver = InputResolver(self.facts, self.max_bytes)
        declared = set(resolver.declared) | set(resolver.declared_tuples)
        caller = instance_call(self.facts, construction) if method.name == "call" else None
        if all(p in declared for p in params if not _has_default(method, p)):
            arg_names = [p for p in params if p in declared]
            args, names, at = arg_names, arg_names, cls
        elif caller is not None:
            args = [ast.unparse(a) for a in caller.args] + [ast.unparse(k) for k in caller.keywords]
            names = sorted(set().union(*[free_names(a) for a in caller.args + [k.value for k in caller.keywords]]))
            at = caller
        else:
            missing = [p for p in params if p not in declared and not _has_default(method, p)]
            example = " ".join(f"{p}=float32[...]" for p in missing)
            raise _CannotPlan(
                f"no shape is known for the argument{'s' if len(missing) > 1 else ''} of `{cls.name}.{method.name}` "
                f"({', '.join(f'`{p}`' for p in missing)}): declare {'it' if len(missing) == 1 else 'them'} "
                f"with a comment such as `# tfperf: {example}`")
        ctor_names = sorted(set().union(*[free_names(a) for a in construction.call.args + [k.value for k in construction.call.keywords]], set()))
        ctor_names = [n for n in ctor_names if n != cls.name]
        more = [(ctor_names, construction.at)] if construction.at is not None else []
        self.inputs = resolver.resolve(sorted(names), at, more)
        if construction.at is None and ctor_names:
            raise _CannotPlan(f"the declared `{cls.name}(...)` may use literals only")
        needed = {d for d in self.inputs.definitions if d is not cls}
        needed |= {d for d in self._definitions_used([cls]) if d is not cls}
        self._refuse_outside([method] + sorted(needed, key=lambda d: d.lineno) + [construction.call])
        self.inputs.definitions = [d for d in self.inputs.definitions if d is not cls]
        call = f"{OBJ}({', '.join(args)})" if method.name == "call" else f"{OBJ}.{method.name}({', '.join(args)})"
        setup = ["tf.keras.utils.set_random_seed(1)  # the same initial weights in every variant",
                 f"{OBJ} = {ast.unparse(construction.call)}"]
        self.stateful = method.name == "train_step"
        if method.name in ("train_step", "test_step"):
            compiled = compile_call(self.facts, construction)
            if compiled is not None and all(_safe_literal(a) for a in compiled.args + [k.value for k in compiled.keywords]):
                setup.append(f"{OBJ}.{ast.unparse(compiled.func.attr)}({', '.join(ast.unparse(a) for a in compiled.args + compiled.keywords)})")
            else:
                setup.append(f"{OBJ}.compile(optimizer='sgd')")
                self.warnings.append(f"`{cls.name}` was compiled with optimizer='sgd' for {method.name} "
                                     "(the file has no compile call with literal arguments for it)")
        setup.append(f"{BUILT} = {call}  # build it once on the inputs, outside timing")
        inputs_used = sorted(free_names(ast.parse(call)) - {OBJ})
        signature = ", ".join(f"{n}={n}" for n in inputs_used)
        ordered = sorted(needed | {cls}, key=lambda d: d.lineno)
        variants = []
        for name, apply in (("original", False), ("rewritten", True)):
            defs = "\n".join(self._text([d], edits if apply and d is cls else []) for d in ordered)
            body = "\n".join(setup) + f"\ndef {RUN}({signature}):\n    return {call}\n"
            variants.append(Variant(name, defs + "\n" + body))
        self.warnings.append(f"the instance is `{ast.unparse(construction.call)}` ({construction.source}); "
                             f"timed: `{call.replace(OBJ, construction.name or 'instance')}`")
        return self._prelude(import_lines, definitions=False), variants

    # ------------------------------------------------------------------ call plans
    def call_plan(self) -> tuple[str, list[Variant]]:
        callee, call = self._call_for_opportunity()
        args = ", ".join([ast.unparse(a) for a in call.args] + [ast.unparse(k) for k in call.keywords])
        names = set()
        for node in call.args + [k.value for k in call.keywords]:
            names |= free_names(node)
        names.add(callee)
        self.inputs = InputResolver(self.facts, self.max_bytes).resolve(sorted(names), call)
        self._refuse_outside(list(self.inputs.definitions))
        eager = f"getattr({callee}, 'python_function', {callee})"
        if self.rule.benchmark == "xla":
            variants = [
                Variant("tf.function", f"def {RUN}():\n    return {callee}({args})\n"),
                Variant("jit_compile=True", f"_xla = tf.function({eager}, jit_compile=True)\ndef {RUN}():\n    return _xla({args})\n"),
            ]
        else:
            variants = [
                Variant("eager", f"def {RUN}():\n    return {callee}({args})\n"),
                Variant("tf.function", f"_graph = tf.function({eager})\ndef {RUN}():\n    return _graph({args})\n"),
                Variant("tf.function+XLA", f"_xla = tf.function({eager}, jit_compile=True)\ndef {RUN}():\n    return _xla({args})\n"),
            ]
        return self._prelude([], definitions=True), variants

    def _call_for_opportunity(self) -> tuple[str, ast.Call]:
        """The callable the finding is about, and a call of it as the file makes it."""
        line = self.finding.span.start.line
        if self.rule.benchmark == "graph-call":  # the finding is the model call itself
            for call in self.facts.calls:
                if self.source.span(call) == self.finding.span and isinstance(call.func, ast.Name):
                    return call.func.id, call
            raise _CannotPlan("the model call was not found")
        fn = next((f for f in self.facts.functions if min([f.lineno] + [d.lineno for d in f.decorator_list]) - 1 <= line <= f.lineno - 1), None)
        if fn is None:
            if self.enclosing_method() is not None:
                raise _CannotPlan("graph and XLA comparisons of a class's methods are not supported yet "
                                  "(rewrites inside methods are)")
            raise _CannotPlan("the function was not found")
        for call in _calls_of(self.facts, fn.name):
            return fn.name, call
        raise _CannotPlan(f"`{fn.name}` is never called in this file, so there is no input to run it with")

    # ------------------------------------------------------------------ shared pieces
    def _prelude(self, extra_imports: list[str], definitions: bool = False) -> str:
        """Imports, then (for call plans) the definitions, then the inputs."""
        lines = ["import tensorflow as tf"]
        for node in self.inputs.imports if self.inputs else []:
            text = self.source.segment(node)
            if text not in lines:
                lines.append(text)
        lines += [line for line in extra_imports if line not in lines]
        if definitions and self.inputs:
            dim_map = self.inputs.dim_map
            for node in sorted(self.inputs.definitions, key=lambda d: d.lineno):
                lines.append(scale_ranges(self._text([node], []), dim_map))
        lines += self.inputs.statements if self.inputs else []
        return "\n".join(lines) + "\n"

    def _statement_at(self, line: int) -> ast.stmt:
        """The innermost statement covering ``line`` (decorators count as their def's lines)."""
        body, found = self.facts.tree.body, None
        while body:
            inner = next((s for s in body if _first_line(s) <= line + 1 <= s.end_lineno), None)
            if inner is None:
                break
            found = inner
            body = [c for field in ("body", "orelse", "finalbody", "handlers") for c in getattr(inner, field, []) or [] if isinstance(c, ast.stmt)]
            if isinstance(inner, ast.Try):
                body += [c for h in inner.handlers for c in h.body]
        if found is None:
            raise _CannotPlan(f"no statement at line {line + 1}")
        return found

    def _lift_to_loop(self, stmt: ast.stmt) -> ast.stmt:
        """A statement that runs in a loop is measured with its loop (repetition is the point)."""
        loops = [loop for loop in self.facts.enclosing_loops(stmt) if isinstance(loop, ast.stmt)]
        return loops[-1] if loops else stmt

    def _runs_as_call(self, stmt: ast.stmt) -> bool:
        """Whether ``stmt`` is measured by calling its module-level function, rather than run on its
        own. A decorated function (tf.function) or an edit of the def itself is measured through a
        call; statements inside a plain function (a ``main()``) run as a slice, so the benchmark
        never runs the rest of that function (downloads, training)."""
        if not self._inside_definition(stmt):
            return False
        top = self._module_level(stmt)
        return stmt is top or bool(top.decorator_list) or self.finding.category == "retrace"

    def _refuse_outside(self, nodes: list) -> None:
        calls = outside_calls(self.facts, nodes)
        if not calls:
            return
        # A read inside a helper (`raw = load()`): the value to declare is what the slice gets from it.
        for call in calls:
            helper = self.facts.enclosing_function(call.call)
            if helper is not None and self.inputs is not None:
                for statement in self.inputs.statements:
                    if re.match(rf"^(\w+) = {re.escape(helper.name)}\(", statement):
                        call.assigned = [statement.split(" = ")[0]]
        raise _CannotPlan(refusal(calls))

    def _inside_definition(self, stmt: ast.stmt) -> bool:
        """Part of a module-level def (then a call of that def is what runs)."""
        top = self._module_level(stmt)
        if isinstance(top, ast.ClassDef):
            raise _CannotPlan("code inside a class cannot be benchmarked on its own yet")
        return isinstance(top, FunctionNode)

    def _module_level(self, stmt: ast.stmt) -> ast.stmt:
        top = stmt
        for ancestor in self.facts.ancestors(stmt):
            if isinstance(ancestor, ast.stmt):
                top = ancestor
        return top

    def _call_of(self, definitions: set) -> ast.Call:
        for definition in sorted(definitions, key=lambda d: d.lineno):
            for call in _calls_of(self.facts, definition.name):
                return call
        names = ", ".join(f"`{d.name}`" for d in definitions)
        raise _CannotPlan(f"{names} is never called in this file, so there is nothing to run")

    def _common_block(self, statements: list[ast.stmt]) -> tuple[list[ast.stmt], int, int]:
        """The innermost statement list holding all of ``statements`` (lifting them as needed)."""
        chains = [self._block_chain(s) for s in statements]
        for block, _ in chains[0]:
            members = []
            for chain in chains:
                match = next((member for b, member in chain if b is block), None)
                if match is None:
                    break
                members.append(match)
            else:
                indices = [block.index(m) for m in members]
                return block, min(indices), max(indices)
        raise _CannotPlan("the rewritten statements are not in one block")

    def _block_chain(self, stmt: ast.stmt) -> list[tuple[list, ast.stmt]]:
        """(block, member) pairs from ``stmt``'s own block outward."""
        chain, node = [], stmt
        while node is not None:
            parent = self.facts.parent(node)
            if parent is None:
                break
            for field_name in ("body", "orelse", "finalbody"):
                block = getattr(parent, field_name, None)
                if isinstance(block, list) and node in block:
                    chain.append((block, node))
            if isinstance(parent, ast.Module):
                break
            node = parent if isinstance(parent, ast.stmt) else self.facts.statement_of(parent)
        return chain

    def _text(self, statements: list[ast.stmt], edits: list[Edit]) -> str:
        """The source of consecutive statements (dedented), with the edits inside them applied."""
        first, last = _first_line(statements[0]) - 1, statements[-1].end_lineno - 1
        inside = [
            Edit(Span(Pos(e.span.start.line - first, e.span.start.col), Pos(e.span.end.line - first, e.span.end.col)), e.new_text)
            for e in edits
            if first <= e.span.start.line and (e.span.end.line <= last or (e.span.end.line == last + 1 and e.span.end.col == 0))
        ]
        text = "\n".join(self.source.lines[first : last + 1]) + "\n"
        if inside:
            text = apply_edits(text, inside)
        return textwrap.dedent(text.rstrip("\n"))

    def _definitions_used(self, region: list[ast.stmt]) -> set:
        found: set = set()
        work = [n for s in region for n in free_names(s)]
        while work:
            name = work.pop()
            definition = self.facts.module_defs.get(name)
            if definition is not None and definition not in found:
                found.add(definition)
                work.extend(free_names(definition))
        return found


def _has_default(fn, name: str) -> bool:
    args = fn.args
    positional = args.posonlyargs + args.args
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(args.defaults):], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return name in defaults


def _safe_literal(node: ast.AST) -> bool:
    """Literals and simple constructor calls (``tf.keras.optimizers.Adam(1e-3)``), no names."""
    return all(not isinstance(n, ast.Name) or n.id in ("tf", "keras", "True", "False", "None")
               for n in ast.walk(node))


def _extend_to_uses(block: list[ast.stmt], last: int) -> int:
    """A statement that only changes an object's state (``model.compile(...)``) is measured with
    the statements after it that use the object (``model.fit(...)``): that is where it matters."""
    stmt = block[last]
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and isinstance(stmt.value.func.value, ast.Name)):
        return last
    name = stmt.value.func.value.id
    for index in range(last + 1, len(block)):
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(block[index])):
            last = index
    return last


def _calls_of(facts, name: str):
    """Calls of ``name`` in the file: those in loops first (they are the hot ones)."""
    calls = [c for c in facts.calls if isinstance(c.func, ast.Name) and c.func.id == name]
    calls.sort(key=lambda c: (not facts.enclosing_loops(c), c.lineno))
    yield from calls
    for call in facts.calls:  # timeit("f(x)", ...) strings
        for arg in call.args[:1] + [k.value for k in call.keywords if k.arg == "stmt"]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and name in arg.value:
                try:
                    parsed = ast.parse(arg.value)
                except SyntaxError:
                    continue
                for inner in ast.walk(parsed):
                    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == name:
                        inner.lineno, inner.col_offset = arg.lineno, arg.col_offset
                        facts._parents.setdefault(inner, call)  # noqa: SLF001 - a stand-in position
                        yield inner


RESULT = "tfperf_result__"
OBJ, BUILT = "tfperf_instance__", "tfperf_built__"
COUNT, FIRST, ELEMENT = "tfperf_count__", "tfperf_first__", "tfperf_element__"
# Graph/XLA opportunities (Rule.benchmark): the variants are "as written", tf.function, and XLA.
_CALL_PLANS = frozenset({"graph", "graph-call", "xla"})
PIPELINE_ELEMENTS = 16  # elements of the finished dataset per timed call


def _capture_result(code: str) -> str:
    """A snippet ending in a bare call (``step(x)``) keeps the call's value, so it can be compared."""
    last = ast.parse(code).body[-1]
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)):
        return code
    lines = code.split("\n")
    row = last.lineno - 1
    lines[row] = lines[row][: last.col_offset] + f"{RESULT} = " + lines[row][last.col_offset :]
    return "\n".join(lines)


def _lines_of(edit: Edit) -> list[int]:
    """The first and last line an edit changes (an end at column 0 belongs to the line before)."""
    end = edit.span.end.line - 1 if edit.span.end.col == 0 and edit.span.end.line > edit.span.start.line else edit.span.end.line
    return sorted({edit.span.start.line, end})


def _first_line(stmt: ast.stmt) -> int:
    return min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])


def _is_import_edit(edit: Edit) -> bool:
    return edit.span.start == edit.span.end and edit.new_text.lstrip().startswith(("import ", "from "))


def _outputs(original: str, rewritten: str) -> list[str]:
    def assigned(code: str) -> list[str]:
        names: list[str] = []
        for stmt in ast.parse(code).body:
            targets = []
            if isinstance(stmt, ast.Assign):
                targets = stmt.targets
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
                targets = [stmt.target]
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name) and not node.id.startswith("_") and node.id not in names:
                        names.append(node.id)
        return names

    mine = assigned(rewritten)
    return [name for name in assigned(original) if name in mine]
