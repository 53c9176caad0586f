"""Code that runs only on some TensorFlow versions: a branch of an ``if`` on the version, or the
fallback of a ``try`` for an API this version lacks. Advice about the old API there is wrong:
the code already chooses it only where it exists."""
from __future__ import annotations

import ast

from tfperf_lsp.analysis.facts import ModuleFacts


# Errors a fallback catches when an API is missing on this version (or any error at all).
_MISSING_API_ERRORS = {"ImportError", "ModuleNotFoundError", "AttributeError", "Exception"}


def version_gated(facts: ModuleFacts, node: ast.AST) -> bool:
    """``node`` runs only on some TensorFlow versions, or only when the modern API is missing: in
    a branch of an ``if`` (or a conditional expression) on a version (``if version.parse(tf.__version__)
    >= ...:``), or in the
    fallback of a ``try`` (``except ImportError`` / ``AttributeError``). Code in the ``try``
    body, tried first, still runs everywhere and is still reported."""
    child = node
    for ancestor in facts.ancestors(node):
        if isinstance(ancestor, ast.If) and child in ancestor.orelse + ancestor.body:
            if "version" in ast.unparse(ancestor.test).lower():
                return True
        if isinstance(ancestor, ast.IfExp) and child in (ancestor.body, ancestor.orelse):
            if "version" in ast.unparse(ancestor.test).lower():
                return True  # ``new() if tf_version >= (2, 4) else old()``
        if isinstance(ancestor, ast.ExceptHandler) and _catches_missing_api(ancestor):
            return True
        child = ancestor
    return False


def has_fallback(facts: ModuleFacts, node: ast.AST) -> bool:
    """``node`` is tried first, in the body of a ``try`` whose ``except ImportError`` (or
    ``AttributeError``) supplies the modern API: the code runs on both versions."""
    child = node
    for ancestor in facts.ancestors(node):
        if isinstance(ancestor, ast.Try) and child in ancestor.body and any(map(_catches_missing_api, ancestor.handlers)):
            return True
        child = ancestor
    return False


def _catches_missing_api(handler: ast.ExceptHandler) -> bool:
    """``except ImportError`` / ``AttributeError`` / ``Exception`` or a bare ``except``."""
    caught = handler.type
    names = [caught] if not isinstance(caught, ast.Tuple) else caught.elts
    return caught is None or any(isinstance(n, ast.Name) and n.id in _MISSING_API_ERRORS for n in names)
