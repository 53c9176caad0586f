"""LibCST on one statement at a time: structural rewrites that keep comments and formatting.

Parsing a whole 2,000-line module with LibCST and position metadata takes most of a second, so a
fix parses only the lines of the statement it changes (dedented), finds the CST node at the same
position as the ``ast`` node the rule reported, replaces it, and re-indents the result.
"""
from __future__ import annotations

import ast
from typing import Callable

from tfperf_lsp.rewrite.lazy import libcst as cst  # imported on first use: fixes only
from tfperf_lsp.rewrite.lazy import metadata

from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.model import Edit
from tfperf_lsp.rewrite.edits import whole_lines


class StatementRewrite:
    """A statement's source parsed with LibCST, with a way back to ``ast`` positions."""

    def __init__(self, source: SourceText, stmt: ast.stmt):
        decorators = getattr(stmt, "decorator_list", None) or []
        self.first = min([stmt.lineno] + [d.lineno for d in decorators]) - 1
        self.last = stmt.end_lineno - 1
        self.source = source
        self.indent = source.indent_of(self.first)
        lines = source.lines[self.first : self.last + 1]
        if any(line.strip() and not line.startswith(self.indent) for line in lines):
            raise ValueError("statement lines are not uniformly indented")
        self.text = "\n".join(line[len(self.indent) :] for line in lines) + "\n"
        self.wrapper = metadata.MetadataWrapper(cst.parse_module(self.text), unsafe_skip_copy=True)
        self.module = self.wrapper.module
        self.positions = self.wrapper.resolve(metadata.PositionProvider)

    def node_at(self, node: ast.AST, kind: type | tuple | None = None) -> cst.CSTNode | None:
        """The CST node of type ``kind`` (any node by default) spanning exactly the ``ast`` node."""
        kind = kind or cst.CSTNode
        span = self.source.span(node)
        want = (
            span.start.line - self.first + 1,
            span.start.col - len(self.indent),
            span.end.line - self.first + 1,
            span.end.col - len(self.indent),
        )
        for candidate, position in self.positions.items():
            if not isinstance(candidate, kind):
                continue
            got = (position.start.line, position.start.column, position.end.line, position.end.column)
            if got == want:
                return candidate
        return None

    def edit(self, new_module: cst.Module) -> Edit | None:
        if new_module.deep_equals(self.module):
            return None
        new_text = new_module.code.rstrip("\n")
        indented = "\n".join(self.indent + line if line.strip() else line for line in new_text.split("\n"))
        return Edit(whole_lines(self.source, self.first, self.last), indented)


def replace_in_statement(
    source: SourceText,
    stmt: ast.stmt,
    target: ast.AST,
    kind: type | tuple,
    change: Callable[[cst.CSTNode], cst.CSTNode],
) -> Edit | None:
    """Replace the CST node at ``target``'s position inside ``stmt`` by ``change(node)``."""
    try:
        rewrite = StatementRewrite(source, stmt)
    except (ValueError, cst.ParserSyntaxError):
        return None
    node = rewrite.node_at(target, kind)
    if node is None:
        return None
    return rewrite.edit(rewrite.module.deep_replace(node, change(node)))


def with_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    """``call`` with keyword ``name=value`` added (or its value replaced), in the call's layout:
    one argument per line stays one per line, and comments stay on the line they were on."""
    new_value = cst.parse_expression(value)
    args = list(call.args)
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == name:
            args[index] = arg.with_changes(value=new_value)
            return call.with_changes(args=args)
    new_arg = cst.Arg(
        keyword=cst.Name(name),
        value=new_value,
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    if not args:
        return call.with_changes(args=[new_arg])
    last = args[-1]
    between = _between_arguments(call)
    if isinstance(last.comma, cst.Comma):  # a trailing comma
        after = last.comma.whitespace_after
        if isinstance(after, cst.ParenthesizedWhitespace):
            args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=after.with_changes(last_line=between)))
            new_arg = new_arg.with_changes(comma=cst.Comma(whitespace_after=_line_end(after)))
        else:
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            new_arg = new_arg.with_changes(comma=last.comma)
        return call.with_changes(args=args + [new_arg])
    after = last.whitespace_after_arg
    if isinstance(after, cst.ParenthesizedWhitespace):  # `b  # note` then `)` on its own line
        args[-1] = last.with_changes(
            whitespace_after_arg=cst.SimpleWhitespace(""),
            comma=cst.Comma(whitespace_after=after.with_changes(last_line=between)),
        )
        new_arg = new_arg.with_changes(whitespace_after_arg=_line_end(after))
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=args + [new_arg])


def _between_arguments(call: cst.Call) -> cst.SimpleWhitespace:
    """The indentation that starts an argument line in this call."""
    candidates = [call.whitespace_before_args] + [
        a.comma.whitespace_after for a in call.args[:-1] if isinstance(a.comma, cst.Comma)
    ]
    for whitespace in reversed(candidates):
        if isinstance(whitespace, cst.ParenthesizedWhitespace):
            return whitespace.last_line
    return cst.SimpleWhitespace("    ")


def _line_end(whitespace: cst.ParenthesizedWhitespace) -> cst.ParenthesizedWhitespace:
    """The same line break, without the comment that belonged to the previous line."""
    return whitespace.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])


def rename_keyword(call: cst.Call, old: str, new: str) -> cst.Call:
    args = [
        arg.with_changes(keyword=cst.Name(new)) if arg.keyword is not None and arg.keyword.value == old else arg
        for arg in call.args
    ]
    return call.with_changes(args=args)
