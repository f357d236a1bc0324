"""Where bash evaluates text as arithmetic (`$(( ))`, `(( ))`, subscripts, `let`, `[[ -eq ]]`,
integer variables), and the variable names found in such text.
"""

from __future__ import annotations


from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.syntax.shell.bash.probe import ScriptProbe
from catalyst_dsl.syntax.shell.bash.tree import field_of, quoted_heredoc, walk


#: A variable in arithmetic text: `$1`, `$@`, or a name not after a digit, a name
#: character or `#` (`16#ff` is a number in base 16, `${#x}` a length, `$#` a count).
ARITHMETIC_NAME = LazyPattern(rb"(?<![A-Za-z0-9_#])(?:\$\{?([0-9@*])|\$?\{?([A-Za-z_][A-Za-z0-9_]*))")
#: The comparisons of `[[ ]]` that evaluate both sides as arithmetic.
ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
ARITHMETIC_NODES = frozenset(
    {"binary_expression", "unary_expression", "ternary_expression", "postfix_expression", "parenthesized_expression"}
)
#: Builtins that take variable names (with a subscript, arithmetic).
_NAMING = frozenset(
    {
        "unset",
        "test",
        "[",
        "printf",
        "read",
        "declare",
        "local",
        "typeset",
        "export",
        "readonly",
        "mapfile",
        "readarray",
        "wait",
        "getopts",
    }
)


class Arithmetic(ScriptProbe):
    """The regions of the script whose text bash evaluates as arithmetic."""

    def _arithmetic(self, root):
        """The nodes whose text bash evaluates as arithmetic."""
        for node in walk(root):
            kind = node.type
            if (
                kind == "arithmetic_expansion"
                or kind == "compound_statement"
                and node.child_count
                and node.children[0].type == "(("
            ):
                yield node
            elif kind == "c_style_for_statement":
                yield from (c for c in node.children if c.type not in ("do_group", "compound_statement"))
            elif kind == "subscript":
                index = node.child_by_field_name("index")
                name = node.child_by_field_name("name")
                if index is not None:
                    yield index  # (also for `declare -A`: a function's local or an unset array is indexed again)
            elif kind == "expansion" and any(c.type == ":" for c in node.children):
                at = next(i for i, c in enumerate(node.children) if c.type == ":")
                yield from node.children[at + 1 : -1]
            elif kind == "command" and self._effective(node)[0] == "let":
                yield from self._effective(node)[1]
            elif kind == "array":
                # `([x]=1)`: the index of an element is arithmetic
                yield from (c for c in node.children if c.type == "concatenation" and self._text(c).startswith("["))
            elif kind in ("unset_command", "test_command", "declaration_command"):
                # a name with a [subscript] (`unset 'a[x]'`, `[[ -v a[x] ]]`, `declare 'a[x]=1'`)
                for child in walk(node):
                    if (
                        self._subscripted_name(child)
                        and child.parent is not None
                        and child.parent.type
                        in ("unset_command", "test_command", "unary_expression", "declaration_command")
                    ):
                        self.named_regions.add((child.start_byte, child.end_byte))
                        yield child
            elif kind == "command" and self._effective(node)[0] in _NAMING:
                for argument in self._effective(node)[1]:
                    if self._subscripted_name(argument):
                        self.named_regions.add((argument.start_byte, argument.end_byte))
                        yield argument
            elif kind == "binary_expression" and self._in_double_brackets(node):
                operator = node.child_by_field_name("operator")
                if operator is not None and self._text(operator) in ARITHMETIC_TESTS:
                    yield from (c for c in node.children if c.start_byte != operator.start_byte)
            elif (
                kind == "variable_assignment"
                and node.child_by_field_name("name") is not None
                and self._text(node.child_by_field_name("name")) in self.namerefs
            ):
                # `declare -n r='a[n]'`: each use of r evaluates the subscript
                yield from (c for c in node.children if field_of(node, c) == "value")
            elif kind == "variable_assignment":
                name = node.child_by_field_name("name")
                if name is not None and self._text(name) in self.integer_names:
                    yield from (c for c in node.children if field_of(node, c) == "value")
            elif (
                kind == "heredoc_body"
                and not quoted_heredoc(node, self._text)
                and (b"$((" in self._bytes(node) or b"$[" in self._bytes(node))
            ):
                yield node

    def _in_double_brackets(self, node) -> bool:
        test = node.parent
        while test is not None and test.type in (*ARITHMETIC_NODES, "negated_command"):
            test = test.parent
        return test is not None and test.type == "test_command" and test.children[0].type == "[["

    def _subscripted_name(self, node) -> bool:
        """A word written as text that holds a `[`: a name with a subscript."""
        if node.type not in ("word", "raw_string", "string", "concatenation") or b"[" not in self._bytes(node):
            return False
        return not any(c.type in ("expansion", "simple_expansion", "command_substitution") for c in walk(node))

    def _names_in(self, node, holes, pattern):
        """(name, start, end) of each variable `pattern` finds in the text of `node`,
        leaving out the values' own references."""
        base = node.start_byte
        for match in pattern.finditer(self._bytes(node)):
            group = 1 if match.group(1) is not None else 2
            start = base + match.start(group)
            if self._hole_at(start):
                continue
            yield match.group(group).decode(), start, base + match.end(group)
