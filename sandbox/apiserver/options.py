"""The options of a request from its query string (and, for DeleteOptions, its body), validated as
kube-apiserver validates them: ``list_options`` (+ ``validate_list_options``), ``delete_options`` and
``dry_run`` (the ``dryRun`` of a write)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from apis import meta
from apis.errors import BadRequestError, new_invalid
from apis.watch import ListOptions

from .request import parse_json

__all__ = [
    "DeleteRequestOptions",
    "PROPAGATION_POLICIES",
    "delete_options",
    "dry_run",
    "list_options",
    "query_bool",
    "query_int",
    "query_value",
    "validate_list_options",
]

PROPAGATION_POLICIES = ("Orphan", "Background", "Foreground")


@dataclass(frozen=True)
class DeleteRequestOptions:
    """The DeleteOptions of a request: the effective propagation policy (None = the kind's default), the legacy
    ``orphanDependents`` as sent (None when absent), the preconditions and ``gracePeriodSeconds`` (None when
    absent; a negative value counts as 1, as kube-apiserver's ``BeforeDelete`` has it) and whether it is a dry
    run."""

    policy: str | None
    orphan_dependents: bool | None
    preconditions: dict[str, Any] | None
    grace_period_seconds: int | None = None
    dry_run: bool = False


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


def query_int(query: dict[str, list[str]], key: str, signed: bool = False) -> int | None:
    """An int64 parameter as Go's ``strconv.ParseInt(raw, 10, 64)`` reads it (None when absent); 400 for anything
    else, a value beyond the int64 range included, and for a negative one unless ``signed``."""
    raw = query_value(query, key)
    if raw is None or raw == "":
        return None
    value = meta.parse_int64(raw)
    if value is None:
        why = "is out of the int64 range" if raw.lstrip("+-").isdigit() and raw.isascii() else "is not an integer"
        raise BadRequestError(f"invalid value for query parameter {key}: {raw[:40]!r} {why}")
    if value < 0 and not signed:
        raise BadRequestError(f"invalid value for query parameter {key}: {raw!r} must not be negative")
    return value


def dry_run(values: object, options_kind: str) -> bool:
    """Whether a write with these ``dryRun`` values (the query's, or a DeleteOptions body's) is a dry run; the
    only value is ``All`` (repeatable): anything else is kube-apiserver's 422 on ``options_kind``
    (``CreateOptions``, ``UpdateOptions``, ``PatchOptions``, ``DeleteOptions``)."""
    if values is None:
        return False
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise BadRequestError(f"{options_kind}.dryRun must be a list of strings, got {str(values)[:40]!r}")
    if all(v == "All" for v in values):
        return bool(values)
    shown = "[]string{" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "}"
    message = f'Unsupported value: {shown}: supported values: "All"'
    cause = {"type": "FieldValueNotSupported", "field": "dryRun", "message": message}
    raise new_invalid(options_kind, "", [cause], "meta.k8s.io")


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


def delete_options(query: dict[str, list[str]], body: bytes) -> DeleteRequestOptions:
    """DeleteOptions from the body or, when there is none, from the query (as kube-apiserver reads them)."""
    if body.strip():
        parsed = parse_json(body, "DeleteOptions body")
        if not isinstance(parsed, dict):
            raise BadRequestError("the DeleteOptions body must be a JSON object")
        policy, orphan, preconditions = parsed.get("propagationPolicy"), parsed.get("orphanDependents"), parsed.get("preconditions")
        if orphan is not None and not isinstance(orphan, bool):
            raise BadRequestError(f"DeleteOptions.orphanDependents must be a boolean, got {orphan!r}")
        grace, dry = parsed.get("gracePeriodSeconds"), dry_run(parsed.get("dryRun"), "DeleteOptions")
        if grace is not None and (
            not isinstance(grace, int) or isinstance(grace, bool) or not -(2**63) <= grace < 2**63
        ):
            raise BadRequestError(f"DeleteOptions.gracePeriodSeconds must be an int64 integer, got {str(grace)[:40]!r}")
    else:
        policy, preconditions = query_value(query, "propagationPolicy"), None
        dry = dry_run(query.get("dryRun"), "DeleteOptions")
        grace = query_int(query, "gracePeriodSeconds", signed=True)
        raw_orphan = query_value(query, "orphanDependents")
        orphan = None
        if raw_orphan is not None:
            if raw_orphan.lower() not in ("true", "false"):
                raise BadRequestError(f"invalid value for query parameter orphanDependents: {raw_orphan!r} is not a boolean")
            orphan = raw_orphan.lower() == "true"
    if policy is not None and policy not in PROPAGATION_POLICIES:
        raise BadRequestError(
            f"invalid propagationPolicy {policy!r}: supported values: " + ", ".join(PROPAGATION_POLICIES)
        )
    if policy is not None and orphan is not None:
        cause = {
            "type": "FieldValueInvalid",
            "field": "propagationPolicy",
            "message": f'Invalid value: "{policy}": orphanDependents and deletionPropagation cannot be both set',
        }
        raise new_invalid("DeleteOptions", "", [cause], "meta.k8s.io")
    if orphan is not None:  # the deprecated field: true orphans, false collects in the background
        policy = "Orphan" if orphan else "Background"
    if preconditions is not None and not isinstance(preconditions, dict):
        raise BadRequestError("DeleteOptions.preconditions must be an object with uid and/or resourceVersion")
    grace = grace if grace is None or grace >= 0 else 1
    return DeleteRequestOptions(policy, orphan, preconditions or None, grace, dry)
