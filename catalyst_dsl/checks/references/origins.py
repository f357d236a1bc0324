"""Where an untrusted value comes from (for C821): an input, a step's result, a value a
script set, a function input, `$error`, or a variable that holds one of them.

Asked of the names in scope where a value is read, so a variable is traced back to what
was assigned to it (`Binding.source`), not to its spelling.
"""

from __future__ import annotations

from catalyst_dsl.checks.references.scopes import Scope
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax.expr import nodes as ast

#: How a name of each kind of binding is described, when it holds an untrusted value.
_DESCRIBED = {
    "input": "the input '{}'",
    "step": "the result of step '{}'",
    "script": "'{}', set by a script",
    "parameter": "the function input '{}'",
    "error": "$error",
    "bindings": "the bindings (step results merged into them)",
}


def origin(node, scope: Scope) -> str | None:
    """Where an untrusted value read by `node` comes from; None when every name it reads
    holds only what the playbook wrote."""
    if isinstance(node, ast.PathRef):
        return _name_origin(node.root, node.segments[:1], scope)
    if isinstance(node, ast.Name):
        return _name_origin(node.name, (), scope)
    if isinstance(node, ast.Member) and isinstance(node.target, ast.Name) and node.target.name == "inputs":
        return _name_origin("inputs", (node.name,), scope)
    if isinstance(node, ast.Call) and isinstance(node.callee, ast.Name) and node.callee.name == "get":
        if node.args and isinstance(node.args[0], ast.Literal) and isinstance(node.args[0].value, str):
            root, *rest = node.args[0].value.split(".")
            return _name_origin(root, rest[:1], scope)
        return "a value read with get()"
    for child in ast.children(node):
        if isinstance(node, ast.Call) and child is node.callee:
            continue
        found = origin(child, scope)
        if found is not None:
            return found
    return None


def _name_origin(name: str, segments, scope: Scope) -> str | None:
    binding = scope.lookup(name)
    if binding is None:
        if name == "inputs":
            return f"the input '{segments[0]}'" if segments else "the inputs"
        return None
    described = _DESCRIBED.get(binding.kind)
    if described is not None:
        return described.format(name)
    return f"'{name}' (which holds {binding.source})" if binding.source else None


def value_origin(value: ir.Value | None, scope: Scope) -> str | None:
    """The origin of the first untrusted value a config value reads, if any."""
    if isinstance(value, ir.Tmpl):
        for part in value.parts:
            node = part.ref if isinstance(part, ast.RefPart) else part.expr if isinstance(part, ast.ExprPart) else None
            found = origin(node, scope) if node is not None else None
            if found is not None:
                return found
    elif isinstance(value, (ir.ListV, ir.MapV)):
        items = value.items if isinstance(value, ir.ListV) else [e.value for e in value.entries]
        for item in items:
            found = value_origin(item, scope)
            if found is not None:
                return found
    return None
