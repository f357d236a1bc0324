"""Reading tree-sitter's bash tree: the parser, the walk, and small questions about a
node that need nothing of the analysis but the node (and, for some, the script's text).
"""

from __future__ import annotations

import functools

from catalyst_dsl.syntax.shell.slots import Context


@functools.cache
def bash_parser():
    # tree-sitter loads only when a script holds a value: a what-if of plain scripts and
    # every other command never pay for it.
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


#: How deep a script may nest: following a value to the top costs the depth at each level
#: (a node's parent is found from the root), so the bound keeps the analysis linear.
MAX_DEPTH = 64


def nesting_depth(root) -> int:
    """The deepest nesting of the tree, in one walk."""
    deepest, stack = 0, [(root, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((c, depth + 1) for c in node.children)
    return deepest


def walk(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def field_of(parent, child) -> str | None:
    for i, c in enumerate(parent.children):
        if c.start_byte == child.start_byte and c.end_byte == child.end_byte and c.type == child.type:
            return parent.field_name_for_child(i)
    return None


def enclosing(node, kind: str):
    while node is not None and node.type != kind:
        node = node.parent
    return node


def expanded_name(node):
    """The variable node of `$x`, `${x...}`, `${a[i]}` (its array's name), or None."""
    name = next((c for c in node.children if c.type in ("variable_name", "special_variable_name", "subscript")), None)
    if name is not None and name.type == "subscript":
        name = name.child_by_field_name("name")
    return name


def array_keys(node, text) -> bool:
    """`${!a[@]}`: the keys of an array, not an indirection."""
    subscript = next((c for c in node.children if c.type == "subscript"), None)
    index = subscript.child_by_field_name("index") if subscript is not None else None
    return index is not None and text(index) in ("@", "*")


def is_length(node) -> bool:
    """`${#x}`: a number whatever x holds."""
    return node.type == "expansion" and node.child_count > 1 and node.children[1].type == "#"


def has_flag(word: str, letter: str) -> bool:
    return word[:1] in "-+" and not word.startswith("--") and letter in word[1:]


def quoting(expansion) -> Context:
    """How a reference is written where the placeholder stood: bare inside double quotes
    or an unquoted here-document, in double quotes of its own anywhere else."""
    node = expansion.parent
    while node is not None and node.type in ("expansion", "concatenation"):
        node = node.parent
    if node is not None and node.type in ("string", "translated_string"):
        return Context.DOUBLE
    if node is not None and node.type == "heredoc_body":
        return Context.HEREDOC
    return Context.WORD


def quoted_heredoc(body, text) -> bool:
    start = next((c for c in body.parent.children if c.type == "heredoc_start"), None) if body.parent else None
    return start is not None and any(q in text(start) for q in "'\"\\")


def escaped(probe: bytes, at: int) -> bool:
    backslashes = 0
    while at - backslashes - 1 >= 0 and probe[at - backslashes - 1] == ord("\\"):
        backslashes += 1
    return backslashes % 2 == 1
