"""The built-in kinds' OpenAPI v3 schemas derived from the ``kubernetes`` package's models."""

from __future__ import annotations

import threading

import pytest

from apis import resources as r
from apis.fake import schemas
from apis.fake.tracker import BUILTIN_GROUPS


def _prop(definition: dict, *path: str) -> dict:
    """Follow property names (through $refs and array items) from a definition."""
    current = definition
    for name in path:
        if name == "[]":
            current = current["items"]
        elif name == "{}":
            current = current["additionalProperties"]
        else:
            current = current["properties"][name]
        _, current = schemas.resolve(current)
    return current


@pytest.mark.parametrize(
    ("api_version", "kind", "model"),
    [
        ("v1", "Pod", "V1Pod"),
        ("v1", "Service", "V1Service"),
        ("v1", "ConfigMap", "V1ConfigMap"),
        ("v1", "Secret", "V1Secret"),
        ("v1", "Event", "CoreV1Event"),
        ("v1", "Namespace", "V1Namespace"),
        ("v1", "Node", "V1Node"),
        ("coordination.k8s.io/v1", "Lease", "V1Lease"),
        ("apps/v1", "Deployment", "V1Deployment"),
        ("apps/v1", "ReplicaSet", "V1ReplicaSet"),
        ("autoscaling/v2", "HorizontalPodAutoscaler", "V2HorizontalPodAutoscaler"),
        ("batch/v1", "Job", "V1Job"),
        ("events.k8s.io/v1", "Event", "EventsV1Event"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "V1CustomResourceDefinition"),
    ],
)
def test_each_builtin_kind_has_a_definition_with_its_gvk(api_version: str, kind: str, model: str) -> None:
    assert schemas.kind_definition_name(api_version, kind) == model
    definition = schemas.kind_definition(api_version, kind)
    assert definition is not None and definition["type"] == "object"
    group, _, version = api_version.rpartition("/")
    assert definition["x-kubernetes-group-version-kind"] == [{"group": group, "version": version, "kind": kind}]
    assert {"apiVersion", "kind", "metadata"} <= set(definition["properties"])
    assert _prop(definition, "metadata", "name") == {"type": "string", "description": schemas.definitions()["V1ObjectMeta"]["properties"]["name"]["description"]}


def test_every_served_builtin_resource_has_a_schema() -> None:
    builtin = [i for i in r.all_resources() if i.gvr.group in BUILTIN_GROUPS]
    assert builtin
    for info in builtin:
        assert schemas.kind_definition(info.gvr.api_version, info.kind) is not None, info.gvr


def test_custom_resources_have_none() -> None:
    assert schemas.kind_definition("sedna.io/v1alpha1", "Model") is None
    assert schemas.kind_definition("v1", "NoSuchKind") is None


def test_structure_types_and_descriptions() -> None:
    pod = schemas.kind_definition("v1", "Pod")
    assert pod is not None
    assert "Pod is a collection of containers" in pod["description"]
    labels = _prop(pod, "metadata", "labels")
    assert labels["type"] == "object" and labels["additionalProperties"] == {"type": "string"}
    assert "labels" in labels["description"].lower()
    owners = _prop(pod, "metadata", "ownerReferences")
    assert owners["type"] == "array"
    owner = _prop(pod, "metadata", "ownerReferences", "[]")
    assert owner["properties"]["uid"]["type"] == "string"
    assert set(owner["required"]) >= {"apiVersion", "kind", "name", "uid"}
    assert owner["properties"]["controller"]["type"] == "boolean"
    container = _prop(pod, "spec", "containers", "[]")
    assert container["required"] == ["name"]
    assert container["properties"]["image"]["type"] == "string"
    assert _prop(pod, "spec", "containers", "[]", "ports", "[]", "containerPort")["type"] == "integer"
    assert _prop(pod, "metadata", "creationTimestamp")["format"] == "date-time"
    assert _prop(pod, "spec", "activeDeadlineSeconds")["type"] == "integer"


def test_special_values() -> None:
    service = schemas.kind_definition("v1", "Service")
    assert service is not None
    target_port = _prop(service, "spec", "ports", "[]", "targetPort")
    assert target_port["x-kubernetes-int-or-string"] is True
    limits = _prop(schemas.kind_definition("v1", "Pod") or {}, "spec", "containers", "[]", "resources", "limits", "{}")
    assert limits["format"] == schemas.QUANTITY_FORMAT
    assert {s["type"] for s in limits["oneOf"]} == {"string", "number"}
    secret_data = _prop(schemas.kind_definition("v1", "Secret") or {}, "data", "{}")
    assert secret_data == {"type": "string", "format": "byte"}


def test_recursive_models_stay_finite_by_reference() -> None:
    crd = schemas.kind_definition("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert crd is not None
    props = _prop(crd, "spec", "versions", "[]", "schema", "openAPIV3Schema", "properties", "{}")
    assert props is schemas.definitions()["V1JSONSchemaProps"]
    assert schemas.resolve(props["properties"]["properties"]["additionalProperties"])[0] == "V1JSONSchemaProps"


def test_built_once_and_shared_across_threads() -> None:
    seen: list[object] = []

    def look() -> None:
        seen.append(schemas.kind_definition("apps/v1", "Deployment"))

    threads = [threading.Thread(target=look) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 8 and all(s is seen[0] for s in seen)


def test_go_type_names() -> None:
    assert schemas.go_type_name("V1ObjectMeta") == "v1.ObjectMeta"
    assert schemas.go_type_name("CoreV1EventSeries") == "v1.EventSeries"
    assert schemas.go_type_name("V2HorizontalPodAutoscalerSpec") == "v2.HorizontalPodAutoscalerSpec"
