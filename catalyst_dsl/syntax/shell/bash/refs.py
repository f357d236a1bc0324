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

The analyzer is composed of one part per concern (this package's other modules).
"""

from __future__ import annotations

import functools

from catalyst_dsl.syntax.shell.programs.interpreters import BASH_LIKE, shell_code
from catalyst_dsl.syntax.shell.programs.refusals import refused_arguments
from catalyst_dsl.syntax.shell.programs.words import UNKNOWN, argv_words, program_name
from catalyst_dsl.syntax.shell.bash.allow_list import AllowList
from catalyst_dsl.syntax.shell.bash.arithmetic import Arithmetic
from catalyst_dsl.syntax.shell.bash.facts import Facts
from catalyst_dsl.syntax.shell.bash.findings import FIX_CODE, Analysis, Finding, Hole
from catalyst_dsl.syntax.shell.bash.placement import Placement
from catalyst_dsl.syntax.shell.bash.readable import Readability
from catalyst_dsl.syntax.shell.bash.render import Rendering
from catalyst_dsl.syntax.shell.bash.stdin import StdinRunners
from catalyst_dsl.syntax.shell.bash.tree import bash_parser
from catalyst_dsl.syntax.shell.bash.uses import Uses
from catalyst_dsl.syntax.shell.slots import Context


def argv_analysis(items) -> tuple[list[str | None], dict[int, str], int | None]:
    """An argv step's words as the check and the run read them (one place, so they agree),
    from each item's text or template parts (`programs.words.argv_words`): the words, the
    positions refused with why, and the position of the code of `bash -c`, which is a bash
    script, or None."""
    words = argv_words(items)
    return words, argv_refusals(words), shell_code(words)


def argv_refusals(argv: list[str | None]) -> dict[int, str]:
    """The arguments of a command (a script's or an argv step's) that may not hold a value,
    with why: those its program runs or reads as names (`programs`), and those the literal
    code of a `bash -c` uses as code."""
    refused = refused_arguments(argv)
    makes = [i for i, w in enumerate(argv) if w is not None and program_name(w) in ("make", "gmake", "bmake")]
    for at, word in enumerate(argv):
        if makes and at < makes[0] and word is not None and UNKNOWN in word and "=" in word.split(UNKNOWN)[0]:
            refused.setdefault(
                at, "in the environment of `make`, which expands it in recipes as text that may call $(shell ...)"
            )
        if at == 0 or word is not None and program_name(word) in BASH_LIKE:
            for i, why in inline_code_uses(argv[at:]).items():
                refused.setdefault(at + i, why)
    return refused


def inline_code_uses(argv: list[str | None]) -> dict[int, str]:
    """For `bash -c CODE NAME ARG...` with CODE written literally: the arguments CODE
    uses as code (`eval "$1"`, `(( $1 ))`), by position in argv, with why."""
    code = shell_code(argv)
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
    root = analyzer.root = bash_parser().parse(analyzer.probe).root_node
    if analyzer._unreadable(root) is not None:
        return "code that does not parse as bash"
    analyzer._facts(root)
    found = next(iter(analyzer._uses(root, set())), None)
    return found.problem if found is not None else ""


@functools.lru_cache(maxsize=1024)
def _code_reads_stdin(code: str) -> bool:
    """Whether the literal code of a `bash -c` runs its standard input as code."""
    analyzer = _Analyzer((code,))
    root = analyzer.root = bash_parser().parse(analyzer.probe).root_node
    if analyzer._unreadable(root) is not None:
        return True
    analyzer._facts(root)
    return analyzer._stdin_runner(root) is not None


@functools.lru_cache(maxsize=1024)
def _positional_uses(code: str) -> tuple[Finding, ...]:
    analyzer = _Analyzer((code,))  # (its positional parameters hold values, as everywhere)
    root = analyzer.root = bash_parser().parse(analyzer.probe).root_node
    if analyzer._unreadable(root) is not None:
        return (Finding(Context.UNSAFE, 0, len(code), "code that does not parse as bash", FIX_CODE),)
    analyzer._facts(root)
    return tuple(analyzer._uses(root, set()))


@functools.lru_cache(maxsize=4096)
def analyze(pieces: tuple[str | Hole, ...], given: frozenset = frozenset()) -> Analysis:
    """The analysis of a script made of the author's text (str) and placeholders (Hole);
    `given`: the variables the step's `env:` sets from a value, which hold one too."""
    analyzer = _Analyzer(pieces)
    analyzer.inherited = given
    return analyzer.run()


class _Analyzer(Readability, Facts, Placement, AllowList, Uses, Arithmetic, StdinRunners, Rendering):
    """One script's analysis: the parts, and what only the whole can do (analyse a
    child script, refuse the arguments of a command)."""

    def run(self) -> Analysis:
        if not self.holes and not self.inherited:
            return Analysis((), (), None)
        tree = bash_parser().parse(self.probe)
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

    def _refused_arguments(self, argv: list[str | None]) -> dict[int, str]:
        return argv_refusals(argv)

    def _child_code_reads_stdin(self, code: str) -> bool:
        return _code_reads_stdin(code)

    def _child_code_problem(self, code: str, inherited: frozenset) -> str:
        return _child_uses(code, inherited)
