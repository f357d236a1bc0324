"""Values at run time: what an expression or a template evaluates to, and what a value
may become on its way into the world.

- `evaluate.py` evaluates the IR's expressions and templates (`Env` is what they read),
  with JavaScript's semantics: `jsvalues.py` its values and conversions, `jsbuiltins.py`
  its functions and methods.
- `inputs.py` checks and converts a run's inputs.
- `secrets.py` masks secret values wherever they are shown and `taint.py` marks every
  value computed from one, so that it is masked too.
- `escaping.py` puts values into scripts and argv, by reference or escaped;
  `quoting.py` is PowerShell's quoting alone, which the masker also needs;
  `url_values.py` puts values into a URL, percent-encoded for where they stand.

The order of imports is downward: escaping -> evaluate -> taint -> secrets -> quoting;
nothing below imports what is above it.
"""
