"""The expression language's allowlist: methods, properties and global functions.

The checker types calls with these tables, and the evaluator will run only what is
listed here. Anything else in `${{ }}` is a diagnostic, never executed.
"""

from __future__ import annotations

from catalyst_dsl.ir.types import ANY, BOOLEAN, NUMBER, STRING, ArrayT, Field, ObjectT, Type

STRINGS = ArrayT(STRING)

#: method name -> result type; "ITEM" / "SAME" mean the array's item type / the array type.
STRING_METHODS: dict[str, Type | str] = {
    "toLowerCase": STRING,
    "toUpperCase": STRING,
    "trim": STRING,
    "trimStart": STRING,
    "trimEnd": STRING,
    "split": STRINGS,
    "includes": BOOLEAN,
    "startsWith": BOOLEAN,
    "endsWith": BOOLEAN,
    "replace": STRING,
    "replaceAll": STRING,
    "slice": STRING,
    "substring": STRING,
    "indexOf": NUMBER,
    "lastIndexOf": NUMBER,
    "padStart": STRING,
    "padEnd": STRING,
    "repeat": STRING,
    "charAt": STRING,
    "at": STRING,
    "concat": STRING,
    "toString": STRING,
}
ARRAY_METHODS: dict[str, Type | str] = {
    "join": STRING,
    "includes": BOOLEAN,
    "indexOf": NUMBER,
    "lastIndexOf": NUMBER,
    "slice": "SAME",
    "concat": "SAME",
    "at": "ITEM",
    "flat": ArrayT(ANY),
    "toString": STRING,
}
NUMBER_METHODS: dict[str, Type | str] = {"toFixed": STRING, "toString": STRING}

#: Namespaced globals: `Math.max(...)`, `JSON.stringify(...)`.
NAMESPACES: dict[str, dict[str, Type]] = {
    "Math": {"min": NUMBER, "max": NUMBER, "round": NUMBER, "floor": NUMBER, "ceil": NUMBER, "abs": NUMBER},
    "JSON": {"stringify": STRING, "parse": ANY},
    "Object": {"keys": STRINGS, "values": ArrayT(ANY), "entries": ArrayT(ArrayT(ANY))},
    "Array": {"isArray": BOOLEAN},
}

LOG_ENTRY = ObjectT(
    tuple(
        (k, Field(v))
        for k, v in {
            "level": STRING,
            "message": STRING,
            "action": STRING,
            "source": STRING,
            "data": ANY,
            "timestamp": STRING,
        }.items()
    ),
    None,
)

#: Plain global functions: name -> result type. `get` and `logs` are typed by the checker.
FUNCTIONS: dict[str, Type] = {
    "String": STRING,
    "Number": NUMBER,
    "Boolean": BOOLEAN,
    "parseInt": NUMBER,
    "parseFloat": NUMBER,
    "get": ANY,
    "logs": ArrayT(LOG_ENTRY),
    # `${{ raw(x) }}` in a script: x's text goes in unescaped (docs/running.md, "Values in scripts").
    "raw": STRING,
}

#: The path protocols of the expression language.
PROTOCOLS = ("xe", "catalyst", "temp")

#: Fields of `$error` inside catch steps.
ERROR_TYPE = ObjectT(
    tuple(
        (k, Field(v))
        for k, v in {"code": STRING, "message": STRING, "guidance": STRING, "metadata": ANY, "step": STRING}.items()
    ),
    ANY,
)
