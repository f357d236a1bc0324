"""IR nodes: frozen records (catalyst_dsl._internal.records), one shape for every dialect.

Positions are `eq=False` fields: equality and the canonical JSON ignore them, while
diagnostics and, later, the interpreter's messages use them.
"""

from __future__ import annotations

from typing import Iterator, Optional, Union

from catalyst_dsl._internal.records import field, record
from catalyst_dsl.syntax.expr.nodes import Part
from catalyst_dsl.syntax.source import Span

IR_VERSION = 1


def _span():
    return field(default=None, eq=False, kw_only=True, repr=False)


# -- values ----------------------------------------------------------------------------


@record
class Lit:
    """A literal scalar: string, number, boolean or null."""

    value: object
    span: Optional[Span] = _span()


@record
class Tmpl:
    """A string holding `{{ }}` or `${{ }}`: its text and parsed parts.

    `smap` maps offsets in the text to the file; `expected` is the type the context
    asks for (an action config key, a condition); both are for checking only.
    """

    text: str
    parts: tuple[Part, ...] = ()
    span: Optional[Span] = _span()
    smap: object = field(default=None, eq=False, kw_only=True, repr=False)
    expected: object = field(default=None, eq=False, kw_only=True, repr=False)


@record
class ListV:
    items: tuple["Value", ...]
    span: Optional[Span] = _span()


@record
class Entry:
    key: str
    value: "Value"
    span: Optional[Span] = _span()  # the key's position


@record
class MapV:
    entries: tuple[Entry, ...]
    span: Optional[Span] = _span()

    def get(self, key: str) -> "Value | None":
        for e in self.entries:
            if e.key == key:
                return e.value
        return None


@record
class StepsV:
    steps: tuple["Step", ...]
    span: Optional[Span] = _span()


@record
class InputsV:
    inputs: tuple["InputDecl", ...]
    span: Optional[Span] = _span()


Value = Union[Lit, Tmpl, ListV, MapV, StepsV, InputsV]


def text_or_parts(value: Value) -> str | tuple[Part, ...] | None:
    """A value as the analysis of scripts and commands (syntax/shell/) reads it: a literal
    string's text, a template's parts, None for any other value. The analysis takes these
    and knows nothing of the IR; the checker and the run hand it the same."""
    if isinstance(value, Lit):
        return value.value if isinstance(value.value, str) else None
    return value.parts if isinstance(value, Tmpl) else None


def computed_keys(value: Value | None) -> frozenset[str]:
    """The keys of a mapping whose values are not literals (none for any other value): of a
    step's `env:`, the names a value may reach its program under."""
    if not isinstance(value, MapV):
        return frozenset()
    return frozenset(e.key for e in value.entries if not isinstance(e.value, Lit))


# -- declarations ------------------------------------------------------------------------


@record
class Rule:
    """One validation rule of an input: regex, minLength, maxLength, min or max."""

    kind: str
    value: object
    code: Optional[str] = None
    message: Optional[str] = None
    span: Optional[Span] = _span()


@record
class InputDecl:
    name: str
    type: str  # string | number | boolean | enum | array | object | any
    description: Optional[str] = None
    required: bool = False
    default: Optional[Value] = None
    allowed: Optional[tuple[object, ...]] = None
    transform: Optional[str] = None
    validation: tuple[Rule, ...] = ()
    secret: bool = False
    span: Optional[Span] = _span()


@record
class OutputDecl:
    name: str
    type: str
    span: Optional[Span] = _span()


@record
class PolicyAction:
    action: str  # Stop | Continue | SilentlyContinue | Ignore | Inquire | Suspend
    retry_count: int = 0
    span: Optional[Span] = _span()
    #: What to tell the person once the retries are spent: the fix of a failure that stops
    #: the run, part of an Inquire's question, beside a failure the run continues past.
    message: Optional[str] = field(default=None, kw_only=True, metadata={"omit_if_default": True})


@record
class ErrorPolicy:
    default: Optional[PolicyAction] = None
    by_code: tuple[tuple[str, PolicyAction], ...] = ()
    span: Optional[Span] = _span()


@record
class Check:
    """One predicate of a step's `requires:` or `ensures:` (docs/actions.md, "Step checks").

    `kind` is `file-exists`, `file-contains`, `command-output` or `expression`; `args`
    holds its operands by name: `path`, `regex`, `argv`, `expect`, `match`, `expression`.
    The combinators `all`, `any` and `not` have no operands but `checks`.
    """

    kind: str
    args: MapV
    span: Optional[Span] = _span()
    #: The predicates of the combinators `all`, `any` (a list) and `not` (one).
    checks: tuple["Check", ...] = ()
    #: The error code raised when this predicate is the one that fails (else the Checks' code).
    code: Optional[str] = None
    #: What the failure says when this predicate is the one that fails, in the playbook's
    #: own terms (a template, filled in then); else the predicate is shown as written.
    message: Optional[Tmpl] = None


@record
class Checks:
    """A step's pre- or post-checks: predicates tried in order, and the error code the
    step fails with when one does not hold (PreconditionFailed, PostconditionFailed, or
    the code the playbook names, such as ContractViolation)."""

    checks: tuple[Check, ...]
    code: str
    span: Optional[Span] = _span()
    #: For `ensures:`: whether their holding proves that a step interrupted on its way
    #: finished its work (resume then completes it without running it again).
    recovers: bool = True


@record
class Gate:
    """`checkpoint:` next to an action in its long forms (`before`, or a mapping): a pause
    before or after the step, whose answer may skip the step or cancel the run.

    `options` are the answers offered, a subset of GATE_OPTIONS in that order. `policy`
    (the APPROVAL_POLICY schema of actions/control/checkpoint.py, shared with the `checkpoint`
    action) says who may pass it: absent, as every pause (`--mode autonomous` does);
    `human`, only a person; `{rules: […]}`, the rules first (docs/running.md).
    """

    when: str  # "before" | "after"
    message: Optional["Value"] = None
    options: tuple[str, ...] = ()
    policy: Optional["Value"] = None
    span: Optional[Span] = _span()


#: The answers a gate may offer: run the step (or go on), skip it, cancel the run.
GATE_OPTIONS = ("yes", "skip", "abort")


@record
class Step:
    action: str
    config: MapV
    name: Optional[str] = None
    condition: Optional[Value] = None
    error_policy: Optional[ErrorPolicy] = None
    timeout: Optional[float] = None  # seconds
    checkpoint: Union[bool, str, None] = None
    writes: tuple[Value, ...] = ()
    #: Whether the step has a `writes:` key at all: `writes: []` says "writes nothing".
    writes_declared: bool = False
    isolated: bool = False
    #: `checkpoint: before` or `checkpoint: {when, message, options, policy}` (the short
    #: forms `true` and a message stay in `checkpoint`: a pause after the step).
    gate: Optional[Gate] = None
    #: `approved: true`: the author pre-approved this AI step's effects (no pause for them).
    approved: bool = False
    known: bool = True  # False when the action is unknown (already reported)
    span: Optional[Span] = _span()
    action_span: Optional[Span] = _span()
    name_span: Optional[Span] = _span()
    #: Checked before each attempt of the step (`requires:`) and after it (`ensures:`).
    requires: Optional[Checks] = None
    ensures: Optional[Checks] = None
    #: `bindings:`: name -> value merged into the playbook's `bindings` object once the step
    #: has completed (its own result readable by its name); or one `${{ }}` template whose
    #: value, an object, has every key merged (a dialect whose nodes return open objects).
    bindings: Optional[Union[MapV, Tmpl]] = None
    #: `cache:`: how many seconds a result of the step may be reused for the same action and
    #: config (runtime/engine/result_cache.py); None, the default, never.
    cache: Optional[float] = field(default=None, kw_only=True, metadata={"omit_if_default": True})
    #: The name a person reads for the step instead of its id (`name`, else `action@line`),
    #: for a step a dialect's lowering adds on behalf of something its author named (a
    #: cleo node's out-edges, named after the node). Only shown: the step's id stays its
    #: address (results, `retryFrom`, failure records' `step`), as its path does. Like a
    #: span, it is no part of the step's meaning (equality, the IR's JSON, fingerprints).
    display_name: Optional[str] = field(default=None, eq=False, kw_only=True, repr=False)


@record
class CatchClause:
    code: str
    steps: tuple[Step, ...]
    span: Optional[Span] = _span()


@record
class Trigger:
    event: str
    action: Optional[str] = None
    args: Optional[Value] = None
    span: Optional[Span] = _span()


@record
class Reviewers:
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()


@record
class CallRef:
    """A reference to another playbook: a Markdown `@path`, resolved by the library checks."""

    target: str
    kind: str  # "markdown-ref"
    span: Optional[Span] = _span()


@record
class Playbook:
    name: str
    description: str
    owner: Optional[str]
    dialect: str  # "catalyst-yaml" | "markdown" | a foreign dialect's name (dialects/registry.py)
    file: str = field(default="", eq=False, kw_only=True)
    language: int = 1
    reviewers: Reviewers = Reviewers()
    triggers: tuple[Trigger, ...] = ()
    inputs: tuple[InputDecl, ...] = ()
    outputs: tuple[OutputDecl, ...] = ()
    artifacts: tuple[Value, ...] = ()
    allowed_write_paths: Optional[tuple[Value, ...]] = None
    error_policy: Optional[ErrorPolicy] = None
    steps: tuple[Step, ...] = ()
    catch: tuple[CatchClause, ...] = ()
    finally_: tuple[Step, ...] = ()
    calls: tuple[CallRef, ...] = ()
    #: `oneRunPer`: inputs whose values name a run: `catalyst run` with the same values
    #: continues the unfinished run of this playbook instead of starting a second one.
    one_run_per: tuple[str, ...] = ()
    ir_version: int = IR_VERSION
    span: Optional[Span] = _span()
    #: Why this version can check the playbook but not run it (a construct of its dialect
    #: that the interpreter does not have yet); `catalyst run` refuses with these reasons.
    #: Not in the IR's JSON (like positions): it depends on this version, not on the file.
    unrunnable: tuple[str, ...] = field(default=(), eq=False, kw_only=True)


def nested_steps(value: "Value") -> Iterator[tuple[Step, ...]]:
    """The step lists held in a config value (then/else, loop and try bodies, catch clauses)."""
    if isinstance(value, StepsV):
        yield value.steps
    elif isinstance(value, ListV):
        for item in value.items:
            yield from nested_steps(item)
    elif isinstance(value, MapV):
        for entry in value.entries:
            yield from nested_steps(entry.value)


#: The config values `nested_steps` may find steps in.
_HOLDERS = (StepsV, ListV, MapV)


def steps_within(step: Step) -> Iterator[Step]:
    """The step and every step nested in it, in document order."""
    yield step
    for entry in step.config.entries:
        if isinstance(entry.value, _HOLDERS):  # a text or a number holds no steps: no generator made for it
            for steps in nested_steps(entry.value):
                for inner in steps:
                    yield from steps_within(inner)


def _collect_within(step: Step, found: list[Step]) -> None:
    """`steps_within(step)` appended to `found`: the same order, without a generator for
    each nested step (a library's walks visit every step of every playbook several times)."""
    found.append(step)
    for entry in step.config.entries:
        if isinstance(entry.value, _HOLDERS):
            for steps in nested_steps(entry.value):
                for inner in steps:
                    _collect_within(inner, found)


def all_steps(playbook: Playbook) -> tuple[Step, ...]:
    """Every step of a playbook, nested ones included: main steps, catch, finally, in
    document order. Walked once per playbook: a check and then its what-if ask for the
    same playbook's steps six times (permissions, programs, gates, the run's locks…)."""
    walked = _WALKED.get(id(playbook))
    if walked is not None and walked[0] is playbook:
        return walked[1]
    found: list[Step] = []
    for top in (*playbook.steps, *(s for clause in playbook.catch for s in clause.steps), *playbook.finally_):
        _collect_within(top, found)
    steps = tuple(found)
    if len(_WALKED) >= _WALKED_KEPT:
        _WALKED.clear()  # one call, so threads walking at once cannot trip over each other
    # The playbook is kept with its steps: its id cannot be another's while the entry
    # stands, and a playbook never changes (records are immutable).
    _WALKED[id(playbook)] = (playbook, steps)
    return steps


#: The steps of the playbooks walked last, by identity (`all_steps`); a few at most, as
#: the language server compiles playbook after playbook.
_WALKED: dict[int, tuple[Playbook, tuple[Step, ...]]] = {}
_WALKED_KEPT = 32
