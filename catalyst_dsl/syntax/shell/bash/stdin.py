"""Programs that run their input as code (`bash`, `python3 -`, a function of the script
that pipes into one): a value in their input, by redirection or pipe, is code.
"""

from __future__ import annotations

from catalyst_dsl.syntax.shell.programs.interpreters import is_interpreter, shell_code
from catalyst_dsl.syntax.shell.programs.stdin import reads_code_from_stdin
from catalyst_dsl.syntax.shell.programs.words import program_name
from catalyst_dsl.syntax.shell.bash.probe import ScriptProbe
from catalyst_dsl.syntax.shell.bash.tree import walk


class StdinRunners(ScriptProbe):
    """The program that runs a node's input as code, if any."""

    def _stdin_runner(self, node, seen: frozenset = frozenset()) -> str | None:
        """The program that reads `node`'s input as code (`bash`, `python3 -`), or None;
        inside a subshell, a group, a loop or a function of the script's too."""
        if node is None:
            return None
        if node.type == "command":
            name, arguments = self._effective(node)
            argv = [name] + [self._literal(a) for a in arguments]
            if argv[0] in self.functions and argv[0] not in seen:
                return next(
                    (
                        r
                        for r in (self._stdin_runner(body, seen | {argv[0]}) for body in self._function_bodies(argv[0]))
                        if r is not None
                    ),
                    None,
                )
            code = shell_code(argv)
            if code is not None and (argv[code] is None or self._child_code_reads_stdin(argv[code])):
                return f"{argv[0]} -c"  # its code runs its input (`source /dev/stdin`, `bash`, `"$(cat)"`)
            if (
                argv[0] is not None
                and is_interpreter(program_name(argv[0]))
                and any(
                    argv[i] in ("-c", "-e", "-E", "-r", "--eval") and i + 1 < len(argv) and argv[i + 1] is None
                    for i in range(1, len(argv))
                )
            ):
                return argv[0]  # code not written literally (`python3 -c "$(cat)"`)
            return reads_code_from_stdin(argv)
        if node.type in ("command_substitution", "heredoc_body", "string", "raw_string"):
            return None
        for child in node.children:
            if child.is_named and child.type not in ("heredoc_redirect", "herestring_redirect", "file_redirect"):
                found = self._stdin_runner(child, seen)
                if found is not None:
                    return found
        return None

    def _reads_from(self, redirect) -> bool:
        """`< file`, `0< file`: the file is the command's input."""
        operators = [self._text(c) for c in redirect.children if not c.is_named]
        return any(op in ("<", "0<") for op in operators) or (operators[:1] == ["<"])

    def _function_bodies(self, name: str):
        """Every body the script gives the function `name` (it may define it again)."""
        if self.bodies is None:
            self.bodies = {}
            for node in walk(self.root):
                if node.type == "function_definition" and node.child_by_field_name("name") is not None:
                    self.bodies.setdefault(self._text(node.child_by_field_name("name")), []).append(
                        node.child_by_field_name("body")
                    )
        yield from self.bodies.get(name, ())
