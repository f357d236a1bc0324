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

import bisect
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

#: A backslash-newline inside a word: bash joins the word (`ev\\<newline>al`), tree-sitter splits it.
_JOINED_LINE = re.compile(rb"[^\s\\]\\\n[^\s]")
#: A name glued to an expansion in arithmetic (`val_$i`, `${p}_x`): it names a variable
#: that is known only when the script runs.
_BUILT_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*\$|[}A-Za-z0-9_]\$\{?[A-Za-z_]|\}[A-Za-z_]")
#: Variables bash fills with data it read or matched: they may hold a value.
_DATA_VARIABLES = frozenset(
    {
        "OLDPWD",
        "PWD",
        "DIRSTACK",
        "_",
        "REPLY",
        "MAPFILE",
        "BASH_REMATCH",
        "OPTARG",
        "COPROC",
        "BASH_ARGV",
        "READLINE_LINE",
        "BASH_ALIASES",
        "BASH_CMDS",
        "BASH_EXECUTION_STRING",
        "COMP_LINE",
        "COMP_WORDS",
        "PIPESTATUS",
        "FUNCNAME",
    }
)
#: A variable in arithmetic text: `$1`, `$@`, or a name not after a digit, a name
#: character or `#` (`16#ff` is a number in base 16, `${#x}` a length, `$#` a count).
_ARITHMETIC_NAME = re.compile(rb"(?<![A-Za-z0-9_#])(?:\$\{?([0-9@*])|\$?\{?([A-Za-z_][A-Za-z0-9_]*))")

#: The comparisons of `[[ ]]` that evaluate both sides as arithmetic.
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
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
_ARITHMETIC_NODES = frozenset(
    {"binary_expression", "unary_expression", "ternary_expression", "postfix_expression", "parenthesized_expression"}
)

_FIX_ARITHMETIC = (
    "bash evaluates a value's text in arithmetic as an expression, where `a[$(cmd)]` runs cmd: "
    "compute in the playbook instead (`{{ inputs.n + 1 }}` is placed as a value), or compare as text "
    "with `[[ $x == ... ]]`"
)
_FIX_NAME = "a value cannot name a variable: write the name in the script, and keep the value in it"
_FIX_CODE = (
    "a value cannot be code: pass it to the code as data, e.g. `bash -c 'echo \"$1\"' _ {{ v }}`, "
    "or give it to the program in `env:` and read the variable there"
)


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
    #: A whole argument of this program, which reads a value starting with `-` as an
    #: option that may run something (`programs.OPTIONS_RUN_PROGRAMS`): a run refuses such a value.
    option_of: str = ""


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


def argv_analysis(items) -> tuple[list[str | None], dict[int, str], int | None]:
    """An argv step's IR words as the check and the run read them (one place, so they
    agree): the words (`programs.argv_words`), the positions refused with why, and the
    position of the code of `bash -c`, which is a bash script, or None."""
    words = programs.argv_words(items)
    return words, argv_refusals(words), programs.shell_code(words)


def argv_refusals(argv: list[str | None]) -> dict[int, str]:
    """The arguments of a command (a script's or an argv step's) that may not hold a value,
    with why: those its program runs or reads as names (`programs`), and those the literal
    code of a `bash -c` uses as code."""
    refused = programs.refused_arguments(argv)
    makes = [i for i, w in enumerate(argv) if w is not None and programs.program_name(w) in ("make", "gmake", "bmake")]
    for at, word in enumerate(argv):
        if (
            makes
            and at < makes[0]
            and word is not None
            and programs.UNKNOWN in word
            and "=" in word.split(programs.UNKNOWN)[0]
        ):
            refused.setdefault(
                at, "in the environment of `make`, which expands it in recipes as text that may call $(shell ...)"
            )
        if at == 0 or word is not None and programs.program_name(word) in programs.BASH_LIKE:
            for i, why in inline_code_uses(argv[at:]).items():
                refused.setdefault(at + i, why)
    return refused


def inline_code_uses(argv: list[str | None]) -> dict[int, str]:
    """For `bash -c CODE NAME ARG...` with CODE written literally: the arguments CODE
    uses as code (`eval "$1"`, `(( $1 ))`), by position in argv, with why."""
    code = programs.shell_code(argv)
    if code is None or code + 1 >= len(argv):
        return {}
    if argv[code] is None:
        why = "an argument of `bash -c` code the script does not write literally, which may run it as code"
        return {i: why for i in range(code + 1, len(argv))}
    uses = _positional_uses(argv[code])
    if not uses:
        return {}
    why = f"an argument of `bash -c` code that uses it as code ({uses[0].problem})"
    return {i: why for i in range(code + 1, len(argv))}


@functools.lru_cache(maxsize=1024)
def _child_uses(code: str, inherited: frozenset) -> str:
    """The first problem of the literal code of a `bash -c` whose environment has the
    variables `inherited` (those the parent may have given a value), or ""."""
    analyzer = _Analyzer((code,))
    analyzer.inherited = inherited
    root = analyzer.root = _parser().parse(analyzer.probe).root_node
    if analyzer._unreadable(root) is not None:
        return "code that does not parse as bash"
    analyzer._facts(root)
    found = next(iter(analyzer._uses(root, set())), None)
    return found.problem if found is not None else ""


@functools.lru_cache(maxsize=1024)
def _code_reads_stdin(code: str) -> bool:
    """Whether the literal code of a `bash -c` runs its standard input as code."""
    analyzer = _Analyzer((code,))
    root = analyzer.root = _parser().parse(analyzer.probe).root_node
    if analyzer._unreadable(root) is not None:
        return True
    analyzer._facts(root)
    return analyzer._stdin_runner(root) is not None


@functools.lru_cache(maxsize=1024)
def _positional_uses(code: str) -> tuple[Finding, ...]:
    analyzer = _Analyzer((code,))  # (its positional parameters hold values, as everywhere)
    root = analyzer.root = _parser().parse(analyzer.probe).root_node
    if analyzer._unreadable(root) is not None:
        return (Finding(Context.UNSAFE, 0, len(code), "code that does not parse as bash", _FIX_CODE),)
    analyzer._facts(root)
    return tuple(analyzer._uses(root, set()))


@functools.lru_cache(maxsize=4096)
def analyze(pieces: tuple[str | Hole, ...], given: frozenset = frozenset()) -> Analysis:
    """The analysis of a script made of the author's text (str) and placeholders (Hole);
    `given`: the variables the step's `env:` sets from a value, which hold one too."""
    analyzer = _Analyzer(pieces)
    analyzer.inherited = given
    return analyzer.run()


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
        self.clean: set[str] = set()
        self.assigned: set[str] = set()
        self.integer_names: set[str] = set()
        self.array_names: set[str] = set()
        self.associative: set[str] = set()
        self.namerefs: set[str] = set()
        self.exported: set[str] = set()
        self.declared_at: dict[str, object] = {}
        #: Regions that are names with a subscript (`unset 'a[x]'`): only the subscript is arithmetic.
        self.named_regions: set[tuple[int, int]] = set()
        #: (variable, the nodes of its new text or None when opaque, the assigning node)
        self.sites: list[tuple[str, list | None, object]] = []
        self.sites_of: dict[str, list] = {}
        self.hole_starts = [start for _, start, _ in self.holes]
        self.functions: set[str] = set()
        self._argv_cache: dict[tuple, tuple] = {}
        self._argument_ends: dict[tuple, dict[int, int]] = {}
        self.root = None
        self.bodies: dict | None = None
        #: A child's variables its parent script may have given a value (`export N=...`).
        self.inherited: frozenset = frozenset()

    # -- the phases ------------------------------------------------------------------------------------

    def run(self) -> Analysis:
        if not self.holes and not self.inherited:
            return Analysis((), (), None)
        tree = _parser().parse(self.probe)
        root = self.root = tree.root_node
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
        joined = _JOINED_LINE.search(self.probe)
        if joined is not None:
            line = self.probe.count(b"\n", 0, joined.start()) + 1
            return (
                f"in a script with a line continuation inside a word (line {line}), which bash joins and "
                "other readers split",
                "put a space before the backslash at the end of the line",
            )
        if _depth(root) > _MAX_DEPTH:
            return (
                f"in a script nested deeper than {_MAX_DEPTH} levels, which catalyst does not follow",
                "split the script into functions or steps",
            )
        if re.search(rb"[\r\f\v]", self.probe):
            return (
                "in a script that holds a carriage return, form feed or vertical tab, which bash reads as part of "
                "a word and other readers as a blank",
                "save the script with plain line ends (LF)",
            )
        if re.search(rb"\{[A-Za-z_][A-Za-z0-9_]*\[", self.probe) and re.search(
            rb"\{[A-Za-z_][A-Za-z0-9_]*\[[^]]*\]\}[<>]", self.probe
        ):
            return (
                "in a script that names a file descriptor by an array element (`{a[i]}>`), whose subscript bash "
                "evaluates",
                "name the descriptor by a plain variable: {fd}>",
            )
        if re.search(rb"\bcoproc\b", self.probe):
            return (
                "in a script with a `coproc`, whose input catalyst cannot follow",
                "run the program with a file of its own",
            )
        if re.search(rb"alias|posix", re.sub(rb"['\"\\]", b"", self.probe), re.IGNORECASE):
            return (
                "in a script that turns aliases on, where a command's name may stand for any code",
                "use a function instead of an alias",
            )
        for node in _walk(root):
            if node.is_error or node.is_missing:
                line, column = node.start_point
                return (
                    f"in a script that does not parse as bash (line {line + 1}, column {column + 1} of the script), "
                    "so where the value lands cannot be shown",
                    "fix the script's syntax (`bash -n` shows the error)",
                )
            if node.type == "command_name" and self._text(node) in ("{", "}"):
                return (
                    "in a script with a group `{ ...; }` where other readers see a command (after `time`, say)",
                    "put the group in a function, or drop the word before it",
                )
            if node.type == "number" and self.probe[node.end_byte : node.end_byte + 1] in (b"<", b">"):
                return (
                    f"in a script with the redirection {self._text(node)}{self.probe[node.end_byte : node.end_byte + 1].decode()}, "
                    "which bash reads as a redirection of that descriptor and other readers as an argument",
                    "write `<` for the input (`0<` is the same)",
                )
            if (
                node.type == "command"
                and self._literal(node.child_by_field_name("name")) == "coproc"
                and programs.reads_code_from_stdin([self._literal(a) for a in node.children_by_field_name("argument")])
            ):
                return ("in a script whose `coproc` runs its input as code", "run the program with a script of its own")
            if node.type == "process_substitution" and self._stdin_runner(node) is not None:
                return (
                    f"in a script whose process substitution {self._text(node)[:40]} runs its input as code",
                    "write what the program runs to a file the script names, not to its input",
                )
            if node.type == "heredoc_start" and not _PLAIN_DELIMITER.fullmatch(self._text(node)):
                return (
                    f"in a script with the here-document delimiter {self._text(node)}, which is not a plain word: "
                    "readers of bash disagree on where its body ends",
                    "write the delimiter as a plain word, quoted or not: <<EOF, <<'EOF', <<\"EOF\"",
                )
        return None

    def _facts(self, root) -> None:
        """What the script declares: functions, integer and array variables, and the
        variables that are *clean*: shown to hold no value. A variable is clean when every
        assignment to it in the script is a constant, a number (arithmetic, a length, `$#`,
        `$?`) or built from clean variables only; a variable the script never assigns comes
        from the step's environment and is clean, except the positional parameters and those
        bash fills with data (`REPLY`, `_`, `BASH_REMATCH`...). Every other variable may hold
        a value, and is refused where bash would read its text as code."""
        assignments: list[tuple[str, list]] = []
        opaque: set[str] = set()
        for node in _walk(root):
            if node.type == "function_definition":
                name = node.child_by_field_name("name")
                if name is not None:
                    self.functions.add(self._text(name))
            elif (
                node.type == "declaration_command"
                and node.children[0].type == "export"
                or node.type == "command"
                and self._effective(node)[0] == "export"
            ):
                for child in _walk(node):
                    if child.type in ("variable_name", "word") and re.fullmatch(
                        r"[A-Za-z_][A-Za-z0-9_]*", self._text(child)
                    ):
                        self.exported.add(self._text(child))
            elif node.type == "declaration_command":
                self._declared(node, opaque)
            elif node.type == "variable_assignment" and any(c.type == "array" for c in node.children):
                name = node.child_by_field_name("name")
                if name is not None:
                    self.array_names.add(self._text(name))
            if node.type == "command" and self._effective(node)[0] in (
                "declare",
                "typeset",
                "local",
                "export",
                "readonly",
            ):
                self._declared_by_command(node, opaque)
            for name, sources in _assignments(node, self._text, self._effective):
                self.sites.append((name, sources, node))
                self.sites_of.setdefault(name, []).append((name, sources, node))
                if sources is None:
                    opaque.add(name)
                else:
                    assignments.append((name, sources))
        self.assigned = {name for name, _ in assignments} | opaque
        self.clean = (self.assigned - opaque - _DATA_VARIABLES) | {"#", "?", "$", "!", "-"}
        changed = True
        while changed:
            changed = False
            for name, sources in assignments:
                if name in self.clean and not all(self._clean_source(n) for n in sources):
                    self.clean.discard(name)
                    changed = True

    def _declared(self, node, opaque: set[str]) -> None:
        """The attributes `declare`/`local`/`typeset` give: -i (arithmetic on assignment),
        -a/-A (arrays), -n (a name: its target is opaque)."""
        flags = "".join(
            re.sub(r"[\\'\"]", "", self._text(c))
            for c in node.children
            if c.type in ("word", "string", "raw_string") and re.sub(r"[\\'\"]", "", self._text(c))[:1] in "-+"
        )
        if any(
            c.type in ("simple_expansion", "expansion", "command_substitution", "concatenation")
            for c in node.children[1:]
        ):
            flags += "-ianA"  # `declare $f n`: any attribute
        for child in node.children:
            if child.type not in ("variable_name", "word", "variable_assignment", "string", "raw_string"):
                continue
            target = child.child_by_field_name("name") if child.type == "variable_assignment" else child
            if target is not None and target.type == "subscript":
                target = target.child_by_field_name("name")
            if target is None or self._text(target)[:1] in "-+":
                continue
            name = self._text(target).strip("'\"").split("=", 1)[0]
            self.declared_at.setdefault(name, node)
            if _flags(flags, "i"):
                self.integer_names.add(name)
            if _flags(flags, "a") or _flags(flags, "A"):
                self.array_names.add(name)
            if _flags(flags, "A"):
                self.associative.add(name)
            if _flags(flags, "n"):
                opaque.add(name)
                self.namerefs.add(name)

    def _declared_by_command(self, node, opaque: set[str]) -> None:
        """`builtin declare -i n`, `command local -n r`: the attributes as `_declared` reads
        them; a flag not written literally (`declare $f n`) may be any of them."""
        _, arguments = self._effective(node)
        words = [self._literal(a) for a in arguments]
        unknown = any(w is None or programs.UNKNOWN in w for w in words)
        flags = "".join(w for w in words if w and w[:1] in "-+")
        for word in words:
            if not word or word[:1] in "-+":
                continue
            name = word.split("=", 1)[0].split("[", 1)[0].replace(programs.UNKNOWN, "")
            self.declared_at.setdefault(name, node)
            if unknown or _flags(flags, "i"):
                self.integer_names.add(name)
            if unknown or _flags(flags, "a") or _flags(flags, "A"):
                self.array_names.add(name)
            if unknown or _flags(flags, "n"):
                opaque.add(name)
                self.namerefs.add(name)

    def _holds_value(self, name: str) -> bool:
        """Whether the variable `name` may hold a value (see `_facts`)."""
        if name in self.clean:
            return False
        if (
            name in self.assigned
            or name in _DATA_VARIABLES
            or _REFERENCE_NAME.fullmatch(name)
            or name in self.inherited
        ):
            return True
        return name.isdigit() or name in ("@", "*")

    def _number(self, name: str, seen: frozenset = frozenset()) -> bool:
        """Whether `name` holds a number for arithmetic: every assignment to it is a number,
        arithmetic, a length or a variable that is a number; bash's own counters and names
        the script never assigns (the environment) are numbers too. Text that is a name
        is not: bash would evaluate the variable it names (`y=x; (( y ))`)."""
        if self._holds_value(name) or name in seen:
            return name in seen and not self._holds_value(name)
        for assigned, sources, _ in self.sites_of.get(name, ()):
            if sources is None:
                return False
            for source in sources:
                text = self._bytes(source).strip(b"\"'")
                if re.fullmatch(rb"-?[0-9]+|0x[0-9a-fA-F]+|\$\(\(.*\)\)|\$\{#[^}]*\}|\$[#?$!]", text, re.S):
                    continue
                reference = re.fullmatch(rb"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", text)
                if reference is None or not self._number(reference.group(1).decode(), seen | {name}):
                    return False
        return True

    def _clean_source(self, node) -> bool:
        """Whether the text `node` gives an assignment is shown to hold no value. Text that
        names a variable holding one is not: arithmetic and `${!x}` read names (`y=x; (( y ))`)."""
        if any(
            self._holds_value(m.group(2).decode()) for m in _ARITHMETIC_NAME.finditer(self._bytes(node)) if m.group(2)
        ):
            return False
        for n in _walk(node):
            if n.type in ("command_substitution", "process_substitution"):
                return False
            if n.type in ("expansion", "simple_expansion") and not _length(n):
                name = _expanded_name(n)
                if name is None or self._holds_value(self._text(name)):
                    return False
        return True

    def _is_value_use(self, node) -> bool:
        if node.type == "expansion" and "!" in [c.type for c in node.children[:2]] and not _keys(node, self._text):
            return True  # `${!x}`: the variable x names, which may be any
        if node.type in ("expansion", "simple_expansion") and not _length(node):
            name = _expanded_name(node)
            return name is not None and self._holds_value(self._text(name))
        return False

    # -- each placeholder ------------------------------------------------------------------------------

    def _slot(self, root, hole: Hole, start: int, end: int) -> Finding:
        node = root.descendant_for_byte_range(start, end)
        inside = node.start_byte < start and end < node.end_byte
        body = _enclosing(node, "heredoc_body")
        if body is not None:
            return self._body_slot(hole, body, start)
        if node.type == "expansion" and node.end_byte == end and not self.probe[node.start_byte : start].strip():
            context = _quoting(node)
            at = node
        elif node.type == "raw_string" and inside:
            # inside a double-quoted `${x:-'...'}` the quotes are text, and the value is in double quotes
            context, at = (Context.DOUBLE if _quoting(node) is Context.DOUBLE else Context.SINGLE), node
        elif node.type == "ansi_c_string" and inside:
            if _escaped(self.probe, start):
                return self._refuse(
                    hole, "right after a backslash in a $'...' string", "put the value elsewhere in the string"
                )
            context, at = Context.ANSI_C, node
        elif node.type == "comment" and node.start_byte < start:
            return Finding(Context.COMMENT, hole.start, hole.end)
        else:
            return self._refuse(
                hole,
                "not a whole word for bash (it follows a backslash, or is part of a name)",
                "put the placeholder apart: in double quotes, or between spaces",
            )
        problem = self._path(at, start)
        if problem is not None:
            return self._refuse(hole, *problem)
        return Finding(context, hole.start, hole.end, option_of=self._option_of(at) or "")

    def _option_of(self, node) -> str | None:
        """The program that reads the argument the value begins (`"${V}"`, `${V}.git`,
        `''"${V}"`, `"$prefix${V}"` with an empty prefix) as an option that may run
        something, if no `--` comes before it."""
        argument = node
        while argument.parent is not None and argument.parent.type in ("string", "concatenation"):
            argument = argument.parent
        command = argument.parent
        if command is None or command.type != "command":
            return None
        first = self._first_piece(argument)
        if first is None or (first.start_byte, first.end_byte) != (node.start_byte, node.end_byte):
            return None
        key = ("option", command.start_byte, command.end_byte)
        if key not in self._argv_cache:
            name, arguments = self._effective(command)
            self._argv_cache[key] = (
                [name] + [self._literal(a) for a in arguments],
                {a.start_byte: i for i, a in enumerate(arguments, 1)},
                {a.start_byte: a.end_byte for a in arguments},
            )
        argv, index_of, ends = self._argv_cache[key]
        at = index_of.get(argument.start_byte)
        if at is None or ends.get(argument.start_byte) != argument.end_byte:
            return None  # not an argument (a prefix assignment, a redirection)
        return programs.option_program(argv, at)

    def _body_slot(self, hole: Hole, body, start: int) -> Finding:
        """A placeholder in a here-document's body. The body is read here as bash reads it,
        not from the parse (tree-sitter reads `$(( ))` in a body as a subshell): only `$`,
        a backquote and a backslash are special in it, so a reference is plain data unless
        it stands after a backslash or inside an expansion of the author's."""
        if _quoted_heredoc(body, self._text):
            context = Context.HEREDOC_QUOTED
        else:
            context = Context.HEREDOC
            before = self.probe[body.start_byte : start]
            if _escaped(self.probe, start):
                return self._refuse(
                    hole, "right after a backslash in a here-document", "put the value elsewhere on the line"
                )
            text = self.probe[body.start_byte : body.end_byte]
            if b"$(" in text or b"`" in text or b"$[" in text or before.count(b"${") > before.count(b"}"):
                return self._refuse(
                    hole,
                    "in a here-document that runs commands or arithmetic (`$(...)`, backquotes, "
                    "`$[...]`) or inside a `${...}` of it, where its place cannot be shown",
                    "compute those before the here-document into variables, or quote its delimiter (<<'EOF')",
                )
        problem = self._path(body, start)
        if problem is not None:
            return self._refuse(hole, *problem)
        return Finding(context, hole.start, hole.end)

    def _refuse(self, hole: Hole, problem: str, help: str) -> Finding:
        return Finding(Context.UNSAFE, hole.start, hole.end, problem, help)

    def _uses(self, root, holes: set[tuple[int, int]]):
        """The author's own uses of a variable that may hold a value, where bash would read
        its text: `$x` in program position, an argument of `eval`, `${!x}`, `${x@P}`, and
        any name in arithmetic (`(( x ))`, `a[x]`, `${s:x}`, `let`, `[[ x -eq 1 ]]`)."""
        for node in _walk(root):
            if (node.start_byte, node.end_byte) in holes or not self._is_value_use(node):
                continue
            tokens = [c.type for c in node.children]
            if node.type == "expansion" and "!" in tokens[:2] and not _keys(node, self._text):
                problem = "an indirection `${!...}`, which reads it as a variable name", _FIX_NAME
            elif node.type == "expansion" and "P" in tokens:
                problem = "a prompt expansion `${x@P}`, which runs the command substitutions in it", _FIX_CODE
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
                if programs.is_code_variable(name)
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
        for name in sorted(self.integer_names & _DATA_VARIABLES):
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
                    _FIX_ARITHMETIC,
                )
                continue
            named = (region.start_byte, region.end_byte) in self.named_regions
            for name, start, end in self._names_in(region, holes, _ARITHMETIC_NAME):
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
                        _FIX_ARITHMETIC,
                    )
        for node in _walk(root):
            if node.type == "command":
                yield from self._command_uses(node, holes)
        for node in _walk(root):
            # Code written as text (`eval 'echo $x'`, `trap '...' EXIT`): a variable named in
            # it is expanded when the code runs.
            if node.type == "command" and self._effective(node)[0] in ("eval", "trap", "alias"):
                for argument in self._effective(node)[1]:
                    found = next(
                        (f for f in self._names_in(argument, holes, _ARITHMETIC_NAME) if self._holds_value(f[0])), None
                    )
                    if found is not None:
                        start, end = self._template_span(found[1], found[2])
                        yield Finding(
                            Context.UNSAFE,
                            start,
                            end,
                            f"`{found[0]}` may hold a value, and this is code bash runs",
                            _FIX_CODE,
                        )

    def _command_uses(self, command, holes):
        """What a command does with text that may hold a value, beyond where each piece stands:
        a variable name chosen when the script runs (`read "$n"`), `bash -c` code that uses a
        variable this script gave a value to (exported, or `N=... bash -c`), and an argument
        that may start with `-` given to a program whose options run programs."""
        name, arguments = self._effective(command)
        words = [self._literal(a) for a in arguments]
        if name in _READERS or name in ("declare", "typeset", "local", "export", "readonly", "unset"):
            for at in programs.refused_arguments([name, *words]):
                argument = arguments[at - 1] if at - 1 < len(arguments) else None
                if argument is not None and words[at - 1] is None and not self._holds_hole(argument, holes):
                    yield self._use(
                        argument, f"a variable name chosen when the script runs, given to `{name}`", _FIX_NAME
                    )
        code = programs.shell_code([name, *words]) if name is not None else None
        if code is not None and words[code - 1] is not None:
            # what the child may get with a value: the parent's variables, and `env N=...`
            given = {w.split("=", 1)[0] for w in words[: code - 1] if w and programs.UNKNOWN in w and "=" in w}
            inherited = frozenset(n for n in self.assigned | _DATA_VARIABLES if self._holds_value(n)) | given
            found = _child_uses(words[code - 1], inherited)
            if found:
                yield self._use(arguments[code - 1], f"code that uses a variable holding a value ({found})", _FIX_CODE)
        if name is not None and programs.program_name(name) in ("make", "gmake", "bmake"):
            given = [
                c
                for c in command.children
                if c.type == "variable_assignment"
                and not all(self._clean_source(v) for v in c.children if _field_of(c, v) == "value")
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
            if words[at - 1] is not None or programs.option_program(argv, at) is None:
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
                    f"an argument of `{programs.option_program(argv, at)}` that may start with "
                    "`-` and be read as an option that runs a program",
                    "write `--` before it (git: `--end-of-options`), or start the word with text of your own",
                )

    def _subscripted_name(self, node) -> bool:
        """A word written as text that holds a `[`: a name with a subscript."""
        if node.type not in ("word", "raw_string", "string", "concatenation") or b"[" not in self._bytes(node):
            return False
        return not any(c.type in ("expansion", "simple_expansion", "command_substitution") for c in _walk(node))

    def _first_piece(self, argument):
        """The first non-empty piece of a word (`''"$x"` starts with `$x`), or None if it
        starts with literal text."""
        pieces = [argument]
        while pieces:
            node = pieces[0]
            if self._bytes(node)[:1].isspace():
                return None  # (tree-sitter starts an expansion at the blank before it) it starts with a blank
            if node.type in ("concatenation", "string") and node.named_child_count:
                pieces = [c for c in node.children if c.is_named] + pieces[1:]
            elif (
                self._bytes(node) in (b"''", b'""', b"$''")
                or node.type in ("expansion", "simple_expansion")
                and not self._is_value_use(node)
                and not self._holds_hole(node)
            ):
                pieces.pop(0)  # empty quotes, or a variable without a value that may be empty
            else:
                break
        if not pieces:
            return None
        first = pieces[0]
        if first.type == "word" and re.search(r"[{}]", self._text(first)):
            return first  # a brace expansion: which word comes first is known only when it runs
        if first.type in ("word", "raw_string", "string_content", "ansi_c_string", "number"):
            return None
        return first

    def _holds_hole(self, node, holes=None) -> bool:
        """Whether a placeholder lies within `node` (found by bisection: a long script with
        many values stays linear)."""
        at = bisect.bisect_left(self.hole_starts, node.start_byte)
        return at < len(self.hole_starts) and self.holes[at][2] <= node.end_byte

    def _hole_at(self, start: int) -> bool:
        """Whether the byte `start` lies inside a placeholder."""
        at = bisect.bisect_right(self.hole_starts, start) - 1
        return at >= 0 and start < self.holes[at][2]

    def _overlaps_hole(self, start: int, end: int) -> bool:
        at = bisect.bisect_left(self.hole_starts, end) - 1
        return at >= 0 and self.holes[at][2] > start

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
        return at is not None and programs.option_program(argv, at) is not None

    def _arithmetic(self, root):
        """The nodes whose text bash evaluates as arithmetic."""
        for node in _walk(root):
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
                for child in _walk(node):
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
                if operator is not None and self._text(operator) in _ARITHMETIC_TESTS:
                    yield from (c for c in node.children if c.start_byte != operator.start_byte)
            elif (
                kind == "variable_assignment"
                and node.child_by_field_name("name") is not None
                and self._text(node.child_by_field_name("name")) in self.namerefs
            ):
                # `declare -n r='a[n]'`: each use of r evaluates the subscript
                yield from (c for c in node.children if _field_of(node, c) == "value")
            elif kind == "variable_assignment":
                name = node.child_by_field_name("name")
                if name is not None and self._text(name) in self.integer_names:
                    yield from (c for c in node.children if _field_of(node, c) == "value")
            elif (
                kind == "heredoc_body"
                and not _quoted_heredoc(node, self._text)
                and (b"$((" in self._bytes(node) or b"$[" in self._bytes(node))
            ):
                yield node

    def _in_double_brackets(self, node) -> bool:
        test = node.parent
        while test is not None and test.type in (*_ARITHMETIC_NODES, "negated_command"):
            test = test.parent
        return test is not None and test.type == "test_command" and test.children[0].type == "[["

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

    def _bytes(self, node) -> bytes:
        return self.probe[node.start_byte : node.end_byte]

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
                return f"in the input of `{runner}`, which runs its input as code", _FIX_CODE
            # tree-sitter hangs the rest of the line (`<<E | bash`) under the redirection
            for rest in (c for c in parent.children if c.type == "pipeline"):
                runner = next((r for r in map(self._stdin_runner, (c for c in rest.children if c.is_named)) if r), None)
                if runner is not None:
                    return f"piped into `{runner}`, which runs its input as code", _FIX_CODE
        if kind == "pipeline":
            stages = [c for c in parent.children if c.is_named]
            later = stages[next(i for i, c in enumerate(stages) if c.start_byte == child.start_byte) + 1 :]
            runner = next((r for r in map(self._stdin_runner, later) if r is not None), None)
            if runner is not None:
                return f"piped into `{runner}`, which runs its input as code", _FIX_CODE
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
            self._argv_cache[key] = (argv_refusals(argv), {a.start_byte: i for i, a in enumerate(arguments, 1)})
            self._argument_ends[key] = {a.start_byte: a.end_byte for a in arguments}
        refused, index_of = self._argv_cache[key]
        at = index_of.get(child.start_byte)
        if at is None or self._argument_ends[key].get(child.start_byte) != child.end_byte:
            return None  # a prefix assignment (checked on its own) or a redirection
        why = refused.get(at)
        if why is None:
            return None
        return why, _fix_for(why)

    def _effective(self, command) -> tuple[str | None, list]:
        """The builtin or program a command runs, behind `builtin`, `command` and `time`,
        its name read as bash reads it (`\\read`, `"read"`), and the arguments it gets."""
        words = [command.child_by_field_name("name"), *command.children_by_field_name("argument")]
        at = 0
        while at < len(words) - 1 and self._literal(words[at]) in ("builtin", "command", "time", "nohup"):
            at += 1
            while at < len(words) - 1 and (self._literal(words[at]) or "").startswith("-"):
                at += 1  # `command -p`, `time -p`
        return self._literal(words[at]), words[at + 1 :]

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
            code = programs.shell_code(argv)
            if code is not None and (argv[code] is None or _code_reads_stdin(argv[code])):
                return f"{argv[0]} -c"  # its code runs its input (`source /dev/stdin`, `bash`, `"$(cat)"`)
            if (
                argv[0] is not None
                and programs.is_interpreter(programs.program_name(argv[0]))
                and any(
                    argv[i] in ("-c", "-e", "-E", "-r", "--eval") and i + 1 < len(argv) and argv[i + 1] is None
                    for i in range(1, len(argv))
                )
            ):
                return argv[0]  # code not written literally (`python3 -c "$(cat)"`)
            return programs.reads_code_from_stdin(argv)
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
            for node in _walk(self.root):
                if node.type == "function_definition" and node.child_by_field_name("name") is not None:
                    self.bodies.setdefault(self._text(node.child_by_field_name("name")), []).append(
                        node.child_by_field_name("body")
                    )
        yield from self.bodies.get(name, ())

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
            return (
                f"assigned to `{name}`, a variable bash or the programs it starts read as code, a prompt, "
                "arithmetic or a place to load code from",
                "assign the value to a variable of your own and use it as data",
            )
        if name in self.integer_names:
            return f"assigned to `{name}`, declared an integer (-i): bash evaluates it as arithmetic", _FIX_ARITHMETIC
        if name in self.namerefs:
            return f"assigned to `{name}`, a name reference (-n): it assigns to the variable it names", _FIX_NAME
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
        name = child.child_by_field_name("name")
        if _flags(flags, "a") or _flags(flags, "A") or (name is not None and self._text(name) in self.array_names):
            return (
                f"assigned by `{keyword}` to an array, where bash reads `(...)` in it as a list whose "
                "`[$(cmd)]=` runs cmd"
            ), "assign to one element instead: arr[0]=..., or use a plain variable"
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
            return (
                f"after `{operator}` in a `${{...}}`, where bash evaluates it as arithmetic or an operator",
                _FIX_ARITHMETIC,
            )
        if operator in ("=", ":="):
            name = next((c for c in expansion.children if c.type == "variable_name"), None)
            if name is not None and programs.is_code_variable(self._text(name)):
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
        return self.probe[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    def _literal(self, node) -> str | None:
        """The text of a word the author wrote as a constant, or None if it expands."""
        if node is None:
            return None
        if node.type == "command_name" and node.child_count == 1:
            node = node.children[0]
        if node.type == "concatenation" and node.child_count and node.children[0].type == "word":
            head = self._text(node.children[0])
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=|-[-A-Za-z0-9_.=]*", head):
                return head + programs.UNKNOWN  # NAME=<value>, --option=<value>: the head is known
        if self._overlaps_hole(node.start_byte, node.end_byte):
            return None  # it holds a value (also inside single quotes, where it is text to the parser)
        text = self._text(node)
        if node.type in ("word", "number") and not re.search(r"[$`*?\[{~]", text):
            return re.sub(r"\\(.)", r"\1", text)  # `\;` is `;`
        if node.type == "raw_string":
            return text[1:-1]
        if node.type == "string" and all(c.type in ('"', "string_content") for c in node.children):
            return re.sub(r'\\([\\"$`])', r"\1", text[1:-1])
        return None

    def _template_span(self, start: int, end: int) -> tuple[int, int]:
        """Offsets in the template of the probe's bytes start..end (inside the author's text)."""
        for probe_at, template_at, data in reversed(self.text_at):
            if probe_at <= start:
                head = len(data[: start - probe_at].decode("utf-8", "surrogatepass"))
                length = len(self.probe[start:end].decode("utf-8", "surrogatepass"))
                return template_at + head, template_at + head + length
        return 0, 0


def _expanded_name(node):
    """The variable node of `$x`, `${x...}`, `${a[i]}` (its array's name), or None."""
    name = next((c for c in node.children if c.type in ("variable_name", "special_variable_name", "subscript")), None)
    if name is not None and name.type == "subscript":
        name = name.child_by_field_name("name")
    return name


def _keys(node, text) -> bool:
    """`${!a[@]}`: the keys of an array, not an indirection."""
    subscript = next((c for c in node.children if c.type == "subscript"), None)
    index = subscript.child_by_field_name("index") if subscript is not None else None
    return index is not None and text(index) in ("@", "*")


def _length(node) -> bool:
    """`${#x}`: a number whatever x holds."""
    return node.type == "expansion" and node.child_count > 1 and node.children[1].type == "#"


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


#: How deep a script may nest: following a value to the top costs the depth at each level
#: (a node's parent is found from the root), so the bound keeps the analysis linear.
_MAX_DEPTH = 64


def _depth(root) -> int:
    """The deepest nesting of the tree, in one walk."""
    deepest, stack = 0, [(root, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((c, depth + 1) for c in node.children)
    return deepest


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
    return Context.WORD


def _quoted_heredoc(body, text) -> bool:
    start = next((c for c in body.parent.children if c.type == "heredoc_start"), None) if body.parent else None
    return start is not None and any(q in text(start) for q in "'\"\\")


def _escaped(probe: bytes, at: int) -> bool:
    backslashes = 0
    while at - backslashes - 1 >= 0 and probe[at - backslashes - 1] == ord("\\"):
        backslashes += 1
    return backslashes % 2 == 1


#: Builtins that assign what they read to the variables they name.
_READERS = frozenset({"read", "mapfile", "readarray", "printf", "getopts", "wait"})
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
#: Programs some of whose options run programs: an unquoted variable split into their
#: arguments may become `-exec`, `--upload-pack=`, `--to-command=`...
_OPTIONS_RUN_PROGRAMS = programs.OPTIONS_RUN_PROGRAMS


def _assignments(node, text, effective=None):
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
            values = node.children_by_field_name("value")
            yield text(name), values if any(c.type == "in" for c in node.children) else None  # no `in`: "$@"
    elif node.type == "expansion" and any(c.type in ("=", ":=") for c in node.children):
        name = next((c for c in node.children if c.type == "variable_name"), None)
        if name is not None:
            yield text(name), [node]
    elif node.type == "command" and effective is not None:
        name, arguments = effective(node)
        if name in _READERS:
            # What they read is data from anywhere: each name they may assign is opaque.
            for argument in arguments:
                word = re.sub(r"[\\'\"]", "", text(argument))
                word = (word[2:] if word.startswith("-v") else word).split("[", 1)[0]
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word):
                    yield word, None
