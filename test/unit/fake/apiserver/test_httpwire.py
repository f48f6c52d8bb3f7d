"""The sandbox API server's request-head parsing (``sandbox.apiserver.httpwire``)."""

from __future__ import annotations

import io

import pytest

from sandbox.apiserver.httpwire import MAX_HEADERS, HeadError, parse_request_line, read_headers


def readers(raw: bytes) -> list[io.BytesIO | io.BufferedReader]:
    """The same bytes read line by line (BytesIO) and from a buffer that holds the whole block (a socket's)."""
    return [io.BytesIO(raw), io.BufferedReader(io.BytesIO(raw))]


@pytest.mark.parametrize("buffered", [False, True])
def test_headers_are_case_insensitive_first_wins_and_folded_lines_continue(buffered: bool) -> None:
    raw = b"Accept: application/json\r\nX-Multi: a\r\nx-multi: b\r\nX-Folded: one\r\n two\r\n\r\nBODY\r\n\r\n"
    rfile = readers(raw)[buffered]
    headers = read_headers(rfile)
    assert headers.get("accept") == headers["ACCEPT"] == "application/json"
    assert headers.get("x-multi") == "a" and headers.get_all("X-Multi") == ["a", "b"]
    assert headers.get("x-folded") == "one two"
    assert headers.get("missing") is None and headers.get("missing", "d") == "d" and "missing" not in headers
    assert rfile.read() == b"BODY\r\n\r\n"  # the body is left unread


@pytest.mark.parametrize("raw, rest", [
    (b"\r\nBODY: x\r\n\r\n", b"BODY: x\r\n\r\n"),  # no headers: the body is not taken for them
    (b"A: 1\nB: 2\r\n\r\nC", b"C"),  # bare LF line ends
])
def test_the_block_ends_at_its_first_empty_line(raw: bytes, rest: bytes) -> None:
    for rfile in readers(raw):
        headers = read_headers(rfile)
        assert rfile.read() == rest and "body" not in headers


def test_a_block_at_the_limits_is_read() -> None:
    most = b"".join(b"X-%d: y\r\n" % i for i in range(MAX_HEADERS - 1)) + b"\r\n"  # + the empty line: 100 lines
    for rfile in readers(most):
        assert len(read_headers(rfile)) == MAX_HEADERS - 1


@pytest.mark.parametrize(
    "raw, code, message",
    [
        (b"no colon\r\n\r\n", 400, "malformed header line"),
        (b"X-Long: " + b"a" * 70_000 + b"\r\n\r\n", 431, "Line too long"),
        (b"".join(b"X-%d: y\r\n" % i for i in range(MAX_HEADERS)) + b"\r\n", 431, "Too many headers"),
    ],
)
def test_bad_header_blocks(raw: bytes, code: int, message: str) -> None:
    for rfile in readers(raw):
        with pytest.raises(HeadError) as caught:
            read_headers(rfile)
        assert (caught.value.code, caught.value.message[: len(message)]) == (code, message)


def test_request_lines() -> None:
    line = parse_request_line("GET //x/y HTTP/1.1")
    assert (line.command, line.path, line.version, line.keep_alive) == ("GET", "/x/y", "HTTP/1.1", True)
    assert not parse_request_line("GET / HTTP/1.0").keep_alive
    assert parse_request_line("GET /").version == "HTTP/0.9"
    for text, code in [("GET / HTTP/2.0", 505), ("GET / HTTP/1.1.1", 400), ("GARBAGE", 400), ("PUT /", 400)]:
        with pytest.raises(HeadError) as caught:
            parse_request_line(text)
        assert caught.value.code == code, text
