"""The sandbox's watch streaming: the events pending at a time leave in one write, each its own chunk, and the
stored objects are serialized without being copied."""

from __future__ import annotations

import json
import threading
from types import SimpleNamespace

from apis.fake import ObjectTracker
from apis.resources import CONFIG_MAPS
from apis.watch import ListOptions
from sandbox.apiserver.request import parse_resource_path
from sandbox.apiserver.watchstream import WatchStreamer
from sandbox.faults import Faults


class RecordingSink:
    def __init__(self) -> None:
        self.writes: list[list[bytes]] = []

    def start(self) -> None:
        pass

    def write(self, data: bytes) -> None:
        self.writes.append([data])

    def write_chunks(self, chunks: list[bytes]) -> None:
        self.writes.append(list(chunks))

    def end(self) -> None:
        pass

    def client_gone(self) -> bool:
        return False


def test_pending_events_leave_in_one_write_one_chunk_each():
    tracker = ObjectTracker()
    for name in ("a", "b", "c"):
        tracker.create(CONFIG_MAPS, {"metadata": {"name": name}, "data": {"k": name}}, "default")
    sandbox = SimpleNamespace(tracker=tracker, faults=Faults(), stopping=threading.Event(),
                              track_watch=lambda w: None, untrack_watch=lambda w: None)
    req = parse_resource_path(tracker, "", "v1", ["namespaces", "default", "configmaps"])
    sink = RecordingSink()
    # the three existing objects are queued before the stream starts; then the stream times out
    WatchStreamer(sandbox).serve(req, ListOptions(resource_version="0", timeout_seconds=1), sink, None, None)
    assert [len(w) for w in sink.writes] == [3]
    events = [json.loads(chunk) for chunk in sink.writes[0]]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", n) for n in "abc"]
