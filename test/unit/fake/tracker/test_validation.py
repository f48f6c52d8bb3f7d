"""ObjectMeta validation with apimachinery's field paths and messages (names per kind, labels, annotations,
ownerReferences, finalizers)."""

from __future__ import annotations

from typing import Any

import pytest

from apis import resources as r
from apis.fake.tracker import validation as v

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name' or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, "
    "and end with an alphanumeric character (e.g. 'my-name' or 'abc-123', regex used for validation is "
    "'[a-z]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue' or 'my_value' or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
QNAME = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName' or 'my.name' or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def _meta(resource: r.GroupVersionResource, **md: Any) -> list[dict[str, str]]:
    return v.validate_object_meta(r.lookup(resource), md)


@pytest.mark.parametrize(
    ("resource", "name", "detail"),
    [
        (r.PODS, "Bad_Name", SUBDOMAIN),
        (r.CONFIGMAPS, "UPPER_case", SUBDOMAIN),
        (r.DEPLOYMENTS, "-lead", SUBDOMAIN),
        (r.NAMESPACES, "a.b", "must not contain dots"),
        (r.NAMESPACES, "Team", LABEL),
        (r.SERVICES, "9lives", DNS1035),
        (r.MODELS, "Bad_Model", SUBDOMAIN),
    ],
)
def test_names_per_kind(resource: r.GroupVersionResource, name: str, detail: str) -> None:
    assert _meta(resource, name=name, namespace="default") == [
        {"type": "FieldValueInvalid", "field": "metadata.name", "message": f'Invalid value: "{name}": {detail}'}
    ]


def test_valid_names_pass_and_lengths_are_bounded() -> None:
    assert _meta(r.PODS, name="a.b-c", namespace="default") == []
    assert _meta(r.SERVICES, name="web-1", namespace="default") == []
    assert _meta(r.NAMESPACES, name="x" * 63) == []
    long_ns = _meta(r.NAMESPACES, name="x" * 64)
    assert long_ns[0]["message"] == f'Invalid value: "{"x" * 64}": must be no more than 63 characters'
    assert _meta(r.PODS, name="x" * 254, namespace="default")[0]["message"].endswith("must be no more than 253 characters")


def test_name_or_generate_name_is_required_and_generate_name_may_end_in_a_dash() -> None:
    assert _meta(r.PODS, namespace="default") == [
        {"type": "FieldValueRequired", "field": "metadata.name", "message": "Required value: name or generateName is required"}
    ]
    assert _meta(r.PODS, generateName="job-", name="job-abcde", namespace="default") == []
    bad = _meta(r.PODS, generateName="Job-", name="x", namespace="default")
    assert [c["field"] for c in bad] == ["metadata.generateName"]
    assert bad[0]["message"] == f'Invalid value: "Job-": {SUBDOMAIN}'


def test_label_keys_and_values() -> None:
    causes = _meta(r.PODS, name="p", namespace="default", labels={"ok": "in valid!", "bad key": "v", "x.io/y": "z"})
    assert causes == [
        {"type": "FieldValueInvalid", "field": "metadata.labels", "message": f'Invalid value: "in valid!": {LABEL_VALUE}'},
        {"type": "FieldValueInvalid", "field": "metadata.labels", "message": f'Invalid value: "bad key": {QNAME}'},
    ]
    long_value = _meta(r.PODS, name="p", namespace="default", labels={"k": "v" * 64})
    assert long_value[0]["message"] == f'Invalid value: "{"v" * 64}": must be no more than 63 characters'
    prefix = _meta(r.PODS, name="p", namespace="default", labels={"Bad_Prefix/k": "v"})
    assert prefix[0]["message"].startswith('Invalid value: "Bad_Prefix/k": prefix part a lowercase RFC 1123 subdomain')


def test_annotation_keys_ignore_case_and_the_total_size_is_bounded() -> None:
    assert _meta(r.PODS, name="p", namespace="default", annotations={"Example.com/Key": "anything at all !"}) == []
    bad = _meta(r.PODS, name="p", namespace="default", annotations={"a b": "v"})
    assert bad == [{"type": "FieldValueInvalid", "field": "metadata.annotations", "message": f'Invalid value: "a b": {QNAME}'}]
    big = _meta(r.PODS, name="p", namespace="default", annotations={"k": "x" * (256 * 1024)})
    assert big == [{"type": "FieldValueTooLong", "field": "metadata.annotations",
                    "message": "Too long: may not be more than 262144 bytes"}]


def test_owner_references() -> None:
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u1", "controller": True}
    assert _meta(r.PODS, name="p", namespace="default", ownerReferences=[ref]) == []
    empty = _meta(r.PODS, name="p", namespace="default", ownerReferences=[{}])
    assert [(c["field"], c["message"]) for c in empty] == [
        ("metadata.ownerReferences.apiVersion", 'Invalid value: "": version must not be empty'),
        ("metadata.ownerReferences.kind", 'Invalid value: "": kind must not be empty'),
        ("metadata.ownerReferences.name", 'Invalid value: "": name must not be empty'),
        ("metadata.ownerReferences.uid", 'Invalid value: "": uid must not be empty'),
    ]
    two = _meta(r.PODS, name="p", namespace="default", ownerReferences=[ref, {**ref, "name": "e", "uid": "u2"}])
    assert len(two) == 1 and two[0]["message"].endswith(
        'Only one reference can have Controller set to true. Found "true" in references for Deployment/d and Deployment/e'
    )
    event = _meta(r.PODS, name="p", namespace="default",
                  ownerReferences=[{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}])
    assert event[0]["message"].endswith("/v1, Kind=Event is disallowed from being an owner")


def test_finalizers() -> None:
    assert _meta(r.PODS, name="p", namespace="default", finalizers=["example.com/hold", "foregroundDeletion"]) == []
    bad = _meta(r.PODS, name="p", namespace="default", finalizers=["not ok"])
    assert bad == [{"type": "FieldValueInvalid", "field": "metadata.finalizers", "message": f'Invalid value: "not ok": {QNAME}'}]
    both = _meta(r.PODS, name="p", namespace="default", finalizers=["orphan", "foregroundDeletion"])
    assert both[0]["message"].endswith("finalizer orphan and foregroundDeletion cannot be both set")
