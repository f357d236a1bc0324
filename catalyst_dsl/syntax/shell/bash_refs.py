"""Values in bash scripts by reference: each placeholder becomes `"${CATALYST_V_n}"` and its
value travels in the environment, so bash never reads a value as script text.

Escaping a value for the place it stands needs a table that follows bash's grammar case
by case, and the grammar outgrows any table. A reference needs no escaping: bash expands
`${NAME}` to the variable's text and does not read that text again as code, in every
quoting context. What remains are the places where bash, or the program receiving the
value, *does* read it again: arithmetic (`$(( ))`, `(( ))`, subscripts, `[[ -eq ]]`,
`declare -i`), variable names (`unset`, `read`, `printf -v`, `test -v`, `${!x}`), the
program position (also behind `exec`, `sudo`, `xargs`, `find -exec`...), code arguments
(`eval`, `bash -c`, `trap`, `alias`) and the variables bash or programs run as code
(`PS4`, `BASH_ENV`, `LD_PRELOAD`, `GIT_SSH_COMMAND`...).

The script is parsed with tree-sitter's bash grammar (maintained with bash's own test
cases; docs/decisions.md says why not our own lexer). The check is an allow-list: from
each reference up to the top of the script, every node it passes through must be one
this module knows to keep it data; any other node, a parse error, or a here-document
whose delimiter is not a plain word refuses the value. The value is followed through
the variables the script assigns it to, so `x={{v}}; (( x ))` is refused at `(( x ))`.
"""

from __future__ import annotations

import functools
import re

from catalyst_dsl.records import record
from catalyst_dsl.syntax.shell import programs
from catalyst_dsl.syntax.shell.slots import COMMAND_HELP, Context

#: The environment variable that carries the value of placeholder `n`.
REFERENCE = "CATALYST_V_{}"
_REFERENCE_NAME = re.compile(r"CATALYST_V_[0-9]+")

#: A here-document delimiter bash and tree-sitter read alike: a plain word, maybe quoted.
_PLAIN_DELIMITER = re.compile(r"\\?[A-Za-z0-9_.-]+|'[A-Za-z0-9_.-]+'|\"[A-Za-z0-9_.-]+\"")

#: The comparisons of `[[ ]]` that evaluate both sides as arithmetic.
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
#: Operators of `${x OP word}` whose word is text or a pattern, never arithmetic or a name.
_WORD_OPERATORS = frozenset({":-", "-", ":=", "=", ":+", "+", ":?", "?", "#", "##", "%", "%%", "/", "//", "/#", "/%",
                             "^", "^^", ",", ",,"})
#: Nodes that only hold statements: a reference inside stays where its statement put it.
_CONTAINERS = frozenset({
    "program", "list", "pipeline", "subshell", "redirected_statement", "negated_command", "do_group",
    "if_statement", "elif_clause", "else_clause", "while_statement", "function_definition",
    "command_substitution", "process_substitution", "case_item", "case_statement", "for_statement",
    "c_style_for_statement", "compound_statement", "string", "translated_string", "concatenation",
    "heredoc_body", "raw_string", "ansi_c_string", "herestring_redirect", "heredoc_redirect", "file_redirect",
})
_ARITHMETIC_NODES = frozenset({"binary_expression", "unary_expression", "ternary_expression", "postfix_expression",
                               "parenthesized_expression"})

_FIX_ARITHMETIC = ("bash evaluates a value's text in arithmetic as an expression, where `a[$(cmd)]` runs cmd: "
                   "compute in the playbook instead (`{{ inputs.n + 1 }}` is placed as a value), or compare as text "
                   "with `[[ $x == ... ]]`")
_FIX_NAME = "a value cannot name a variable: write the name in the script, and keep the value in it"
_FIX_CODE = ("a value cannot be code: pass it to the code as data, e.g. `bash -c 'echo \"$1\"' _ {{ v }}`, "
             "or give it to the program in `env:` and read the variable there")


@record
class Hole:
    """A placeholder: its number among the script's values and its offsets in the template."""

    index: int
    start: int
    end: int


@record
class Finding:
    """Where a value stands, or is used, and what that is: `context` says how its reference
    is written; UNSAFE with `problem` and `help` when it must be refused."""

    context: Context
    start: int
    end: int
    problem: str = ""
    help: str = ""


@record
class Analysis:
    """A script's values by reference: a Finding per placeholder (in order), the uses of a
    value that must be refused beyond them, and the script to run (None if anything is
    refused)."""

    slots: tuple[Finding, ...]
    uses: tuple[Finding, ...]
    script: str | None

    @property
    def refusals(self) -> tuple[Finding, ...]:
        return tuple(f for f in (*self.slots, *self.uses) if f.context is Context.UNSAFE)


@functools.cache
def _parser():
    # tree-sitter loads only when a script holds a value: a what-if of plain scripts and
    # every other command never pay for it.
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def argv_refusals(argv: list[str | None]) -> dict[int, str]:
    """The arguments of a command (a script's or an argv step's) that may not hold a value,
    with why: those its program runs or reads as names (`programs`), and those the literal
    code of a `bash -c` uses as code."""
    refused = programs.refused_arguments(argv)
    refused.update(inline_code_uses(argv))
    return refused


def inline_code_uses(argv: list[str | None]) -> dict[int, str]:
    """For `bash -c CODE NAME ARG...` with CODE written literally: the arguments CODE
    uses as code (`eval "$1"`, `(( $1 ))`), by position in argv, with why."""
    code = programs.shell_code(argv)
    if code is None or argv[code] is None or code + 1 >= len(argv):
        return {}
    uses = _positional_uses(argv[code])
    if not uses:
        return {}
    why = f"an argument of `bash -c` code that uses it as code ({uses[0].problem})"
    return {i: why for i in range(code + 1, len(argv))}


@functools.lru_cache(maxsize=1024)
def _positional_uses(code: str) -> tuple[Finding, ...]:
    analyzer = _Analyzer((code,))
    analyzer.positional = True
    root = _parser().parse(analyzer.probe).root_node
    if analyzer._unreadable(root) is not None:
        return (Finding(Context.UNSAFE, 0, len(code), "code that does not parse as bash", _FIX_CODE),)
    analyzer._facts(root)
    return tuple(analyzer._uses(root, set()))


@functools.lru_cache(maxsize=4096)
def analyze(pieces: tuple[str | Hole, ...]) -> Analysis:
    """The analysis of a script made of the author's text (str) and placeholders (Hole)."""
    return _Analyzer(pieces).run()


class _Analyzer:
    def __init__(self, pieces: tuple[str | Hole, ...]) -> None:
        chunks: list[bytes] = []
        self.holes: list[tuple[Hole, int, int]] = []  # each with its byte range in the probe
        self.text_at: list[tuple[int, int, bytes]] = []  # (probe byte, template offset, text) per author piece
        at = 0
        template = 0
        for piece in pieces:
            if isinstance(piece, Hole):
                data = ("${" + REFERENCE.format(piece.index) + "}").encode()
                self.holes.append((piece, at, at + len(data)))
                template = piece.end
            else:
                data = piece.encode("utf-8", "surrogatepass")
                self.text_at.append((at, template, data))
                template += len(piece)
            chunks.append(data)
            at += len(data)
        self.probe = b"".join(chunks)
        self.tainted: set[str] = set()
        self.integer_names: set[str] = set()
        self.functions: set[str] = set()
        self.aliases: set[str] = set()
        self._argv_cache: dict[tuple[int, int], dict[int, str]] = {}
        #: The script is the code of `bash -c`, whose positional parameters hold values.
        self.positional = False

    # -- the phases ------------------------------------------------------------------------------------

    def run(self) -> Analysis:
        if not self.holes:
            return Analysis((), (), None)
        tree = _parser().parse(self.probe)
        root = tree.root_node
        broken = self._unreadable(root)
        if broken is not None:
            problem, help = broken
            slots = tuple(Finding(Context.UNSAFE, h.start, h.end, problem, help) for h, _, _ in self.holes)
            return Analysis(slots, (), None)
        self._facts(root)
        slots = tuple(self._slot(root, hole, start, end) for hole, start, end in self.holes)
        uses = tuple(self._uses(root, {(s, e) for _, s, e in self.holes}))
        refused = any(f.context is Context.UNSAFE for f in (*slots, *uses))
        return Analysis(slots, uses, None if refused else self._render(root, slots))

    def _unreadable(self, root) -> tuple[str, str] | None:
        """Why bash might read the script otherwise than the parse says, or None."""
        for node in _walk(root):
            if node.is_error or node.is_missing:
                line, column = node.start_point
                return (f"in a script that does not parse as bash (line {line + 1}, column {column + 1} of the script), "
                        "so where the value lands cannot be shown",
                        "fix the script's syntax (`bash -n` shows the error)")
            if node.type == "heredoc_start" and not _PLAIN_DELIMITER.fullmatch(self._text(node)):
                return (f"in a script with the here-document delimiter {self._text(node)}, which is not a plain word: "
                        "readers of bash disagree on where its body ends",
                        "write the delimiter as a plain word, quoted or not: <<EOF, <<'EOF', <<\"EOF\"")
        return None

    def _facts(self, root) -> None:
        """What the script declares: functions, integer variables, and the variables a value
        reaches (assigned from it, looped over it, read from it), to a fixed point."""
        assignments = []
        for node in _walk(root):
            if node.type == "function_definition":
                name = node.child_by_field_name("name")
                if name is not None:
                    self.functions.add(self._text(name))
            elif node.type == "command" and self._literal(node.child_by_field_name("name")) == "alias":
                for argument in node.children_by_field_name("argument"):
                    self.aliases.add(self._text(argument).strip("'\"").split("=", 1)[0])
            elif node.type == "declaration_command" and any(_flags(self._text(c), "i") for c in node.children):
                for child in node.children:
                    if child.type in ("variable_name", "word", "variable_assignment"):
                        target = child.child_by_field_name("name") if child.type == "variable_assignment" else child
                        if target is not None:
                            self.integer_names.add(self._text(target))
            assignments.extend(_assignments(node, self._text))
        self.tainted = {REFERENCE.format(h.index) for h, _, _ in self.holes}
        if self.positional:
            self.tainted |= {str(n) for n in range(0, 10)} | {"@", "*"}
        changed = True
        while changed:
            changed = False
            for name, sources in assignments:
                if name not in self.tainted and self._carries_value(sources):
                    self.tainted.add(name)
                    changed = True
            if not {"1", "@"} <= self.tainted and self._passed_to_function(root):
                self.tainted |= {str(n) for n in range(1, 10)} | {"@", "*"}
                changed = True

    def _carries_value(self, nodes) -> bool:
        return any(self._is_value_use(n) for node in nodes for n in _walk(node))

    def _passed_to_function(self, root) -> bool:
        """A value is an argument of a function of the script or of `set`: its positional
        parameters hold the value."""
        for node in _walk(root):
            if node.type == "command":
                name = node.child_by_field_name("name")
                if name is not None and self._text(name) in (self.functions | {"set"}):
                    if self._carries_value(node.children_by_field_name("argument")):
                        return True
        return False

    def _is_value_use(self, node) -> bool:
        if node.type in ("expansion", "simple_expansion"):
            name = next((c for c in node.children if c.type in ("variable_name", "special_variable_name", "subscript")), None)
            if name is not None and name.type == "subscript":
                name = name.child_by_field_name("name")
            return name is not None and self._text(name) in self.tainted
        return False

    # -- each placeholder ------------------------------------------------------------------------------

    def _slot(self, root, hole: Hole, start: int, end: int) -> Finding:
        node = root.descendant_for_byte_range(start, end)
        inside = node.start_byte < start and end < node.end_byte
        body = _enclosing(node, "heredoc_body")
        if body is not None:
            return self._body_slot(hole, body, start)
        if node.type == "expansion" and node.start_byte == start and node.end_byte == end:
            context = _quoting(node)
            at = node
        elif node.type == "raw_string" and inside:
            context, at = Context.SINGLE, node
        elif node.type == "ansi_c_string" and inside:
            if _escaped(self.probe, start):
                return self._refuse(hole, "right after a backslash in a $'...' string", "put the value elsewhere in the string")
            context, at = Context.ANSI_C, node
        elif node.type == "comment" and node.start_byte < start:
            return Finding(Context.COMMENT, hole.start, hole.end)
        else:
            return self._refuse(hole, "not a whole word for bash (it follows a backslash, or is part of a name)",
                                "put the placeholder apart: in double quotes, or between spaces")
        problem = self._path(at, start)
        if problem is not None:
            return self._refuse(hole, *problem)
        return Finding(context, hole.start, hole.end)

    def _body_slot(self, hole: Hole, body, start: int) -> Finding:
        """A placeholder in a here-document's body. The body is read here as bash reads it,
        not from the parse (tree-sitter reads `$(( ))` in a body as a subshell): only `$`,
        a backquote and a backslash are special in it, so a reference is plain data unless
        it stands after a backslash or inside an expansion of the author's."""
        if _quoted_heredoc(body, self._text):
            context = Context.HEREDOC_QUOTED
        else:
            context = Context.HEREDOC
            before = self.probe[body.start_byte:start]
            if _escaped(self.probe, start):
                return self._refuse(hole, "right after a backslash in a here-document", "put the value elsewhere on the line")
            text = self.probe[body.start_byte:body.end_byte]
            if b"$(" in text or b"`" in text or b"$[" in text or before.count(b"${") > before.count(b"}"):
                return self._refuse(hole, "in a here-document that runs commands or arithmetic (`$(...)`, backquotes, "
                                    "`$[...]`) or inside a `${...}` of it, where its place cannot be shown",
                                    "compute those before the here-document into variables, or quote its delimiter (<<'EOF')")
        problem = self._path(body, start)
        if problem is not None:
            return self._refuse(hole, *problem)
        return Finding(context, hole.start, hole.end)

    def _refuse(self, hole: Hole, problem: str, help: str) -> Finding:
        return Finding(Context.UNSAFE, hole.start, hole.end, problem, help)

    def _uses(self, root, holes: set[tuple[int, int]]):
        """The author's own uses of a variable that holds a value, where it would be read
        as code: `$x` in program position, `(( x ))`, `${!x}`..."""
        for node in _walk(root):
            if (node.start_byte, node.end_byte) in holes:
                continue
            if self._is_value_use(node) and node.type == "expansion" and "!" in [c.type for c in node.children[:2]]:
                problem = "an indirection `${!...}`, which reads it as a variable name", _FIX_NAME
            elif self._is_value_use(node) and node.type == "expansion" and any(c.type == "P" for c in node.children):
                problem = "a prompt expansion `${x@P}`, which runs the command substitutions in it", _FIX_CODE
            elif node.type == "word" and self._text(node) in self.tainted and node.parent is not None \
                    and node.parent.type == "binary_expression" and self._expression(node.parent, node) is not None:
                problem = "an operand of an arithmetic test in `[[ ]]`, where bash evaluates the variable's text", _FIX_ARITHMETIC
            elif self._is_value_use(node):
                problem = self._path(node, node.start_byte)
            elif node.type == "variable_name" and self._text(node) in self.tainted and _in_arithmetic(node):
                problem = ("in arithmetic", _FIX_ARITHMETIC)
            else:
                continue
            if problem is not None:
                start, end = self._template_span(node.start_byte, node.end_byte)
                yield Finding(Context.UNSAFE, start, end, f"a value reaches this use of `{self._text(node)}`, which is "
                              + problem[0], problem[1])

    # -- the allow-list --------------------------------------------------------------------------------

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
            return "an argument of `unset`, which takes variable names whose [subscript] bash evaluates", _FIX_NAME
        if kind in ("subscript", "arithmetic_expansion"):
            return "in an array subscript or arithmetic, which bash evaluates as an expression", _FIX_ARITHMETIC
        if kind in _ARITHMETIC_NODES:
            return self._expression(parent, child)
        if kind == "test_command":
            return None
        if kind == "expansion":
            return self._parameter(parent, child)
        if kind == "array":
            return self._element(child, at)
        if kind == "compound_statement" and parent.child_count and parent.children[0].type == "((":
            return "in arithmetic `(( ))`, which bash evaluates as an expression", _FIX_ARITHMETIC
        if kind == "c_style_for_statement" and child.type not in ("do_group", "compound_statement"):
            return "in the arithmetic of a `for (( ))` loop", _FIX_ARITHMETIC
        if kind in ("heredoc_redirect", "file_redirect") and child.type in ("heredoc_start", "heredoc_end", "file_descriptor"):
            return "in a redirection's delimiter or descriptor", "write the delimiter or the descriptor in the script"
        if kind in ("heredoc_redirect", "herestring_redirect"):
            runner = self._stdin_runner(parent.parent)
            if runner is not None:
                return f"in the input of `{runner}`, which runs its input as code", _FIX_CODE
            # tree-sitter hangs the rest of the line (`<<E | bash`) under the redirection
            for rest in (c for c in parent.children if c.type == "pipeline"):
                runner = next((r for r in map(self._stdin_runner, (c for c in rest.children if c.is_named)) if r), None)
                if runner is not None:
                    return f"piped into `{runner}`, which runs its input as code", _FIX_CODE
        if kind == "pipeline":
            stages = [c for c in parent.children if c.is_named]
            later = stages[next(i for i, c in enumerate(stages) if c.start_byte == child.start_byte) + 1:]
            runner = next((r for r in map(self._stdin_runner, later) if r is not None), None)
            if runner is not None:
                return f"piped into `{runner}`, which runs its input as code", _FIX_CODE
        if kind in _CONTAINERS:
            return None
        return (f"inside a bash `{kind}`, where catalyst cannot show that bash reads it as data",
                "move the value into an argument in double quotes, or into a variable first")

    def _argument(self, command, child) -> tuple[str, str] | None:
        field = _field_of(command, child)
        if field != "argument":
            return None  # a prefix assignment (checked on its own) or a redirection
        arguments = command.children_by_field_name("argument")
        key = (command.start_byte, command.end_byte)
        if key not in self._argv_cache:
            name = command.child_by_field_name("name")
            argv = [self._literal(name)] + [self._literal(a) for a in arguments]
            if argv[0] in self.aliases:
                argv[0] = None  # an alias of the script's: its meaning is its text, not its name
            self._argv_cache[key] = argv_refusals(argv)
        index = next(i for i, a in enumerate(arguments, 1) if a.start_byte == child.start_byte and a.end_byte == child.end_byte)
        why = self._argv_cache[key].get(index)
        if why is None:
            return None
        return why, _fix_for(why)

    def _stdin_runner(self, node) -> str | None:
        """The program that reads `node`'s input as code (`bash`, `python3 -`), or None."""
        while node is not None and node.type == "redirected_statement":
            node = node.child_by_field_name("body")
        if node is None or node.type != "command":
            return None
        name = node.child_by_field_name("name")
        argv = [self._literal(name)] + [self._literal(a) for a in node.children_by_field_name("argument")]
        if argv[0] in self.aliases:
            return argv[0]
        return programs.reads_code_from_stdin(argv)

    def _assignment(self, assignment, child) -> tuple[str, str] | None:
        if _field_of(assignment, child) != "value":
            return None
        name_node = assignment.child_by_field_name("name")
        if name_node is None:
            return None
        if name_node.type == "subscript":
            name_node = name_node.child_by_field_name("name") or name_node
        name = self._text(name_node)
        if programs.is_code_variable(name):
            return (f"assigned to `{name}`, a variable bash or the programs it starts read as code, a prompt, "
                    "arithmetic or a place to load code from",
                    "assign the value to a variable of your own and use it as data")
        if name in self.integer_names:
            return f"assigned to `{name}`, declared an integer (-i): bash evaluates it as arithmetic", _FIX_ARITHMETIC
        return None

    def _declaration(self, declaration, child) -> tuple[str, str] | None:
        keyword = declaration.children[0].type if declaration.child_count else "declare"
        if child.type != "variable_assignment":
            return f"an argument of `{keyword}`, which takes variable names", _FIX_NAME
        flags = "".join(self._text(c) for c in declaration.children if c.type == "word" and self._text(c)[:1] in "-+")
        if _flags(flags, "i"):
            return f"assigned by `{keyword} -i`, which evaluates it as arithmetic", _FIX_ARITHMETIC
        if _flags(flags, "n"):
            return f"assigned by `{keyword} -n`, which makes it the name of a variable", _FIX_NAME
        return None

    def _expression(self, node, child) -> tuple[str, str] | None:
        """A node of `[[ ]]` or `[ ]` is a test; anywhere else, one of arithmetic."""
        test = node.parent
        while test is not None and test.type in _ARITHMETIC_NODES:
            test = test.parent
        if test is None or test.type != "test_command":
            return "in arithmetic, which bash evaluates as an expression", _FIX_ARITHMETIC
        double = test.child_count > 0 and test.children[0].type == "[["
        operator = node.child_by_field_name("operator")
        op = self._text(operator) if operator is not None else ""
        if node.type == "unary_expression" and op in ("-v", "-R"):
            return f"the operand of `{op}`, a variable name whose [subscript] bash evaluates as arithmetic", _FIX_NAME
        if double and node.type == "binary_expression" and op in _ARITHMETIC_TESTS:
            return f"an operand of `[[ {op} ]]`, which bash evaluates as arithmetic", _FIX_ARITHMETIC
        return None

    def _parameter(self, expansion, child) -> tuple[str, str] | None:
        """The author's `${x...}` around a value: only its text and pattern operators keep it data."""
        tokens = [c.type for c in expansion.children]
        if "!" in tokens[:2]:
            return "inside an indirection `${!...}`, which reads it as a variable name", _FIX_NAME
        operator = None
        for c in expansion.children:
            if c.start_byte >= child.start_byte:
                break
            if _field_of(expansion, c) == "operator" or c.type in _WORD_OPERATORS or c.type == ":":
                operator = c.type
        if child.type == "subscript" or operator is None:
            return "in the name or subscript of a `${...}`, which bash reads as a name or arithmetic", _FIX_NAME
        if operator not in _WORD_OPERATORS:
            return f"after `{operator}` in a `${{...}}`, where bash evaluates it as arithmetic or an operator", _FIX_ARITHMETIC
        if operator in ("=", ":="):
            name = next((c for c in expansion.children if c.type == "variable_name"), None)
            if name is not None and programs.is_code_variable(self._text(name)):
                return f"assigned to `{self._text(name)}` by `${{...{operator}}}`", "assign the value to a variable of your own"
        return None

    def _element(self, element, at: int) -> tuple[str, str] | None:
        """`( a "b" [3]=c )`: a plain element is data; in `[i]=v` only the value is."""
        if element.type == "concatenation" and element.child_count and self._text(element.children[0]) == "[":
            equals = next((c for c in element.children if self._text(c).startswith("=") or self._text(c).startswith("]=")), None)
            if equals is None or at < equals.end_byte:
                return "in an array subscript, which bash evaluates as arithmetic", _FIX_ARITHMETIC
        return None

    # -- rendering -------------------------------------------------------------------------------------

    def _render(self, root, slots: tuple[Finding, ...]) -> str:
        edits: list[tuple[int, int, bytes]] = []
        rewritten = set()
        for (hole, start, end), slot in zip(self.holes, slots):
            ref = self.probe[start:end]
            if slot.context is Context.WORD:
                edits.append((start, end, b'"' + ref + b'"'))
            elif slot.context is Context.SINGLE:
                edits.append((start, end, b"'\"" + ref + b"\"'"))
            elif slot.context is Context.ANSI_C:
                edits.append((start, end, b"'\"" + ref + b"\"$'"))
            elif slot.context is Context.HEREDOC_QUOTED:
                body = root.descendant_for_byte_range(start, end)
                if body.start_byte not in rewritten:
                    rewritten.add(body.start_byte)
                    edits.extend(self._unquote_heredoc(body))
        text = self.probe
        for start, end, new in sorted(edits, reverse=True):
            text = text[:start] + new + text[end:]
        return text.decode("utf-8", "surrogatepass")

    def _unquote_heredoc(self, body) -> list[tuple[int, int, bytes]]:
        """A quoted here-document cannot hold a reference: it becomes an unquoted one whose
        own text is escaped, so it reads as before and the reference expands."""
        start = next(c for c in body.parent.children if c.type == "heredoc_start")
        edits = [(start.start_byte, start.end_byte, self._text(start).strip("'\"\\").encode())]
        holes = sorted((s, e) for _, s, e in self.holes if body.start_byte <= s and e <= body.end_byte)
        at = body.start_byte
        for s, e in [*holes, (body.end_byte, body.end_byte)]:
            literal = self.probe[at:s]
            escaped = re.sub(rb"([\\$`])", rb"\\\1", literal)
            if escaped != literal:
                edits.append((at, s, escaped))
            at = e
        return edits

    # -- helpers ---------------------------------------------------------------------------------------

    def _text(self, node) -> str:
        return self.probe[node.start_byte:node.end_byte].decode("utf-8", "surrogatepass")

    def _literal(self, node) -> str | None:
        """The text of a word the author wrote as a constant, or None if it expands."""
        if node is None:
            return None
        if node.type == "command_name" and node.child_count == 1:
            node = node.children[0]
        text = self._text(node)
        if node.type in ("word", "number") and not re.search(r"[\\$`*?\[{~]", text):
            return text
        if node.type == "raw_string":
            return text[1:-1]
        if node.type == "string" and all(c.type in ('"', "string_content") for c in node.children):
            return text[1:-1] if "\\" not in text else None
        if node.type == "concatenation" and node.child_count and node.children[0].type == "word":
            head = self._text(node.children[0])
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=", head):
                return head + programs.UNKNOWN  # NAME=<value>: the name is known
        return None

    def _template_span(self, start: int, end: int) -> tuple[int, int]:
        """Offsets in the template of the probe's bytes start..end (inside the author's text)."""
        for probe_at, template_at, data in reversed(self.text_at):
            if probe_at <= start:
                head = len(data[:start - probe_at].decode("utf-8", "surrogatepass"))
                length = len(self.probe[start:end].decode("utf-8", "surrogatepass"))
                return template_at + head, template_at + head + length
        return 0, 0


def _fix_for(why: str) -> str:
    """The fix for a refusal `programs` gives: by what the program would make of the value."""
    if "program position" in why or "taken for that program" in why:
        return COMMAND_HELP
    if "name" in why:
        return _FIX_NAME
    return _FIX_CODE


def _enclosing(node, kind: str):
    while node is not None and node.type != kind:
        node = node.parent
    return node


def _walk(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _field_of(parent, child) -> str | None:
    for i, c in enumerate(parent.children):
        if c.start_byte == child.start_byte and c.end_byte == child.end_byte and c.type == child.type:
            return parent.field_name_for_child(i)
    return None


def _flags(word: str, letter: str) -> bool:
    return word[:1] in "-+" and not word.startswith("--") and letter in word[1:]


def _quoting(expansion) -> Context:
    """How a reference is written where the placeholder stood: bare inside double quotes
    or an unquoted here-document, in double quotes of its own anywhere else."""
    node = expansion.parent
    while node is not None and node.type in ("expansion", "concatenation"):
        node = node.parent
    if node is not None and node.type in ("string", "translated_string"):
        return Context.DOUBLE
    if node is not None and node.type == "heredoc_body":
        return Context.HEREDOC
    return Context.WORD if expansion.parent.type != "string" else Context.DOUBLE


def _quoted_heredoc(body, text) -> bool:
    start = next((c for c in body.parent.children if c.type == "heredoc_start"), None) if body.parent else None
    return start is not None and any(q in text(start) for q in "'\"\\")


def _escaped(probe: bytes, at: int) -> bool:
    backslashes = 0
    while at - backslashes - 1 >= 0 and probe[at - backslashes - 1] == ord("\\"):
        backslashes += 1
    return backslashes % 2 == 1


def _in_arithmetic(node) -> bool:
    """A bare variable name that bash evaluates as arithmetic (its text read as an expression)."""
    child, parent = node, node.parent
    while parent is not None and parent.type in _ARITHMETIC_NODES:
        child, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type == "subscript":
        return _field_of(parent, child) == "index"
    if parent.type == "compound_statement":
        return parent.child_count > 0 and parent.children[0].type == "(("
    return parent.type in ("arithmetic_expansion", "c_style_for_statement")


#: Builtins that assign what they read to the variables they name.
_READERS = frozenset({"read", "mapfile", "readarray", "printf", "getopts"})


def _assignments(node, text):
    """(variable, the nodes its new text comes from) for each variable `node` assigns:
    `x=...`, `for x in ...`, `${x:=...}`, and `read x` (from its redirections and the
    commands piped into it)."""
    if node.type == "variable_assignment":
        name = node.child_by_field_name("name")
        if name is not None and name.type == "subscript":
            name = name.child_by_field_name("name")
        if name is not None:
            yield text(name), [c for c in node.children if c is not None and _field_of(node, c) == "value"]
    elif node.type == "for_statement":
        name = node.child_by_field_name("variable")
        if name is not None:
            yield text(name), node.children_by_field_name("value")
    elif node.type == "expansion" and any(c.type in ("=", ":=") for c in node.children):
        name = next((c for c in node.children if c.type == "variable_name"), None)
        if name is not None:
            yield text(name), [node]
    elif node.type == "command":
        name = node.child_by_field_name("name")
        if name is not None and text(name) in _READERS:
            sources = [node, *_inputs(node)]
            for argument in node.children_by_field_name("argument"):
                if argument.type == "word" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text(argument)):
                    yield text(argument), sources


def _inputs(node) -> list:
    """What may reach `node`'s standard input: the redirections of every statement around
    it (`while read x; do ...; done <<< "$v"`) and the stages piped into it."""
    found = []
    child, parent = node, node.parent
    while parent is not None:
        if parent.type == "redirected_statement":
            found.extend(c for c in parent.children if c.type.endswith("_redirect"))
        elif parent.type == "pipeline":
            for stage in parent.children:
                if stage.start_byte >= child.start_byte:
                    break
                found.append(stage)
        child, parent = parent, parent.parent
    return found
