"""The sandbox API server's request-head parsing (``sandbox.apiserver.httpwire``)."""

from __future__ import annotations

import io

import pytest

from sandbox.apiserver.httpwire import MAX_HEADERS, HeadError, parse_request_line, read_headers


def test_headers_are_case_insensitive_first_wins_and_folded_lines_continue() -> None:
    raw = b"Accept: application/json\r\nX-Multi: a\r\nx-multi: b\r\nX-Folded: one\r\n two\r\n\r\nBODY"
    rfile = io.BytesIO(raw)
    headers = read_headers(rfile)
    assert headers.get("accept") == headers["ACCEPT"] == "application/json"
    assert headers.get("x-multi") == "a" and headers.get_all("X-Multi") == ["a", "b"]
    assert headers.get("x-folded") == "one two"
    assert headers.get("missing") is None and headers.get("missing", "d") == "d" and "missing" not in headers
    assert rfile.read() == b"BODY"  # the body is left unread


@pytest.mark.parametrize(
    "raw, code, message",
    [
        (b"no colon\r\n\r\n", 400, "malformed header line"),
        (b"X-Long: " + b"a" * 70_000 + b"\r\n\r\n", 431, "Line too long"),
        (b"".join(b"X-%d: y\r\n" % i for i in range(MAX_HEADERS)) + b"\r\n", 431, "Too many headers"),
    ],
)
def test_bad_header_blocks(raw: bytes, code: int, message: str) -> None:
    with pytest.raises(HeadError) as caught:
        read_headers(io.BytesIO(raw))
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
