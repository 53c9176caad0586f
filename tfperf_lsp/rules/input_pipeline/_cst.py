"""``add_keyword``: rewrite/cst.py's ``with_keyword`` plus the one-argument-per-line layout.

For a call written one argument per line with a trailing comma (and maybe a comment after it),
the shared helper appends the new argument at column 0 and copies the comment onto its line.
This version puts the new argument on its own line, at the other arguments' indentation, and
leaves the comment where it was. (Reported to the lead; the shared helper is not ours to edit.)
"""
from __future__ import annotations

import libcst as cst

from tfperf_lsp.rewrite.cst import with_keyword


def add_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    args = list(call.args)
    if any(a.keyword is not None and a.keyword.value == name for a in args) or not args:
        return with_keyword(call, name, value)
    last = args[-1]
    comma = last.comma
    opening = call.whitespace_before_args
    if not (isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)
            and isinstance(opening, cst.ParenthesizedWhitespace)):
        return with_keyword(call, name, value)
    closing = comma.whitespace_after  # the comment after the last argument, then ")"'s indentation
    args[-1] = last.with_changes(comma=comma.with_changes(whitespace_after=closing.with_changes(last_line=opening.last_line)))
    new_arg = cst.Arg(
        keyword=cst.Name(name),
        value=cst.parse_expression(value),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
        comma=cst.Comma(whitespace_after=closing.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])),
    )
    return call.with_changes(args=args + [new_arg])
