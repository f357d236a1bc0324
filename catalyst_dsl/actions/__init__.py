"""Actions: the catalog of declarations (and, later, their implementations)."""
