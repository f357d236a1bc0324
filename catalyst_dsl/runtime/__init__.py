"""The runtime: the interpreter over the IR and everything a run needs around it.

It consumes IR only (never YAML nodes). Every side effect passes through the effects
gateway (`effects/gateway.py`), the one place permissions and locks are checked and the place
`--what-if` will record instead of perform.
"""
