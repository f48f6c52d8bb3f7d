"""HTTPWatch over a real chunked HTTP stream from the stub server, and its line splitting over scripted reads."""

from __future__ import annotations

import threading

import pytest

from apis import errors
from apis.http_watch import HTTPWatch

WATCH_PATH = "/api/v1/namespaces/default/pods"
JOIN = 10.0


def _names(events):
    return [(e.type, e.object["metadata"]["name"]) for e in events]


def test_watch_query_and_events_split_across_chunks(stub, cs):
    second_half = stub.gate()
    a = stub.event_line("ADDED", "a", "11")

    def stream(req, resp):
        resp.start_stream()
        resp.chunk(stub.event_line("ADDED", "x", "10") + a[:25])  # one whole event and the start of the next
        second_half.wait(10)
        resp.chunk(a[25:] + stub.event_line("MODIFIED", "b", "12") + stub.event_line("DELETED", "c", "13"))
        resp.end_stream()

    stub.on("GET", WATCH_PATH, stream)
    w = cs.core_v1().pods("default").watch(resource_version="9", timeout_seconds=300, allow_watch_bookmarks=True)
    assert stub.last().query == {"watch": "1", "resourceVersion": "9", "timeoutSeconds": "300",
                                 "allowWatchBookmarks": "true"}
    it = iter(w)
    assert _names([next(it)]) == [("ADDED", "x")]  # delivered before the rest of the stream exists
    second_half.set()
    assert _names(it) == [("ADDED", "a"), ("MODIFIED", "b"), ("DELETED", "c")]
    assert w.end_reason == "closed"


def test_error_event_is_yielded_with_its_status(stub, cs):
    def stream(req, resp):
        resp.start_stream()
        resp.chunk(stub.error_line(410, "Expired", "too old resource version: 1 (5)"))
        resp.end_stream()

    stub.on("GET", WATCH_PATH, stream)
    events = list(cs.core_v1().pods("default").watch(resource_version="1"))
    assert [e.type for e in events] == ["ERROR"]
    err = errors.from_status(events[0].object)
    assert isinstance(err, errors.GoneError) and errors.is_resource_expired(err)


@pytest.mark.parametrize(("code", "reason", "cls"), [(410, "Expired", errors.GoneError),
                                                     (429, "TooManyRequests", errors.TooManyRequestsError),
                                                     (403, "Forbidden", errors.ForbiddenError)])
def test_watch_start_failure_raises_the_typed_error(stub, cs, code, reason, cls):
    stub.on("GET", WATCH_PATH, lambda req, resp: resp.send_status(code, reason, f"{reason} here"))
    with pytest.raises(cls, match=f"{reason} here"):
        cs.core_v1().pods("default").watch(resource_version="5")


def test_server_closing_mid_line_ends_without_a_partial_event(stub, cs):
    def stream(req, resp):
        resp.start_stream()
        resp.chunk(stub.event_line("ADDED", "a", "2") + b'{"type":"MODIFIED","obj')
        resp.abort()

    stub.on("GET", WATCH_PATH, stream)
    w = cs.core_v1().pods("default").watch()
    assert _names(w) == [("ADDED", "a")]
    assert w.end_reason == "broken"


def test_malformed_line_ends_the_watch(stub, cs):
    def stream(req, resp):
        resp.start_stream()
        resp.chunk(stub.event_line("ADDED", "a", "2") + b"not json\n" + stub.event_line("ADDED", "b", "3"))
        resp.end_stream()

    stub.on("GET", WATCH_PATH, stream)
    w = cs.core_v1().pods("default").watch()
    assert _names(w) == [("ADDED", "a")]
    assert w.end_reason == "malformed"


def test_stop_from_another_thread_unblocks_a_waiting_reader(stub, cs):
    release = stub.gate()
    opened = threading.Event()

    def stream(req, resp):
        resp.start_stream()
        opened.set()
        release.wait(10)  # sends nothing until the test ends

    stub.on("GET", WATCH_PATH, stream)
    w = cs.core_v1().pods("default").watch(timeout_seconds=600)
    got: list = []
    reader = threading.Thread(target=lambda: got.extend(w))
    reader.start()
    assert opened.wait(JOIN)
    w.stop()
    w.stop()  # idempotent
    reader.join(JOIN)
    assert not reader.is_alive()
    assert got == [] and w.end_reason == "stopped"
    release.set()


def test_a_silent_stream_ends_at_the_idle_timeout(stub):
    from apis.clientset import Clientset

    release = stub.gate()

    def stream(req, resp):
        resp.start_stream()
        release.wait(10)

    stub.on("GET", WATCH_PATH, stream)
    with Clientset.from_url(stub.url, watch_idle_timeout=0.2) as client:
        w = client.core_v1().pods("default").watch()
        assert list(w) == []
        assert w.end_reason == "timeout"
    release.set()


def test_watch_is_iterable_once_and_a_stopped_watch_yields_nothing(stub, cs):
    stub.on("GET", WATCH_PATH, lambda req, resp: (resp.start_stream(), resp.end_stream()))
    w = cs.core_v1().pods("default").watch()
    w.stop()
    assert list(w) == []
    with pytest.raises(RuntimeError, match="only once"):
        iter(w)


# -- line splitting over scripted reads (no network) -----------------------------------------------------------


class ScriptedResponse:
    """Answers read1() with the scripted pieces, then b"" (or raises the scripted exception)."""

    def __init__(self, pieces, end: BaseException | None = None) -> None:
        self.pieces = list(pieces)
        self.end = end
        self.closed = False
        self.released = False

    def read1(self, amt=None):
        if self.pieces:
            return self.pieces.pop(0)
        if self.end is not None:
            raise self.end
        return b""

    def close(self):
        self.closed = True

    def release_conn(self):
        self.released = True


def _line(name: str) -> bytes:
    return b'{"type":"ADDED","object":{"metadata":{"name":"%s"}}}\n' % name.encode()


def test_every_byte_boundary_yields_the_same_events():
    stream = _line("a") + b"\n  \n" + _line("b") + b'{"type":"DELETED","object":{"metadata":{"name":"c"}}}\r\n'
    for cut in range(1, len(stream)):
        resp = ScriptedResponse([stream[:cut], stream[cut:]])
        assert _names(HTTPWatch(resp)) == [("ADDED", "a"), ("ADDED", "b"), ("DELETED", "c")], cut
        assert resp.closed and resp.released


def test_byte_by_byte_reads():
    stream = _line("a") + _line("b")
    assert _names(HTTPWatch(ScriptedResponse([stream[i:i + 1] for i in range(len(stream))]))) == [
        ("ADDED", "a"), ("ADDED", "b")]


@pytest.mark.parametrize("bad", [b"[1,2]\n", b'{"type":"ADDED"}\n', b'{"type":3,"object":{}}\n',
                                 b'{"type":"ADDED","object":[]}\n'])
def test_lines_of_the_wrong_shape_are_malformed(bad):
    w = HTTPWatch(ScriptedResponse([_line("a") + bad + _line("b")]))
    assert _names(w) == [("ADDED", "a")]
    assert w.end_reason == "malformed"


def test_a_broken_read_ends_quietly_and_closes():
    resp = ScriptedResponse([_line("a"), b'{"type"'], end=OSError("connection reset"))
    w = HTTPWatch(resp)
    assert _names(w) == [("ADDED", "a")]
    assert w.end_reason == "broken" and resp.closed


def test_an_oversized_line_ends_the_watch():
    w = HTTPWatch(ScriptedResponse([b'{"type":"ADDED","object":{"x":"' + b"y" * 100]), max_event_bytes=64)
    assert list(w) == []
    assert w.end_reason == "too-large"


def test_stop_during_iteration_ends_before_the_next_event():
    w = HTTPWatch(ScriptedResponse([_line("a") + _line("b")]))
    seen = []
    for ev in w:
        seen.append(ev.object["metadata"]["name"])
        w.stop()
    assert seen == ["a"] and w.end_reason == "stopped"


def test_context_manager_stops():
    resp = ScriptedResponse([_line("a")])
    with HTTPWatch(resp) as w:
        pass
    assert w.stopped and resp.closed


def test_parse_event_builds_a_plain_frozen_watch_event():
    import dataclasses

    from apis.http_watch import parse_event
    from apis.watch import WatchEvent

    event = parse_event(b'{"type": "MODIFIED", "object": {"metadata": {"name": "a"}}}')
    assert type(event) is WatchEvent
    assert event == WatchEvent("MODIFIED", {"metadata": {"name": "a"}})
    assert (event.type, event.object) == ("MODIFIED", {"metadata": {"name": "a"}})
    assert repr(event) == "WatchEvent(type='MODIFIED', object={'metadata': {'name': 'a'}})"
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.type = "DELETED"  # type: ignore[misc]
