"""What the package is built with, below every layer of the pipeline: the `@record`
machinery and its generated module of compiled initialisers, regular expressions compiled
on first use, the garbage collector's tuning, and the digests the check cache seals with.
Nothing here knows of playbooks."""
