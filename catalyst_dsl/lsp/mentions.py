"""Markdown `@` paths in the editor: the file one leads to, and what that file is.

An `@path` in a Markdown playbook is found as the library finds it (the longest alias
prefix rewritten, then tried from the project root and beside the file), and never
outside the project. It names a playbook (a call, checked like a `playbook` step) or a
document the prompt hands to the AI (a standard, a template). The hover says which: a
playbook's name, description and inputs as its compilation gives them; a document's
first lines, as they are on disk.
"""

from __future__ import annotations

import os

from catalyst_dsl._internal.markdown_text import author_markdown, code_span, fenced, strong_name

#: How much of a document the hover shows, at most.
FIRST_LINES = 12
PEEK_BYTES = 16 * 1024


def hover(library, reference: str, found: str | None) -> str:
    """The hover of `@reference`, which leads to `found` (None: to no file)."""
    if found is None:
        return (
            f"`@{reference}`: no such file in the project "
            "(looked for from the project root and beside this file, after the aliases)"
        )
    shown = os.path.relpath(found, library.project.root).replace(os.sep, "/")
    compiled = library.compiled(found)
    playbook = compiled.playbook
    if playbook is not None and (library.names_a_playbook(reference) or not found.endswith(".md")):
        return _playbook(playbook, shown)
    return _document(found, shown)


def _playbook(playbook, shown: str) -> str:
    lines = [f"playbook {strong_name(playbook.name)} ({code_span(shown)})"]
    if playbook.description:
        lines += ["", author_markdown(playbook.description)]
    if playbook.inputs:
        lines += ["", "inputs:"]
        lines += [
            f"- {code_span(decl.name)}: `{decl.type}`{' (required)' if decl.required else ''}"
            + (f" — {author_markdown(decl.description, one_line=True)}" if decl.description else "")
            for decl in playbook.inputs
        ]
    return "\n".join(lines)


def _document(path: str, shown: str) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(PEEK_BYTES)
            size = os.fstat(handle.fileno()).st_size
    except OSError as exc:
        return f"`{shown}`: cannot read the file: {exc.strerror or exc}"
    if b"\0" in data:
        return f"`{shown}`: a binary file of {size} bytes"
    text = data.decode("utf-8", "replace")
    lines = "\n".join(text.splitlines()[:FIRST_LINES])
    more = size > len(data) or len(text.splitlines()) > FIRST_LINES
    language = "markdown" if path.endswith(".md") else "yaml"
    return f"document `{shown}`{', first lines' if more else ''}:\n\n{fenced(lines, language)}"
