"""Template expressions: `{{ reference }}` and `${{ expression }}` inside host strings.

templates.py splits a string into text and template parts; parser.py reads what is between
the braces with lalr.py, a driver for the tables parser_tables.py makes from the grammar
(grammar.py finds it) and ships as the generated expressions_tables.py; nodes.py holds the
tree both produce.
"""
