"""Shared fakes for the informers tests: fifo objects, a literal lister, fake watches, a fake clock, a test-driven
ListWatch, and a recording event handler (bounded waits: ``testkit.wait_for``)."""

from __future__ import annotations

import queue
import threading
from typing import Any

from apis.watch import WatchEvent
from informers import ListWatch

BOUND = 10.0  # seconds any wait in these tests may take at most


def mk(name: str, val: Any = None, namespace: str = "", rv: str | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if namespace:
        md["namespace"] = namespace
    if rv is not None:
        md["resourceVersion"] = rv
    return {"metadata": md, "val": val}


def pod(name: str, rv: str, namespace: str = "ns", labels: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": namespace, "resourceVersion": rv}
    if labels:
        md["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md}


class LiteralListerGetter:
    """known_objects backed by a function returning the objects."""

    def __init__(self, fn):
        self.fn = fn

    def list_keys(self) -> list[str]:
        return [o["metadata"]["name"] for o in self.fn()]

    def get_by_key(self, key: str):
        for o in self.fn():
            if o["metadata"]["name"] == key:
                return o, True
        return None, False


def known(*objs):
    """known_objects holding exactly ``objs``."""
    return LiteralListerGetter(lambda: list(objs))


_END = object()


class FakeWatch:
    """A watch fed by the test: events are queued; ``close()`` ends the stream, ``stop()`` too."""

    def __init__(self) -> None:
        self._q: queue.Queue[Any] = queue.Queue()
        self.stopped = threading.Event()

    def add(self, obj):
        self._q.put(WatchEvent("ADDED", obj))

    def modify(self, obj):
        self._q.put(WatchEvent("MODIFIED", obj))

    def delete(self, obj):
        self._q.put(WatchEvent("DELETED", obj))

    def bookmark(self, rv: str):
        self._q.put(WatchEvent("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": rv}}))

    def error(self, status: dict[str, Any]):
        self._q.put(WatchEvent("ERROR", status))

    def close(self):
        self._q.put(_END)

    def stop(self):
        self.stopped.set()
        self._q.put(_END)

    def __iter__(self):
        while True:
            try:
                item = self._q.get(timeout=10.0)  # bounded: a broken test cannot hang forever
            except queue.Empty:
                return
            if item is _END:
                return
            yield item


class FakeClock:
    """Backoff clock for tests: ``sleep`` records the delay, advances time and never really sleeps.

    ``stop_after`` sets the stop event after that many sleeps, so that loops end deterministically.
    """

    def __init__(self, start: float = 1000.0, stop_after: int | None = None, stop_event: threading.Event | None = None):
        self.t = start
        self.sleeps: list[float] = []
        self.stop_after = stop_after
        self.stop_event = stop_event
        self.lock = threading.Lock()

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float, stop_event: threading.Event) -> bool:
        with self.lock:
            self.sleeps.append(seconds)
            self.t += seconds
            if self.stop_after is not None and len(self.sleeps) >= self.stop_after:
                (self.stop_event or stop_event).set()
        return stop_event.is_set()


def status(code: int, reason: str, message: str = "", causes: list | None = None) -> dict[str, Any]:
    st: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason,
                          "message": message or reason}
    if causes:
        st["details"] = {"causes": causes}
    return st


class Source:
    """A ListWatch whose list answers the current objects and whose watches the test drives."""

    def __init__(self, *objs, rv="10"):
        self.objs = list(objs)
        self.rv = rv
        self.watches: list[FakeWatch] = []
        self.lists = 0
        self.lw = ListWatch(self._list, self._watch)

    def _list(self, options):
        self.lists += 1
        return {"metadata": {"resourceVersion": self.rv}, "items": list(self.objs)}

    def _watch(self, options):
        w = FakeWatch()
        self.watches.append(w)
        return w


class RecordingHandler:
    """Records ("add", name, is_in_initial_list), ("update", name, rv) and ("delete", tombstone key or name);
    ``gate`` (when given) blocks every callback until set."""

    def __init__(self, gate: threading.Event | None = None):
        self.events: list = []
        self.gate = gate
        self.lock = threading.Lock()

    def _rec(self, e):
        if self.gate is not None:
            assert self.gate.wait(BOUND)
        with self.lock:
            self.events.append(e)

    def snapshot(self) -> list:
        with self.lock:
            return list(self.events)

    def on_add(self, obj, is_in_initial_list):
        self._rec(("add", obj["metadata"]["name"], is_in_initial_list))

    def on_update(self, old, new):
        self._rec(("update", new["metadata"]["name"], new["metadata"].get("resourceVersion")))

    def on_delete(self, obj):
        self._rec(("delete", getattr(obj, "key", None) or obj["metadata"]["name"]))


def start(informer, stop: threading.Event) -> threading.Thread:
    """Runs ``informer`` on a daemon thread until ``stop`` is set."""
    t = threading.Thread(target=informer.run, args=(stop,), daemon=True)
    t.start()
    return t


def stop_and_join(stop: threading.Event, t: threading.Thread) -> None:
    stop.set()
    t.join(BOUND)
    assert not t.is_alive()
