"""Watch streaming of the sandbox API server: chunked JSON lines, timeouts, watch faults, Table events; and the
list/watch query options (``list_options``, validated as kube-apiserver does by ``validate_list_options``).

Mixed into ``SandboxRequestHandler``; a stream ends cleanly (terminating chunk) on ``timeoutSeconds``, on an
injected drop, on an ``ERROR`` event, when the tracker ends the watch, or when the server stops.
"""

from __future__ import annotations

import select
import socket
import time
from typing import Any

import orjson

from .. import meta
from ..errors import ApiError, BadRequestError, new_invalid
from ..watch import ADDED, DELETED, ERROR, MODIFIED, ListOptions, WatchEvent
from . import tables

__all__ = ["WatchStreamMixin", "list_options", "query_bool", "query_int", "query_value", "validate_list_options"]


def query_value(query: dict[str, list[str]], key: str) -> str | None:
    """The parameter's first value (as kube-apiserver's query decoding takes it); None when absent."""
    values = query.get(key)
    return values[0] if values else None


def query_bool(query: dict[str, list[str]], key: str) -> bool | None:
    """kube-apiserver's reading of a boolean parameter: None when absent, False for "0" or "false" (any case),
    True for anything else, the empty value included."""
    raw = query_value(query, key)
    if raw is None:
        return None
    return raw != "0" and raw.lower() != "false"


def query_int(query: dict[str, list[str]], key: str) -> int | None:
    raw = query_value(query, key)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise BadRequestError(f"invalid value for query parameter {key}: {raw!r} is not an integer") from None
    if value < 0:
        raise BadRequestError(f"invalid value for query parameter {key}: {raw!r} must not be negative")
    return value


def list_options(query: dict[str, list[str]]) -> ListOptions:
    """ListOptions from the query string; malformed values are a 400 naming the parameter."""
    label_selector = query_value(query, "labelSelector")
    field_selector = query_value(query, "fieldSelector")
    try:
        meta.parse_selector(label_selector)
    except ValueError as exc:
        raise BadRequestError(f"unable to parse requirement: labelSelector: {exc}") from None
    try:
        meta.parse_field_selector(field_selector)
    except ValueError as exc:
        raise BadRequestError(f"invalid fieldSelector: {exc}") from None
    return ListOptions(
        resource_version=query_value(query, "resourceVersion"),
        resource_version_match=query_value(query, "resourceVersionMatch") or None,
        limit=query_int(query, "limit") or None,
        continue_=query_value(query, "continue") or None,
        timeout_seconds=query_int(query, "timeoutSeconds"),
        allow_watch_bookmarks=bool(query_bool(query, "allowWatchBookmarks")),
        label_selector=label_selector or None,
        field_selector=field_selector or None,
        send_initial_events=query_bool(query, "sendInitialEvents"),
    )


def validate_list_options(options: ListOptions, watch: bool) -> None:
    """kube-apiserver's ListOptions rules (WatchList enabled): a bad combination is a 422 on ListOptions."""
    match, causes = options.resource_version_match, []

    def forbidden(field: str, detail: str) -> None:
        causes.append({"type": "FieldValueForbidden", "field": field, "message": f"Forbidden: {detail}"})

    def unsupported(supported: tuple[str, ...]) -> None:
        values = ", ".join(f'"{v}"' for v in supported)
        message = f'Unsupported value: "{match}": supported values: {values}'
        causes.append({"type": "FieldValueNotSupported", "field": "resourceVersionMatch", "message": message})

    if watch:
        if options.send_initial_events is not None and match != "NotOlderThan":
            forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
        if match:
            if options.send_initial_events is None:
                forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
            if match != "NotOlderThan":
                unsupported(("NotOlderThan",))
    else:
        if match:
            if not options.resource_version:
                forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided")
            if match not in ("Exact", "NotOlderThan"):
                unsupported(("Exact", "NotOlderThan", ""))
            if match == "Exact" and options.resource_version == "0":
                forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
        if options.send_initial_events is not None:
            forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")
    if match and options.continue_:
        forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided")
    if causes:
        raise new_invalid("ListOptions", "", causes, "meta.k8s.io")


class WatchStreamMixin:
    """Serves ``?watch=1`` requests; needs the handler's ``sandbox``, ``headers``, ``wfile`` and ``connection``."""

    sandbox: Any
    headers: Any
    wfile: Any
    connection: Any
    close_connection: bool

    def _serve_watch(self, req: Any, options: ListOptions) -> None:
        sandbox = self.sandbox
        faults = sandbox.faults
        if faults.gone_on_rewatch and options.resource_version not in (None, "", "0"):
            faults.count("gone_rewatches")
            current = sandbox.tracker.resource_version()
            status = ApiError(
                410, "Expired", f"too old resource version: {options.resource_version} ({current})"
            ).to_status()
            self._start_stream()
            self._write_event(WatchEvent(ERROR, status))
            self._end_stream()
            return
        watch = sandbox.tracker.watch(req.gvr, req.namespace, options)
        sandbox.track_watch(watch)
        try:
            self._start_stream()
            self._pump_watch(req, watch, options)
            self._end_stream()
        except OSError:
            self.close_connection = True  # the client went away
        finally:
            watch.stop()
            sandbox.untrack_watch(watch)

    def _pump_watch(self, req: Any, watch: Any, options: ListOptions) -> None:
        sandbox, faults = self.sandbox, self.sandbox.faults
        table = tables.wanted_table_version(self.headers.get("Accept"))
        columns = self._printer_columns(req) if table else None
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
            try:
                event = watch.next_event(timeout=wait)
            except StopIteration:
                return
            if event is None:
                if self._client_gone():
                    self.close_connection = True
                    return
                continue
            self._write_event(self._as_table_event(req, event, table, columns, first=sent == 0) if table else event)
            sent += 1
            if event.type == ERROR:
                return
            limit = faults.drop_watch_after_events
            if limit is not None and sent >= limit:
                faults.count("dropped_watches")
                return

    @staticmethod
    def _as_table_event(
        req: Any, event: WatchEvent, table_version: str, columns: Any, first: bool
    ) -> WatchEvent:
        """Watch events for ``kubectl get -w``: one-row Tables, column definitions on the first event only."""
        if event.type not in (ADDED, MODIFIED, DELETED):
            return event
        converted = tables.to_table(event.object, req.gvr.group, req.gvr.resource, table_version, columns)
        if not first:
            converted["columnDefinitions"] = []
        return WatchEvent(event.type, converted)

    def _client_gone(self) -> bool:
        """True when the client closed its end (readable with no data) while we were idle."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()

    def _write_event(self, event: WatchEvent) -> None:
        data = orjson.dumps({"type": event.type, "object": event.object}) + b"\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        if self.sandbox.stopping.is_set():
            self.close_connection = True
