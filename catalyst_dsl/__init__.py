"""catalyst: a compiler, checker and interpreter for declarative playbooks."""

__version__ = "0.1.0"

# The package's modules are served from one file of compiled code (_internal/bundle.py):
# importing them one by one cost as much as a check.
from catalyst_dsl._internal import bundle as _bundle  # noqa: E402

_bundle.install()
