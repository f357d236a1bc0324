"""What the script declares, and so what each variable may hold: functions, integer,
array and name-reference variables, the exported ones, and the clean ones (shown to
hold no value). Found in one walk before any value is followed.
"""

from __future__ import annotations

import re

from catalyst_dsl.syntax.shell.programs.words import UNKNOWN
from catalyst_dsl.syntax.shell.bash.arithmetic import ARITHMETIC_NAME
from catalyst_dsl.syntax.shell.bash.findings import REFERENCE_NAME
from catalyst_dsl.syntax.shell.bash.probe import ScriptProbe
from catalyst_dsl.syntax.shell.bash.tree import array_keys, expanded_name, field_of, has_flag, is_length, walk


#: Variables bash fills with data it read or matched: they may hold a value.
DATA_VARIABLES = frozenset(
    {
        "OLDPWD",
        "PWD",
        "DIRSTACK",
        "_",
        "REPLY",
        "MAPFILE",
        "BASH_REMATCH",
        "OPTARG",
        "COPROC",
        "BASH_ARGV",
        "READLINE_LINE",
        "BASH_ALIASES",
        "BASH_CMDS",
        "BASH_EXECUTION_STRING",
        "COMP_LINE",
        "COMP_WORDS",
        "PIPESTATUS",
        "FUNCNAME",
    }
)
#: Builtins that assign what they read to the variables they name.
READERS = frozenset({"read", "mapfile", "readarray", "printf", "getopts", "wait"})


class Facts(ScriptProbe):
    """The script's declarations and which of its variables may hold a value."""

    def _facts(self, root) -> None:
        """What the script declares: functions, integer and array variables, and the
        variables that are *clean*: shown to hold no value. A variable is clean when every
        assignment to it in the script is a constant, a number (arithmetic, a length, `$#`,
        `$?`) or built from clean variables only; a variable the script never assigns comes
        from the step's environment and is clean, except the positional parameters and those
        bash fills with data (`REPLY`, `_`, `BASH_REMATCH`...). Every other variable may hold
        a value, and is refused where bash would read its text as code."""
        assignments: list[tuple[str, list]] = []
        opaque: set[str] = set()
        for node in walk(root):
            if node.type == "function_definition":
                name = node.child_by_field_name("name")
                if name is not None:
                    self.functions.add(self._text(name))
            elif (
                node.type == "declaration_command"
                and node.children[0].type == "export"
                or node.type == "command"
                and self._effective(node)[0] == "export"
            ):
                for child in walk(node):
                    if child.type in ("variable_name", "word") and re.fullmatch(
                        r"[A-Za-z_][A-Za-z0-9_]*", self._text(child)
                    ):
                        self.exported.add(self._text(child))
            elif node.type == "declaration_command":
                self._declared(node, opaque)
            elif node.type == "variable_assignment" and any(c.type == "array" for c in node.children):
                name = node.child_by_field_name("name")
                if name is not None:
                    self.array_names.add(self._text(name))
            if node.type == "command" and self._effective(node)[0] in (
                "declare",
                "typeset",
                "local",
                "export",
                "readonly",
            ):
                self._declared_by_command(node, opaque)
            for name, sources in assigned_names(node, self._text, self._effective):
                self.sites.append((name, sources, node))
                self.sites_of.setdefault(name, []).append((name, sources, node))
                if sources is None:
                    opaque.add(name)
                else:
                    assignments.append((name, sources))
        self.assigned = {name for name, _ in assignments} | opaque
        self.clean = (self.assigned - opaque - DATA_VARIABLES) | {"#", "?", "$", "!", "-"}
        changed = True
        while changed:
            changed = False
            for name, sources in assignments:
                if name in self.clean and not all(self._clean_source(n) for n in sources):
                    self.clean.discard(name)
                    changed = True

    def _declared(self, node, opaque: set[str]) -> None:
        """The attributes `declare`/`local`/`typeset` give: -i (arithmetic on assignment),
        -a/-A (arrays), -n (a name: its target is opaque)."""
        flags = "".join(
            re.sub(r"[\\'\"]", "", self._text(c))
            for c in node.children
            if c.type in ("word", "string", "raw_string") and re.sub(r"[\\'\"]", "", self._text(c))[:1] in "-+"
        )
        if any(
            c.type in ("simple_expansion", "expansion", "command_substitution", "concatenation")
            for c in node.children[1:]
        ):
            flags += "-ianA"  # `declare $f n`: any attribute
        for child in node.children:
            if child.type not in ("variable_name", "word", "variable_assignment", "string", "raw_string"):
                continue
            target = child.child_by_field_name("name") if child.type == "variable_assignment" else child
            if target is not None and target.type == "subscript":
                target = target.child_by_field_name("name")
            if target is None or self._text(target)[:1] in "-+":
                continue
            name = self._text(target).strip("'\"").split("=", 1)[0]
            self.declared_at.setdefault(name, node)
            if has_flag(flags, "i"):
                self.integer_names.add(name)
            if has_flag(flags, "a") or has_flag(flags, "A"):
                self.array_names.add(name)
            if has_flag(flags, "A"):
                self.associative.add(name)
            if has_flag(flags, "n"):
                opaque.add(name)
                self.namerefs.add(name)

    def _declared_by_command(self, node, opaque: set[str]) -> None:
        """`builtin declare -i n`, `command local -n r`: the attributes as `_declared` reads
        them; a flag not written literally (`declare $f n`) may be any of them."""
        _, arguments = self._effective(node)
        words = [self._literal(a) for a in arguments]
        unknown = any(w is None or UNKNOWN in w for w in words)
        flags = "".join(w for w in words if w and w[:1] in "-+")
        for word in words:
            if not word or word[:1] in "-+":
                continue
            name = word.split("=", 1)[0].split("[", 1)[0].replace(UNKNOWN, "")
            self.declared_at.setdefault(name, node)
            if unknown or has_flag(flags, "i"):
                self.integer_names.add(name)
            if unknown or has_flag(flags, "a") or has_flag(flags, "A"):
                self.array_names.add(name)
            if unknown or has_flag(flags, "n"):
                opaque.add(name)
                self.namerefs.add(name)

    def _holds_value(self, name: str) -> bool:
        """Whether the variable `name` may hold a value (see `_facts`)."""
        if name in self.clean:
            return False
        if name in self.assigned or name in DATA_VARIABLES or REFERENCE_NAME.fullmatch(name) or name in self.inherited:
            return True
        return name.isdigit() or name in ("@", "*")

    def _number(self, name: str, seen: frozenset = frozenset()) -> bool:
        """Whether `name` holds a number for arithmetic: every assignment to it is a number,
        arithmetic, a length or a variable that is a number; bash's own counters and names
        the script never assigns (the environment) are numbers too. Text that is a name
        is not: bash would evaluate the variable it names (`y=x; (( y ))`)."""
        if self._holds_value(name) or name in seen:
            return name in seen and not self._holds_value(name)
        for assigned, sources, _ in self.sites_of.get(name, ()):
            if sources is None:
                return False
            for source in sources:
                text = self._bytes(source).strip(b"\"'")
                if re.fullmatch(rb"-?[0-9]+|0x[0-9a-fA-F]+|\$\(\(.*\)\)|\$\{#[^}]*\}|\$[#?$!]", text, re.S):
                    continue
                reference = re.fullmatch(rb"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", text)
                if reference is None or not self._number(reference.group(1).decode(), seen | {name}):
                    return False
        return True

    def _clean_source(self, node) -> bool:
        """Whether the text `node` gives an assignment is shown to hold no value. Text that
        names a variable holding one is not: arithmetic and `${!x}` read names (`y=x; (( y ))`)."""
        if any(
            self._holds_value(m.group(2).decode()) for m in ARITHMETIC_NAME.finditer(self._bytes(node)) if m.group(2)
        ):
            return False
        for n in walk(node):
            if n.type in ("command_substitution", "process_substitution"):
                return False
            if n.type in ("expansion", "simple_expansion") and not is_length(n):
                name = expanded_name(n)
                if name is None or self._holds_value(self._text(name)):
                    return False
        return True

    def _is_value_use(self, node) -> bool:
        if node.type == "expansion" and "!" in [c.type for c in node.children[:2]] and not array_keys(node, self._text):
            return True  # `${!x}`: the variable x names, which may be any
        if node.type in ("expansion", "simple_expansion") and not is_length(node):
            name = expanded_name(node)
            return name is not None and self._holds_value(self._text(name))
        return False


def assigned_names(node, text, effective=None):
    """(variable, the nodes its new text comes from) for each variable `node` assigns:
    `x=...`, `for x in ...`, `${x:=...}`, and `read x` (from its redirections and the
    commands piped into it)."""
    if node.type == "variable_assignment":
        name = node.child_by_field_name("name")
        if name is not None and name.type == "subscript":
            name = name.child_by_field_name("name")
        if name is not None:
            yield text(name), [c for c in node.children if c is not None and field_of(node, c) == "value"]
    elif node.type == "for_statement":
        name = node.child_by_field_name("variable")
        if name is not None:
            values = node.children_by_field_name("value")
            yield text(name), values if any(c.type == "in" for c in node.children) else None  # no `in`: "$@"
    elif node.type == "expansion" and any(c.type in ("=", ":=") for c in node.children):
        name = next((c for c in node.children if c.type == "variable_name"), None)
        if name is not None:
            yield text(name), [node]
    elif node.type == "command" and effective is not None:
        name, arguments = effective(node)
        if name in READERS:
            # What they read is data from anywhere: each name they may assign is opaque.
            for argument in arguments:
                word = re.sub(r"[\\'\"]", "", text(argument))
                word = (word[2:] if word.startswith("-v") else word).split("[", 1)[0]
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word):
                    yield word, None
