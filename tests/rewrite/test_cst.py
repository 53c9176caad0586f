"""Structural edits keep the user's layout and comments."""
import ast
import textwrap

import libcst as cst
import pytest

from tfperf_lsp.analysis.source import SourceText
from tfperf_lsp.rewrite.cst import rename_keyword, replace_in_statement, with_keyword
from tfperf_lsp.rewrite.edits import apply_edits


@pytest.mark.parametrize(
    "before,after",
    [
        ("f(a, b)", "f(a, b, k=True)"),
        ("f()", "f(k=True)"),
        ("f(a, b,)", "f(a, b, k=True,)"),
        ("f(a, k=False)", "f(a, k=True)"),
        ("f(\n    a,\n    b,  # note\n)", "f(\n    a,\n    b,  # note\n    k=True,\n)"),
        ("f(\n    a,\n    b  # note\n)", "f(\n    a,\n    b,  # note\n    k=True\n)"),
    ],
)
def test_with_keyword_keeps_layout(before, after):
    result = cst.Module([]).code_for_node(with_keyword(cst.parse_expression(before), "k", "True"))
    assert result == after
    ast.parse(result)


def test_rename_keyword():
    call = cst.parse_expression("tf.function(f, experimental_compile=True)")
    assert cst.Module([]).code_for_node(rename_keyword(call, "experimental_compile", "jit_compile")) == "tf.function(f, jit_compile=True)"


def test_replace_in_statement_edits_only_that_statement_and_keeps_comments():
    code = textwrap.dedent(
        """\
        def outer():
            # the step
            step = tf.function(  # made once
                train,
            )
            return step
        """
    )
    source = SourceText(code)
    tree = ast.parse(code)
    stmt = tree.body[0].body[0]
    edit = replace_in_statement(source, stmt, stmt.value, cst.Call, lambda c: with_keyword(c, "jit_compile", "True"))
    fixed = apply_edits(code, [edit])
    assert fixed == code.replace("        train,\n", "        train,\n        jit_compile=True,\n")
