"""Hostile and unusual files: each gets a diagnostic at the right place, quickly."""

from __future__ import annotations


from catalyst_dsl.compiler import MAX_FILE_BYTES, compile_bytes
from catalyst_dsl.ir.serialize import from_dict, to_dict

HEAD = b"name: x\ndescription: d\nowner: o\n"


def codes(data: bytes, path: str = "p.yaml") -> list[tuple[str, int, int]]:
    return [(d.code, d.span.line, d.span.col) for d in compile_bytes(data, path).diagnostics]


def test_empty_and_comment_only_files() -> None:
    assert codes(b"") == [("C014", 1, 1)]
    assert codes(b"# nothing\n\n") == [("C014", 1, 1)]


def test_byte_order_mark_is_a_warning_and_positions_stay_right() -> None:
    found = codes(b"\xef\xbb\xbf" + HEAD + b"steps:\n  - dispaly: x\n")
    assert ("C003", 1, 1) in found and ("C404", 5, 5) in found


def test_invalid_utf8_points_at_the_byte() -> None:
    assert codes(HEAD + b"steps:\n  - display: caf\xe9\n") == [("C001", 5, 17)]


def test_binary_and_utf16() -> None:
    assert codes(b"\x00\x01\x02")[0][0] == "C001"
    assert codes("name: x".encode("utf-16"))[0][0] == "C001"


def test_tabs_multi_documents_and_duplicates() -> None:
    assert codes(HEAD + b"steps:\n\t- display: x\n")[0][:2] == ("C005", 5)
    assert codes(HEAD + b"steps:\n  - display: x\n---\nname: y\n") == [("C004", 6, 1)]
    assert ("C006", 4, 1) in codes(HEAD + b"owner: p\nsteps:\n  - display: x\n")


def test_alias_bomb_is_rejected_quickly() -> None:
    lines = [b"a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        refs = b", ".join([b"*a%d" % (i - 1)] * 10)
        lines.append(b"a%d: &a%d [%s]" % (i, i, refs))
    found = codes(b"\n".join(lines) + b"\n")  # 10**10 nodes if expanded: refused before that
    assert found[0][0] == "C007"


def test_recursive_alias_and_deep_nesting() -> None:
    assert codes(b"a: &x [1, *x]\n")[0][0] == "C008"
    assert codes(b"a: " + b"[" * 100_000 + b"]" * 100_000 + b"\n")[0][0] == "C009"


def test_huge_file_is_refused() -> None:
    assert codes(b"#" * (MAX_FILE_BYTES + 1))[0][0] == "C015"


def test_expression_inside_block_scalar_is_positioned_in_the_file() -> None:
    data = HEAD + b"steps:\n  - bash: |\n      echo one\n      echo ${{ 1 + }}\n"
    assert codes(data) == [("C101", 7, 20)]


def test_ir_round_trips_through_json() -> None:
    result = compile_bytes(
        HEAD + b"inputs:\n  - number: n\n    default: 2\nsteps:\n  - display: \"${{ get('n') * 2 }} {{n}}\"\n", "p.yaml"
    )
    assert result.diagnostics == []
    assert from_dict(to_dict(result.playbook)) == result.playbook
