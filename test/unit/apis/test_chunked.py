"""``apis.chunked.ChunkedDecoder``: the same body whatever the cut of the reads; malformed streams raise."""

from __future__ import annotations

import pytest

from apis.chunked import MAX_SIZE_LINE_BYTES, ChunkedDecoder, ChunkedEncodingError

CHUNKS = [b"hello", b", chunked ", b"world\r\n with CRLF and \n inside", b"x" * 300]
BODY = b"".join(CHUNKS)
# lower and upper case hex sizes, a chunk extension on the second chunk, whitespace before the CRLF on the third
LAST_CHUNK = b"0\r\n"
TRAILER = b"X-Trailer: t\r\nX-Other: 1;2\r\n\r\n"
ENCODED = (
    b"5\r\nhello\r\n"
    + b"a;name=value\r\n, chunked \r\n"
    + b"%x \r\n" % len(CHUNKS[2]) + CHUNKS[2] + b"\r\n"
    + b"%X\r\n" % len(CHUNKS[3]) + CHUNKS[3] + b"\r\n"
    + LAST_CHUNK
    + TRAILER
)
# index of the last byte of the last chunk's size line: ``done`` turns true once it has been fed
LAST_CHUNK_END = ENCODED.index(b"\r\n" + LAST_CHUNK) + 2 + len(LAST_CHUNK) - 1


def test_the_encoded_fixture_is_what_the_tests_think():
    assert ENCODED[LAST_CHUNK_END - 2:LAST_CHUNK_END + 1] == LAST_CHUNK
    assert ENCODED[LAST_CHUNK_END + 1:] == TRAILER


def test_fed_whole():
    dec = ChunkedDecoder()
    assert not dec.done
    assert dec.feed(ENCODED) == BODY
    assert dec.done


def test_without_trailer_done_after_the_last_chunk_line():
    dec = ChunkedDecoder()
    assert dec.feed(ENCODED[:LAST_CHUNK_END]) == BODY
    assert not dec.done  # "0\r" seen, the line is not over yet
    assert dec.feed(ENCODED[LAST_CHUNK_END:LAST_CHUNK_END + 1]) == b""
    assert dec.done


@pytest.mark.parametrize("cut", range(len(ENCODED) + 1))
def test_cut_anywhere_into_two_feeds(cut):
    dec = ChunkedDecoder()
    first = dec.feed(ENCODED[:cut])
    assert dec.done == (cut > LAST_CHUNK_END)
    second = dec.feed(ENCODED[cut:])
    assert first + second == BODY
    assert dec.done


def test_byte_by_byte():
    dec = ChunkedDecoder()
    out = []
    for i in range(len(ENCODED)):
        out.append(dec.feed(ENCODED[i:i + 1]))
        assert dec.done == (i >= LAST_CHUNK_END), i
    assert b"".join(out) == BODY


def test_empty_feed_returns_nothing():
    dec = ChunkedDecoder()
    assert dec.feed(b"") == b""
    assert not dec.done
    assert dec.feed(b"3\r\nab") == b"ab"
    assert dec.feed(b"") == b""
    assert dec.feed(b"c\r\n0\r\n\r\n") == b"c"
    assert dec.done


def test_bytes_after_the_last_chunk_are_ignored():
    dec = ChunkedDecoder()
    assert dec.feed(ENCODED + b"5\r\nextra\r\nnot even chunked") == BODY
    assert dec.done
    # later feeds, valid or not, give nothing and do not raise
    assert dec.feed(b"5\r\nmore!\r\n") == b""
    assert dec.feed(b"zz garbage\n\n") == b""
    assert dec.done


def test_an_empty_body():
    dec = ChunkedDecoder()
    assert dec.feed(b"0\r\n\r\n") == b""
    assert dec.done


def test_a_size_line_of_exactly_max_bytes_is_accepted_whole_and_cut():
    # the size line as counted by the decoder: everything before the "\n" (its "\r" included)
    line = b"3;" + b"e" * (MAX_SIZE_LINE_BYTES - 3) + b"\r"
    assert len(line) == MAX_SIZE_LINE_BYTES
    stream = line + b"\nabc\r\n0\r\n\r\n"
    assert ChunkedDecoder().feed(stream) == b"abc"
    dec = ChunkedDecoder()
    assert dec.feed(line) == b""
    assert dec.feed(b"\nabc\r\n0\r\n\r\n") == b"abc"
    assert dec.done


# -- malformed ---------------------------------------------------------------------------------------------------
MALFORMED = {
    "non-hex size": b"zz\r\nab\r\n0\r\n\r\n",
    "hex prefix": b"0x3\r\nabc\r\n0\r\n\r\n",
    "negative size": b"-3\r\nabc\r\n0\r\n\r\n",
    "non-hex size after a good chunk": b"3\r\nabc\r\n1g\r\nx\r\n0\r\n\r\n",
    "empty size line": b"\r\nabc\r\n0\r\n\r\n",
    "empty size line after a good chunk": b"3\r\nabc\r\n\r\n0\r\n\r\n",
    "only an extension": b";name=value\r\nabc\r\n0\r\n\r\n",
    "data not followed by CRLF": b"3\r\nabcXY0\r\n\r\n",
    "data followed by LF only": b"3\r\nabc\n0\r\n\r\n",
    "data longer than its size": b"3\r\nabcd\r\n0\r\n\r\n",
    "size line longer than the limit": b"1" * (MAX_SIZE_LINE_BYTES + 1) + b"\r\nx\r\n0\r\n\r\n",
    "extension making the line too long": b"1;" + b"e" * MAX_SIZE_LINE_BYTES + b"\r\nx\r\n0\r\n\r\n",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_whole_raises(name):
    with pytest.raises(ChunkedEncodingError):
        ChunkedDecoder().feed(MALFORMED[name])


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_byte_by_byte_raises(name):
    dec = ChunkedDecoder()
    stream = MALFORMED[name]
    with pytest.raises(ChunkedEncodingError):
        for i in range(len(stream)):
            dec.feed(stream[i:i + 1])


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_cut_in_two_raises(name):
    stream = MALFORMED[name]
    for cut in (1, 2, 3, 4, 5, 6, len(stream) // 2, len(stream) - 1):
        dec = ChunkedDecoder()
        with pytest.raises(ChunkedEncodingError):
            dec.feed(stream[:cut])
            dec.feed(stream[cut:])


def test_error_is_a_value_error():
    assert issubclass(ChunkedEncodingError, ValueError)


def test_data_not_followed_by_crlf_cut_between_cr_and_lf():
    dec = ChunkedDecoder()
    assert dec.feed(b"3\r\nabc\r") == b"abc"
    with pytest.raises(ChunkedEncodingError, match="CRLF"):
        dec.feed(b"X")


def test_too_long_size_line_without_newline_raises_as_soon_as_it_is_over_the_limit():
    # whole: no newline at all, the line alone is over the limit
    with pytest.raises(ChunkedEncodingError, match="longer than"):
        ChunkedDecoder().feed(b"1" * (MAX_SIZE_LINE_BYTES + 1))
    # cut across feeds, none over the limit on its own
    dec = ChunkedDecoder()
    half = MAX_SIZE_LINE_BYTES // 2 + 1
    assert dec.feed(b"1" * half) == b""
    with pytest.raises(ChunkedEncodingError, match="longer than"):
        dec.feed(b"1" * half)


def test_too_long_size_line_cut_with_its_newline_in_the_next_feed():
    dec = ChunkedDecoder()
    assert dec.feed(b"1" * MAX_SIZE_LINE_BYTES) == b""  # at the limit: not yet an error
    with pytest.raises(ChunkedEncodingError, match="longer than"):
        dec.feed(b"1\r\nx\r\n0\r\n\r\n")


def test_too_long_size_line_cut_across_many_feeds():
    dec = ChunkedDecoder()
    with pytest.raises(ChunkedEncodingError, match="longer than"):
        for _ in range(MAX_SIZE_LINE_BYTES):
            dec.feed(b"ab")
