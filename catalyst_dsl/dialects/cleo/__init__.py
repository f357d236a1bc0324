"""The cleo dialect: `.cantbook` graphs read, checked whole and lowered.

cleo's own parser stops at the first mistake and drops unknown keys; this reader reports
every mistake of a file in one pass, each at its place (`reader`, over `node_reading` and
`shapes`: keys, types, enums, with `vocabulary` the words it knows), then checks the graph
(`rules`, `graph` and `policy`: cycles, entries, reachability, routing, templates) and
lowers what this version can run (`lowering` over `node_lowering`, `expressions` and
`lowering_tables`). The model read is `model`. Names are kept as written: the native
naming rules (kebab-case) are the native reader's, so they never reach a cantbook.
A run exported as cleo's task database rows is integrations/cleo_export.py's.
"""
