"""The author's own uses of a variable that may hold a value, where bash or a program
would read its text: program position, `eval`, `${!x}`, `${x@P}`, arithmetic, names
given to builtins, `bash -c` code, `make`'s environment, options that run programs.
"""

from __future__ import annotations


from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.syntax.shell.programs.code_variables import is_code_variable
from catalyst_dsl.syntax.shell.programs.interpreters import shell_code
from catalyst_dsl.syntax.shell.programs.options import option_program
from catalyst_dsl.syntax.shell.programs.refusals import refused_arguments
from catalyst_dsl.syntax.shell.programs.words import UNKNOWN, program_name
from catalyst_dsl.syntax.shell.bash.arithmetic import ARITHMETIC_NAME
from catalyst_dsl.syntax.shell.bash.facts import DATA_VARIABLES, READERS
from catalyst_dsl.syntax.shell.bash.findings import FIX_ARITHMETIC, FIX_CODE, FIX_NAME, Finding
from catalyst_dsl.syntax.shell.bash.probe import ScriptProbe
from catalyst_dsl.syntax.shell.bash.tree import array_keys, field_of, walk
from catalyst_dsl.syntax.shell.slots import Context


#: A name glued to an expansion in arithmetic (`val_$i`, `${p}_x`): it names a variable
#: that is known only when the script runs.
_BUILT_NAME = LazyPattern(rb"[A-Za-z_][A-Za-z0-9_]*\$|[}A-Za-z0-9_]\$\{?[A-Za-z_]|\}[A-Za-z_]")


class Uses(ScriptProbe):
    """The Findings for uses of a value beyond where each placeholder stands."""

    def _uses(self, root, holes: set[tuple[int, int]]):
        """The author's own uses of a variable that may hold a value, where bash would read
        its text: `$x` in program position, an argument of `eval`, `${!x}`, `${x@P}`, and
        any name in arithmetic (`(( x ))`, `a[x]`, `${s:x}`, `let`, `[[ x -eq 1 ]]`)."""
        for node in walk(root):
            if (node.start_byte, node.end_byte) in holes or not self._is_value_use(node):
                continue
            tokens = [c.type for c in node.children]
            if node.type == "expansion" and "!" in tokens[:2] and not array_keys(node, self._text):
                problem = "an indirection `${!...}`, which reads it as a variable name", FIX_NAME
            elif node.type == "expansion" and "P" in tokens:
                problem = "a prompt expansion `${x@P}`, which runs the command substitutions in it", FIX_CODE
            else:
                problem = self._path(node, node.start_byte)
                if problem is None and self._split_into_options(node):
                    problem = (
                        "unquoted, so it is split into words of which one may be an option that runs a program",
                        'quote it: "$x"',
                    )
            if problem is not None:
                start, end = self._template_span(node.start_byte, node.end_byte)
                yield Finding(
                    Context.UNSAFE,
                    start,
                    end,
                    f"a value may reach this use of `{self._text(node)}`, which is " + problem[0],
                    problem[1],
                )
        for name, sources, node in self.sites:
            special = (
                "an integer (-i), so bash evaluates what it is given as arithmetic"
                if name in self.integer_names
                else "a name reference (-n), so it assigns to the variable it names"
                if name in self.namerefs
                else "a variable bash or programs read as code"
                if is_code_variable(name)
                else None
            )
            if (
                special is None
                or node.type == "variable_assignment"
                or (sources is not None and all(map(self._clean_source, sources)))
            ):
                continue  # plain assignments are checked where the value stands (`_assignment`)
            start, end = self._template_span(node.start_byte, node.end_byte)
            yield Finding(
                Context.UNSAFE,
                start,
                end,
                f"a value may be assigned here to `{name}`, {special}",
                "assign it to a variable of your own",
            )
        for name in sorted(self.integer_names & DATA_VARIABLES):
            node = self.declared_at.get(name, root)
            start, end = self._template_span(node.start_byte, node.end_byte)
            yield Finding(
                Context.UNSAFE,
                start,
                max(end, start + 1),
                f"`{name}` is made an integer (-i), and bash fills "
                "it with data it reads, which it then evaluates as arithmetic",
                "read into a variable of your own",
            )
        for region in self._arithmetic(root):
            built = _BUILT_NAME.search(self._bytes(region))
            if built is not None:
                start, end = self._template_span(region.start_byte + built.start(), region.start_byte + built.end())
                yield Finding(
                    Context.UNSAFE,
                    start,
                    end,
                    "a variable name built from pieces in arithmetic, which bash "
                    "evaluates: the name it makes may hold a value",
                    FIX_ARITHMETIC,
                )
                continue
            named = (region.start_byte, region.end_byte) in self.named_regions
            for name, start, end in self._names_in(region, holes, ARITHMETIC_NAME):
                if named and self.probe[end : end + 1] == b"[":
                    continue  # `a[x]` given as a name: `a` is the array, `x` the arithmetic
                if not self._number(name):
                    start, end = self._template_span(start, end)
                    yield Finding(
                        Context.UNSAFE,
                        start,
                        end,
                        f"`{name}` may hold a value, and bash evaluates its text "
                        "here as arithmetic, where `a[$(cmd)]` runs cmd",
                        FIX_ARITHMETIC,
                    )
        for node in walk(root):
            if node.type == "command":
                yield from self._command_uses(node, holes)
        for node in walk(root):
            # Code written as text (`eval 'echo $x'`, `trap '...' EXIT`): a variable named in
            # it is expanded when the code runs.
            if node.type == "command" and self._effective(node)[0] in ("eval", "trap", "alias"):
                for argument in self._effective(node)[1]:
                    found = next(
                        (f for f in self._names_in(argument, holes, ARITHMETIC_NAME) if self._holds_value(f[0])), None
                    )
                    if found is not None:
                        start, end = self._template_span(found[1], found[2])
                        yield Finding(
                            Context.UNSAFE,
                            start,
                            end,
                            f"`{found[0]}` may hold a value, and this is code bash runs",
                            FIX_CODE,
                        )

    def _command_uses(self, command, holes):
        """What a command does with text that may hold a value, beyond where each piece stands:
        a variable name chosen when the script runs (`read "$n"`), `bash -c` code that uses a
        variable this script gave a value to (exported, or `N=... bash -c`), and an argument
        that may start with `-` given to a program whose options run programs."""
        name, arguments = self._effective(command)
        words = [self._literal(a) for a in arguments]
        if name in READERS or name in ("declare", "typeset", "local", "export", "readonly", "unset"):
            for at in refused_arguments([name, *words]):
                argument = arguments[at - 1] if at - 1 < len(arguments) else None
                if argument is not None and words[at - 1] is None and not self._holds_hole(argument, holes):
                    yield self._use(
                        argument, f"a variable name chosen when the script runs, given to `{name}`", FIX_NAME
                    )
        code = shell_code([name, *words]) if name is not None else None
        if code is not None and words[code - 1] is not None:
            # what the child may get with a value: the parent's variables, and `env N=...`
            given = {w.split("=", 1)[0] for w in words[: code - 1] if w and UNKNOWN in w and "=" in w}
            inherited = frozenset(n for n in self.assigned | DATA_VARIABLES if self._holds_value(n)) | given
            found = self._child_code_problem(words[code - 1], inherited)
            if found:
                yield self._use(arguments[code - 1], f"code that uses a variable holding a value ({found})", FIX_CODE)
        if name is not None and program_name(name) in ("make", "gmake", "bmake"):
            given = [
                c
                for c in command.children
                if c.type == "variable_assignment"
                and not all(self._clean_source(v) for v in c.children if field_of(c, v) == "value")
            ]
            exported = sorted(n for n in self.exported if self._holds_value(n))
            if given or exported:
                yield self._use(
                    given[0] if given else command,
                    f"in the environment of `make`, which expands "
                    f"`$({(exported or ['NAME'])[0] if not given else self._text(given[0]).split('=')[0]})` "
                    "in recipes as text that may call `$(shell ...)`",
                    "pass the value to make in a file it reads, or check it first",
                )
        argv = [name, *words]
        for at, argument in enumerate(arguments, 1):
            if words[at - 1] is not None or option_program(argv, at) is None:
                continue
            first = self._first_piece(argument)
            if first is None or (first.start_byte, first.end_byte) in holes:
                continue  # a literal start, or the value itself: a run checks it
            if (
                self._holds_hole(first, holes)
                or self._is_value_use(first)
                or first.type in ("command_substitution",)
                or (first.type == "word" and self._holds_hole(argument, holes))
            ):
                yield self._use(
                    argument,
                    f"an argument of `{option_program(argv, at)}` that may start with "
                    "`-` and be read as an option that runs a program",
                    "write `--` before it (git: `--end-of-options`), or start the word with text of your own",
                )

    def _use(self, node, problem: str, help: str) -> Finding:
        start, end = self._template_span(node.start_byte, node.end_byte)
        return Finding(Context.UNSAFE, start, end, problem, help)

    def _split_into_options(self, node) -> bool:
        """An unquoted `$x` given to a program some of whose options run programs (`find`,
        `xargs`, `git`, `tar`...): split into words, one may be `-exec`."""
        parent = node.parent
        if parent is not None and parent.type == "concatenation":
            parent = parent.parent
        if parent is None or parent.type != "command":
            return False
        name, arguments = self._effective(parent)
        argv = [name] + [self._literal(a) for a in arguments]
        at = next((i for i, a in enumerate(arguments, 1) if a.start_byte <= node.start_byte < a.end_byte), None)
        return at is not None and option_program(argv, at) is not None
