"""What an argument looked like at a trace, as plain JSON, and why a retrace happened.

A descriptor is what TensorFlow keys its trace cache on, roughly: dtype and shape for tensors,
the value for Python scalars, the items for lists and tuples, the identity for other objects
(a serial number that changes when the object does). No TensorFlow import: tensors are
recognised by their ``shape`` and ``dtype``.
"""
from __future__ import annotations

import weakref

SCALARS = (bool, int, float, str, bytes, type(None))
MAX_ITEMS = 16


class Serials:
    """A serial number per live object; a new object gets a new one even if it reuses an id."""

    def __init__(self):
        self._by_id: dict[int, tuple[object, int]] = {}
        self._next = 0

    def of(self, obj) -> int:
        entry = self._by_id.get(id(obj))
        if entry is not None:
            ref, serial = entry
            alive = ref() if isinstance(ref, weakref.ref) else ref
            if alive is obj:
                return serial
        self._next += 1
        try:
            ref = weakref.ref(obj)
        except TypeError:  # not weakly referenceable: the id is the best we have
            ref = obj if isinstance(obj, SCALARS) else _IdOnly(obj)
        if len(self._by_id) > 100_000:
            self._by_id.clear()
        self._by_id[id(obj)] = (ref, self._next)
        return self._next


class _IdOnly:
    def __init__(self, obj):
        self.oid = id(obj)

    def __call__(self):
        return None


def describe(value, serials: Serials, depth: int = 0) -> dict:
    if isinstance(value, SCALARS):
        text = repr(value)
        return {"kind": "py", "type": type(value).__name__, "value": text[:80]}
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None and not isinstance(value, type):
        return {"kind": "tensor", "type": type(value).__name__, "dtype": getattr(dtype, "name", str(dtype)),
                "shape": _shape(shape)}
    if isinstance(value, (list, tuple)) and depth < 2:
        items = [describe(v, serials, depth + 1) for v in value[:MAX_ITEMS]]
        return {"kind": "seq", "type": type(value).__name__, "len": len(value), "items": items}
    if isinstance(value, dict) and depth < 2:
        keys = sorted(value, key=repr)[:MAX_ITEMS]
        return {"kind": "dict", "type": type(value).__name__, "len": len(value),
                "items": {repr(k)[:40]: describe(value[k], serials, depth + 1) for k in keys}}
    return {"kind": "object", "type": type(value).__name__, "serial": serials.of(value)}


def _shape(shape) -> list | None:
    try:
        dims = list(shape)
    except (TypeError, ValueError):  # unknown rank
        return None
    return [d if d is None or isinstance(d, int) else getattr(d, "value", None) for d in dims]


# ---------------------------------------------------------------------------------- culprits
def changed(before: dict, after: dict) -> list[str]:
    """Names of the arguments whose descriptor differs between two traces."""
    names = list(dict.fromkeys([*before, *after]))
    return [n for n in names if before.get(n) != after.get(n)]


def culprit_text(name: str, descriptors: list[dict]) -> str:
    """One sentence about an argument across every trace it changed in, e.g.
    "lr is a Python float with 37 values"."""
    present = [d for d in descriptors if d is not None]
    if not present:
        return f"{name} changed"
    kinds = {d["kind"] for d in present}
    types = list(dict.fromkeys(d["type"] for d in present))
    if len(types) > 1 and len(kinds) > 1 or len(types) > 1 and kinds == {"py"}:
        return f"{name} changes type ({', '.join(types[:4])})"
    kind, typ = present[0]["kind"], types[0]
    if kind == "py":
        values = list(dict.fromkeys(d["value"] for d in present))
        return f"{name} is a Python {typ} with {len(values)} values ({_few(values)})"
    if kind == "tensor":
        dtypes = list(dict.fromkeys(d["dtype"] for d in present))
        if len(dtypes) > 1:
            return f"{name} is a tensor whose dtype changes ({_few(dtypes)})"
        shapes = [d["shape"] for d in present]
        ranks = {len(s) if s is not None else None for s in shapes}
        if len(ranks) > 1:
            return f"{name} is a tensor whose rank changes"
        dims = [i for i in range(len(shapes[0] or [])) if len({(s or [None])[i] for s in shapes}) > 1]
        if dims:
            values = list(dict.fromkeys(str(s[dims[0]]) for s in shapes))
            where = "dimension " + ", ".join(map(str, dims))
            return f"{name} is a tensor whose shape changes in {where} ({len(values)} sizes: {_few(values)})"
        return f"{name} is a tensor of the same shape (traced again for another reason)"
    if kind == "seq":
        return f"{name} is a Python {typ} with {len({_key(d) for d in present})} different contents"
    if kind == "dict":
        return f"{name} is a Python dict with {len({_key(d) for d in present})} different contents"
    return f"{name} is a new {typ} object each call"


def _key(d: dict) -> str:
    import json

    return json.dumps(d, sort_keys=True)


def _few(values: list, n: int = 4) -> str:
    shown = ", ".join(str(v) for v in values[:n])
    return shown + (", ..." if len(values) > n else "")


ADVICE = {
    "py": "pass it as a tensor (tf.constant) or make it constant",
    "tensor": "give the tf.function an input_signature with None in that dimension, or reduce_retracing=True",
    "seq": "convert the list with tf.constant at the call site",
    "dict": "pass tensors, not Python values, in the dict",
    "object": "create the object once and reuse it",
    "function": "create the tf.function once, outside the loop or function that runs per call",
}
