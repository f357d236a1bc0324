"""Secret taint: the mark a value computed from a secret carries, as Terraform propagates `sensitive`.

A secret input's value enters a run as `SecretText`: a `str` that also names the secret
inputs it comes from and the run's `Masker`. The evaluator (`evaluate.py`) marks every
value it computes from a marked value, so `token.toUpperCase()`, `'Bearer ' + token` or
`JSON.stringify({t: token})` are marked too, whatever built-in computed them. A marked
value is still the real text: a program receiving it gets what the playbook computed.
Only where values are shown or stored does the mark matter:

- each derived text of `MIN_DERIVED_LENGTH` characters or more is added to the run's
  masker when it is computed, so its exact text is masked (`***`) in every log line,
  snapshot, diff and message, also when a program echoes it later;
- a plan shows a marked value as a placeholder: `<secret:NAME>` for the secret itself,
  `<secret-derived:NAME>` for a value computed from it (`placeholders`).

Text read from elsewhere (a step's output) that holds text the masker hides is marked as
`echoed` when an expression reads it, so what is computed from a program's echo of a
secret is secret too.

Only text is marked: a number or boolean computed from a secret (`token.length`,
`token === 'x'`) says little about it and stays plain. Containers are not marked; the
text inside them is.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from catalyst_dsl.runtime.values.jsvalues import to_text

if TYPE_CHECKING:
    from catalyst_dsl.runtime.values.secrets import Masker

#: Derived text shorter than this is not added to the masker: masking every `a` that
#: `token.charAt(0)` yields would hide ordinary output and protect nothing. Such a value
#: is still marked, so a plan shows it as a placeholder.
MIN_DERIVED_LENGTH = 4


class SecretText(str):
    """Text that is, or was computed from, secret inputs; behaves exactly as the `str` it holds."""

    sources: frozenset[str]
    derived: bool
    masker: "Masker | None"
    #: How a plan shows text put together from pieces: the pieces, secret ones as placeholders.
    shown: str | None
    #: The secret pieces such text was put together from (a plan hides them in diffs too).
    parts: tuple["SecretText", ...]

    def __new__(
        cls,
        text: str,
        sources: frozenset[str],
        masker: "Masker | None",
        derived: bool,
        shown: str | None = None,
        parts: tuple["SecretText", ...] = (),
    ) -> "SecretText":
        _yaml_writes_marked_text()
        made = super().__new__(cls, text)
        made.sources = sources
        made.masker = masker
        made.derived = derived
        made.shown = shown
        made.parts = parts
        return made

    # Text is immutable: a copy (deepcopy of a scope, a parallel branch) is the same
    # marked value, and the run's masker is shared, never copied.
    def __copy__(self) -> "SecretText":
        return self

    def __deepcopy__(self, memo: dict) -> "SecretText":
        return self


@functools.cache
def _yaml_writes_marked_text() -> None:
    """YAML writers (front matter of `file-write`, a plugin's) write a marked text as the
    text it holds. Registered when the first marked text is made, which is before any can
    be written, rather than at import: PyYAML costs a run without secrets (most what-ifs)
    about 10 ms."""
    from catalyst_dsl.syntax.pyyaml import yaml

    yaml.SafeDumper.add_representer(SecretText, yaml.representer.SafeRepresenter.represent_str)


class Taint:
    """The secrets a value was computed from, and the masker of the run they belong to."""

    __slots__ = ("sources", "masker")

    def __init__(self) -> None:
        self.sources: set[str] = set()
        self.masker: Masker | None = None

    def __bool__(self) -> bool:
        return bool(self.sources)

    def take(self, value: object) -> None:
        """Add the marks of `value` and of the text anywhere inside it."""
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, SecretText):
                self.sources |= item.sources
                if self.masker is None:
                    self.masker = item.masker
            elif isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, (list, tuple)):
                stack.extend(item)

    def merge(self, other: "Taint") -> None:
        self.sources |= other.sources
        if self.masker is None:
            self.masker = other.masker


#: Set once a secret is marked in this process: until then the evaluator skips all taint
#: work, and no SecretText exists (a plan then looks for none: runtime/simulation/planning.py).
_active = False


def active() -> bool:
    return _active


def secret_text(value: object, name: str, masker: "Masker") -> object:
    """A secret input's value, marked; values that are not text are returned as they are."""
    global _active
    if not isinstance(value, str):
        return value
    _active = True
    return SecretText(value, frozenset({name}), masker, derived=False)


def taint_of(value: object) -> Taint:
    found = Taint()
    found.take(value)
    return found


#: The source named for text found to hold a secret's text (a program's output echoing it).
ECHOED = "echoed"


def revealing(text: str, masker: "Masker | None") -> Taint:
    """A taint for plain `text` that holds text the masker hides (none when it holds none)."""
    found = Taint()
    if masker is not None and len(text) >= MIN_DERIVED_LENGTH and masker.mask_text(text) != text:
        found.sources.add(ECHOED)
        found.masker = masker
    return found


def mark(
    value: object, taint: Taint, *, joined: bool = False, shown: str | None = None, parts: tuple[SecretText, ...] = ()
) -> object:
    """`value` computed from the secrets of `taint`: its text marked and added to the masker.

    `joined`: the text is pieces put together (a template, `a + b`), each already marked
    and masked on its own; it is added to the masker only when none of it is masked yet
    (`'id-' + token.slice(0, 3)`), so `"deploying with {{token}}"` prints as
    `deploying with ***`, not as `***`. `shown`, `parts`: how a plan shows the text (see
    `placeholder`) and the secret pieces it holds.

    Lists and dicts are copied with their text marked (dict keys stay plain: they are
    names); numbers, booleans and null are returned unchanged.
    """
    if isinstance(value, SecretText):
        if taint.sources <= value.sources:
            return value
        return _derived(value, taint, joined, shown, parts)
    if isinstance(value, str):
        return _derived(value, taint, joined, shown, parts)
    if isinstance(value, (dict, list, tuple)):
        marked = (
            {k: mark(v, taint) for k, v in value.items()}
            if isinstance(value, dict)
            else type(value)(mark(v, taint) for v in value)
        )
        _whole(marked, taint)
        return marked
    return value


def _whole(container: object, taint: Taint) -> None:
    """A list or object of pieces each too short to mask (`token.split('')`) still holds
    the whole secret: its text, as a template or a program receives it, is masked."""
    masker = taint.masker
    if masker is None or not marked_texts(container):
        return  # numbers and booleans computed from a secret stay plain
    text = to_text(list(container) if isinstance(container, tuple) else container)
    if len(text) >= MIN_DERIVED_LENGTH and masker.mask_text(text) == text:
        masker.add(text)


def _derived(text: str, taint: Taint, joined: bool, shown: str | None, parts: tuple[SecretText, ...]) -> SecretText:
    masker = taint.masker
    if masker is not None and len(text) >= MIN_DERIVED_LENGTH:
        # Text put together around a masked piece is shown with only that piece masked;
        # what a program makes of the whole (its base64) is masked whole.
        masker.add(str(text), as_text=not (joined and masker.mask_text(text) != text))
    sources = frozenset(taint.sources | (text.sources if isinstance(text, SecretText) else set()))
    return SecretText(text, sources, taint.masker, derived=True, shown=shown, parts=parts)


def placeholder(text: SecretText) -> str:
    """How a plan shows marked text: `<secret:NAME>`, or `<secret-derived:A,B>` when computed
    from secrets; a template's text shows its own text with each secret piece a placeholder."""
    if text.shown is not None:
        return text.shown
    names = ",".join(sorted(text.sources))
    return f"<secret-derived:{names}>" if text.derived else f"<secret:{names}>"


def placeholders(value: object) -> object:
    """`value` with every marked text replaced by its placeholder (new containers; others as they are)."""
    if isinstance(value, SecretText):
        return placeholder(value)
    if isinstance(value, dict):
        return {k: placeholders(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [placeholders(v) for v in value]
    return value


def marked_texts(value: object) -> list[SecretText]:
    """Every marked text in `value`, and the secret pieces of text put together from them."""
    found: list[SecretText] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, SecretText):
            found.append(item)
            stack.extend(item.parts)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return found
