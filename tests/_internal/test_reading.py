"""Reading a file whole up to a limit (`_internal.reading`)."""

from __future__ import annotations

import os
import threading

import pytest

from catalyst_dsl._internal.reading import read_file, read_up_to


@pytest.mark.parametrize("size", [0, 1, 100, 70_000, 200_000])
def test_a_file_is_read_whole_under_the_limit(tmp_path, size) -> None:
    data = bytes(i % 251 for i in range(size))
    (tmp_path / "f").write_bytes(data)
    assert read_file(str(tmp_path / "f"), 1_000_000) == (data, size)


@pytest.mark.parametrize("limit", [0, 1, 99, 100, 101])
def test_never_more_than_the_limit(tmp_path, limit) -> None:
    (tmp_path / "f").write_bytes(b"x" * 100)
    assert read_file(str(tmp_path / "f"), limit)[0] == b"x" * min(limit, 100)


def test_a_file_larger_than_its_size_said_is_read_on_to_the_limit(tmp_path) -> None:
    # It grew after the size was taken: the size is only where the first read stops.
    (tmp_path / "f").write_bytes(b"y" * 300_000)
    fd = os.open(tmp_path / "f", os.O_RDONLY)
    try:
        assert read_up_to(fd, 250_001, 10) == b"y" * 250_001
    finally:
        os.close(fd)


def test_a_pipe_has_no_size_and_is_read_to_its_end(tmp_path) -> None:
    reading, writing = os.pipe()

    def write() -> None:
        with os.fdopen(writing, "wb") as out:
            for _ in range(5):
                out.write(b"z" * 30_000)
                out.flush()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert read_up_to(reading, 1_000_000, 0) == b"z" * 150_000
    finally:
        writer.join()
        os.close(reading)


def test_a_missing_file_raises_as_open_does(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        read_file(str(tmp_path / "gone"), 10)
