"""The patch types the API server accepts, applied to plain-dict objects.

- JSON merge patch (RFC 7386): ``merge_patch``.
- JSON patch (RFC 6902; add, remove, replace, move, copy, test with JSON pointers): ``json_patch``.
- Strategic merge patch (``strategic_merge_patch``) for the lists of built-in kinds that carry a merge key
  (containers, initContainers, ephemeralContainers, volumes and env by ``name``, volumeMounts by ``mountPath``,
  container ports by ``containerPort``, service ports by ``port``, ownerReferences by ``uid``, conditions by
  ``type`` …) plus the set-like primitive list ``finalizers``; the directives ``$patch: delete|replace|merge``,
  ``$retainKeys``, ``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>`` (accepted, order not
  enforced). Every other list is replaced, as the server does for lists without a patch strategy.

Errors are ``apis.errors`` types worded like the API server: a malformed patch document → 400 BadRequest, a JSON
patch that cannot be applied (missing path, failed ``test``) → 422 Invalid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import yaml

from ... import meta, yamlutil
from ...client import PatchBody
from ...errors import ApiError, BadRequestError, InvalidError
from ...limits import DocumentLimitError, check_document
from .limits import bounded_copy

__all__ = [
    "apply_patch",
    "MAX_JSON_PATCH_COPY_BYTES",
    "MAX_JSON_PATCH_OPERATIONS",
    "decode_patch",
    "merge_patch",
    "json_patch",
    "strategic_merge_patch",
    "MERGE_KEYS",
    "PatchOutcome",
]


@dataclass(frozen=True)
class PatchOutcome:
    """What a patch did: the resulting object, and whether an apply patch created it (HTTP 201)."""

    object: dict[str, Any]
    created: bool


# kube-apiserver's bounds on JSON patches: more operations is a 413, more bytes copied by "copy" operations a 422
# (maxJSONPatchOperations; JSONPatchMaxCopyBytes, evanphx/json-patch's AccumulatedCopySizeLimit).
MAX_JSON_PATCH_OPERATIONS = 10_000
MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024

# field name → merge key of its list items (from the patchMergeKey tags of k8s.io/api).
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "env": "name",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "ownerReferences": "uid",
    "conditions": "type",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "ports": "containerPort",  # ServiceSpec.ports use "port": see _merge_key
}
# Primitive lists with patchStrategy "merge" (set union).
PRIMITIVE_MERGE_LISTS = frozenset({"finalizers"})

_DELETE_FROM = "$deleteFromPrimitiveList/"
_ELEMENT_ORDER = "$setElementOrder/"


def decode_patch(body: PatchBody | bytearray, patch_type: str) -> Any:
    """The parsed patch document: ``body`` may already be parsed (dict/list) or JSON text (YAML for ``apply``)."""
    if not isinstance(body, (bytes, bytearray, str)):
        doc = body
    else:
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            if patch_type != "apply":
                raise BadRequestError(f"error decoding patch: {exc}") from None
            try:
                doc = yamlutil.load(bytes(body) if isinstance(body, bytearray) else body)
            except yaml.YAMLError as yexc:
                raise BadRequestError(f"error decoding YAML: {yexc}") from None
    try:
        check_document(doc)
    except DocumentLimitError as exc:
        raise BadRequestError(f"error decoding patch: {exc}") from None
    return doc if isinstance(body, (bytes, bytearray, str)) else meta.deep_copy(doc)


def apply_patch(current: dict[str, Any], doc: object, patch_type: str, custom: bool) -> dict[str, Any]:
    """``current`` with the decoded patch document applied (a new object): merge, json, strategic (built-in kinds
    only: 415 for ``custom`` resources, as kube-apiserver answers) or apply (strategic merge of the applied
    configuration for built-in kinds, JSON merge for custom resources)."""
    if patch_type == "merge" or (patch_type == "apply" and custom):
        if not isinstance(doc, dict):
            raise BadRequestError("a merge patch must be a JSON object")
        new = merge_patch(current, doc)
    elif patch_type == "json":
        new = json_patch(current, doc)
    else:
        if custom:
            raise ApiError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: "
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            )
        new = strategic_merge_patch(current, doc)
    if not isinstance(new, dict):
        raise BadRequestError("the patched object is not a JSON object")
    return bounded_copy(new, patched=True)


# ---------------------------------------------------------------------------------------------------------------
# RFC 7386


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply a JSON merge patch; returns the new document (``target`` is not modified)."""
    if not isinstance(patch, dict):
        return meta.deep_copy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# ---------------------------------------------------------------------------------------------------------------
# RFC 6902


def _unprocessable(message: str) -> InvalidError:
    return InvalidError(422, "Invalid", message, details={"causes": [{"type": "UnexpectedServerResponse", "message": message}]})


def _pointer(path: object, op: str) -> tuple[str, list[str]]:
    """The checked JSON pointer ``path`` and its reference tokens."""
    if not isinstance(path, str):
        raise BadRequestError(f"json patch {op} operation: 'path' must be a string, got {path!r}")
    if path == "":
        return path, []
    if not path.startswith("/"):
        raise BadRequestError(f"json patch {op} operation: invalid JSON pointer {path!r}: must start with '/'")
    return path, [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(container: list[Any], token: str, path: str, op: str, allow_end: bool) -> int:
    if allow_end and token == "-":
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise _unprocessable(f"{op} operation does not apply: invalid array index {token!r} in path {path}")
    idx = int(token)
    limit = len(container) if allow_end else len(container) - 1
    if idx > limit:
        raise _unprocessable(f"{op} operation does not apply: index {idx} out of bounds in path {path}")
    return idx


def _parent(doc: Any, tokens: list[str], path: str, op: str) -> Any:
    cur = doc
    for tok in tokens[:-1]:
        if isinstance(cur, dict):
            if tok not in cur:
                raise _unprocessable(f"{op} operation does not apply: doc is missing path: {path}: missing value")
            cur = cur[tok]
        elif isinstance(cur, list):
            cur = cur[_index(cur, tok, path, op, allow_end=False)]
        else:
            raise _unprocessable(f"{op} operation does not apply: doc is missing path: {path}: missing value")
    return cur


def _get(doc: Any, tokens: list[str], path: str, op: str) -> Any:
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path, op)
    last = tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, path, op, allow_end=False)]
    raise _unprocessable(f"{op} operation does not apply: doc is missing path: {path}: missing value")


def _add(doc: Any, tokens: list[str], value: object, path: str, op: str) -> Any:
    if not tokens:
        return value
    parent = _parent(doc, tokens, path, op)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, path, op, allow_end=True), value)
    else:
        raise _unprocessable(f"{op} operation does not apply: doc is missing path: {path}: missing value")
    return doc


def _remove(doc: Any, tokens: list[str], path: str, op: str) -> tuple[Any, Any]:
    if not tokens:
        return None, doc
    parent = _parent(doc, tokens, path, op)
    last = tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, path, op, allow_end=False))
    raise _unprocessable(f"{op} operation does not apply: doc is missing path: {path}: missing value")


def json_equal(a: object, b: object) -> bool:
    """JSON value equality (``true`` is not ``1``; ``1`` equals ``1.0``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b)


def _copy(value: object) -> tuple[Any, int]:
    """A copy of ``value`` and its size as JSON; 422 when it is deeper than a document may be."""
    try:
        check_document(value)
    except DocumentLimitError as exc:
        raise _unprocessable(f"copy operation does not apply: {exc}") from None
    data = orjson.dumps(value)
    return orjson.loads(data), len(data)


def json_patch(target: Any, operations: object) -> Any:
    """Apply an RFC 6902 JSON patch; returns the new document (``target`` is not modified)."""
    if not isinstance(operations, list):
        raise BadRequestError("json patch must be a JSON array of operations")
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise ApiError(
            413,
            "RequestEntityTooLarge",
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(operations)}",
        )
    doc = meta.deep_copy(target)
    copied = 0  # bytes added by "copy" operations so far
    for i, operation in enumerate(operations):
        if not isinstance(operation, dict) or not isinstance(operation.get("op"), str):
            raise BadRequestError(f"json patch operation {i}: expected an object with an 'op' string")
        op = operation["op"]
        path, tokens = _pointer(operation.get("path"), op)
        if op in ("add", "replace", "test") and "value" not in operation:
            raise BadRequestError(f"json patch {op} operation at {path}: missing 'value'")
        value = meta.deep_copy(operation.get("value"))
        if op == "add":
            doc = _add(doc, tokens, value, path, op)
        elif op == "remove":
            doc, _ = _remove(doc, tokens, path, op)
        elif op == "replace":
            _get(doc, tokens, path, op)  # must exist
            if not tokens:
                doc = value
            else:
                parent = _parent(doc, tokens, path, op)
                if isinstance(parent, list):
                    parent[_index(parent, tokens[-1], path, op, allow_end=False)] = value
                else:
                    parent[tokens[-1]] = value
        elif op in ("move", "copy"):
            src, from_tokens = _pointer(operation.get("from"), op)
            if op == "move" and tokens[: len(from_tokens)] == from_tokens and len(tokens) > len(from_tokens):
                raise _unprocessable(f"move operation does not apply: cannot move {src} into its own child {path}")
            if op == "move":
                doc, moved = _remove(doc, from_tokens, src, op)
            else:
                moved, size = _copy(_get(doc, from_tokens, src, op))
                copied += size
                if copied > MAX_JSON_PATCH_COPY_BYTES:
                    raise _unprocessable(
                        f"Unable to complete the copy, the accumulated size increase of copy is {copied}, "
                        f"exceeding the limit {MAX_JSON_PATCH_COPY_BYTES}"
                    )
            doc = _add(doc, tokens, moved, path, op)
        elif op == "test":
            try:
                have = _get(doc, tokens, path, op)
            except ApiError:
                raise _unprocessable(f"testing value {path} failed: test failed") from None
            if not json_equal(have, value):
                raise _unprocessable(f"testing value {path} failed: test failed")
        else:
            raise BadRequestError(f"json patch operation {i}: unexpected op {op!r}")
    return doc


# ---------------------------------------------------------------------------------------------------------------
# Strategic merge patch


def _merge_key(field: str, parent_field: str) -> str | None:
    if field == "ports" and parent_field == "spec":
        return "port"  # ServiceSpec.ports (a container's ports live under "containers")
    return MERGE_KEYS.get(field)


def _strip_directives(value: Any) -> Any:
    """``value`` without ``$patch``/``$retainKeys``/``$setElementOrder`` keys (for content that is added as is)."""
    if isinstance(value, dict):
        return {
            k: _strip_directives(v)
            for k, v in value.items()
            if not k.startswith("$") and not (isinstance(v, dict) and v.get("$patch") == "delete")
        }
    if isinstance(value, list):
        return [_strip_directives(v) for v in value if not (isinstance(v, dict) and v.get("$patch") == "delete")]
    return value


def strategic_merge_patch(target: dict[str, Any], patch: object) -> dict[str, Any]:
    """Apply a strategic merge patch to a built-in kind's object; returns the new object."""
    if not isinstance(patch, dict):
        raise BadRequestError("strategic merge patch must be a JSON object")
    merged = _merge_map(target if isinstance(target, dict) else {}, patch, "")
    return merged if merged is not None else {}


def _merge_map(orig: dict[str, Any], patch: dict[str, Any], parent_field: str) -> dict[str, Any] | None:
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        replaced: dict[str, Any] = _strip_directives(patch)  # a dict stays a dict
        return replaced
    if directive not in (None, "merge"):
        raise BadRequestError(f"strategic merge patch: unknown patch directive $patch: {directive!r}")
    result = dict(orig)
    deletions: list[tuple[str, Any]] = []
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith(_ELEMENT_ORDER):
            continue
        if key.startswith(_DELETE_FROM):
            deletions.append((key[len(_DELETE_FROM) :], value))
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            current = result.get(key)
            sub = _merge_map(current if isinstance(current, dict) else {}, value, key)
            if sub is None:
                result.pop(key, None)
            else:
                result[key] = sub
        elif isinstance(value, list):
            result[key] = _merge_list(key, parent_field, result.get(key), value)
        else:
            result[key] = value
    for field, values in deletions:
        if not isinstance(values, list):
            raise BadRequestError(f"strategic merge patch: {_DELETE_FROM}{field} must be a list")
        if isinstance(result.get(field), list):
            result[field] = [v for v in result[field] if v not in values]
    retain = patch.get("$retainKeys")
    if retain is not None:
        if not isinstance(retain, list):
            raise BadRequestError("strategic merge patch: $retainKeys must be a list")
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _merge_list(field: str, parent_field: str, orig: object, patch: list[Any]) -> list[Any]:
    orig_list = orig if isinstance(orig, list) else []
    if field in PRIMITIVE_MERGE_LISTS:
        return list(orig_list) + [v for v in patch if v not in orig_list]
    key = _merge_key(field, parent_field)
    if key is None or any(isinstance(v, dict) and v.get("$patch") == "replace" for v in patch):
        return [_strip_directives(v) for v in patch if not (isinstance(v, dict) and v.get("$patch") == "replace")]
    result = list(orig_list)
    for item in patch:
        if not isinstance(item, dict):
            raise BadRequestError(f"strategic merge patch: {field} items must be objects with merge key {key!r}")
        if key not in item:
            raise BadRequestError(f"map: {item} does not contain declared merge key: {key}")
        at = next((i for i, cur in enumerate(result) if isinstance(cur, dict) and cur.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if at is not None:
                del result[at]
            continue
        if at is None:
            result.append(_strip_directives(item))
        else:
            merged = _merge_map(result[at], item, field)
            if merged is None:
                del result[at]
            else:
                result[at] = merged
    return result
