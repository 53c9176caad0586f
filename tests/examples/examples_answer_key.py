"""Parser for the answer-key comments in examples/*.py (no TensorFlow needed).

Format (one comment per line; several comment lines may stack above the same code line):

    # expect: ID[, ID...] [- note]        tfperf must report each ID on the target line
    # expect-gpu: ID[, ID...] [- note]    ... only when the target device is a GPU
                                          (compute capability >= 7.0); nothing on a CPU
    # expect-not-cpu: ID[, ID...] [- note] ... on a GPU or an unknown device; nothing on a
                                          known CPU (XLA hints: XLA rarely paid off there)
    # expect-none: ID[, ID...] - why      tfperf must NOT report these IDs on the target line
                                          (a false-positive trap)

The target line is the first line below the comment block that is neither blank nor a comment.
The block must touch its target (no blank line in between). Rows are 1-based, like the
`file:row:col: CODE [category] message` lines of `tfperf check`.

For a function-level finding on a decorated function the target is the first decorator line;
a checker should accept a finding reported anywhere from that decorator to the `def` line
(`Expectation.span`).

IDs are the catalog ids (/work/shared/reference/tf-perf-catalog.md) plus G1, this repository's
name for the catalog's un-numbered graph-mode opportunity ("eager model call / eager train step /
costly eager function in a hot loop"; an eager GradientTape train step is K3).

Lines without a comment carry no claim.

Usage:
    from examples_answer_key import parse_file, parse_dir
    for e in parse_dir("examples"):
        print(e.path, e.row, e.kind, e.ids)
"""
from __future__ import annotations

import dataclasses
import pathlib
import re
from typing import Iterable, List, Tuple

KNOWN_IDS = frozenset(
    [f"R{i}" for i in range(1, 9)]
    + [f"C{i}" for i in range(1, 4)]
    + [f"V{i}" for i in range(1, 6)]
    + [f"X{i}" for i in range(1, 5)]
    + [f"P{i}" for i in range(1, 6)]
    + [f"D{i}" for i in range(1, 6)]
    + [f"K{i}" for i in range(1, 6)]
    + ["G1"]
)
KINDS = ("expect", "expect-gpu", "expect-not-cpu", "expect-none")

_COMMENT_RE = re.compile(r"^\s*#\s*(expect(?:-gpu|-not-cpu|-none)?)\s*:\s*(.*)$")
_ID_RE = re.compile(r"^[A-Z][0-9]$")


class AnswerKeyError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class Expectation:
    path: str            # as given (str of the file path)
    row: int             # 1-based target row
    kind: str            # "expect" | "expect-gpu" | "expect-not-cpu" | "expect-none"
    ids: Tuple[str, ...]
    note: str
    comment_row: int     # 1-based row of the comment itself
    span: Tuple[int, int]  # rows a finding may be reported on (decorators .. def)
    code: str            # the stripped target line


def _split_ids(text: str) -> Tuple[Tuple[str, ...], str]:
    head, sep, note = text.partition(" - ")
    tokens = [t for t in re.split(r"[,\s]+", head.strip()) if t]
    if not sep and not all(_ID_RE.match(t) for t in tokens):
        # no " - " separator: the ids are the leading tokens, the rest is a note
        ids = []
        for i, t in enumerate(tokens):
            if _ID_RE.match(t):
                ids.append(t)
            else:
                return tuple(ids), " ".join(tokens[i:])
        return tuple(ids), ""
    return tuple(tokens), note.strip()


def parse_file(path) -> List[Expectation]:
    path = pathlib.Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    out: List[Expectation] = []
    pending: List[Tuple[int, str, str]] = []
    for idx, line in enumerate(lines):
        row = idx + 1
        m = _COMMENT_RE.match(line)
        if m:
            pending.append((row, m.group(1), m.group(2)))
            continue
        stripped = line.strip()
        if stripped.startswith("#"):
            if pending:
                # another comment inside the block is allowed; the block still needs its target
                continue
            continue
        if not stripped:
            if pending:
                raise AnswerKeyError(f"{path}:{pending[0][0]}: answer-key comment followed by a blank line")
            continue
        if pending:
            span_end = row
            if stripped.startswith("@"):
                # find the def/class line the decorator belongs to
                for j in range(idx + 1, len(lines)):
                    s = lines[j].strip()
                    if s.startswith(("def ", "async def ", "class ")):
                        span_end = j + 1
                        break
            for comment_row, kind, text in pending:
                ids, note = _split_ids(text)
                if not ids:
                    raise AnswerKeyError(f"{path}:{comment_row}: no catalog id in '{text}'")
                unknown = [i for i in ids if i not in KNOWN_IDS]
                if unknown:
                    raise AnswerKeyError(f"{path}:{comment_row}: unknown id(s) {unknown}")
                if kind == "expect-none" and not note:
                    raise AnswerKeyError(f"{path}:{comment_row}: expect-none needs a reason after ' - '")
                out.append(Expectation(str(path), row, kind, ids, note, comment_row,
                                       (row, span_end), stripped))
            pending = []
    if pending:
        raise AnswerKeyError(f"{path}:{pending[0][0]}: answer-key comment at end of file")
    return out


def parse_dir(directory) -> List[Expectation]:
    result: List[Expectation] = []
    for p in sorted(pathlib.Path(directory).glob("*.py")):
        result.extend(parse_file(p))
    return result


def ids_by_kind(expectations: Iterable[Expectation], kind: str) -> set:
    return {i for e in expectations if e.kind == kind for i in e.ids}


if __name__ == "__main__":  # print the answer key
    import sys

    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2] / "examples")
    for e in parse_dir(root):
        print(f"{pathlib.Path(e.path).name}:{e.row}: {e.kind}: {', '.join(e.ids)}"
              + (f"  ({e.note})" if e.note else ""))
