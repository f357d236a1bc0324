"""Syntax layer: source text into nodes and expression trees that carry spans."""
