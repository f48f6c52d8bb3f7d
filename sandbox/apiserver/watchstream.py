"""Watch streaming of the sandbox API server: one JSON object per line (``{"type": ..., "object": ...}``) in a
chunked response, as kube-apiserver streams them; Table events for ``kubectl get -w``; the watch faults.

A stream ends cleanly (terminating chunk) on ``timeoutSeconds``, on an injected drop, on an ``ERROR`` event, when
the tracker ends the watch, or when the server stops. Each event is a chunk of its own, as kube-apiserver flushes
them; the events pending at a time leave in one write, as soon as they are there (when they come faster than
``GATHER_SECONDS`` apart, a few at a time, at most that much later).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

import orjson

from apis.errors import ApiError
from apis.fake.tracker.watch import GATHER_SECONDS
from apis.watch import ADDED, DELETED, ERROR, MODIFIED, ListOptions, WatchEvent

from . import tables
from .columns import Column
from .request import ResourceRequest
from .wire import wire_status

if TYPE_CHECKING:  # context.py imports the endpoints through eventsv1
    from .context import ServedWatch, ServingContext

__all__ = ["StreamSink", "WatchStreamer"]


class StreamSink(Protocol):
    """Where a watch stream goes: the HTTP connection of the request."""

    def start(self) -> None:
        """Send the status line and the headers of a chunked JSON response."""

    def write(self, data: bytes) -> None:
        """Send one chunk (raises OSError when the client is gone)."""

    def write_chunks(self, chunks: list[bytes]) -> None:
        """Send these chunks, each framed on its own, in one write (raises OSError when the client is gone)."""

    def end(self) -> None:
        """Send the terminating chunk."""

    def client_gone(self) -> bool:
        """Whether the client closed its end while the stream was idle."""


class WatchStreamer:
    """Serves one ``?watch=1`` request; ``sandbox`` gives ``tracker``, ``faults``, ``stopping`` (an Event) and
    ``track_watch``/``untrack_watch``."""

    def __init__(self, sandbox: ServingContext) -> None:
        self.sandbox = sandbox

    def serve(
        self,
        req: ResourceRequest,
        options: ListOptions,
        sink: StreamSink,
        table: tables.TableOptions | None,
        columns: list[Column] | None,
    ) -> None:
        """Stream the watch to ``sink`` (as Tables with ``columns`` when ``table``); raises
        OSError when the client went away."""
        sandbox = self.sandbox
        faults = sandbox.faults
        if faults.gone_on_rewatch and options.resource_version not in (None, "", "0"):
            faults.count("gone_rewatches")
            current = sandbox.tracker.resource_version()
            status = ApiError(
                410, "Expired", f"too old resource version: {options.resource_version} ({current})"
            ).to_status()
            sink.start()
            sink.write(_event_line(WatchEvent(ERROR, status)))
            sink.end()
            return
        watch = sandbox.tracker.watch(req.gvr, req.namespace, options)
        sandbox.track_watch(watch)
        try:
            sink.start()
            self._pump(req, watch, options, sink, table, columns)
            sink.end()
        finally:
            watch.stop()
            sandbox.untrack_watch(watch)

    def _pump(
        self,
        req: ResourceRequest,
        watch: ServedWatch,
        options: ListOptions,
        sink: StreamSink,
        table: tables.TableOptions | None,
        columns: list[Column] | None,
    ) -> None:
        sandbox, faults = self.sandbox, self.sandbox.faults
        started = time.monotonic()
        timeout_at = started + options.timeout_seconds if options.timeout_seconds else None
        sent = 0
        while not sandbox.stopping.is_set():
            now = time.monotonic()
            drop_after = faults.drop_watch_after
            if drop_after is not None and now >= started + drop_after:
                faults.count("dropped_watches")
                return
            if timeout_at is not None and now >= timeout_at:
                return
            wait = 1.0
            for deadline in (timeout_at, started + drop_after if drop_after is not None else None):
                if deadline is not None:
                    wait = min(wait, max(deadline - now, 0.0))
            limit = faults.drop_watch_after_events
            if limit is not None and sent >= limit:  # also when the fault was lowered below what this watch sent
                faults.count("dropped_watches")
                return
            try:  # every pending event at once, the stored objects only serialized
                events = watch.next_events(wait, copy=False, limit=None if limit is None else limit - sent,
                                           gather=GATHER_SECONDS)
            except StopIteration:
                return
            if not events:
                if sink.client_gone():
                    raise ConnectionResetError("the watch client went away")
                continue
            lines, done = [], False
            for event in events:
                if table:
                    event = _as_table_event(req, event, table, columns, first=sent == 0)
                lines.append(_event_line(event))
                sent += 1
                if event.type == ERROR:
                    done = True
                    break
            sink.write_chunks(lines)
            if done:
                return
            if limit is not None and sent >= limit:
                faults.count("dropped_watches")
                return


def _event_line(event: WatchEvent) -> bytes:
    obj = wire_status(event.object) if event.type == ERROR else event.object
    return orjson.dumps({"type": event.type, "object": obj}) + b"\n"


def _as_table_event(
    req: ResourceRequest, event: WatchEvent, table: tables.TableOptions, columns: list[Column] | None, first: bool
) -> WatchEvent:
    """Watch events for ``kubectl get -w``: one-row Tables, column definitions on the first event only."""
    if event.type not in (ADDED, MODIFIED, DELETED):
        return event
    converted = tables.to_table(event.object, req.gvr.group, req.gvr.resource, table, columns)
    if not first:
        converted["columnDefinitions"] = []
    return WatchEvent(event.type, converted)
