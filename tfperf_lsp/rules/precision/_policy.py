"""What the precision rules share: the dtype policy in force at a line, the device, Keras layers.

Private to tfperf_lsp.rules.precision.

Policy: the calls that set the global Keras policy, in source order. The policy "in force" at a
line is the one set by the last such call written above it (any scope): layers built in a def
written after ``set_global_policy`` are taken to run after it, as they do in ordinary scripts.

Device: ``tfperf check --device`` or, in the editor only, the benchmark worker's probe > a
``# tfperf: device=...`` comment in the file's first lines > configuration
([tool.tfperf.device] / editor settings) > unknown. ``tfperf check`` never uses a remembered
probe: the same input gives the same findings on any machine. The
comment lets an example, a test or a script that targets a machine other than the one the editor
runs on say so:

    # tfperf: device=gpu cc=8.6
    # tfperf: device=cpu features=avx512_bf16,amx_bf16
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Sequence

from tfperf_lsp.analysis.facts import ModuleFacts
from tfperf_lsp.config import DeviceFacts
from tfperf_lsp.rules.context import RuleContext
from tfperf_lsp.analysis.astutil import keyword

SETTERS = frozenset(
    {
        "keras.mixed_precision.set_global_policy",
        "keras.mixed_precision.set_dtype_policy",
        "keras.config.set_dtype_policy",
        "keras.mixed_precision.set_policy",  # removed (TFP606), still the author's intent
        "keras.mixed_precision.experimental.set_policy",
    }
)
POLICY_CLASSES = frozenset(
    {
        "keras.mixed_precision.Policy",
        "keras.mixed_precision.DTypePolicy",
        "keras.DTypePolicy",
        "keras.dtype_policies.DTypePolicy",
        "keras.mixed_precision.experimental.Policy",
    }
)
MIXED = ("mixed_float16", "mixed_bfloat16")
UNKNOWN = "unknown"


@dataclass(frozen=True)
class PolicyEvent:
    line: int  # 1-based, like ast
    policy: str  # "mixed_float16", "float32", ... or UNKNOWN


def policy_events(ctx: RuleContext) -> list[PolicyEvent]:
    """Where the file sets a mixed-precision policy, in order (once per analysis)."""
    return ctx.derived(_find_policy_events)


def _find_policy_events(ctx: RuleContext) -> list[PolicyEvent]:
    events: list[PolicyEvent] = []
    text = ctx.source.text
    if "policy" in text or "Policy" in text:
        facts = ctx.facts
        for call in ctx.facts.calls_to(*SETTERS):
            value = call.args[0] if call.args else keyword(call, "policy")
            events.append(PolicyEvent(call.lineno, _policy_name(facts, value, call)))
    return events


def policy_at(ctx: RuleContext, line: int) -> str | None:
    """The policy set by the last setter above ``line``; None when none is (float32 default)."""
    current = None
    for event in policy_events(ctx):
        if event.line >= line:
            break
        current = event.policy
    return current


def _policy_name(facts: ModuleFacts, value: ast.AST | None, at: ast.AST, depth: int = 0) -> str:
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ast.Call) and facts.qualname(value.func) in POLICY_CLASSES and value.args:
        return _policy_name(facts, value.args[0], at, depth + 1)
    if isinstance(value, ast.Name) and depth < 3:
        scope = facts.enclosing_function(at)
        sources: Sequence[ast.AST] = facts.assignments_in(scope).get(value.id, []) if scope is not None else []
        sources = sources or facts.module_assignments.get(value.id, [])
        names = {_policy_name(facts, s.value, s, depth + 1) if isinstance(s, ast.Assign) else UNKNOWN for s in sources}
        if len(names) == 1:
            return names.pop()
    return UNKNOWN


# ------------------------------------------------------------------------------ device
_DIRECTIVE = re.compile(r"^\s*#\s*tfperf:\s*device\s*=\s*(gpu|cpu)\b(.*)$", re.IGNORECASE)
_HEADER_LINES = 30


def device_facts(ctx: RuleContext) -> DeviceFacts:
    """The device the file's precision findings assume: ``--device``, else a ``# tfperf: device=``
    comment in its first lines, else the settings (once per analysis)."""
    return ctx.derived(_device_facts)


def _device_facts(ctx: RuleContext) -> DeviceFacts:
    device = ctx.settings.device
    if device.source not in ("probe", "flag"):
        device = declared_device(ctx.source.lines[:_HEADER_LINES]) or device
    return device


def device_used(ctx: RuleContext) -> DeviceFacts | None:
    """The device facts this analysis read, None if no rule asked for them."""
    return ctx.derived_if_computed(_device_facts)


def declared_device(lines: list[str]) -> DeviceFacts | None:
    """A ``# tfperf: device=gpu cc=8.6`` / ``device=cpu features=a,b`` comment, if present."""
    for line in lines:
        match = _DIRECTIVE.match(line)
        if match is None:
            continue
        options = dict(part.split("=", 1) for part in match.group(2).split() if "=" in part)
        capability = options.get("cc") or options.get("compute_capability")
        try:
            cc = float(capability) if capability else None
        except ValueError:
            cc = None
        features = options.get("features") or options.get("cpu_features") or ""
        return DeviceFacts(
            gpu=match.group(1).lower() == "gpu",
            compute_capability=cc,
            cpu_features=frozenset(f.strip().lower() for f in features.split(",") if f.strip()),
            source="comment",
        )
    return None


def tensor_core_gpu(device: DeviceFacts) -> bool:
    """A GPU with compute capability >= 7.0: Tensor Cores, where float16 pays."""
    return bool(device.gpu) and device.compute_capability is not None and device.compute_capability >= 7.0


# CPU flags with native bfloat16 matrix math (x86 /proc/cpuinfo names, as the worker's probe
# reports them). AMX is what TF's guide means by "latest Intel CPUs"; AVX512_BF16 was measured
# here too (AMD EPYC, 2 cores): mixed_bfloat16 fit() ran 1.6x-2.0x faster than float32 for an
# MLP and a small CNN. aarch64 "bf16" is not included: not measured.
BF16_CPU_FEATURES = frozenset({"amx_bf16", "avx512_bf16"})


def recommended_policy(device: DeviceFacts) -> str | None:
    """The mixed policy that pays on this device, or None (unknown, old GPU, plain CPU)."""
    if tensor_core_gpu(device):
        return "mixed_float16"
    if device.gpu is False and device.cpu_features & BF16_CPU_FEATURES:
        return "mixed_bfloat16"
    return None


def describe(device: DeviceFacts) -> str:
    if device.gpu:
        name = device.name or "GPU"
        return f"{name} (compute capability {device.compute_capability:g})"
    features = sorted(device.cpu_features & BF16_CPU_FEATURES)
    return f"CPU with {', '.join(features)}"


# ------------------------------------------------------------------------------ layers
DENSE = frozenset({"keras.layers.Dense"})
CONV = frozenset(
    "keras.layers." + name for name in (
        "Conv1D Conv2D Conv3D Conv1DTranspose Conv2DTranspose Conv3DTranspose SeparableConv1D "
        "SeparableConv2D DepthwiseConv1D DepthwiseConv2D Convolution1D Convolution2D Convolution3D "
        "Convolution2DTranspose Convolution3DTranspose SeparableConvolution1D SeparableConvolution2D"
    ).split()
)
RNN = frozenset({"keras.layers.LSTM", "keras.layers.GRU", "keras.layers.SimpleRNN"})


def activation_name(facts: ModuleFacts, call: ast.Call) -> str | None:
    """'softmax', 'relu', ... for a string or a known callable activation; None when absent."""
    value = keyword(call, "activation")
    if value is None:
        return None
    if isinstance(value, ast.Constant):
        return value.value if isinstance(value.value, str) else None
    qualname = facts.qualname(value) or ""
    if qualname.startswith(("tensorflow.nn.", "tensorflow.math.", "keras.activations.")):
        return qualname.rsplit(".", 1)[1]
    return UNKNOWN
