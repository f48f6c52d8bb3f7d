"""Go JSON decoding of built-in kinds (and of a custom resource's metadata), as kube-apiserver decodes a body."""

from __future__ import annotations

from typing import Any

import pytest

from apis.fake.tracker.decoding import DecodeError, check_kind, check_object_meta


def _pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def _error(definition: str, obj: Any) -> str:
    with pytest.raises(DecodeError) as err:
        check_kind(definition, obj)
    return err.value.message


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"metadata": {"name": 123}},
         "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string"),
        ({"metadata": {"ownerReferences": "x"}},
         "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference"),
        ({"metadata": {"ownerReferences": ["x"]}},
         "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.ownerReferences of type v1.OwnerReference"),
        ({"metadata": {"labels": {"a": 1}}},
         "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"),
        ({"metadata": {"annotations": {"a": True}}},
         "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.annotations of type string"),
        ({"metadata": {"labels": ["a"]}},
         "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string"),
        ({"metadata": "x"}, "json: cannot unmarshal string into Go struct field Pod.metadata of type v1.ObjectMeta"),
        ({"spec": []}, "json: cannot unmarshal array into Go struct field Pod.spec of type v1.PodSpec"),
        ({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}},
         "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int64"),
        ({"spec": {"activeDeadlineSeconds": 1.5}},
         "json: cannot unmarshal number 1.5 into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64"),
        ({"spec": {"hostNetwork": "yes"}},
         "json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool"),
        ({"metadata": {"creationTimestamp": 5}},
         "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string"),
        ({"metadata": {"creationTimestamp": "yesterday"}},
         'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'),
        ({"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "lots"}}}]}},
         "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
        ([], "json: cannot unmarshal array into Go value of type v1.Pod"),
    ],
)
def test_pod_type_errors_name_the_go_field(obj: Any, message: str) -> None:
    assert _error("V1Pod", obj) == message


def test_valid_values_of_every_special_type_decode() -> None:
    pod = _pod(
        activeDeadlineSeconds=30,
        containers=[{
            "name": "c", "image": "b", "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": 1, "memory": "1Gi"}, "requests": {"cpu": 0.5, "memory": "512M"}},
            "livenessProbe": {"httpGet": {"port": "http"}},
        }],
    )
    pod["metadata"].update(labels={"a": "b"}, creationTimestamp="2026-01-02T03:04:05.123Z", ownerReferences=None)
    assert check_kind("V1Pod", pod) == []
    service = {"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 81, "targetPort": "web"}]}}
    assert check_kind("V1Service", service) == []
    assert check_kind("V1Secret", {"data": {"k": "dmFsdWU="}}) == []


def test_int_or_string_rejects_other_types_as_int32() -> None:
    message = _error("V1Service", {"spec": {"ports": [{"port": 80, "targetPort": True}]}})
    assert message == "json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32"


def test_secret_data_must_be_base64() -> None:
    assert _error("V1Secret", {"data": {"k": "not base64!"}}) == "illegal base64 data at input byte 3"
    assert _error("V1Secret", {"data": {"k": 1}}) == (
        "json: cannot unmarshal number into Go struct field Secret.data of type []uint8"
    )


def test_unknown_fields_are_reported_with_indices_and_dropped_on_request() -> None:
    pod = _pod(typo=1)
    pod["spec"]["containers"][0]["imagePullPolcy"] = "Always"
    assert check_kind("V1Pod", pod) == ["spec.containers[0].imagePullPolcy", "spec.typo"]  # document order
    assert "typo" in pod["spec"]
    check_kind("V1Pod", pod, drop_unknown=True)
    assert "typo" not in pod["spec"] and "imagePullPolcy" not in pod["spec"]["containers"][0]


def test_custom_resource_metadata_decodes_alone() -> None:
    check_object_meta({"name": "w", "labels": {"a": "b"}})
    with pytest.raises(DecodeError) as err:
        check_object_meta({"name": "w", "ownerReferences": "x"})
    assert err.value.message == (
        "json: cannot unmarshal string into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference"
    )
    with pytest.raises(DecodeError) as err:
        check_object_meta("x")
    assert err.value.message == "json: cannot unmarshal string into Go value of type v1.ObjectMeta"


def test_a_write_walks_its_object_once_a_patch_twice_only_to_drop_fields(monkeypatch):
    """Checking that an object decodes and dropping its unknown fields is one walk (a patch's error quotes the
    patched object as it was, so it is checked before anything is dropped, and walked again only when there is
    something to drop)."""
    from apis.fake import ObjectTracker
    from apis.fake.tracker import admission
    from apis.resources import PODS

    walks: list[bool] = []
    real = admission.check_kind
    monkeypatch.setattr(admission, "check_kind", lambda d, o, drop_unknown=False: walks.append(drop_unknown)
                        or real(d, o, drop_unknown))
    tracker = ObjectTracker()
    created = tracker.create(PODS, {**_pod(), "bogus": 1}, "default")
    assert walks == [True] and "bogus" not in created
    tracker.update(PODS, {**created, "bogus": 2}, "default")
    assert walks == [True, True]
    walks.clear()
    tracker.patch(PODS, "default", "p", {"metadata": {"labels": {"a": "b"}}}, "merge")
    assert walks == [False]
    walks.clear()
    patched = tracker.patch(PODS, "default", "p", {"bogus": 3, "metadata": {"labels": {"a": "c"}}}, "merge")
    assert walks == [False, True] and "bogus" not in patched and patched["metadata"]["labels"] == {"a": "c"}
