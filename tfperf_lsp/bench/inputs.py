"""Where a benchmarked snippet's inputs come from, derived from the file without running it.

The snippet reads names defined elsewhere (``A``, ``B``, a model). For each, in order:

1. a declaration comment anywhere in the file: ``# tfperf: A=float32[1000,100,1000] B=int32[64]``;
2. its assignment, if it is safe and cheap to re-run: a tensor constructor with a literal shape
   (``tf.random.*``, ``tf.zeros/ones/fill/eye/range``, ``np.random.*``, ``np.zeros/ones``,
   ``tf.constant(np...)``, ``tf.Variable(<one of these>)``), a literal, or a call of a function or
   class defined in this file (a model factory), or a TF/Keras constructor;
3. a parameter of the enclosing function: what its call sites pass (resolved the same way), or
   the function's ``input_signature``.

Anything else (data loaded from disk, results of training) is not guessed: the plan says which
names lack shapes and how to declare them. Shapes too large for the memory budget are scaled
down, the same way for every input (a dimension of 1000 becomes 250 everywhere, so matmuls still
fit), and ``range()`` bounds equal to a scaled dimension follow.
"""
from __future__ import annotations

import ast
import builtins
import math
import re
from dataclasses import dataclass, field

from tfperf_lsp.analysis.astutil import keyword
from tfperf_lsp.analysis.dataflow import argument_for_parameter
from tfperf_lsp.analysis.facts import FunctionNode, ModuleFacts
from tfperf_lsp.bench.safety import outside_calls

_BUILTINS = frozenset(dir(builtins))
_DECLARATION = re.compile(r"#\s*tfperf:\s*(.*)$")
_ITEM = re.compile(r"([A-Za-z_]\w*)\s*=\s*([a-z]+\d*)\s*\[\s*([\d,\s]*)\]")
_TUPLE = re.compile(r"([A-Za-z_]\w*)\s*=\s*\(([^()]*)\)")  # data=(float32[32,20], int32[32])
_PART = re.compile(r"([a-z]+\d*)\s*\[\s*([\d,\s]*)\]")
_DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1,
                "int16": 2, "int32": 4, "int64": 8, "bool": 1, "complex64": 8}

# Constructors: qualified name -> (position of the shape argument, its keyword name)
SHAPED_CONSTRUCTORS = {
    "tensorflow.random.uniform": (0, "shape"), "tensorflow.random.normal": (0, "shape"),
    "tensorflow.random.truncated_normal": (0, "shape"), "tensorflow.zeros": (0, "shape"),
    "tensorflow.ones": (0, "shape"), "tensorflow.fill": (0, "dims"),
    "numpy.random.uniform": (2, "size"), "numpy.random.normal": (2, "size"), "numpy.random.randn": (None, None),
    "numpy.random.rand": (None, None), "numpy.random.randint": (2, "size"), "numpy.zeros": (0, "shape"),
    "numpy.ones": (0, "shape"), "numpy.random.random": (0, "size"),
}
_CHEAP_CALLS = {"tensorflow.eye", "tensorflow.range", "tensorflow.constant", "tensorflow.Variable",
                "tensorflow.convert_to_tensor", "tensorflow.cast", "numpy.array", "numpy.arange", "numpy.eye",
                "tensorflow.linspace", "numpy.linspace", "tensorflow.reshape", "numpy.float32",
                # in-memory tf.data sources (file-backed ones are refused: see safety.py)
                "tensorflow.data.Dataset.from_tensor_slices", "tensorflow.data.Dataset.from_tensors",
                "tensorflow.data.Dataset.range", "tensorflow.data.Dataset.zip", "tensorflow.data.Options"}


# tf.data transformations: cheap to re-run (they build a pipeline, they do not read data)
DATASET_METHODS = frozenset({"map", "batch", "shuffle", "prefetch", "cache", "repeat", "take", "skip",
                             "filter", "padded_batch", "unbatch", "flat_map", "interleave", "zip",
                             "concatenate", "with_options", "apply", "enumerate", "rebatch",
                             "ragged_batch", "shard", "window", "map_with_legacy_function"})


class MissingInputs(Exception):
    def __init__(self, names: list[str], example: str, outside: dict[str, str] | None = None):
        self.names = names
        outside = outside or {}
        by_source: dict[str, list[str]] = {}
        for n in names:
            if n in outside:
                by_source.setdefault(outside[n], []).append(n)
        reads = [f"{', '.join(f'`{n}`' for n in ns)} {'comes' if len(ns) == 1 else 'come'} from {src}"
                 for src, ns in by_source.items()]
        rest = [n for n in names if n not in outside]
        them = "it" if len(names) == 1 else "them"
        if reads:
            head = ("; ".join(reads) + ", which reads data from outside the file (a benchmark never "
                    "downloads or opens files)")
            if rest:
                head += f"; no shape is known for {', '.join(f'`{n}`' for n in rest)}"
        else:
            head = f"no shape is known for {', '.join(f'`{n}`' for n in names)}"
        super().__init__(f"{head}: declare {them} with a comment such as `{example}`")


@dataclass
class InputSpec:
    name: str
    shape: list[int] | None
    dtype: str | None
    source: str  # "declared", "assignment", "call site", "input_signature", "definition"
    scale: float = 1.0


@dataclass
class Inputs:
    statements: list[str] = field(default_factory=list)  # prelude code, in dependency order
    specs: list[InputSpec] = field(default_factory=list)
    definitions: list[ast.AST] = field(default_factory=list)  # module defs/classes needed
    imports: list[ast.stmt] = field(default_factory=list)
    dim_map: dict[int, int] = field(default_factory=dict)  # scaled dimension sizes

    def describe(self) -> str:
        parts = []
        for spec in self.specs:
            if spec.shape is not None:
                parts.append(f"{spec.name}: {spec.dtype or '?'}[{','.join(map(str, spec.shape))}]")
            else:
                parts.append(f"{spec.name}: {spec.source}")
        text = "; ".join(parts)
        if self.dim_map:
            text += " (scaled: " + ", ".join(f"{a}->{b}" for a, b in sorted(self.dim_map.items())) + ")"
        return text


@dataclass
class _Scalable:
    index: int  # of the statement in Inputs.statements
    name: str = ""
    dtype: str = "float32"
    shape: list[int] | None = None  # set for synthesized inputs, None for the file's constructors


class InputResolver:
    """Resolves the free names of a snippet to prelude statements (see the module docstring)."""

    def __init__(self, facts: ModuleFacts, max_bytes: int):
        self.facts = facts
        self.source = facts.source
        self.max_bytes = max_bytes
        self.declared = _declarations(facts.source.lines)
        self.declared_tuples = _tuple_declarations(facts.source.lines)
        self.result = Inputs()
        self._done: set[str] = set()
        self._missing: list[str] = []
        self._scalable: list[_Scalable] = []  # prelude statements whose shapes may be scaled
        self._outside: dict[str, str] = {}  # name -> the download or file read it comes from

    # ------------------------------------------------------------------ entry point
    def resolve(self, names: list[str], at: ast.AST, more: list[tuple[list[str], ast.AST]] = ()) -> Inputs:
        """``more``: further (names, where) to resolve into the same Inputs (a constructor's
        arguments at its call site, a method's arguments at its caller)."""
        for name in names:
            self._resolve(name, at, depth=0)
        for extra_names, where in more:
            for name in extra_names:
                self._resolve(name, where, depth=0)
        if self._missing:
            missing = sorted(set(self._missing))
            example = " ".join(f"{n}=float32[...]" for n in missing)
            raise MissingInputs(missing, f"# tfperf: {example}", self._outside)
        self._scale()
        return self.result

    # ------------------------------------------------------------------ resolution
    def _resolve(self, name: str, at: ast.AST, depth: int) -> None:
        if name in self._done or depth > 8:
            return
        self._done.add(name)
        if name in self.declared:
            dtype, shape = self.declared[name]
            self._add_tensor(name, dtype, shape, "declared")
            return
        if name in self.declared_tuples:  # a tuple of tensors: (features, labels)
            parts = []
            for i, (dtype, shape) in enumerate(self.declared_tuples[name]):
                self._add_tensor(f"{name}_{i}", dtype, shape, "declared")
                parts.append(f"{name}_{i}")
            self.result.statements.append(f"{name} = ({', '.join(parts)},)")
            return
        if self._is_import(name) or self._is_definition(name):
            return
        scope = self.facts.enclosing_function(at)
        if scope is not None and name in _parameters(scope):
            if self._from_call_sites(name, scope, depth) or self._from_signature(name, scope):
                return
            self._missing.append(name)
            return
        assignment = self.facts.reaching_assignment_at(name, at)
        if assignment is not None and self._from_assignment(name, assignment, depth):
            return
        self._note_outside(name, assignment)
        if name in _BUILTINS:
            return
        self._missing.append(name)

    def _note_outside(self, name: str, assignment: ast.AST | None) -> None:
        reads = outside_calls(self.facts, [assignment]) if assignment is not None else []
        if reads:
            self._outside[name] = f"`{reads[0].what}` (line {reads[0].line})"

    def _is_import(self, name: str) -> bool:
        node = self.facts.imports.import_nodes.get(name)
        if node is None:
            return False
        if node not in self.result.imports:
            self.result.imports.append(node)
        return True

    def _is_definition(self, name: str) -> bool:
        node = self.facts.module_defs.get(name)
        if node is None:
            return False
        if node not in self.result.definitions:
            self.result.definitions.append(node)
            for inner in free_names(node):
                self._resolve(inner, node, 1)
        return True

    def _from_assignment(self, name: str, stmt: ast.AST, depth: int) -> bool:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            return False
        value = stmt.value
        if not _safe_value(self.facts, value):
            return False
        for inner in sorted(free_names(value)):
            if inner == name:  # ds = ds.map(f): the earlier ds, resolved at this statement
                earlier = self.facts.reaching_assignment_at(name, stmt)
                if earlier is None or earlier is stmt or not self._from_assignment(name, earlier, depth + 1):
                    self._note_outside(name, earlier)
                    self._missing.append(name)
                continue
            self._resolve(inner, stmt, depth + 1)
        target = stmt.targets[0]
        text = f"{ast.unparse(target)} = {self.source.segment(value)}"
        constructor = _shaped_call(self.facts, value)
        if constructor is not None:
            shape = _literal_shape(self.facts, constructor)
            spec = InputSpec(name, shape, _dtype_of(self.facts, constructor), "assignment")
            self.result.specs.append(spec)
            self._scalable.append(_Scalable(len(self.result.statements)))
        else:
            self.result.specs.append(InputSpec(name, None, None, "assignment: " + _short(self.source.segment(value))))
        self.result.statements.append(text)
        self.result.statements += self._attribute_settings(name, stmt)
        return True

    def _attribute_settings(self, name: str, stmt: ast.AST) -> list[str]:
        """``options.experimental_optimization.map_parallelization = False`` after
        ``options = tf.data.Options()``: literal settings of the object, replayed with it."""
        parent = self.facts.parent(stmt)
        block = next((b for f in ("body", "orelse", "finalbody") if isinstance(b := getattr(parent, f, None), list)
                      and stmt in b), None)
        found = []
        for later in (block or [])[block.index(stmt) + 1:] if block else []:
            if not (isinstance(later, ast.Assign) and len(later.targets) == 1
                    and isinstance(later.targets[0], ast.Attribute)):
                continue
            root = later.targets[0]
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id == name and isinstance(later.value, ast.Constant):
                found.append(ast.unparse(later))
        return found

    def _from_call_sites(self, name: str, fn: ast.AST, depth: int) -> bool:
        params = _parameters(fn)
        for call in self.facts.calls_by_def.get(fn, []):
            argument = argument_for_parameter(call, params, name)
            if argument is None:
                continue
            if isinstance(argument, ast.Name):
                before = len(self._missing)
                self._done.discard(argument.id)
                self._resolve(argument.id, call, depth + 1)
                if len(self._missing) == before:
                    if argument.id != name:
                        self.result.statements.append(f"{name} = {argument.id}")
                    return True
                del self._missing[before:]
            elif _safe_value(self.facts, argument):
                for inner in sorted(free_names(argument)):
                    self._resolve(inner, call, depth + 1)
                self.result.statements.append(f"{name} = {self.source.segment(argument)}")
                self.result.specs.append(InputSpec(name, None, None, "call site"))
                return True
        return False

    def _from_signature(self, name: str, fn: ast.AST) -> bool:
        tf_fn = self.facts.tf_function_for_def(fn)
        signature = tf_fn.options.get("input_signature") if tf_fn else None
        if not isinstance(signature, (ast.List, ast.Tuple)):
            return False
        params = _parameters(fn)
        index = params.index(name)
        if index >= len(signature.elts):
            return False
        spec = signature.elts[index]
        if not isinstance(spec, ast.Call) or not spec.args:
            return False
        shape = spec.args[0]
        if not isinstance(shape, (ast.List, ast.Tuple)):
            return False
        dims = [e.value if isinstance(e, ast.Constant) and isinstance(e.value, int) else 32 for e in shape.elts]
        dtype = "float32"
        if len(spec.args) > 1 and isinstance(spec.args[1], ast.Attribute):
            dtype = spec.args[1].attr
        self._add_tensor(name, dtype, dims, "input_signature")
        return True

    def _add_tensor(self, name: str, dtype: str, shape: list[int], source: str) -> None:
        self.result.specs.append(InputSpec(name, shape, dtype, source))
        index = len(self.result.statements)
        self.result.statements.append(_synthesize(name, dtype, shape))
        self._scalable.append(_Scalable(index, name, dtype, shape))

    # ------------------------------------------------------------------ scaling
    def _scale(self) -> None:
        shaped = [(spec, spec.shape) for spec in self.result.specs if spec.shape]
        total = sum(math.prod(shape) * _DTYPE_BYTES.get(spec.dtype or "float32", 4) for spec, shape in shaped)
        if total <= self.max_bytes or not shaped:
            return
        dims = sorted({d for _, shape in shaped for d in shape if d > 8}, reverse=True)
        mapping: dict[int, int] = {}
        while total > self.max_bytes and dims:
            # Halve the largest dimensions first: they dominate the size.
            largest = max(mapping.get(d, d) for d in dims)
            for d in dims:
                if mapping.get(d, d) == largest:
                    mapping[d] = max(8, largest // 2)
            total = sum(
                math.prod(mapping.get(d, d) for d in shape) * _DTYPE_BYTES.get(spec.dtype or "float32", 4)
                for spec, shape in shaped
            )
            if all(mapping.get(d, d) <= 8 for d in dims):
                break
        self.result.dim_map = {d: m for d, m in mapping.items() if m != d}
        for spec, shape in shaped:
            new_shape = [self.result.dim_map.get(d, d) for d in shape]
            spec.scale = math.prod(new_shape) / max(1, math.prod(shape))
            spec.shape = new_shape
        for item in self._scalable:
            if item.shape is not None:  # synthesized from a declaration: generate it again
                shape = [self.result.dim_map.get(d, d) for d in item.shape]
                self.result.statements[item.index] = _synthesize(item.name, item.dtype, shape)
            else:  # the file's own constructor: scale the sizes in its shape
                self.result.statements[item.index] = _rescale_statement(self.result.statements[item.index], self.result.dim_map)


def scale_ranges(code: str, dim_map: dict[int, int]) -> str:
    """``range(1000)`` -> ``range(250)`` where 1000 was scaled: loops over a scaled axis follow."""
    if not dim_map:
        return code
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
            for arg in node.args:
                if isinstance(arg, ast.Constant) and arg.value in dim_map:
                    arg.value = dim_map[arg.value]
    return ast.unparse(tree)


# ---------------------------------------------------------------------------- helpers
def _declarations(lines: list[str]) -> dict[str, tuple[str, list[int]]]:
    found = {}
    for line in lines:
        match = _DECLARATION.search(line)
        if not match:
            continue
        for name, dtype, dims in _ITEM.findall(match.group(1)):
            found[name] = (dtype, [int(d) for d in dims.replace(" ", "").split(",") if d])
    return found


def _tuple_declarations(lines: list[str]) -> dict[str, list[tuple[str, list[int]]]]:
    found = {}
    for line in lines:
        match = _DECLARATION.search(line)
        if not match:
            continue
        for name, inner in _TUPLE.findall(match.group(1)):
            parts = [(dtype, [int(d) for d in dims.replace(" ", "").split(",") if d]) for dtype, dims in _PART.findall(inner)]
            if parts:
                found[name] = parts
    return found


def _synthesize(name: str, dtype: str, shape: list[int]) -> str:
    if dtype in ("int32", "int64"):
        return f"{name} = tf.random.uniform({shape}, maxval=10, dtype=tf.{dtype}, seed=1)"
    if dtype.startswith(("int", "uint")):  # tf.random.uniform draws only int32/int64 integers
        return f"{name} = tf.cast(tf.random.uniform({shape}, maxval=10, dtype=tf.int32, seed=1), tf.{dtype})"
    if dtype == "bool":
        return f"{name} = tf.random.uniform({shape}, seed=1) > 0.5"
    return f"{name} = tf.random.uniform({shape}, dtype=tf.{dtype}, seed=1)"


def _parameters(fn: ast.AST) -> list[str]:
    args = fn.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    return names[1:] if names and names[0] in ("self", "cls") else names


def free_names(node: ast.AST) -> set[str]:
    """Names read by ``node`` before it binds them (approximate: good for snippets). Evaluation
    order counts: in ``ds = ds.map(f)`` the ``ds`` read comes first, so it is an input."""
    visitor = _FreeNames()
    visitor.visit(node)
    if isinstance(node, FunctionNode + (ast.ClassDef,)):
        visitor.free.discard(node.name)
    return visitor.free


class _FreeNames(ast.NodeVisitor):
    def __init__(self):
        self.bound: set[str] = set()
        self.free: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            if node.id not in self.bound:
                self.free.add(node.id)
        else:
            self.bound.add(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            if node.target.id not in self.bound:
                self.free.add(node.target.id)
            self.bound.add(node.target.id)
        else:
            self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.visit(node.target)

    def visit_For(self, node) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for child in node.body + node.orelse:
            self.visit(child)

    visit_AsyncFor = visit_For

    def _scope(self, node, bound: list[str], parts: list) -> None:
        """A nested scope (def, lambda, comprehension): its own bindings do not leak out; the
        names it reads from outside are free (approximately: whatever it does not bind)."""
        inner = _FreeNames()
        inner.bound = set(self.bound) | set(bound)
        for part in parts:
            inner.visit(part)
        self.free |= inner.free

    def _args(self, args: ast.arguments) -> list[str]:
        return [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs] + \
            [a.arg for a in (args.vararg, args.kwarg) if a is not None]

    def visit_FunctionDef(self, node) -> None:
        for part in node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d]:
            self.visit(part)
        self.bound.add(node.name)
        inner_bound = self._args(node.args) + [node.name]
        # names the body assigns are local to it
        inner_bound += [n.id for b in node.body for n in ast.walk(b) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]
        self._scope(node, inner_bound, node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for part in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(part)
        self.bound.add(node.name)
        inner_bound = [node.name] + [n.id for b in node.body for n in ast.walk(b) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]
        inner_bound += [b.name for b in node.body if isinstance(b, FunctionNode + (ast.ClassDef,))]
        self._scope(node, inner_bound, node.body)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for part in node.args.defaults + [d for d in node.args.kw_defaults if d]:
            self.visit(part)
        self._scope(node, self._args(node.args), [node.body])

    def _comprehension(self, node, elements: list) -> None:
        self.visit(node.generators[0].iter)
        targets = [n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)]
        parts = [g.iter for g in node.generators[1:]] + [c for g in node.generators for c in g.ifs] + elements
        self._scope(node, targets, parts)

    def visit_ListComp(self, node) -> None:
        self._comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node) -> None:
        self._comprehension(node, [node.key, node.value])

    def visit_Global(self, node) -> None:
        pass


def _shaped_call(facts: ModuleFacts, value: ast.AST) -> ast.Call | None:
    """The shape-taking constructor inside ``value`` (through tf.Variable / tf.constant / casts)."""
    if not isinstance(value, ast.Call):
        return None
    qualname = facts.qualname(value.func)
    if qualname in SHAPED_CONSTRUCTORS:
        return value
    if qualname in _CHEAP_CALLS and value.args:
        return _shaped_call(facts, value.args[0])
    return None


def _literal_shape(facts: ModuleFacts, call: ast.Call) -> list[int] | None:
    qualname = facts.qualname(call.func)
    position, shape_keyword = SHAPED_CONSTRUCTORS[qualname]
    if position is None:  # np.random.randn(d0, d1, ...)
        values = [_int(facts, a) for a in call.args]
        return values if values and None not in values else None
    shape = keyword(call, shape_keyword)
    if shape is None and position < len(call.args):
        shape = call.args[position]
    if shape is None:
        return None
    elements = shape.elts if isinstance(shape, (ast.List, ast.Tuple)) else [shape]
    values = [_int(facts, e) for e in elements]
    return values if None not in values else None


def _int(facts: ModuleFacts, node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        assignments = facts.module_assignments.get(node.id, [])
        if len(assignments) == 1 and isinstance(assignments[0], ast.Assign):
            return _int(facts, assignments[0].value)
    return None


def _dtype_of(facts: ModuleFacts, call: ast.Call) -> str:
    for kw in call.keywords:
        if kw.arg == "dtype":
            text = ast.unparse(kw.value)
            return text.split(".")[-1].strip("'\"")
    qualname = facts.qualname(call.func) or ""
    return "float64" if qualname.startswith("numpy.") and "randint" not in qualname else ("int64" if "randint" in qualname else "float32")


def _safe_value(facts: ModuleFacts, value: ast.AST) -> bool:
    """Cheap to evaluate and free of side effects we could not stand behind."""
    for node in ast.walk(value):
        if isinstance(node, ast.Call):
            qualname = facts.qualname(node.func)
            if qualname in SHAPED_CONSTRUCTORS or qualname in _CHEAP_CALLS:
                continue
            if qualname and (qualname.startswith("keras.") or qualname.startswith("tensorflow.keras")):
                if any(part in qualname for part in (".fit", ".predict", ".evaluate", "load_model", ".datasets")):
                    return False
                continue
            if isinstance(node.func, ast.Attribute) and node.func.attr in DATASET_METHODS and qualname is None:
                continue  # a tf.data transformation of a dataset resolved the same way
            if isinstance(node.func, ast.Name) and (node.func.id in facts.module_defs or node.func.id in ("float", "int", "list", "tuple", "range", "len")):
                continue
            return False
        if isinstance(node, (ast.Lambda, ast.Await, ast.Yield)):
            return False
    return True


def _rescale_statement(statement: str, dim_map: dict[int, int]) -> str:
    """Scaled sizes inside the shape displays (lists/tuples) of a constructor statement."""
    tree = ast.parse(statement)
    for display in ast.walk(tree):
        if isinstance(display, (ast.List, ast.Tuple)):
            for node in display.elts:
                if isinstance(node, ast.Constant) and type(node.value) is int and node.value in dim_map:
                    node.value = dim_map[node.value]
    return ast.unparse(tree)


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
