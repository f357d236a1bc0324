"""The slotted records of catalyst_dsl._internal.records behave as the attrs classes they replace."""

from __future__ import annotations

import copy
import pickle

import pytest

from catalyst_dsl.diagnostics.model import Diagnostic, Label
from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl.project.config import SETTINGS, ProjectConfig
from catalyst_dsl._internal.records import (
    COMPILE_AFTER,
    FrozenRecordError,
    asdict,
    factory,
    field,
    fields,
    maker,
    record,
    replace,
)
from catalyst_dsl.syntax.source import SourceFile, Span


@record
class Point:
    x: int
    y: int = 0
    tags: dict = factory(dict)


@record(frozen=False)
class Counter:
    name: str
    used: bool = False


def test_init_by_position_and_keyword_with_defaults_and_factories():
    assert Point(1, 2) == Point(x=1, y=2)
    assert Point(1).y == 0
    first, second = Point(1), Point(1)
    assert first.tags == {} and first.tags is not second.tags


@pytest.mark.parametrize("made_before", [0, COMPILE_AFTER + 1])
def test_bad_arguments_are_type_errors(made_before):
    """The same errors whether the generic __init__ or the compiled one is in place."""
    for _ in range(made_before):
        Point(1), Node("a")
    assert ("args" not in Point.__init__.__code__.co_varnames) == bool(made_before)
    assert Point(1, tags={"a": 1}) == Point(x=1, y=0, tags={"a": 1}) and Point(1).tags is not Point(1).tags
    assert repr(Node("a", start=2, tags=(1,))) == "Node(name='a', tags=(1,))" and Node("a", start=2).start == 2
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        Point()
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        Point(1, z=3)
    with pytest.raises(TypeError, match="takes from 2 to 4 positional arguments but 5 were given"):
        Point(1, 2, {}, 4)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        Point(1, x=2)
    with pytest.raises(TypeError, match="takes 2 positional arguments but 3 were given"):
        Node("a", 1)


@record
class Node:
    """Shaped as an IR node: a position left out of equality, hashing and repr."""

    name: str
    start: int = field(default=0, eq=False, kw_only=True, repr=False)
    tags: tuple = field(default=(), kw_only=True, metadata={"note": 1})


def test_fields_left_out_of_equality_and_keyword_only_fields():
    assert Node("a", start=1) == Node("a", start=2)
    assert hash(Node("a", start=1)) == hash(Node("a", start=2))
    assert Node("a", tags=(1,)) != Node("a")
    assert repr(Node("a", start=3)) == "Node(name='a', tags=())"
    assert Node.__match_args__ == ("name",)
    assert [(f.name, f.eq, f.kw_only, f.repr, f.metadata) for f in fields(Node)] == [
        ("name", True, False, True, {}),
        ("start", False, True, False, {}),
        ("tags", True, True, True, {"note": 1}),
    ]
    assert replace(Node("a", start=4), name="b").start == 4
    assert pickle.loads(pickle.dumps(Node("a", start=5))).start == 5


def test_a_record_inherits_methods_but_no_fields():
    @record
    class Base:
        def describe(self) -> str:
            return type(self).__name__

    @record
    class Child(Base):
        size: int = 1

    assert Child().describe() == "Child" and Child(2) != Child(3) and Base() == Base() and Base() != Child()
    with pytest.raises(TypeError, match="inherits no fields"):
        record(type("Grandchild", (Child,), {"__annotations__": {"more": "int"}}))


def test_methods_that_name_their_class_get_the_record():
    # Zero-argument super() and __class__ read a cell that held the class the decorator
    # was given; the record is a new class, made with its slots, and they must see it.
    @record
    class Base:
        def kind(self) -> str:
            return "base"

    @record
    class Named(Base):
        label: str = "x"

        def kind(self) -> str:
            return "named " + super().kind()

        @property
        def own_class(self) -> type:
            return __class__

        @classmethod
        def made(cls) -> str:
            return __class__.__name__

    assert Named().kind() == "named base"
    assert Named().own_class is Named
    assert Named.made() == "Named"


def test_frozen_records_are_immutable_hashable_and_compared_by_value():
    point = Point(1, 2)
    with pytest.raises(FrozenRecordError):
        point.x = 3
    with pytest.raises(AttributeError):
        del point.y
    assert hash(Label(Span("a", 1, 1, 1, 2), "m")) == hash(Label(Span("a", 1, 1, 1, 2), "m"))
    assert Point(1, 2) != Point(2, 1)
    assert Point(1) != (1, 0, {})
    assert repr(Point(1, 2)) == "Point(x=1, y=2, tags={})"
    assert not hasattr(point, "__dict__")


def test_mutable_records_can_change_and_are_not_hashable():
    counter = Counter("C001")
    counter.used = True
    assert counter == Counter("C001", True)
    with pytest.raises(TypeError):
        hash(counter)


def test_replace_fields_and_copies():
    diagnostic = Diagnostic("C001", Severity.ERROR, "m", None, notes=("n",))
    changed = replace(diagnostic, severity=Severity.WARNING)
    assert changed.severity is Severity.WARNING and changed.notes == ("n",) and diagnostic.severity is Severity.ERROR
    with pytest.raises(TypeError):
        replace(diagnostic, colour="red")
    assert pickle.loads(pickle.dumps(diagnostic)) == diagnostic
    assert copy.copy(diagnostic) == diagnostic and copy.deepcopy(Point(1, tags={"a": [1]})) == Point(1, tags={"a": [1]})
    assert [f.name for f in fields(Diagnostic)] == ["code", "severity", "message", "span", "labels", "notes", "help"]


def test_asdict_names_each_field_in_order_and_does_not_copy_its_value():
    """As attrs.asdict for records of plain values; a held dict is handed over, not copied."""
    point = Point(1, tags={"a": [1]})
    assert asdict(point) == {"x": 1, "y": 0, "tags": {"a": [1]}}
    assert list(asdict(point)) == ["x", "y", "tags"] and asdict(point)["tags"] is point.tags
    assert asdict(Node("a", start=2)) == {"name": "a", "start": 2, "tags": ()}  # fields left out of eq and repr too


def test_settings_keep_their_names_types_and_defaults():
    assert SETTINGS["max-depth"].default == 10 and SETTINGS["aliases"].type == "dict[str, str]"
    assert ProjectConfig().aliases == {} and ProjectConfig(max_depth=3).max_depth == 3


def test_source_files_compare_by_path_and_text():
    assert SourceFile("a", "x\ny") == SourceFile("a", "x\ny") != SourceFile("b", "x\ny")
    assert SourceFile("a", "x\ny").position(2) == (2, 1)
    with pytest.raises(TypeError):
        hash(SourceFile("a", ""))


def test_records_compared_by_identity():
    @record(frozen=False, eq=False)
    class Cell:
        value: int
        seen: list = factory(list)

    first, second = Cell(1), Cell(1)
    assert first != second and first == first and len({first, second}) == 2
    first.value = 2
    assert first.value == 2 and first.seen == [] and first.seen is not second.seen


@record(frozen=False, kw_only=True)
class Entry:
    version: int = 1
    name: str
    seen: list = factory(list)


def test_keyword_only_records_take_no_positions_and_may_put_defaults_first():
    for _ in range(COMPILE_AFTER + 2):  # the generic `__init__`, then the compiled one
        assert Entry(name="a") == Entry(version=1, name="a", seen=[])
        with pytest.raises(TypeError):
            Entry("a")
        with pytest.raises(TypeError):
            Entry(version=2)
    assert Entry.__match_args__ == () and all(f.kw_only for f in fields(Entry))


def test_the_shipped_shapes_are_those_the_package_declares():
    """record_shapes.py holds every shape of the package's records, compiled ahead; it is
    written by python -m catalyst_dsl._internal.records (a stale file costs only compile time)."""
    from pathlib import Path

    from catalyst_dsl._internal import records

    shipped = Path(records.__file__).with_name("record_shapes.py").read_text(encoding="utf-8")
    assert shipped == records.shapes_source(), "record classes changed: run python -m catalyst_dsl._internal.records"


def test_a_shipped_shape_is_the_code_compiled_here():
    from catalyst_dsl._internal import records
    from catalyst_dsl._internal.record_shapes import SHAPES

    assert len(SHAPES) > 10
    for shape in SHAPES:
        shipped, compiled = records._shipped_init(shape), records._shaped_init(*shape)
        for attribute in (
            "co_code",
            "co_consts",
            "co_names",
            "co_varnames",
            "co_argcount",
            "co_kwonlyargcount",
            "co_flags",
            "co_linetable",
            "co_exceptiontable",
            "co_name",
            "co_qualname",
            "co_filename",
            "co_firstlineno",
        ):
            assert getattr(shipped, attribute) == getattr(compiled, attribute), (shape, attribute)
    assert records._shipped_init((False, 99, 0, (False,) * 99)) is None  # a shape it lacks is compiled


@record
class _Node:
    """A record with keyword-only fields and defaults, for the makers' tests."""

    name: str
    at: int = field(default=0, kw_only=True)
    note: object = field(default=None, eq=False, kw_only=True)


def test_a_maker_builds_the_record_init_would_without_calling_it():
    Node = _Node
    made = maker(Node, ("at", "name"))([3, "n"])  # the fields given in their own order; `note` its default
    assert made == Node("n", at=3) and made.note is None and type(made) is Node
    with pytest.raises(FrozenRecordError):
        made.name = "other"
    with pytest.raises(TypeError):
        maker(Point, ("x", "y"))  # `tags` has a factory: a maker makes no field's value afresh
    with pytest.raises(TypeError):
        maker(Point, ("y", "tags"))  # `x` has no default


def test_a_maker_given_every_field_sets_each_through_its_slot():
    Node = _Node

    @record(frozen=False)
    class Open:
        a: int
        b: int = 2

    made = maker(Node, ("note", "at", "name"))(["x", 3, "n"])
    assert made == Node("n", at=3, note="x") and made.note == "x" and type(made) is Node
    with pytest.raises(FrozenRecordError):
        made.at = 4
    opened = maker(Open, ("b", "a"))([5, 1])
    assert opened == Open(1, 5)
    opened.a = 9  # a mutable record stays mutable
    assert opened.a == 9
    assert maker(Node, ("name",))(["m"]) == Node("m")  # with defaults: the other way, same record


def test_the_shipped_makers_are_the_code_compiled_here():
    from catalyst_dsl._internal import records
    from catalyst_dsl._internal.record_shapes import MAKERS

    assert MAKERS and max(MAKERS) >= 10
    for count, shipped in MAKERS.items():
        compiled = records._compiled(records._maker_source(count), "make")
        for attribute in ("co_code", "co_consts", "co_names", "co_varnames", "co_argcount", "co_name"):
            assert getattr(shipped, attribute) == getattr(compiled, attribute), (count, attribute)
    assert records._maker_code(200).co_name == "make"  # a count it lacks is compiled
