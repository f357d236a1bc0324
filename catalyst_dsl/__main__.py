"""`python -m catalyst_dsl` runs the `catalyst` program."""

import os
import sys


def _forget_working_folder() -> None:
    """`python -m` puts the working folder first on the import path; a repository being
    checked could then shadow a module imported later (a plugin's, a lazily imported
    library). This package is already imported, and its own modules are found through
    it, so the entry goes (`python -P` leaves it out to begin with)."""
    if not sys.path or sys.flags.safe_path:
        return
    try:
        first, here = os.path.realpath(sys.path[0] or "."), os.path.realpath(os.getcwd())
    except OSError:
        return
    if first == here:
        del sys.path[0]


_forget_working_folder()

from catalyst_dsl.cli.program import main  # noqa: E402  (after the import path is settled)

main()
