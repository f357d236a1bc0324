"""`python -m catalyst_dsl` runs the command line."""

from catalyst_dsl.cli import command_line

command_line()
