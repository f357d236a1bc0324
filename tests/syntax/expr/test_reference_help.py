"""The help of C102 (a {{ }} that holds no reference, catalyst_dsl/syntax/expr/parser.py):
the `${{ … }}` it offers is itself an expression that parses, or it offers none."""

from __future__ import annotations

import re

import pytest

from catalyst_dsl.syntax.expr.parser import ExpressionSyntaxError, parse

OFFERED = re.compile(r"for an expression write \$\{\{ (.*) \}\}$")


@pytest.mark.parametrize(
    "body",
    ["first + 1", "a == b", "first == 'one", "max(first,", "f(", "a ? b", "x + + 'y", "a && (b", 'say("hi")'],
)
def test_c102_offers_only_an_expression_that_parses(body):
    with pytest.raises(ExpressionSyntaxError) as refused:
        parse(body, "reference")
    error = refused.value.error
    assert error.code == "C102"
    offered = OFFERED.search(error.help or "")
    if offered is None:
        assert "does not parse as an expression either" in error.help
        with pytest.raises(ExpressionSyntaxError):
            parse(body, "expression")
    else:
        parse(offered.group(1), "expression")  # raises if the fix offered does not parse


def test_an_expression_that_parses_is_offered():
    with pytest.raises(ExpressionSyntaxError) as refused:
        parse("first + 1", "reference")
    assert refused.value.error.help.endswith("for an expression write ${{ first + 1 }}")
