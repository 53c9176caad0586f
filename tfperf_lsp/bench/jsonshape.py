"""Strict JSON helpers for the protocol: typed field access with messages that name the field,
non-finite floats to null, one-line dumps. Pure Python."""
from __future__ import annotations

import json
import math
from dataclasses import fields
from typing import Any


class ProtocolError(ValueError):
    """A message or a field that does not follow the contract."""


NUM = (int, float)


def req(d: dict, key: str, types: type | tuple, where: str, nullable: bool = False) -> Any:
    if not isinstance(d, dict):
        raise ProtocolError(f"{where}: expected an object, got {type(d).__name__}")
    if key not in d:
        raise ProtocolError(f"{where}: missing field '{key}'")
    value = d[key]
    if value is None and nullable:
        return None
    allowed = types if isinstance(types, tuple) else (types,)
    # bool is an int subclass: do not let True pass as a number.
    if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
        names = " or ".join(t.__name__ for t in allowed)
        raise ProtocolError(f"{where}.{key}: expected {names}, got {type(value).__name__}")
    return value


def opt(d: dict, key: str, types, where: str, default=None):
    if d.get(key) is None:
        return default
    return req(d, key, types, where)


def loose(cls, d: dict, where: str):
    """Build a flat dataclass from d: unknown keys are ignored (newer workers), known ones typed."""
    if not isinstance(d, dict):
        raise ProtocolError(f"{where}: expected an object, got {type(d).__name__}")
    kw = {}
    for f in fields(cls):
        if f.name in d:
            kw[f.name] = _typed(d[f.name], f.type, f"{where}.{f.name}")
    try:
        return cls(**kw)
    except TypeError as e:
        raise ProtocolError(f"{where}: {e}") from None


_SIMPLE = {"str": str, "int": int, "float": NUM, "bool": bool}


def _typed(value, annotation: str, where: str):
    """Check a value against a simple annotation string such as 'float | None' or 'list[str]'."""
    parts = [p.strip() for p in annotation.split("|")]
    if value is None:
        if "None" in parts:
            return None
        raise ProtocolError(f"{where}: must not be null")
    for p in parts:
        if p.startswith("list[") and isinstance(value, list):
            inner = _SIMPLE.get(p[5:-1])
            if inner is None or all(isinstance(v, inner) and not _bad_bool(v, p[5:-1]) for v in value):
                return list(value)
        elif p in _SIMPLE and isinstance(value, _SIMPLE[p]) and not _bad_bool(value, p):
            return value
        elif p == "dict" and isinstance(value, dict):
            return value
    raise ProtocolError(f"{where}: expected {annotation}, got {type(value).__name__} {value!r:.60}")


def _bad_bool(value, name: str) -> bool:
    return isinstance(value, bool) and name != "bool"


def finite(obj):
    """JSON has no NaN/Infinity: non-finite floats become null (documented in the contract)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def dumps(msg: dict) -> str:
    """One protocol line (without the newline). Strict JSON, ASCII only."""
    return json.dumps(finite(msg), allow_nan=False, separators=(",", ":"))


def loads(line: str | bytes) -> dict:
    try:
        msg = json.loads(line)
    except (ValueError, UnicodeDecodeError) as e:
        text = line[:120] if isinstance(line, str) else line[:120].decode("utf-8", "replace")
        raise ProtocolError(f"not a JSON line: {e} (line starts {text!r})") from None
    if not isinstance(msg, dict):
        raise ProtocolError(f"a message must be a JSON object, got {type(msg).__name__}")
    return msg
