"""Spans kept as one number (`Span.packed_in`, `SourceFile.unpack`), as the check cache keeps them."""

from __future__ import annotations

from catalyst_dsl.syntax.source import SourceFile, Span

TEXT = "name: demo\nsteps:\n  - log-info: hi\n"


def test_a_span_comes_back_from_its_number_with_the_same_position() -> None:
    source = SourceFile("/p/demo.yaml", TEXT)
    for start, end in [(0, 0), (0, 4), (11, 17), (len(TEXT), len(TEXT))]:
        packed = source.span(start, end).packed_in(source)
        again = source.unpack(packed)
        assert again.offsets_in(source) == (start, end)
        assert again == source.span(start, end)  # (comparing positions it: its offsets are gone)
    assert source.unpack(source.span(20, 24).packed_in(source)) == Span("/p/demo.yaml", 3, 3, 3, 7)


def test_a_positioned_span_or_another_files_has_no_number() -> None:
    source, other = SourceFile("/p/demo.yaml", TEXT), SourceFile("/p/other.yaml", TEXT)
    span = source.span(0, 4)
    assert span.packed_in(other) is None
    span.end_col  # positioned now: its offsets are gone
    assert span.packed_in(source) is None


def test_a_number_that_is_no_span_of_the_file_gives_none() -> None:
    source = SourceFile("/p/demo.yaml", TEXT)
    for wrong in (-1, 5 << 32 | 2, len(TEXT) + 1, 1 << 40, True, 2.0, "3", None, [0, 2]):
        assert source.unpack(wrong) is None, wrong


def test_the_line_of_a_span_not_yet_positioned_is_the_line_it_is_positioned_at() -> None:
    # A run names an unnamed step by its start line alone (`action@line`), without
    # positioning the span; both ways must give the same line, at every offset.
    text = "first\n\nthird line\r\nlast"
    source = SourceFile("f.yaml", text)
    for start in range(len(text) + 1):
        lazy = source.span(start, len(text))
        positioned = source.span(start, len(text))
        positioned.end_col  # positions all four numbers
        assert lazy.line == positioned.line == source.position(start)[0]
        assert lazy.offsets_in(source) is not None  # asking its line left it unpositioned


def test_a_source_travels_as_its_path_and_text_and_finds_positions_after() -> None:
    import pickle

    source = SourceFile("p.yaml", "a: 1\nb: 2\n\nc: 3")
    sent = pickle.dumps(source, protocol=pickle.HIGHEST_PROTOCOL)
    assert b"_line_starts" not in sent and len(sent) < 100  # no line table: it is made again
    received = pickle.loads(sent)
    assert received == source
    assert received.position(source.text.index("c")) == (4, 1)
    assert received.line_count == 4 and received.line_text(2) == "b: 2"
