"""Helpers the XLA rules share (and the precision rules borrow ``leading_imports_end``).

Private to tfperf_lsp.rules.xla: everything here is derived from ``ModuleFacts`` without walking
the whole tree, so the rules stay inside the analysis budget.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tfperf_lsp.analysis.astutil import keyword_is_true
from tfperf_lsp.analysis.facts import FunctionNode, ModuleFacts, TFFunction, walk_same_scope
from tfperf_lsp.rules.common import DATASET_MAKERS
from tfperf_lsp.rules.context import RuleContext

JIT_OPTIONS = ("jit_compile", "experimental_compile")

# Ops XLA cannot compile (jit_compile=True raises "Detected unsupported operations", measured on
# TF 2.21 for PyFunc, StringFormat/PrintV2 and AsString), or compiles to a wrong result (a
# dynamic-size TensorArray written in a tf.range loop stacked to [] under XLA, measured).
_UNCOMPILABLE_CALLS = {
    "tensorflow.numpy_function": "calls tf.numpy_function",
    "tensorflow.py_function": "calls tf.py_function",
    "tensorflow.compat.v1.py_func": "calls tf.compat.v1.py_func",
    "tensorflow.print": "calls tf.print",
    "tensorflow.as_string": "uses string ops",
    "tensorflow.io.decode_image": "decodes files",
    "tensorflow.io.read_file": "reads files",
}
_UNCOMPILABLE_PREFIXES = ("tensorflow.strings.", "tensorflow.io.", "tensorflow.data.", "tensorflow.summary.")
# Compile, but change what the code does: XLA ignores op seeds (measured, not
# repeatable), and gradients of unbounded while loops do not compile.
_UNSURE_PREFIXES = ("tensorflow.random.", "tensorflow.nn.dropout", "tensorflow.while_loop")
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
# Libraries whose ops XLA may not compile (custom kernels loaded with tf.load_op_library: TF
# Quantum's circuit ops, TF Graphics' rasterizer, Horovod's collectives, which XLA compiles only
# with HOROVOD_ENABLE_XLA_OPS=1, SageMaker's smdistributed all-reduce), or whose layers tfperf cannot
# see into.
EXTENSION_LIBRARIES = ("tensorflow_addons", "tensorflow_probability", "tensorflow_text", "tensorflow_recommenders",
                       "tensorflow_quantum", "tensorflow_lattice", "horovod", "smdistributed",
                       "tensorflow_graphics.rendering.triangle_rasterizer",
                       "tensorflow_graphics.rendering.rasterization_backend", "tensorflow_graphics.rendering.opengl",
                       "tensorflow_graphics.rendering.kernels",
                       # graph networks on sparse adjacency matrices: sparse ops have no XLA kernel
                       "spektral", "stellargraph", "tf_geometric")
# Elementwise ops XLA fuses into one kernel (the XLA guide: fusion is "XLA's single most important
# optimization"). Python arithmetic on tensors counts too.
ELEMENTWISE = frozenset(
    "tensorflow." + name for name in (
        "tanh exp log sigmoid sqrt rsqrt square abs maximum minimum pow add subtract multiply "
        "divide sin cos erf cast clip_by_value nn.relu nn.relu6 nn.gelu nn.sigmoid nn.tanh nn.silu "
        "nn.swish nn.elu nn.selu nn.softplus nn.leaky_relu math.tanh math.exp math.log math.sigmoid "
        "math.sqrt math.rsqrt math.square math.abs math.maximum math.minimum math.pow math.erf "
        "math.log1p math.expm1 math.softplus math.add math.subtract math.multiply math.divide"
    ).split()
)


# Setting up a TPU: there XLA compiles every step already, so a jit_compile hint adds nothing.
_TPU_SETUP = frozenset({
    "tensorflow.distribute.TPUStrategy", "tensorflow.distribute.experimental.TPUStrategy",
    "tensorflow.distribute.cluster_resolver.TPUClusterResolver", "tensorflow.tpu.experimental.initialize_tpu_system",
})


def targets_tpu(facts: ModuleFacts) -> bool:
    """The file sets up a TPU (``TPUStrategy``, ``TPUClusterResolver``)."""
    cached = facts.__dict__.get("_tfperf_targets_tpu")  # lives as long as one analysis
    if cached is None:
        cached = facts.__dict__["_tfperf_targets_tpu"] = any(name in facts.calls_by_qualname for name in _TPU_SETUP)
    return cached


def jit_option(fn: TFFunction) -> str | None:
    """``jit_compile`` or ``experimental_compile`` if the tf.function sets either (to anything)."""
    return next((key for key in JIT_OPTIONS if key in fn.options), None)


def is_jit_compiled(fn: TFFunction) -> bool:
    return any(fn.option_is_true(key) for key in JIT_OPTIONS)


@dataclass
class BodyProfile:
    """What one def's own body (not nested defs) does, as far as XLA is concerned."""

    callees: list[ast.AST] = field(default_factory=list)  # local defs it calls
    blockers: set[str] = field(default_factory=set)  # XLA cannot compile these (or gets them wrong)
    unsure: set[str] = field(default_factory=set)  # compile, but behave differently under XLA
    tape: bool = False  # builds a tf.GradientTape
    gradient: bool = False  # calls ``.gradient(...)``
    updates: bool = False  # applies gradients or assigns variables
    watches: bool = False  # ``tape.watch(x)``: gradients with respect to inputs, not variables
    elementwise: int = 0  # fusable elementwise operations


def body_profile(ctx: RuleContext, body: ast.AST) -> BodyProfile:
    cache = ctx.derived(_body_profiles)
    profile = cache.get(body)
    if profile is not None:
        return profile
    facts = ctx.facts
    profile = cache[body] = BodyProfile()
    params = {a.arg for a in body.args.posonlyargs + body.args.args + body.args.kwonlyargs} if isinstance(body, FunctionNode) else set()
    for node in walk_same_scope(body):
        if isinstance(node, (ast.For, ast.AsyncFor)) and _iterates_dataset(facts, node.iter, params):
            # An epoch loop inside the function: XLA cannot compile dataset ops (TF 2.21:
            # "Detected unsupported operations ... ScanDataset", measured).
            profile.blockers.add("iterates a dataset")
            continue
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, _ARITHMETIC):
                profile.elementwise += 1
            continue
        if not isinstance(node, ast.Call):
            continue
        qualname = facts.qualname(node.func) or ""
        if _reads_an_iterator(node):
            # ``next(self._iterator)`` in the step: IteratorGetNext does not compile (TF 2.21:
            # "Detected unsupported operations", measured)
            profile.blockers.add("reads a dataset iterator")
        elif qualname in ELEMENTWISE:
            profile.elementwise += 1
        elif qualname in _UNCOMPILABLE_CALLS:
            profile.blockers.add(_UNCOMPILABLE_CALLS[qualname])
        elif qualname.startswith(_UNCOMPILABLE_PREFIXES):
            profile.blockers.add(f"calls {qualname.replace('tensorflow.', 'tf.')}")
        elif qualname == "tensorflow.TensorArray" and keyword_is_true(node, "dynamic_size"):
            profile.blockers.add("grows a dynamic-size TensorArray")
        elif qualname.startswith(EXTENSION_LIBRARIES):
            # Their ops' XLA support is their own (tfa.seq2seq decoders loop dynamically): unknown.
            profile.blockers.add(f"calls {qualname.split('.')[0]}, whose ops XLA may not compile")
        elif qualname.startswith(_UNSURE_PREFIXES):
            profile.unsure.add(f"calls {qualname.replace('tensorflow.', 'tf.')}")
        elif qualname == "tensorflow.GradientTape":
            profile.tape = True
        elif not qualname:
            if isinstance(node.func, ast.Attribute) and node.func.attr == "gradient":
                profile.gradient = True
            elif isinstance(node.func, ast.Attribute) and node.func.attr in _UPDATES:
                profile.updates = True
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "watch":
                profile.watches = True
            target = facts.resolve_def(node.func, node)
            if target is not None and target is not body:
                profile.callees.append(target)
    return profile


_UPDATES = frozenset({"apply_gradients", "minimize", "assign", "assign_add", "assign_sub"})

def _reads_an_iterator(call: ast.Call) -> bool:
    """``next(it)``, ``it.get_next()``, ``it.get_next_as_optional()``."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id == "next" and len(call.args) in (1, 2)
    return isinstance(func, ast.Attribute) and func.attr in ("get_next", "get_next_as_optional")


def _iterates_dataset(facts: ModuleFacts, iterable: ast.expr, params: set[str]) -> bool:
    """``for x, y in train_set``: a parameter of the function (an epoch function is handed its
    dataset), or a name bound to a ``tf.data`` chain; ``range``, ``tf.range``, literals and
    attributes (``self.layers``) are not. ``enumerate``/``zip``/``iter`` are looked through."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id in ("enumerate", "zip", "iter"):
        return any(_iterates_dataset(facts, arg, params) for arg in iterable.args)
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and iterable.func.attr in DATASET_MAKERS:
        return True
    if not isinstance(iterable, ast.Name):
        return False
    if iterable.id in params:
        return True
    value = getattr(facts.reaching_assignment(iterable), "value", None)
    return isinstance(value, ast.Call) and (
        (isinstance(value.func, ast.Attribute) and value.func.attr in DATASET_MAKERS)
        or (facts.qualname(value.func) or "").startswith("tensorflow.data."))


def function_profile(ctx: RuleContext, fn_node: ast.AST, depth: int = 3) -> BodyProfile:
    """The profile of ``fn_node`` merged with the local helpers it calls (a few levels deep):
    everything XLA would compile."""
    total = BodyProfile()
    seen = {fn_node}
    work = [(fn_node, 0)]
    while work:
        body, level = work.pop()
        profile = body_profile(ctx, body)
        total.blockers |= profile.blockers
        total.unsure |= profile.unsure
        total.tape |= profile.tape
        total.gradient |= profile.gradient
        total.updates |= profile.updates
        total.watches |= profile.watches
        total.elementwise += profile.elementwise
        if level < depth:
            for callee in profile.callees:
                if callee not in seen:
                    seen.add(callee)
                    work.append((callee, level + 1))
    return total


def leading_imports_end(tree: ast.Module) -> int:
    """0-based line after the module's leading docstring/import statements (where to insert
    program-start settings). 0 when the module does not start with imports."""
    end = 0
    for index, stmt in enumerate(tree.body):
        is_docstring = index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        if is_docstring or isinstance(stmt, (ast.Import, ast.ImportFrom)):
            end = stmt.end_lineno or stmt.lineno
        else:
            break
    return end


def imported_before(facts: ModuleFacts, name: str, line: int) -> bool:
    """``name`` is bound by a module-level import that ends before 0-based ``line``."""
    node = facts.imports.import_nodes.get(name)
    return node is not None and facts.parent(node) is facts.tree and (node.end_lineno or node.lineno) <= line


def _body_profiles(ctx: RuleContext) -> dict[ast.AST, BodyProfile]:
    return {}  # filled by body_profile, one analysis long


def uses_sparse_tensors(facts: ModuleFacts) -> bool:
    """The file builds or feeds ``tf.SparseTensor`` values (``tf.sparse.*``, ``tf.SparseTensor``,
    ``keras.Input(..., sparse=True)``): its models multiply by sparse matrices, which XLA cannot
    compile ("Detected unsupported operations ... SparseTensorDenseMatMul", TF 2.21)."""
    for qualname, calls in facts.calls_by_qualname.items():
        if qualname.startswith(_SPARSE_APIS) or qualname in _SPARSE_TYPES:
            return True
        if qualname.rsplit(".", 1)[-1] == "Input" and any(
                k.arg == "sparse" and isinstance(k.value, ast.Constant) and k.value.value is True
                for call in calls for k in call.keywords):
            return True
    return False


_SPARSE_APIS = ("tensorflow.sparse.", "tensorflow.compat.v1.sparse.")
_SPARSE_TYPES = {"tensorflow.SparseTensor", "tensorflow.sparse.SparseTensor", "tensorflow.compat.v1.SparseTensor"}
