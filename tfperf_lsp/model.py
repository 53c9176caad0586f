"""The vocabulary every layer shares: positions, findings, fixes.

Positions are 0-based lines and 0-based columns counted in code points of the line's text (what
Python's ``str`` indexes). The LSP layer converts to the client's encoding (UTF-16 by default);
the CLI prints 1-based rows and columns.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"


CATEGORIES = (
    "retrace",
    "correctness",
    "graph",
    "vectorize",
    "xla",
    "precision",
    "input-pipeline",
    "keras",
    "suppressions",  # opt-in: tfperf's own suppression comments
)
# Categories about speed: silent where speed does not matter (tests, run-once code).
PERFORMANCE_CATEGORIES = frozenset({"retrace", "graph", "vectorize", "xla", "precision", "input-pipeline", "keras"})
# Categories whose advice assumes eager execution, op by op: wrong in TensorFlow 1 graph code.
EAGER_ADVICE_CATEGORIES = frozenset({"retrace", "graph", "vectorize"})
# Categories whose advice names TensorFlow 2 APIs (``steps_per_execution``, ``jit_compile``,
# ``keras.mixed_precision``, a model called directly for ``.numpy()``, ``tf.function`` where
# TensorFlow 1's eager mode had ``tf.contrib.eager.defun``): wrong in code written for
# TensorFlow 1, eager or not.
TF2_API_ADVICE_CATEGORIES = frozenset({"xla", "precision", "keras", "graph"})


@dataclass(frozen=True, order=True)
class Pos:
    line: int
    col: int


@dataclass(frozen=True, order=True)
class Span:
    start: Pos
    end: Pos

    @staticmethod
    def of(line: int, col: int, end_line: int, end_col: int) -> "Span":
        return Span(Pos(line, col), Pos(end_line, end_col))

    def shifted(self, delta_lines: int) -> "Span":
        return Span(
            Pos(self.start.line + delta_lines, self.start.col),
            Pos(self.end.line + delta_lines, self.end.col),
        )

    def contains_line(self, line: int) -> bool:
        return self.start.line <= line <= self.end.line


@dataclass(frozen=True)
class Edit:
    """Replace the text in ``span`` with ``new_text``."""

    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    # "safe": keeps the program's results (``tfperf check --fix`` applies it).
    # "unsafe": changes behaviour the user may rely on (printing, results within tolerance, ...);
    # offered in the editor and by ``--unsafe-fixes`` only.
    applicability: str = "safe"


@dataclass
class Finding:
    code: str
    category: str
    severity: Severity
    message: str
    span: Span
    # Short label shown at the end of the line in editors that display inlay hints.
    label: str = ""
    # Title of the fix the rule can build for this finding, or None when no fix is safe here.
    # The edits are built only when asked for (``build_fix`` below): they need LibCST.
    fix_title: str | None = None
    fix_applicability: str = "safe"
    # Builds the fix's edits when asked (engine.fix_for): written by the rule where it reports the
    # finding, with the syntax nodes in scope. Not compared, not printed, not pickled (a result
    # sent between processes or cached carries its fixes already built: checker.detach).
    build_fix: Callable[[], "Fix | None"] | None = field(default=None, compare=False, repr=False)
    # 1-based lines of the analysed text that the message and label name as "line N": a notebook
    # names them by cell instead (``Notebook.cited``).
    cited_lines: tuple[int, ...] = ()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["build_fix"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    @property
    def id(self) -> str:
        return f"{self.code}@{self.span.start.line}:{self.span.start.col}"
