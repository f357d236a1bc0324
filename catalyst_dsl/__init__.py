"""catalyst: a compiler, checker and interpreter for declarative playbooks."""

__version__ = "0.1.0"
