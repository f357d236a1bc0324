"""`catalyst check --fix`: the quick fixes the language server offers, applied to the files.

The edits are the editor's own (diagnostics/fixes.py for did-you-means, lsp/edits.py for
`writes: []` and suppression comments), put into the text at their exact positions, so
that the rest of the file (its formatting, comments, quoting) stays as it was. Each pass
works out the fixes of the findings still reported, applies them in memory, checks the
project again with the new texts and keeps a file's edits only when no finding appears
that was not there before; a file whose edits would add one is tried one edit at a time,
and an edit that still adds one is refused. Nothing is written until the end, and then
only files whose text changed, in their own line endings (and byte-order mark).
"""

from __future__ import annotations

import contextlib
import re
import os
import stat
import tempfile
from collections import Counter
from typing import Callable, Iterable

from catalyst_dsl._internal.records import factory, record
from catalyst_dsl.diagnostics.fixes import replacement
from catalyst_dsl.diagnostics.ids import UNCHECKED_SHELL_WRITES
from catalyst_dsl.diagnostics.model import Diagnostic
from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl.lsp import edits
from catalyst_dsl.syntax.source import SourceFile

#: How sure a fix is: a safe one does what the finding's help says and nothing else
#: (applied by `--fix`); an unsafe one may not be what was meant (`--unsafe-fixes`); a
#: suppression silences instead of fixing (`--suppress`).
SAFE, UNSAFE, SUPPRESSION = "safe", "unsafe", "suppression"
#: Passes of fixing and checking again, at most: a fix may uncover a finding with its own fix
#: (a did-you-mean on a step whose action was misspelt), and a file refused whole is tried
#: again one edit a pass.
MAX_PASSES = 25
#: Files fixes may edit: YAML and Markdown playbooks (suppression comments are YAML's or HTML's).
_EDITABLE = (".yaml", ".yml", ".md", ".cantbook")


@record
class Fix:
    path: str
    #: Character offsets into the file's text (as the checker reads it: `\n` line ends).
    start: int
    end: int
    text: str
    code: str
    line: int
    col: int
    kind: str
    #: What it does, as printed: "replaced 'dispaly' with 'display'".
    title: str
    #: The text of the finding's line, which tells apart fixes of one title in one file.
    context: str = ""

    @property
    def key(self) -> tuple:
        """The same fix in a later pass, whose offsets (and lines) other fixes may have
        moved: refusing one `writes: []` must not refuse those of the other steps."""
        return (self.path, self.code, self.kind, self.title, self.context)


@record(frozen=False)
class Checked:
    """One check of the project, as fixing needs it: the findings reported, the texts they
    were found in, and each file's compiled playbook (for `writes:` fixes)."""

    diagnostics: list[Diagnostic]
    sources: dict[str, SourceFile]
    playbooks: Callable[[str], object]
    #: The files checked (those asked for, less scanned files that are not playbooks).
    files: list[str] = factory(list)
    #: Every finding, those the command line's `--select`/`--ignore` hide included: a fix
    #: must not bring a finding that is only out of sight (None: `diagnostics`).
    all_diagnostics: list[Diagnostic] | None = None

    @property
    def everything(self) -> list[Diagnostic]:
        return self.diagnostics if self.all_diagnostics is None else self.all_diagnostics


@record(frozen=False)
class Outcome:
    applied: list[Fix] = factory(list)
    #: Fixes (kept once per finding) not applied because each would add findings: (fix, codes added).
    refused: list[tuple[Fix, list[str]]] = factory(list)
    #: Path -> the fixed text (`\n` line ends) of every file that changed.
    texts: dict[str, str] = factory(dict)
    #: The check of the files as they were, and of the fixed texts.
    first: Checked | None = None
    checked: Checked | None = None
    #: Files left alone, with why: their line ends are mixed (a rewrite would change the
    #: others), or the file cannot be written where it is.
    skipped: list[tuple[str, str]] = factory(list)
    #: Fixes were left untried after MAX_PASSES: another run fixes more.
    unfinished: bool = False
    #: Path -> the file's bytes before the first check, which the fixes were made from.
    originals: dict[str, bytes] = factory(dict)


def fixes_for(d: Diagnostic, source: SourceFile, playbook) -> list[Fix]:
    """The fixes (not suppressions) the editor offers for finding `d` of `source`."""
    span = d.span
    if span is None:
        return []
    found: list[Fix] = []
    swap = replacement(d, source)
    if swap is not None:
        word = source.line_text(span.line)[span.col - 1 : span.end_col - 1]
        kind = SAFE if _one_typo_apart(word, swap.text) else UNSAFE
        start = source.offset(span.line, span.col)
        found.append(
            Fix(
                source.path,
                start,
                start + len(word),
                swap.text,
                d.code,
                span.line,
                span.col,
                kind,
                f"replaced {_quoted(word)} with {_quoted(swap.text)}",
                source.line_text(span.line).strip(),
            )
        )
    if d.code == UNCHECKED_SHELL_WRITES and playbook is not None:
        # The step counts as writing nothing already (C817): saying so changes no run.
        insertion = edits.missing_writes(source, playbook, span.line, span.col)
        if insertion is not None:
            found.append(_inserted(source, insertion, d, SAFE, f"added `{insertion.text.strip()}`"))
    return found


def _quoted(word: str) -> str:
    """`word` in quotes, unless it is a quoted YAML value already (as written)."""
    return word if word[:1] in ("'", '"') else f"'{word}'"


def suppressions_for(diagnostics: Iterable[Diagnostic], source: SourceFile) -> list[Fix]:
    """One comment per line (and one file-wide comment) silencing every code of `diagnostics`
    found in `source` there."""
    by_place: dict[tuple[int, int], tuple[edits.Insertion, list[str], Diagnostic]] = {}
    for d in diagnostics:
        if d.span is None:
            continue
        insertion = edits.suppression(source, d.code, d.span.line)
        if insertion is None:
            continue
        place = (insertion.line, insertion.column)
        if place not in by_place:
            by_place[place] = (insertion, [d.code], d)
        elif d.code not in by_place[place][1]:
            by_place[place][1].append(d.code)
    found = []
    for insertion, codes, d in by_place.values():
        # The codes after the first go beside it, in the comment worked out for it.
        text = insertion.text.replace(codes[0], ", ".join(codes), 1)
        merged = edits.Insertion(insertion.title, insertion.line, insertion.column, text)
        found.append(_inserted(source, merged, d, SUPPRESSION, f"added `{text.strip(' ,' + chr(10))}`"))
    return found


def _inserted(source: SourceFile, insertion: edits.Insertion, d: Diagnostic, kind: str, title: str) -> Fix:
    at = source.offset(insertion.line + 1, insertion.column + 1)
    context = source.line_text(d.span.line).strip()
    return Fix(source.path, at, at, insertion.text, d.code, d.span.line, d.span.col, kind, title, context)


def apply(text: str, fixes: Iterable[Fix]) -> tuple[str, list[Fix]]:
    """`text` with `fixes` made, and those made: in order of position, leaving out a fix that
    overlaps one already taken (the next pass works it out again on the new text)."""
    taken: list[Fix] = []
    for fix in sorted(fixes, key=lambda f: (f.start, f.end)):
        if taken and (fix.start < taken[-1].end or fix.start == taken[-1].start):
            continue
        taken.append(fix)
    pieces, at = [], 0
    for fix in taken:
        pieces += [text[at : fix.start], fix.text]
        at = fix.end
    pieces.append(text[at:])
    return "".join(pieces), taken


def fix_project(
    check: Callable[[dict[str, str]], Checked], files: Iterable[str], kinds: set[str], root: str
) -> Outcome:
    """Fix the findings of `files` with the fixes of `kinds`. `check(overlay)` checks the
    project with the texts of `overlay` (path -> text) in place of the files'; `root` is the
    project's directory, outside which nothing is written."""
    outcome = Outcome()
    # The checker names files by absolute path (project/library.py), whatever PATHS said.
    editable = {os.path.abspath(f) for f in files if f.endswith(_EDITABLE)}
    for path in sorted(editable):
        reason = _not_editable(path, root)
        if reason is not None:
            editable.discard(path)
            outcome.skipped.append((path, reason))
    for path in editable:  # read before the check reads them: a change after is seen at the write
        with contextlib.suppress(OSError):
            outcome.originals[path] = _read(path)
    state = _Passes(check, editable, outcome)
    fixing = kinds - {SUPPRESSION}
    if fixing:
        state.run(
            lambda d, source, checked: [
                f for f in fixes_for(d, source, checked.playbooks(source.path)) if f.kind in fixing
            ]
        )
    if SUPPRESSION in kinds:
        state.run(None)
    outcome.first, outcome.checked = state.first, state.checked
    return outcome


class _Passes:
    """Fixing in passes, each checked again (the module's docstring)."""

    def __init__(self, check, editable: set[str], outcome: Outcome) -> None:
        self.check = check
        self.editable = editable
        self.outcome = outcome
        self.checked = self.first = check({})
        self.refused: set[tuple] = set()
        self.one_at_a_time: set[str] = set()

    def run(self, fixes_of) -> None:
        for _ in range(MAX_PASSES):
            proposed = self._proposed(fixes_of)
            if not proposed:
                return
            trial, made = dict(self.outcome.texts), {}
            for path, fixes in proposed.items():
                text, taken = apply(self.checked.sources[path].text, fixes)
                if path in self.one_at_a_time:
                    text, taken = apply(self.checked.sources[path].text, taken[:1])
                trial[path], made[path] = text, taken
            after = self.check(trial)
            worse = _worse(self.checked.everything, after.everything, set(made))
            if not worse:
                self._keep(made, trial, after)
                continue
            for path, codes in worse.items():
                if len(made[path]) > 1:
                    self.one_at_a_time.add(path)
                else:  # the fix that made it worse: the file's others are tried together again
                    self.refused.update(f.key for f in made[path])
                    # Said once: the same fix comes back under another key when the other
                    # fixes of its line change the line's text.
                    said = {(f.path, f.code, f.kind, f.title) for f, _codes in self.outcome.refused}
                    self.outcome.refused += [
                        (f, codes) for f in made[path] if (f.path, f.code, f.kind, f.title) not in said
                    ]
                    self.one_at_a_time.discard(path)
                trial.pop(path)
                if path in self.outcome.texts:
                    trial[path] = self.outcome.texts[path]
                del made[path]
            if made:
                self._keep(made, trial, self.check(trial))
            else:
                self.checked = self.check(self.outcome.texts)
        if self._proposed(fixes_of):  # fixes left untried: said, so that nobody takes the file for done
            self.outcome.unfinished = True

    def _keep(self, made: dict[str, list[Fix]], texts: dict[str, str], checked: Checked) -> None:
        for path, taken in made.items():
            self.outcome.applied += taken
            self.outcome.texts[path] = texts[path]
        self.checked = checked

    def _proposed(self, fixes_of) -> dict[str, list[Fix]]:
        """Path -> the fixes of its findings still reported, less those refused."""
        mine: dict[str, list[Diagnostic]] = {}
        for d in self.checked.diagnostics:
            if d.span is not None and d.span.file in self.editable and d.span.file in self.checked.sources:
                mine.setdefault(d.span.file, []).append(d)
        proposed = {}
        for path, found in mine.items():
            source = self.checked.sources[path]
            if fixes_of is None:
                fixes = suppressions_for(found, source)
            else:
                fixes = [f for d in found for f in fixes_of(d, source, self.checked)]
            fixes = [f for f in fixes if f.key not in self.refused]
            if fixes:
                proposed[path] = fixes
        return proposed


def _worse(before: list[Diagnostic], after: list[Diagnostic], changed: set[str]) -> dict[str, list[str]]:
    """The changed files whose edits bring a finding that was not there before, with its
    codes; a new finding in a file not changed cannot be put down to one: all are worse."""
    old, new = _counted(before), _counted(after)
    worse: dict[str, list[str]] = {}
    for (path, code, message), count in new.items():
        if count > old[(path, code, message)]:
            for blamed in [path] if path in changed else changed:
                codes = worse.setdefault(blamed, [])
                if code not in codes:
                    codes.append(code)
    return worse


def _counted(diagnostics: list[Diagnostic]) -> Counter:
    # By file, code and message, not position: a fix moves the lines below it. Notes (info)
    # are left out: they never fail a check, and a fix that clears an error lets the phases
    # after it speak (a cleo file without errors is told where its nodes may write).
    return Counter(
        (d.span.file if d.span else "", d.code, _LINE_NUMBER.sub("line N", d.message))
        for d in diagnostics
        if d.severity is not Severity.INFO
    )


#: A line a message names ("no C409 on line 6"), which a fix above it moves: not a new finding.
_LINE_NUMBER = re.compile(r"\bline \d+")


def _one_typo_apart(word: str, wanted: str) -> bool:
    """One letter added, dropped, changed, or two neighbours swapped, or only the case
    differs: a slip of the keys, for which the suggestion is the one reading."""
    if word.lower() == wanted.lower():
        return True
    if abs(len(word) - len(wanted)) > 1:
        return False
    short, long = sorted((word, wanted), key=len)
    if len(short) != len(long):
        return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))
    differ = [i for i, (a, b) in enumerate(zip(word, wanted)) if a != b]
    if len(differ) == 1:
        return True
    return (
        len(differ) == 2
        and differ[1] == differ[0] + 1
        and word[differ[0]] == wanted[differ[1]]
        and word[differ[1]] == wanted[differ[0]]
    )


def _not_editable(path: str, root: str) -> str | None:
    """Why fixes must leave the file at `path` alone, or None."""
    real, home = os.path.realpath(path), os.path.realpath(root)
    # A link out of the project (a checkout may hold any link) must not be a way to
    # write somewhere else.
    if os.path.commonpath([real, home]) != home:
        return f"it is a link to {real}, outside the project"
    if not os.access(real, os.W_OK) or not os.access(os.path.dirname(real), os.W_OK):
        return "it cannot be written (no permission)"
    if _line_ends(_read(path)) is None:
        return "its line ends are mixed; make them one kind first"
    return None


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _line_ends(data: bytes) -> bytes | None:
    """The file's one kind of line end (`\\n` for a file with none), or None when it mixes them."""
    crlf = data.count(b"\r\n")
    lone_cr, lone_lf = data.count(b"\r") - crlf, data.count(b"\n") - crlf
    kinds = [end for end, count in ((b"\r\n", crlf), (b"\r", lone_cr), (b"\n", lone_lf)) if count]
    if len(kinds) > 1:
        return None
    return kinds[0] if kinds else b"\n"


def encoded(path: str, text: str) -> bytes:
    """The fixed text as the file's bytes: its byte-order mark and line ends kept."""
    data = _read(path)
    ends = _line_ends(data) or b"\n"
    body = text.encode("utf-8").replace(b"\n", ends)
    return (b"\xef\xbb\xbf" + body) if data.startswith(b"\xef\xbb\xbf") else body


class ChangedMeanwhile(Exception):
    """The file no longer holds the bytes its fixes were made from: someone saved it while it was checked."""


def write(path: str, text: str, original: bytes | None = None) -> None:
    """Replace the file's bytes with the fixed text's at once: written beside it first, so
    that a failure (a full disk) leaves the file as it was, never half written. With
    `original`, the bytes the fixes were made from: ChangedMeanwhile, and nothing written,
    when the file holds others now (an edit saved during the check is kept)."""
    if original is not None and _read(path) != original:
        raise ChangedMeanwhile(path)
    data = encoded(path, text)
    real = os.path.realpath(path)  # through a link, its target is the file fixed
    was = os.stat(real)
    handle, temporary = tempfile.mkstemp(prefix=".catalyst-fix-", dir=os.path.dirname(real))
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, stat.S_IMODE(was.st_mode))
        if (was.st_uid, was.st_gid) != (os.geteuid(), os.getegid()):
            # Its owner and group kept (root fixing a user's file must not take it from them);
            # a user who may not give a file away keeps what they were allowed.
            with contextlib.suppress(OSError):
                os.chown(temporary, was.st_uid, was.st_gid)
        os.replace(temporary, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
