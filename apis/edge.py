"""The GM ↔ LC wire format (Go Sedna's ``messagelayer/model.Message``), imported by sedna-gm and sedna-lc alike.

A frame is a JSON text message::

    {"header": {"namespace": "...", "resourceKind": "dataset", "resourceName": "...", "operation": "insert"},
     "content": "<base64 of the JSON content>"}

``content`` is base64 because Go encodes its ``[]byte`` that way; ``null`` means empty. Downstream operations are
``insert``/``update``/``delete`` with the whole object as content, upstream ``status`` with the report.

Extensions (negotiated, so Go peers never see them; see docs/edge.md):

* ``hello``: the LC's first frame, content ``{"features": [...]}``; the GM answers with a ``hello`` naming the
  features it accepted. Go's LC instead sends a bare, empty ``MessageHeader`` (``is_legacy_hello``).
* ``ack``: every upstream frame carries ``header.id`` (a field Go's decoder ignores); the GM answers with an ``ack``
  frame carrying the same ``id`` once the report is applied (content ``{}``) or refused (``{"error": "..."}``).
* ``resync``: right after its ``hello`` the GM sends ``{"kinds": [...], "objects": [{"kind", "namespace",
  "name"}]}``, everything of those kinds the node should hold; the LC drops what it holds of them beyond that.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = [
    "ACK",
    "DELETE",
    "DOWNSTREAM_OPERATIONS",
    "FEATURES",
    "FEATURE_ACK",
    "FEATURE_RESYNC",
    "Frame",
    "FrameError",
    "HELLO",
    "Header",
    "INSERT",
    "NODE_NAME_HEADER",
    "RESYNC",
    "STATUS",
    "UPDATE",
    "decode_frame",
    "encode_frame",
    "hello_frame",
    "is_legacy_hello",
    "object_frame",
    "parse_features",
]

INSERT = "insert"
UPDATE = "update"
DELETE = "delete"
STATUS = "status"
HELLO = "hello"
ACK = "ack"
RESYNC = "resync"
DOWNSTREAM_OPERATIONS = (INSERT, UPDATE, DELETE)

FEATURE_ACK = "ack"
FEATURE_RESYNC = "resync"
FEATURES = (FEATURE_ACK, FEATURE_RESYNC)
"""Every extension this implementation speaks, in the order they are offered."""

NODE_NAME_HEADER = "Node-Name"
"""HTTP header of the websocket upgrade that names the LC's node."""


class FrameError(ValueError):
    """A frame that cannot be decoded; ``reason`` is a short metric label (``not_json``, ``bad_shape``, ...)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Header:
    namespace: str = ""
    resource_kind: str = ""
    resource_name: str = ""
    operation: str = ""
    id: str = ""  # extension ``ack``: the id of an upstream report, or the report an ``ack`` answers

    def to_wire(self) -> dict[str, str]:
        wire = {
            "namespace": self.namespace,
            "resourceKind": self.resource_kind,
            "resourceName": self.resource_name,
            "operation": self.operation,
        }
        if self.id:
            wire["id"] = self.id
        return wire


@dataclass(frozen=True)
class Frame:
    header: Header
    content: bytes = b""

    def json(self) -> Any:
        """The content parsed as JSON (``None`` when empty); ``FrameError("bad_content")`` when it is not JSON."""
        if not self.content:
            return None
        try:
            return orjson.loads(self.content)
        except orjson.JSONDecodeError as exc:
            raise FrameError("bad_content", f"content is not JSON: {exc}") from None


_HEADER_KEYS = (("namespace", "namespace"), ("resourceKind", "resource_kind"), ("resourceName", "resource_name"),
                ("operation", "operation"), ("id", "id"))


def encode_frame(frame: Frame) -> str:
    """The JSON text of ``frame``, exactly as Go's ``WriteJSON(&Message{...})`` writes it (plus ``id`` if set)."""
    content = base64.b64encode(frame.content).decode("ascii") if frame.content else None
    return orjson.dumps({"header": frame.header.to_wire(), "content": content}).decode()


def decode_frame(data: str | bytes) -> Frame:
    """Parse one frame; raises ``FrameError`` naming what is wrong. Unknown header fields are ignored (as in Go).

    Go's LC greets with a bare, empty ``MessageHeader`` (no ``header`` key): that decodes to a frame whose header
    is all empty, like Go's GM reads it; see ``is_legacy_hello``.
    """
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise FrameError("not_json", f"frame is not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise FrameError("bad_shape", f"frame is a JSON {type(raw).__name__}, not an object")
    header = raw.get("header")
    if header is None:
        header = {}
    if not isinstance(header, dict):
        raise FrameError("bad_shape", f"header is a JSON {type(header).__name__}, not an object")
    values: dict[str, str] = {}
    for wire_key, attr in _HEADER_KEYS:
        value = header.get(wire_key)
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise FrameError("bad_shape", f"header.{wire_key} is a JSON {type(value).__name__}, not a string")
        values[attr] = value
    content = raw.get("content")
    if content is None:
        body = b""
    elif isinstance(content, str):
        try:
            body = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise FrameError("bad_base64", f"content is not base64: {exc}") from None
    else:
        raise FrameError("bad_shape", f"content is a JSON {type(content).__name__}, not a base64 string")
    return Frame(Header(**values), body)


def is_legacy_hello(frame: Frame) -> bool:
    """Whether ``frame`` is Go's LC greeting: an all-empty header and no content."""
    h = frame.header
    return not (h.namespace or h.resource_kind or h.resource_name or h.operation or frame.content)


def object_frame(operation: str, obj: Mapping[str, Any]) -> Frame:
    """A downstream frame carrying the whole ``obj``: ``resourceKind`` is its lower-cased ``kind``."""
    md = obj.get("metadata") or {}
    header = Header(md.get("namespace") or "", (obj.get("kind") or "").lower(), md.get("name") or "", operation)
    return Frame(header, orjson.dumps(obj))


def hello_frame(features: Iterable[str]) -> Frame:
    return Frame(Header(operation=HELLO), orjson.dumps({"features": list(features)}))


def parse_features(frame: Frame) -> list[str]:
    """The feature names of a ``hello`` frame; ``FrameError("bad_content")`` when its content is malformed."""
    body = frame.json()
    features = body.get("features") if isinstance(body, dict) else None
    if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
        raise FrameError("bad_content", 'hello content must be {"features": [<names>]}')
    return features
