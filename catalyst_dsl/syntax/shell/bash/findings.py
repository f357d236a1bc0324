"""What the bash analysis answers: placeholders in, a Finding per place a value stands or
is used out, and the fixes a refusal suggests.

Shared by every part of the analyzer and by its callers.
"""

from __future__ import annotations


from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl._internal.records import record
from catalyst_dsl.syntax.shell.slots import COMMAND_HELP, Context

#: The environment variable that carries the value of placeholder `n`.
REFERENCE = "CATALYST_V_{}"
REFERENCE_NAME = LazyPattern(r"CATALYST_V_[0-9]+")

# The fixes a refusal suggests, by what bash would make of the value: arithmetic, a
# variable's name, or code.
FIX_ARITHMETIC = (
    "bash evaluates a value's text in arithmetic as an expression, where `a[$(cmd)]` runs cmd: "
    "compute in the playbook instead (`{{ inputs.n + 1 }}` is placed as a value), or compare as text "
    "with `[[ $x == ... ]]`"
)
FIX_NAME = "a value cannot name a variable: write the name in the script, and keep the value in it"
FIX_CODE = (
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
    #: option that may run something (`programs.options.OPTIONS_RUN_PROGRAMS`): a run refuses such a value.
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


def fix_for(why: str) -> str:
    """The fix for a refusal `programs` gives: by what the program would make of the value."""
    if "program position" in why or "taken for that program" in why:
        return COMMAND_HELP
    if "name" in why:
        return FIX_NAME
    return FIX_CODE
