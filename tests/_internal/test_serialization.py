"""Records as JSON-ready data and back (catalyst_dsl._internal.serialization and
record_fields): which fields a format keeps and under which keys, what each may hold,
how records are written, and how strictly data is read, each problem with its JSON path."""

from __future__ import annotations

import json
import re
from typing import Any, Literal, Optional, Union

import pytest

from catalyst_dsl._internal.record_fields import annotation_kind, camel, kind_of, nothing_named
from catalyst_dsl._internal.records import factory, field, record
from catalyst_dsl._internal.serialization import JSON_WORDS, YAML_WORDS, Format, Invalid, json_path


@record
class Leaf:
    text: str
    at: Optional[int] = field(default=None, eq=False, kw_only=True)


@record
class Other:
    number: float


Member = Union[Leaf, Other]


@record
class Tree:
    name: str
    leaves: tuple[Leaf, ...] = ()
    pairs: tuple[tuple[str, Leaf], ...] = ()
    best: Optional[Member] = None
    extra: dict[str, Any] = factory(dict)
    finally_: bool = False
    note: str | None = field(default=None, metadata={"omit_if_default": True})
    kind: Literal["a", "b", 1] = "a"


@record(frozen=False, kw_only=True)
class Journal:
    run_id: str
    steps: list[Leaf]
    when: str | None = None


TAGGED = Format(tag="node", tagged=(Leaf, Other))


def sample() -> Tree:
    return Tree(
        "t",
        (Leaf("a", at=3), Leaf("b")),
        (("x", Leaf("c")),),
        Other(1.5),
        {"k": [1, {"n": None}], "leaf": Leaf("d")},
        True,
    )


# -- which fields, under which keys


def test_field_keys_are_python_names_or_camel_case():
    assert camel("allowed_write_paths") == "allowedWritePaths"
    assert camel("finally_") == "finally" and camel("name") == "name"
    keys = [slot.key for slot in Format(camel_case=True).fields(Journal)]
    assert keys == ["runId", "steps", "when"]


def test_positions_are_left_out_unless_kept_and_dropped_names_never_kept():
    assert [s.name for s in Format().fields(Leaf)] == ["text"]
    assert [s.name for s in Format(positions=True).fields(Leaf)] == ["text", "at"]
    assert [s.name for s in Format(dropped={"pairs", "extra"}).fields(Tree)] == [
        "name",
        "leaves",
        "best",
        "finally_",
        "note",
        "kind",
    ]


def test_init_order_puts_keyword_only_fields_last():
    @record
    class Mixed:
        a: int
        b: int = field(default=0, kw_only=True)
        c: int = 0

    assert [s.name for s in Format(positions=True).fields(Mixed)] == ["a", "b", "c"]
    assert [s.name for s in Format(positions=True, init_order=True).fields(Mixed)] == ["a", "c", "b"]


# -- what a field may hold


@pytest.mark.parametrize(
    "text, sort, detail",
    [
        ("str", "scalar", str),
        ("float", "scalar", float),
        ("object", "any", None),
        ("Any", "any", None),
        ("Leaf", "record", Leaf),
        ("'Leaf'", "record", Leaf),
        ("Optional[Leaf]", "optional", "record"),
        ("Leaf | None", "optional", "record"),
        ("None | str", "optional", "scalar"),
        ("Member", "union", 2),
        ("Union[Leaf, Other, None]", "optional", "union"),
        ("tuple['Leaf', ...]", "tuple", "record"),
        ("tuple[tuple[str, Leaf], ...]", "tuple", "fixed"),
        ("tuple[str, int]", "fixed", 2),
        ("list[str]", "list", "scalar"),
        ("list", "list", "any"),
        ("dict[str, Any]", "dict", "any"),
        ("Literal['a', \"b, c\", 1, True]", "literal", ("a", "b, c", 1, True)),
        ("re.Pattern[str] | None", "optional", "other"),
        ("Nowhere", "unknown", None),
    ],
)
def test_an_annotation_is_read_from_its_text(text, sort, detail):
    kind = annotation_kind(__name__, text)
    assert kind.sort == sort
    if sort in ("scalar", "record"):
        assert kind.cls is detail
    elif sort == "union" or sort == "fixed":
        assert len(kind.args) == detail
    elif sort == "literal":
        assert kind.args == detail
    elif sort in ("optional", "tuple", "list"):
        assert kind.args[0].sort == detail
    elif sort == "dict":
        assert kind.args[1].sort == detail


def test_an_annotation_given_as_a_type_reads_as_its_text_does():
    for written, given in [
        ("tuple[tuple[str, Leaf], ...]", tuple[tuple[str, Leaf], ...]),
        ("Optional[Member]", Optional[Member]),
        ("dict[str, Any] | None", Optional[dict[str, Any]]),
        ("Literal['a', 1]", Literal["a", 1]),
    ]:
        assert repr(annotation_kind(__name__, written)) == repr(kind_of(given, nothing_named))


# -- writing


def test_records_are_written_as_json_data_and_read_back():
    tree = sample()
    data = TAGGED.unstructure(tree)
    assert data == {
        "name": "t",
        "leaves": [{"node": "Leaf", "text": "a"}, {"node": "Leaf", "text": "b"}],
        "pairs": [["x", {"node": "Leaf", "text": "c"}]],
        "best": {"node": "Other", "number": 1.5},
        "extra": {"k": [1, {"n": None}], "leaf": {"node": "Leaf", "text": "d"}},
        "finally_": True,
        "kind": "a",
    }
    assert json.loads(json.dumps(data)) == data  # JSON holds it as it is: lists, dicts, scalars
    back = TAGGED.structure(json.loads(json.dumps(data)), Tree)
    assert back == Tree("t", tree.leaves, tree.pairs, tree.best, {**tree.extra, "leaf": data["extra"]["leaf"]}, True)
    assert back.leaves[0].at is None  # positions are not in the data


def test_a_field_marked_omit_if_default_is_written_only_when_it_is_not_its_default():
    assert "note" not in TAGGED.unstructure(Tree("t"))
    assert TAGGED.unstructure(Tree("t", note="n"))["note"] == "n"


def test_only_tagged_classes_carry_their_tag():
    data = Format(camel_case=True, tag="node", tagged=(Other,)).unstructure(Tree("t", (Leaf("a"),), best=Other(2.0)))
    assert data["leaves"] == [{"text": "a"}] and data["best"] == {"node": "Other", "number": 2.0}
    assert "finally" in data  # camelCase, the trailing underscore gone


# -- reading


def problems(fmt: Format, data: Any, target: Any) -> list[str]:
    with pytest.raises(Invalid) as caught:
        fmt.structure(data, target)
    return caught.value.lines()


def test_every_problem_is_reported_with_its_json_path_in_field_order():
    snapshot = Format(camel_case=True)
    data = {
        "runId": 5,
        "steps": [{"text": "ok"}, {"text": 1, "extra": 2}, "no"],
        "surprise": True,
        "other": None,
    }
    assert problems(snapshot, data, Journal) == [
        "expected a string, got a number 5 @ $.runId",
        "expected a string, got a number 1 @ $.steps[1].text",
        "unknown key 'extra' @ $.steps[1]",
        "expected an object, got a string @ $.steps[2]",
        "unknown keys 'other', 'surprise' @ $",
    ]
    assert problems(snapshot, {"steps": "abc"}, Journal) == [
        "required key missing @ $.runId",
        "expected an array, got a string @ $.steps",
    ]


def test_values_are_read_strictly():
    assert problems(TAGGED, {"number": True}, Other) == ["expected a number, got a boolean true @ $.number"]
    assert TAGGED.structure({"number": 2}, Other) == Other(2.0)  # an integer is a number
    assert problems(TAGGED, {"name": "t", "kind": "c"}, Tree) == ['"c" is not one of "a", "b", 1 @ $.kind']
    assert problems(TAGGED, {"name": "t", "kind": True}, Tree) == ['true is not one of "a", "b", 1 @ $.kind']
    assert problems(TAGGED, {"name": "t", "extra": []}, Tree) == ["expected an object, got an array @ $.extra"]
    assert problems(TAGGED, {"name": "t", "pairs": [["x"]]}, Tree) == [
        "expected an array of 2 items, got an array @ $.pairs[0]"
    ]


def test_a_union_is_read_by_its_tag():
    assert TAGGED.structure({"name": "t", "best": {"node": "Leaf", "text": "l"}}, Tree).best == Leaf("l")
    assert problems(TAGGED, {"name": "t", "best": {"node": "Root", "text": "l"}}, Tree) == [
        '"Root" is not one of "Leaf", "Other" @ $.best.node'
    ]
    assert problems(TAGGED, {"node": "Other", "text": "l"}, Leaf) == ['"Other" is not "Leaf" @ $.node']


def test_yaml_words_checks_and_values_that_are_not_records():
    def pattern(value):
        if not isinstance(value, str):
            raise TypeError(f"expected a pattern, got {YAML_WORDS.kind(value)}")
        return re.compile(value)

    @record
    class Entry:
        match: re.Pattern[str] | None = None
        count: int = 1
        on: bool = False

    def check(entry):
        return "count must be positive" if entry.count < 1 else None

    script = Format(words=YAML_WORDS, check=check, leaves={re.Pattern: (lambda p: p.pattern, pattern)})
    entries = script.structure([{"match": "a+", "count": 2}, {}], list[Entry])
    assert entries[0].match.pattern == "a+" and entries[1] == Entry()
    assert script.unstructure(entries) == [
        {"match": "a+", "count": 2, "on": False},
        {"match": None, "count": 1, "on": False},
    ]
    with pytest.raises(Invalid) as caught:
        script.structure([{"match": [1], "on": "yes"}, {"count": 0}, {"count": {}}], list[Entry])
    assert caught.value.problems == [
        ("expected a pattern, got a list", (0, "match")),
        ("expected true or false, got a string", (0, "on")),
        ("count must be positive", (1,)),
        ("expected an integer, got a mapping", (2, "count")),
    ]


def test_json_paths():
    assert json_path(()) == "$"
    assert json_path(("steps", 3, "attempts")) == "$.steps[3].attempts"
    assert JSON_WORDS.mismatch("a string", 12345678901234567890123456789012345678901234, show=True) == (
        "expected a string, got a number 1234567890123456789012345678901234567890"
    )
