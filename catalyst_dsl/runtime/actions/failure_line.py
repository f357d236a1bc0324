"""The line of a failed program's output that says why it failed, quoted in the step's
error (`✗ build (bash) … CommandFailed: `make` exited with code 2: <that line>`).

The last line is often not it: tools that run others end with a line that only says the
other failed (`make: *** [all] Error 1`), a stack trace ends with its frames, a compiler
with an excerpt of the source. So the output is read up from its end, passing over the
lines that say nothing of their own (blank lines, such wrappers, frames, excerpts), and
the first line left is the one quoted: a Python or Java trace is quoted by its exception
(for Java, the last `Caused by:`), a make recipe by the error of the program it ran.
When every line is one of those, the last non-blank line is quoted, as before. The rule
is written for users in docs/running.md ("What a failed command says"); the whole
output stays in the step's result.
"""

from __future__ import annotations

from catalyst_dsl._internal.lazy_pattern import LazyPattern

#: Colour and cursor codes: a quoted line is read, not replayed on a terminal.
_ESCAPES = LazyPattern(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")

#: Lines that only report that something else failed, or point to more output.
_WRAPPERS = LazyPattern(
    r"(?:"
    r"g?make(?:\[\d+\])?: \*\*\* .*"  # make: *** [Makefile:3: all] Error 1
    r"|ninja: build stopped: .*"
    r"|exit status \d+"  # go run
    r"|Command exited with non-zero status \d+"
    r"|Error: Process completed with exit code \d+\.?"
    r"|npm (?:ERR!|error)(?: .*)?"
    r"|(?:error|info) (?:Command failed with exit code \d+\.?|Visit https://yarnpkg\.com/.*)"
    r"|.*\bELIFECYCLE\b.*"
    r"|error: aborting due to .*"  # rustc
    r"|error: could not compile .*"  # cargo
    r"|For more information about (?:this|an) error, try .*"
    r"|note: run with `RUST_BACKTRACE=.*"
    r"|Node\.js v\d+\S*"
    r"|=+ .* =+"  # pytest's closing banner
    r")"
)

#: The frames of a stack trace and the source excerpts of compilers.
_TRACE = LazyPattern(
    r"(?:"
    r"\s+File \".*"  # Python
    r"|\s+at .*"  # Java, JavaScript, .NET
    r"|\s*\.\.\. \d+ (?:more|common frames omitted)"
    r"|\t.*"  # Go's file lines
    r"|goroutine \d+ \[.*\]:"
    r"|Traceback \(most recent call last\):"
    r"|\s*\d*\s*\|.*"  # gcc, clang, rustc: `  3 | }` and `    | ^`
    r"|\s*--> .*"  # rustc: ` --> src/main.rs:2:5`
    r"|\s*\^+~*\s*"  # a caret under a column
    r")"
)

#: Go names a frame's function on one line, its file on the next (tab-indented).
_GO_FUNCTION = LazyPattern(r"[\w./*()\-\[\]]+\(.*\)")


def failure_line(*outputs: str) -> str | None:
    """The line that says why a program failed, from the first of `outputs` (the stream it
    reports errors on first) that has a line to quote; None when all are empty."""
    for output in outputs:
        lines = [_ESCAPES.sub("", line).rstrip() for line in output.splitlines()]
        lines = [line for line in lines if line.strip()]
        if not lines:
            continue
        for index in range(len(lines) - 1, -1, -1):
            line = lines[index]
            if _WRAPPERS.fullmatch(line.strip()) or _TRACE.fullmatch(line):
                continue
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if following.startswith("\t") and _GO_FUNCTION.fullmatch(line):
                continue
            return line.strip()
        return lines[-1].strip()
    return None
