"""`python -m catalyst_dsl` runs the `catalyst` program."""

from catalyst_dsl.program import main

main()
