"""CustomResourceDefinition handling for the object tracker: what a CRD serves and the status it gets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import meta
from ...errors import new_invalid
from ...resources import GroupVersionResource, ResourceInfo

__all__ = ["ServedVersion", "parse_crd", "crd_status"]


@dataclass(frozen=True)
class ServedVersion:
    """One served version of a CRD: its resource and the openAPIV3Schema its objects are checked against."""

    info: ResourceInfo
    schema: dict[str, Any] | None


def _cause(field: str, message: str, kind: str = "FieldValueRequired") -> dict[str, str]:
    return {"type": kind, "field": field, "message": message}


def parse_crd(crd: dict[str, Any]) -> list[ServedVersion]:
    """Each served version of ``crd``; raises ``InvalidError`` (422) naming every missing or bad field."""
    spec = found if isinstance(found := crd.get("spec"), dict) else {}
    names = found if isinstance(found := spec.get("names"), dict) else {}
    group = spec.get("group") or ""
    plural = names.get("plural") or ""
    kind = names.get("kind") or ""
    scope = spec.get("scope") or ""
    versions = found if isinstance(found := spec.get("versions"), list) else []
    causes = []
    if not group:
        causes.append(_cause("spec.group", "Required value"))
    if not plural:
        causes.append(_cause("spec.names.plural", "Required value"))
    if not kind:
        causes.append(_cause("spec.names.kind", "Required value"))
    if scope not in ("Namespaced", "Cluster"):
        causes.append(
            _cause("spec.scope", f'Unsupported value: "{scope}": supported values: "Cluster", "Namespaced"', "FieldValueNotSupported")
        )
    if not versions:
        causes.append(_cause("spec.versions", "Invalid value: must have exactly one version marked as storage version", "FieldValueInvalid"))
    elif sum(1 for v in versions if isinstance(v, dict) and v.get("storage")) != 1:
        causes.append(_cause("spec.versions", "Invalid value: must have exactly one version marked as storage version", "FieldValueInvalid"))
    crd_name = meta.name(crd)
    if group and plural and crd_name and crd_name != f"{plural}.{group}":
        causes.append(_cause("metadata.name", f'Invalid value: "{crd_name}": must be spec.names.plural+"."+spec.group', "FieldValueInvalid"))
    for i, version in enumerate(versions):
        if not isinstance(version, dict) or not version.get("name"):
            causes.append(_cause(f"spec.versions[{i}].name", "Required value"))
    if causes:
        raise new_invalid("CustomResourceDefinition", crd_name, causes, "apiextensions.k8s.io")
    short_names = tuple(names.get("shortNames") or ())
    singular = names.get("singular") or kind.lower()
    served = []
    top_subresources = spec.get("subresources") or {}
    top_schema = (spec.get("validation") or {}).get("openAPIV3Schema")
    for version in versions:
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or top_subresources
        info = ResourceInfo(
            gvr=GroupVersionResource(group, version["name"], plural),
            kind=kind,
            namespaced=scope == "Namespaced",
            singular=singular,
            short_names=short_names,
            subresources=tuple(s for s in ("status", "scale") if s in subresources),
        )
        schema = (version.get("schema") or {}).get("openAPIV3Schema") or top_schema
        served.append(ServedVersion(info, schema if isinstance(schema, dict) else None))
    return served


def crd_status(crd: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """The status the API server gives an accepted CRD: names accepted, established, stored version recorded."""
    now = meta.now_rfc3339()
    old_conditions = {c.get("type"): c for c in ((previous or {}).get("conditions") or []) if isinstance(c, dict)}

    def condition(ctype: str, reason: str, message: str) -> dict[str, Any]:
        old = old_conditions.get(ctype)
        since = old.get("lastTransitionTime") if old and old.get("status") == "True" else now
        return {"type": ctype, "status": "True", "reason": reason, "message": message, "lastTransitionTime": since}

    spec = crd.get("spec") or {}
    storage = [v["name"] for v in spec.get("versions") or [] if v.get("storage")]
    stored = list((previous or {}).get("storedVersions") or [])
    stored += [v for v in storage if v not in stored]
    return {
        "conditions": [
            condition("NamesAccepted", "NoConflicts", "no conflicts found for names"),
            condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ],
        "acceptedNames": meta.deep_copy(spec.get("names") or {}),
        "storedVersions": stored,
    }
