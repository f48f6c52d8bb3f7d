"""Parsing of sandbox API server requests: the resource path, JSON/YAML bodies and content types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import orjson
import yaml

from apis import yamlutil
from apis.errors import BadRequestError, NotFoundError
from apis.limits import DocumentLimitError, check_document
from apis.resources import GroupVersionResource, ResourceInfo

__all__ = [
    "ResourceRequest",
    "media_type",
    "not_found_path",
    "parse_json",
    "parse_resource_path",
    "parse_yaml",
]


@dataclass(frozen=True)
class ResourceRequest:
    """A request for a resource (collection, object, or object subresource)."""

    info: ResourceInfo
    namespace: str
    name: str
    subresource: str | None
    watch: bool

    @property
    def gvr(self) -> GroupVersionResource:
        return self.info.gvr


class Headers(Protocol):
    """The request headers (``http.server``'s ``email.message.Message``, a plain dict in tests)."""

    def get(self, name: str, default: Any = None) -> Any: ...


class ResourceResolver(Protocol):
    def resource_info(self, gvr: GroupVersionResource) -> ResourceInfo: ...


def not_found_path() -> NotFoundError:
    return NotFoundError(404, "NotFound", "the server could not find the requested resource")


def parse_resource_path(tracker: ResourceResolver, group: str, version: str, parts: list[str]) -> ResourceRequest:
    """Resolve ``[watch/][namespaces/<ns>/]<resource>[/<name>[/<subresource>]]`` (parts after the group version)."""
    watch = False
    if parts and parts[0] == "watch":
        watch, parts = True, parts[1:]
    namespace = ""
    # /namespaces/<ns>/<resource>... is namespaced, except the namespace's own subresources.
    if len(parts) >= 3 and parts[0] == "namespaces" and parts[2] not in ("status", "finalize"):
        namespace, parts = parts[1], parts[2:]
    if not parts or len(parts) > 3 or any(not p for p in parts):
        raise not_found_path()
    try:
        info = tracker.resource_info(GroupVersionResource(group, version, parts[0]))
    except NotFoundError:
        raise not_found_path() from None
    if namespace and not info.namespaced:
        raise not_found_path()
    name = parts[1] if len(parts) > 1 else ""
    sub = parts[2] if len(parts) > 2 else None
    if sub is not None and sub not in info.subresources:
        raise not_found_path()
    if info.namespaced and name and not namespace:
        raise not_found_path()
    return ResourceRequest(info, namespace, name, sub, watch)


def parse_json(body: bytes, what: str = "request body") -> Any:
    """The decoded JSON document, within ``apis.limits`` (400 otherwise)."""
    try:
        doc = orjson.loads(body)
        check_document(doc)
    except (orjson.JSONDecodeError, DocumentLimitError) as exc:
        raise BadRequestError(f"malformed JSON in the {what}: {exc}") from None
    return doc


def parse_yaml(body: bytes, what: str = "request body") -> Any:
    """The decoded YAML document, within ``apis.yamlutil``'s and ``apis.limits``' bounds (400 otherwise)."""
    try:
        doc = yamlutil.load(body.decode("utf-8"))
        check_document(doc)
    except (yaml.YAMLError, UnicodeDecodeError, DocumentLimitError) as exc:
        raise BadRequestError(f"malformed YAML in the {what}: {exc}") from None
    return doc


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";")[0].strip().lower()
