"""Dialects: each lowers its syntax tree into the one IR."""
