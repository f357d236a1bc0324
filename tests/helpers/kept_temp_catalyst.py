"""`python -m catalyst_dsl` for tests that run catalyst in a process of its own and read what
its programs leave beside the project, in `../side` (`test_reliability._side`): when that
folder exists, it is every program's temp folder, and kept. A real run gives each program
a temp folder of its own and removes it when the program ends; without `../side` this
runs catalyst unchanged."""

import contextlib
from pathlib import Path

from catalyst_dsl.cli.program import main
from catalyst_dsl.runtime.effects.confinement import Confinement

side = Path.cwd().parent / "side"
if side.is_dir():
    Confinement.temp_folder = lambda confinement: contextlib.nullcontext(side)
main()
