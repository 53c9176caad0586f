"""Are two variants' outputs the same? Structure, dtype, shape, then values with per-dtype
tolerances (NaN positions must agree). Worker side: uses numpy; TensorFlow comes in only
through the `flatten`/`same_structure` functions the worker passes (tf.nest).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

# (rtol, atol as a fraction of the largest |reference| value of that output). A scale-relative
# atol keeps near-zero elements of a large reduction from failing on reordered sums: an element
# matches when |a - b| <= rtol * max(|a|, atol / rtol * max |a|) (_compare_values).
TOLERANCES = {
    "float16": (1e-2, 1e-3),
    "bfloat16": (5e-2, 1e-2),
    "float32": (1e-5, 1e-6),
    "complex64": (1e-5, 1e-6),
    "float64": (1e-9, 1e-12),
    "complex128": (1e-9, 1e-12),
}
TF32_FLOAT32 = (1e-3, 1e-4)  # TF32 matmuls keep a 10-bit mantissa (Ampere+ GPUs)
XLA_FLOAT32 = (1e-4, 1e-5)   # XLA fuses and reorders float ops (softmax, reductions)
MIXED = (1e-2, 1e-3)         # a mixed-precision rewrite computes in float16/bfloat16
LOOSE = (1e-1, 1e-1)         # float8 and other exotic floats
KIND_NOTES = {"xla": "XLA", "mixed": "mixed precision", "tf32": "TF32"}


def tolerance(dtype_name: str, tf32: bool = False, kind: str | None = None) -> tuple[float, float]:
    """(rtol, atol fraction) for one output; ``kind`` names how the candidate computes ("xla",
    "mixed"): both are looser than plain fp32 for float32 outputs."""
    base = TOLERANCES.get(dtype_name, LOOSE)
    if dtype_name in ("float32", "complex64", "float64", "complex128"):
        if kind == "mixed":
            return max(base, MIXED)
        if tf32 and dtype_name in ("float32", "complex64"):
            base = max(base, TF32_FLOAT32)
        if kind == "xla":
            base = max(base, XLA_FLOAT32) if dtype_name in ("float32", "complex64") else base
    return base


@dataclass
class OutputCheck:
    match: bool | None            # None: nothing comparable
    reason: str | None = None     # why they differ (or why it could not be checked)
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    values_checked: bool = True   # False when only structure/dtype/shape were compared
    rtol: float | None = None     # the loosest rtol applied to a float output


def _default_flatten(x) -> list:
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _default_flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [leaf for v in x for leaf in _default_flatten(v)]
    return [x]


def _default_same_structure(a, b) -> None:
    if isinstance(a, dict) != isinstance(b, dict) or (isinstance(a, dict) and sorted(a) != sorted(b)):
        raise ValueError("different nesting or keys")
    if isinstance(a, (list, tuple)) != isinstance(b, (list, tuple)):
        raise ValueError("different nesting")
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            raise ValueError(f"lengths {len(a)} and {len(b)}")
        for x, y in zip(a, b):
            _default_same_structure(x, y)
    elif isinstance(a, dict):
        for k in a:
            _default_same_structure(a[k], b[k])


def to_array(leaf: Any) -> Any:
    """numpy array for tensors, variables, arrays and Python numbers; None/str/bytes as is."""
    if leaf is None or isinstance(leaf, (str, bytes)):
        return leaf
    if hasattr(leaf, "numpy") and callable(leaf.numpy):
        leaf = leaf.numpy()
    if isinstance(leaf, (np.ndarray, np.generic, bool, int, float, complex)):
        return np.asarray(leaf)
    return leaf


def _describe(a) -> str:
    if isinstance(a, np.ndarray):
        return f"{a.dtype.name}{list(a.shape)}"
    return type(a).__name__


def compare_outputs(ref: Any, cand: Any, *, flatten: Callable | None = None,
                    same_structure: Callable | None = None, tf32: bool = False,
                    values: bool = True, kind: str | None = None) -> OutputCheck:
    """Compare cand against ref. values=False checks structure, dtype and shape only."""
    flatten = flatten or _default_flatten
    same_structure = same_structure or _default_same_structure
    try:
        same_structure(ref, cand)
    except (ValueError, TypeError) as e:
        return OutputCheck(False, f"output structure differs: {_short(e)}")
    ref_leaves, cand_leaves = flatten(ref), flatten(cand)
    if len(ref_leaves) != len(cand_leaves):
        return OutputCheck(False, f"{len(ref_leaves)} outputs vs {len(cand_leaves)}")
    max_abs = max_rel = rtol = None
    compared = 0
    for i, (r, c) in enumerate(zip(ref_leaves, cand_leaves)):
        a, b = to_array(r), to_array(c)
        where = f"output #{i}" if len(ref_leaves) > 1 else "the output"
        if a is None or b is None or isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
            if a != b:
                return OutputCheck(False, f"{where} differs: {a!r:.40} vs {b!r:.40}")
            continue
        if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray):
            if type(a) is not type(b):
                return OutputCheck(False, f"{where}: {_describe(a)} vs {_describe(b)}")
            try:
                equal = bool(a == b)
            except Exception:  # noqa: BLE001 - arbitrary user objects
                return OutputCheck(None, f"{where}: cannot compare {type(a).__name__} objects")
            if not equal:
                return OutputCheck(False, f"{where} differs ({type(a).__name__} objects not equal)")
            compared += 1
            continue
        if a.dtype != b.dtype and not (kind == "mixed" and a.dtype.kind == b.dtype.kind == "f"):
            return OutputCheck(False, f"{where} dtype differs: {_describe(a)} vs {_describe(b)}")
        if a.shape != b.shape:
            return OutputCheck(False, f"{where} shape differs: {_describe(a)} vs {_describe(b)}")
        compared += 1
        if not values:
            continue
        ok, why, ea, er = _compare_values(a, b, tf32, kind)
        if a.dtype.kind in "fc":
            used = tolerance(a.dtype.name, tf32, kind)[0]
            rtol = used if rtol is None else max(rtol, used)
        if ea is not None:
            max_abs = ea if max_abs is None else max(max_abs, ea)
        if er is not None:
            max_rel = er if max_rel is None else max(max_rel, er)
        if not ok:
            return OutputCheck(False, f"{where} ({_describe(a)}) {why}", max_abs, max_rel, rtol=rtol)
    if compared == 0:
        return OutputCheck(None, "nothing to compare: __tfperf_run__ returned no tensors", values_checked=values)
    return OutputCheck(True, None, max_abs, max_rel, values_checked=values, rtol=rtol)


def _compare_values(a: np.ndarray, b: np.ndarray, tf32: bool, variant_kind: str | None = None):
    """(ok, reason, max_abs_err, max_rel_err); a is the reference."""
    kind = a.dtype.kind
    name = a.dtype.name
    if kind in "biuSUOV" or a.size == 0:
        if a.size == 0:
            return True, None, 0.0, 0.0
        eq = np.array_equal(a, b)
        ea = None
        if kind in "biu":  # exact compare; the error figure is still useful
            ea = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max())
        return eq, None if eq else f"differs in {int(np.sum(a != b))} of {a.size} elements", ea, None
    wide = np.complex128 if kind == "c" else np.float64
    x, y = a.astype(wide), b.astype(wide)
    nan_x, nan_y = np.isnan(x), np.isnan(y)
    if not np.array_equal(nan_x, nan_y):
        return False, f"NaN positions differ ({int(nan_x.sum())} vs {int(nan_y.sum())} NaNs)", None, None
    inf_x, inf_y = np.isinf(x), np.isinf(y)
    if not np.array_equal(inf_x, inf_y) or not np.array_equal(x[inf_x], y[inf_y]):
        return False, "infinite values differ", None, None
    fin = ~(nan_x | inf_x)
    if not fin.any():
        return True, None, 0.0, 0.0
    xf, yf = x[fin], y[fin]
    diff = np.abs(xf - yf)
    mag = np.abs(xf)
    rtol, atol_frac = tolerance(name, tf32, variant_kind)
    scale = float(mag.max()) or 1.0
    # Relative error, each value's magnitude floored at atol/rtol of the output's largest (a tenth
    # for float32): near-zero elements of a reordered sum are judged against the output's scale.
    # An element is bad when this error exceeds rtol, so the reported maximum and rtol agree
    # ("max rel err 3e-06, rtol 1e-05" matches; a plain |ref|-relative error of a near-zero
    # element would print as larger than the rtol of a match).
    floor = atol_frac / rtol * scale
    relative = diff / np.maximum(mag, floor)
    bad = relative > rtol
    ea = float(diff.max())
    er = float(relative.max())
    if bad.any():
        return (False, f"differs in {int(bad.sum())} of {a.size} elements beyond tolerance "
                f"(rtol {rtol:g}): max abs err {ea:.3g}", ea, er)
    return True, None, ea, er


def _short(e: BaseException, limit: int = 300) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
