"""The allow-list: from a value up to the top of the script, every node it passes through
must be one known to keep it data. A node not named here refuses the value.
"""

from __future__ import annotations

from catalyst_dsl.syntax.shell.programs.code_variables import is_code_variable
from catalyst_dsl.syntax.shell.bash.arithmetic import ARITHMETIC_NODES, ARITHMETIC_TESTS
from catalyst_dsl.syntax.shell.bash.findings import FIX_ARITHMETIC, FIX_CODE, FIX_NAME, fix_for
from catalyst_dsl.syntax.shell.bash.probe import ScriptProbe
from catalyst_dsl.syntax.shell.bash.tree import field_of, has_flag
from catalyst_dsl.syntax.shell.slots import COMMAND_HELP


#: Operators of `${x OP word}` whose word is text or a pattern, never arithmetic or a name.
_WORD_OPERATORS = frozenset(
    {":-", "-", ":=", "=", ":+", "+", ":?", "?", "#", "##", "%", "%%", "/", "//", "/#", "/%", "^", "^^", ",", ",,"}
)
#: Nodes that only hold statements: a reference inside stays where its statement put it.
_CONTAINERS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "redirected_statement",
        "negated_command",
        "do_group",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "function_definition",
        "command_substitution",
        "process_substitution",
        "case_item",
        "case_statement",
        "for_statement",
        "c_style_for_statement",
        "compound_statement",
        "string",
        "translated_string",
        "concatenation",
        "heredoc_body",
        "raw_string",
        "ansi_c_string",
        "herestring_redirect",
        "heredoc_redirect",
        "file_redirect",
    }
)


class AllowList(ScriptProbe):
    """Why the nodes above a value do not keep it data, or None when they all do."""

    def _path(self, node, at: int) -> tuple[str, str] | None:
        """Why the value under `node` (placed at byte `at`) is not data, or None: every node
        from it up to the top of the script must keep it data."""
        child = node
        while child.parent is not None:
            parent = child.parent
            problem = self._step(parent, child, at)
            if problem is not None:
                return problem
            child = parent
        return None

    def _step(self, parent, child, at: int) -> tuple[str, str] | None:
        kind = parent.type
        if kind == "command":
            return self._argument(parent, child)
        if kind == "command_name":
            return "in program position, where it names the program that runs", COMMAND_HELP
        if kind == "variable_assignment":
            return self._assignment(parent, child)
        if kind == "declaration_command":
            return self._declaration(parent, child)
        if kind == "unset_command":
            return "an argument of `unset`, which takes variable names whose [subscript] bash evaluates", FIX_NAME
        if kind in ("subscript", "arithmetic_expansion"):
            return "in an array subscript or arithmetic, which bash evaluates as an expression", FIX_ARITHMETIC
        if kind in ARITHMETIC_NODES:
            return self._expression(parent, child)
        if kind == "test_command":
            return None
        if kind == "expansion":
            return self._parameter(parent, child)
        if kind == "array":
            return self._element(child, at)
        if kind == "compound_statement" and parent.child_count and parent.children[0].type == "((":
            return "in arithmetic `(( ))`, which bash evaluates as an expression", FIX_ARITHMETIC
        if kind == "c_style_for_statement" and child.type not in ("do_group", "compound_statement"):
            return "in the arithmetic of a `for (( ))` loop", FIX_ARITHMETIC
        if (
            kind == "file_redirect"
            and any(self._text(c).endswith(">&") for c in parent.children if not c.is_named)
            and child.type != "file_descriptor"
        ):
            return (
                "the target of `>&`, which bash expands a second time when it is not a number",
                'write `> "$file" 2>&1` instead of `>& "$file"`',
            )
        if kind in ("heredoc_redirect", "file_redirect") and child.type in (
            "heredoc_start",
            "heredoc_end",
            "file_descriptor",
        ):
            return "in a redirection's delimiter or descriptor", "write the delimiter or the descriptor in the script"
        if kind in ("heredoc_redirect", "herestring_redirect") or kind == "file_redirect" and self._reads_from(parent):
            runner = self._stdin_runner(parent.parent)
            if runner is not None:
                return f"in the input of `{runner}`, which runs its input as code", FIX_CODE
            # tree-sitter hangs the rest of the line (`<<E | bash`) under the redirection
            for rest in (c for c in parent.children if c.type == "pipeline"):
                runner = next((r for r in map(self._stdin_runner, (c for c in rest.children if c.is_named)) if r), None)
                if runner is not None:
                    return f"piped into `{runner}`, which runs its input as code", FIX_CODE
        if kind == "pipeline":
            stages = [c for c in parent.children if c.is_named]
            later = stages[next(i for i, c in enumerate(stages) if c.start_byte == child.start_byte) + 1 :]
            runner = next((r for r in map(self._stdin_runner, later) if r is not None), None)
            if runner is not None:
                return f"piped into `{runner}`, which runs its input as code", FIX_CODE
        if kind in _CONTAINERS:
            return None
        return (
            f"inside a bash `{kind}`, where catalyst cannot show that bash reads it as data",
            "move the value into an argument in double quotes, or into a variable first",
        )

    def _argument(self, command, child) -> tuple[str, str] | None:
        key = (command.start_byte, command.end_byte)
        if key not in self._argv_cache:
            arguments = command.children_by_field_name("argument")
            name = command.child_by_field_name("name")
            argv = [self._literal(name)] + [self._literal(a) for a in arguments]
            index_of = {a.start_byte: i for i, a in enumerate(arguments, 1)}
            self._argv_cache[key] = (self._refused_arguments(argv), index_of)
            self._argument_ends[key] = {a.start_byte: a.end_byte for a in arguments}
        refused, index_of = self._argv_cache[key]
        at = index_of.get(child.start_byte)
        if at is None or self._argument_ends[key].get(child.start_byte) != child.end_byte:
            return None  # a prefix assignment (checked on its own) or a redirection
        why = refused.get(at)
        if why is None:
            return None
        return why, fix_for(why)

    def _assignment(self, assignment, child) -> tuple[str, str] | None:
        if field_of(assignment, child) != "value":
            return None
        name_node = assignment.child_by_field_name("name")
        if name_node is None:
            return None
        if name_node.type == "subscript":
            name_node = name_node.child_by_field_name("name") or name_node
        name = self._text(name_node)
        if is_code_variable(name):
            return (
                f"assigned to `{name}`, a variable bash or the programs it starts read as code, a prompt, "
                "arithmetic or a place to load code from",
                "assign the value to a variable of your own and use it as data",
            )
        if name in self.integer_names:
            return f"assigned to `{name}`, declared an integer (-i): bash evaluates it as arithmetic", FIX_ARITHMETIC
        if name in self.namerefs:
            return f"assigned to `{name}`, a name reference (-n): it assigns to the variable it names", FIX_NAME
        return None

    def _declaration(self, declaration, child) -> tuple[str, str] | None:
        keyword = declaration.children[0].type if declaration.child_count else "declare"
        if child.type != "variable_assignment":
            return f"an argument of `{keyword}`, which takes variable names", FIX_NAME
        flags = "".join(self._text(c) for c in declaration.children if c.type == "word" and self._text(c)[:1] in "-+")
        if has_flag(flags, "i"):
            return f"assigned by `{keyword} -i`, which evaluates it as arithmetic", FIX_ARITHMETIC
        if has_flag(flags, "n"):
            return f"assigned by `{keyword} -n`, which makes it the name of a variable", FIX_NAME
        name = child.child_by_field_name("name")
        if has_flag(flags, "a") or has_flag(flags, "A") or (name is not None and self._text(name) in self.array_names):
            return (
                f"assigned by `{keyword}` to an array, where bash reads `(...)` in it as a list whose "
                "`[$(cmd)]=` runs cmd"
            ), "assign to one element instead: arr[0]=..., or use a plain variable"
        return None

    def _expression(self, node, child) -> tuple[str, str] | None:
        """A node of `[[ ]]` or `[ ]` is a test; anywhere else, one of arithmetic."""
        test = node.parent
        while test is not None and test.type in ARITHMETIC_NODES:
            test = test.parent
        if test is None or test.type != "test_command":
            return "in arithmetic, which bash evaluates as an expression", FIX_ARITHMETIC
        double = test.child_count > 0 and test.children[0].type == "[["
        operator = node.child_by_field_name("operator")
        op = self._text(operator) if operator is not None else ""
        if node.type == "unary_expression" and op in ("-v", "-R"):
            return f"the operand of `{op}`, a variable name whose [subscript] bash evaluates as arithmetic", FIX_NAME
        if double and node.type == "binary_expression" and op in ARITHMETIC_TESTS:
            return f"an operand of `[[ {op} ]]`, which bash evaluates as arithmetic", FIX_ARITHMETIC
        return None

    def _parameter(self, expansion, child) -> tuple[str, str] | None:
        """The author's `${x...}` around a value: only its text and pattern operators keep it data."""
        tokens = [c.type for c in expansion.children]
        if "!" in tokens[:2]:
            return "inside an indirection `${!...}`, which reads it as a variable name", FIX_NAME
        operator = None
        for c in expansion.children:
            if c.start_byte >= child.start_byte:
                break
            if field_of(expansion, c) == "operator" or c.type in _WORD_OPERATORS or c.type == ":":
                operator = c.type
        if child.type == "subscript" or operator is None:
            return "in the name or subscript of a `${...}`, which bash reads as a name or arithmetic", FIX_NAME
        if operator not in _WORD_OPERATORS:
            return (
                f"after `{operator}` in a `${{...}}`, where bash evaluates it as arithmetic or an operator",
                FIX_ARITHMETIC,
            )
        if operator in ("=", ":="):
            name = next((c for c in expansion.children if c.type == "variable_name"), None)
            if name is not None and is_code_variable(self._text(name)):
                return (
                    f"assigned to `{self._text(name)}` by `${{...{operator}}}`",
                    "assign the value to a variable of your own",
                )
        return None

    def _element(self, element, at: int) -> tuple[str, str] | None:
        """`( a "b" [3]=c )`: a plain element is data; in `[i]=v` only the value is."""
        if element.type == "concatenation" and element.child_count and self._text(element.children[0]) == "[":
            equals = next(
                (c for c in element.children if self._text(c).startswith("=") or self._text(c).startswith("]=")), None
            )
            if equals is None or at < equals.end_byte:
                return "in an array subscript, which bash evaluates as arithmetic", FIX_ARITHMETIC
        return None
