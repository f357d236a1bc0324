"""Scalars as playbooks read them: the YAML 1.2 core schema (`yes` is a string, `0755` is
755), where a YAML 1.1 tool would read a scalar otherwise, and the standard tags.

The loader (yaml_loader.py) types each plain scalar with `core_value` as it composes it;
the dialects ask `yaml11_reading` to warn where other tools disagree.
"""

from __future__ import annotations

import functools
import re

from catalyst_dsl.syntax.pyyaml import yaml
from catalyst_dsl.syntax.yaml_nodes import YScalar

# -- YAML 1.2 core schema -------------------------------------------------------------
# The original engine reads playbooks with a YAML 1.2 parser, so `yes` is a string and
# `0755` is 755. We read them the same way and report where YAML 1.1 tools disagree.
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT10 = re.compile(r"^[-+]?[0-9]+$")
_INT8 = re.compile(r"^0o[0-7]+$")
_INT16 = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_INF = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$")
_NAN = re.compile(r"^\.(?:nan|NaN|NAN)$")


#: Digits a number may have. A playbook's numbers are counts, durations and limits; a
#: longer one is a mistake or an attack (Python refuses decimals of over 4,300 digits, and
#: any number past ~309 digits overflows a float).
MAX_NUMBER_DIGITS = 100


class NumberTooLarge(ValueError):
    """A plain scalar that reads as a number with more than MAX_NUMBER_DIGITS digits."""


#: The first characters of every plain scalar that `core_value` reads as other than its
#: text (null, a boolean, a number): one that starts with any other character is text.
TYPED_FIRST_CHARS = frozenset("~nNtTfF-+0123456789.")


def core_value(text: str) -> object:
    """The YAML 1.2 core-schema value of a plain scalar. NumberTooLarge for a number longer
    than any playbook needs."""
    if not text:
        return None
    first = text[0]
    if first in "~nN" and _NULL.match(text):
        return None
    if first in "tTfF" and text in _BOOL:
        return _BOOL[text]
    if first in "-+0123456789.":
        if len(text) > MAX_NUMBER_DIGITS and (
            _INT10.match(text) or _INT8.match(text) or _INT16.match(text) or _FLOAT.match(text)
        ):
            raise NumberTooLarge(
                f"the number {text[:12]}… has {len(text):,} characters; "
                f"numbers in a playbook have at most {MAX_NUMBER_DIGITS}"
            )
        if _INT10.match(text):
            return int(text)
        if _INT8.match(text):
            return int(text[2:], 8)
        if _INT16.match(text):
            return int(text[2:], 16)
        if _FLOAT.match(text) and any(c.isdigit() for c in text):
            return float(text)
        if _INF.match(text):
            return float("-inf") if first == "-" else float("inf")
    if first == "." and _NAN.match(text):
        return float("nan")
    return text


_YAML11_RESOLVER = yaml.resolver.Resolver()
#: The first characters the YAML 1.1 resolver has a pattern for ("" for the empty text):
#: it reads a text starting with any other as a string. None when it has a pattern for
#: any first character (a key of None), which PyYAML's own resolver does not.
_YAML11_FIRST_CHARS = (
    None if None in _YAML11_RESOLVER.yaml_implicit_resolvers else frozenset(_YAML11_RESOLVER.yaml_implicit_resolvers)
)
_YAML11_NAMES = {
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:int": "a number",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:timestamp": "a date",
    "tag:yaml.org,2002:null": "null",
}


def _resolve11(text: str) -> str:
    """The tag YAML 1.1 gives a plain scalar written `text`."""
    return _YAML11_RESOLVER.resolve(yaml.ScalarNode, text, (True, False))


#: Texts up to this long have their YAML 1.1 tag remembered: keys and words (`name`,
#: `file-read`) repeat in every step of every playbook, and each costs a few regexes.
_REMEMBERED_LENGTH = 64
_yaml11_tag = functools.lru_cache(maxsize=1024)(_resolve11)


def yaml11_reading(node: YScalar) -> str | None:
    """What a YAML 1.1 parser would make of a plain scalar, when that is not a string.

    Returns None when YAML 1.1 and 1.2 agree, else a phrase such as "a boolean".
    """
    if node.style or node.tag is not None:  # not plain, or tagged
        return None
    if _YAML11_FIRST_CHARS is not None and node.text[:1] not in _YAML11_FIRST_CHARS:
        return None  # most keys and words: no YAML 1.1 type starts with their first character
    tag = _yaml11_tag(node.text) if len(node.text) <= _REMEMBERED_LENGTH else _resolve11(node.text)
    if tag == "tag:yaml.org,2002:str":
        return None
    reading = _YAML11_NAMES.get(tag)
    if reading is None:
        return None
    core = node.value
    if tag == "tag:yaml.org,2002:bool" and isinstance(core, bool):
        return None
    if tag == "tag:yaml.org,2002:null" and core is None:
        return None
    if (
        tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
        and isinstance(core, (int, float))
        and not isinstance(core, bool)
    ):
        # Both read a number; they disagree only on forms such as 0755 or 1_000.
        if not (
            len(node.text) > 1 and node.text.lstrip("+-").startswith("0") and node.text.lstrip("+-")[1:2].isdigit()
        ):
            return None
    return reading


# -- Scalar tags ---------------------------------------------------------------------
#: The tags a scalar may carry (`!!int 3`); any other is refused.
STANDARD_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:map",
}


def tagged_value(text: str, tag: str) -> object:
    """The value of a scalar written with a standard tag (`!!int 3`); ValueError when its
    text is not one of the tag's."""
    if tag == "tag:yaml.org,2002:str":
        return text
    value = core_value(text)
    if tag == "tag:yaml.org,2002:int" and not (isinstance(value, int) and not isinstance(value, bool)):
        raise ValueError(f"'{text}' is not an integer")
    if tag == "tag:yaml.org,2002:float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"'{text}' is not a number")
        return float(value)
    if tag == "tag:yaml.org,2002:bool" and not isinstance(value, bool):
        raise ValueError(f"'{text}' is not a boolean")
    if tag == "tag:yaml.org,2002:null" and value is not None:
        raise ValueError(f"'{text}' is not null")
    if tag in ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"):
        raise ValueError(f"'{text}' is a single value, not a {'mapping' if tag.endswith('map') else 'list'}")
    return value
