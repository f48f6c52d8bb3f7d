"""Object metadata validation as apimachinery does it (``pkg/util/validation``, ``pkg/api/validation/objectmeta.go``,
release 1.30–1.32), with the same field paths and messages: names per kind (DNS-1123 subdomain by default,
DNS-1123 label for namespaces, DNS-1035 label for services; ``generateName`` prefixes may end in ``-``), label keys
and values, annotation keys and total size, ownerReferences, finalizers.

Each check returns causes (``{"type", "field", "message"}``) for a 422 Invalid; nothing here raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ...openapi_format import bad_value
from ...resources import ResourceInfo

__all__ = [
    "Cause",
    "forbidden",
    "invalid",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "name_rule",
    "required",
    "validate_object_meta",
]

Cause = dict[str, str]
NameRule = Callable[[str, bool], list[str]]

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character"
)
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character"
)
_DNS1123_LABEL = re.compile("^" + _DNS1123_LABEL_FMT + "$")
_DNS1123_SUBDOMAIN = re.compile("^" + _DNS1123_SUBDOMAIN_FMT + "$")
_DNS1035_LABEL = re.compile("^" + _DNS1035_LABEL_FMT + "$")
_QNAME = re.compile("^" + _QNAME_FMT + "$")
_LABEL_VALUE = re.compile("^" + _LABEL_VALUE_FMT + "$")
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
FINALIZER_ORPHAN, FINALIZER_FOREGROUND = "orphan", "foregroundDeletion"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}'" for e in examples)
    return f"{msg} (e.g. {shown}, regex used for validation is '{fmt}')"


def _max_len(length: int) -> str:
    return f"must be no more than {length} characters"


# -- the validation functions of k8s.io/apimachinery/pkg/util/validation ---------------------------------------------
def is_dns1123_subdomain(value: str) -> list[str]:
    errs = [_max_len(253)] if len(value) > 253 else []
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1123_label(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _DNS1123_LABEL.match(value):
        if _DNS1123_SUBDOMAIN.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _DNS1035_LABEL.match(value):
        errs.append(_regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _QNAME.match(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _LABEL_VALUE.match(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


# -- causes -------------------------------------------------------------------------------------------------------
def invalid(field: str, value: object, detail: str) -> Cause:
    return {"type": "FieldValueInvalid", "field": field, "message": f"Invalid value: {bad_value(value)}: {detail}"}


def required(field: str, detail: str = "") -> Cause:
    return {"type": "FieldValueRequired", "field": field, "message": "Required value" + (f": {detail}" if detail else "")}


def forbidden(field: str, detail: str) -> Cause:
    return {"type": "FieldValueForbidden", "field": field, "message": f"Forbidden: {detail}"}


def too_long(field: str, max_bytes: int) -> Cause:
    return {"type": "FieldValueTooLong", "field": field, "message": f"Too long: may not be more than {max_bytes} bytes"}


# -- names --------------------------------------------------------------------------------------------------------
def _mask_trailing_dash(name: str) -> str:
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def _name_is(check: Callable[[str], list[str]]) -> NameRule:
    return lambda name, prefix: check(_mask_trailing_dash(name) if prefix else name)


def is_valid_path_segment_name(name: str, prefix: bool = False) -> list[str]:
    """apimachinery's ``path.IsValidPathSegmentName`` (``…Prefix`` for a generateName), RBAC objects' name rule."""
    errs = [] if prefix or name not in (".", "..") else [f"may not be '{name}'"]
    return errs + [f"may not contain '{c}'" for c in "/%" if c in name]


_SUBDOMAIN_NAME = _name_is(is_dns1123_subdomain)
_NAME_RULES: dict[tuple[str, str], NameRule] = {
    **{("rbac.authorization.k8s.io", r): is_valid_path_segment_name
       for r in ("roles", "rolebindings", "clusterroles", "clusterrolebindings")},
    ("", "namespaces"): _name_is(is_dns1123_label),
    ("", "services"): _name_is(is_dns1035_label),
    # CustomResourceDefinition names are checked against spec.names.plural + "." + spec.group by its admission
    ("apiextensions.k8s.io", "customresourcedefinitions"): lambda name, prefix: [],
}


def name_rule(info: ResourceInfo) -> NameRule:
    """The name validation of a resource (``ValidateNameFunc``): subdomain unless the kind says otherwise."""
    return _NAME_RULES.get((info.gvr.group, info.gvr.resource), _SUBDOMAIN_NAME)


# -- ObjectMeta ---------------------------------------------------------------------------------------------------
def validate_object_meta(info: ResourceInfo, md: Mapping[str, Any]) -> list[Cause]:
    """``ValidateObjectMetaAccessor`` for an object of ``info`` (decoded: every field has its Go type)."""
    causes: list[Cause] = []
    rule = name_rule(info)
    generate_name = md.get("generateName") or ""
    if generate_name:
        causes += [invalid("metadata.generateName", generate_name, m) for m in rule(generate_name, True)]
    name = md.get("name") or ""
    if not name:
        causes.append(required("metadata.name", "name or generateName is required"))
    else:
        causes += [invalid("metadata.name", name, m) for m in rule(name, False)]
    namespace = md.get("namespace") or ""
    if info.namespaced and namespace:
        causes += [invalid("metadata.namespace", namespace, m) for m in is_dns1123_label(namespace)]
    causes += validate_labels(md.get("labels") or {})
    causes += validate_annotations(md.get("annotations") or {})
    causes += validate_owner_references(md.get("ownerReferences") or [])
    causes += validate_finalizers(md.get("finalizers") or [])
    return causes


def validate_labels(labels: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    for key, value in labels.items():
        causes += [invalid("metadata.labels", key, m) for m in is_qualified_name(key)]
        causes += [invalid("metadata.labels", value, m) for m in is_valid_label_value(value or "")]
    return causes


def validate_annotations(annotations: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    total = 0
    for key, value in annotations.items():
        causes += [invalid("metadata.annotations", key, m) for m in is_qualified_name(key.lower())]
        total += len(key.encode()) + len((value or "").encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        causes.append(too_long("metadata.annotations", TOTAL_ANNOTATION_SIZE_LIMIT))
    return causes


def validate_owner_references(refs: list[Any]) -> list[Cause]:
    causes: list[Cause] = []
    path = "metadata.ownerReferences"
    first_controller = ""
    for ref in refs:
        ref = ref or {}
        api_version, kind = ref.get("apiVersion") or "", ref.get("kind") or ""
        group, _, version = api_version.rpartition("/")
        if not version or api_version.count("/") > 1:
            causes.append(invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
        if not kind:
            causes.append(invalid(f"{path}.kind", kind, "kind must not be empty"))
        if not ref.get("name"):
            causes.append(invalid(f"{path}.name", ref.get("name") or "", "name must not be empty"))
        if not ref.get("uid"):
            causes.append(invalid(f"{path}.uid", ref.get("uid") or "", "uid must not be empty"))
        if (group, version, kind) == ("", "v1", "Event"):
            causes.append(invalid(path, ref, "/v1, Kind=Event is disallowed from being an owner"))
        if ref.get("controller"):
            current = f"{kind}/{ref.get('name') or ''}"
            if first_controller:
                why = (
                    'Only one reference can have Controller set to true. Found "true" in references for '
                    f"{first_controller} and {current}"
                )
                causes.append(invalid(path, refs, why))
            else:
                first_controller = current
    return causes


def validate_finalizers(finalizers: list[Any]) -> list[Cause]:
    causes: list[Cause] = []
    for finalizer in finalizers:
        causes += [invalid("metadata.finalizers", finalizer, m) for m in is_qualified_name(finalizer or "")]
    if FINALIZER_ORPHAN in finalizers and FINALIZER_FOREGROUND in finalizers:
        why = f"finalizer {FINALIZER_ORPHAN} and {FINALIZER_FOREGROUND} cannot be both set"
        causes.append(invalid("metadata.finalizers", finalizers, why))
    return causes
