"""What a cluster refuses and client-go's fake stores (issue 43): an object over etcd's 1.5 MiB is a 500
``etcdserver: request is too large`` with no reason, ConfigMap or Secret data over 1 MiB a 422 on the field
kube-apiserver names. A tracker made with ``cluster_limits`` (the sandbox API server's, a ``FakeClientset`` that asks)
refuses them; a refused write changes nothing; without it they are stored."""

from __future__ import annotations

import base64

import pytest
from fake_tracker_helpers import make_pod

from apis import errors
from apis import resources as r
from apis.fake import FakeClientset, ObjectTracker
from apis.fake.tracker.limits import MAX_DATA_BYTES, MAX_STORED_BYTES

MIB = 1024 * 1024


@pytest.fixture
def limited() -> ObjectTracker:
    return ObjectTracker(cluster_limits=True)


def configmap(name: str = "big", **fields: object) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, **fields}


def big_pod(name: str, env_bytes: int) -> dict:
    pod = make_pod(name)
    pod["spec"]["containers"][0]["env"] = [{"name": "BIG", "value": "x" * env_bytes}]
    return pod


def assert_etcd_refused(exc: pytest.ExceptionInfo[errors.ApiError]) -> None:
    err = exc.value
    assert (err.status, err.reason, err.message) == (500, "", "etcdserver: request is too large")
    assert errors.is_internal_error(err)


def test_an_object_etcd_would_not_store_is_a_500_without_reason(limited: ObjectTracker) -> None:
    with pytest.raises(errors.ApiError) as exc:
        limited.create(r.PODS, big_pod("p", MAX_STORED_BYTES))
    assert_etcd_refused(exc)
    assert limited.list(r.PODS)["items"] == []
    limited.create(r.PODS, big_pod("p", MAX_STORED_BYTES), dry_run=True)  # a dry run never reaches etcd

    # grown past it by an update, a patch or a status write: refused, nothing changed
    stored = limited.create(r.PODS, big_pod("p", MAX_STORED_BYTES - 4096))
    with pytest.raises(errors.ApiError) as exc:
        limited.patch(r.PODS, "default", "p", {"metadata": {"annotations": {"a": "y" * 8192}}})
    assert_etcd_refused(exc)
    with pytest.raises(errors.ApiError) as exc:
        limited.update(r.PODS, {**stored, "status": {"message": "z" * 8192}}, subresource="status")
    assert_etcd_refused(exc)
    assert limited.get(r.PODS, "default", "p") == stored


@pytest.mark.parametrize("fields, field", [
    ({"data": {"a": "x" * (MAX_DATA_BYTES // 2), "b": "é" * (MAX_DATA_BYTES // 4 + 1)}}, "[]"),  # bytes, not characters
    ({"data": {"a": "x" * (MAX_DATA_BYTES // 2)},
      "binaryData": {"b": base64.b64encode(b"\0" * (MAX_DATA_BYTES // 2 + 1)).decode()}}, "[]"),  # decoded
])
def test_configmap_data_over_1_mib_is_invalid(limited: ObjectTracker, fields: dict, field: str) -> None:
    with pytest.raises(errors.InvalidError) as exc:
        limited.create(r.CONFIGMAPS, configmap(**fields))
    assert exc.value.status == 422 and exc.value.reason == "Invalid"
    assert exc.value.message == 'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes'
    assert exc.value.causes == [{"type": "FieldValueTooLong", "field": field,
                                 "message": "Too long: may not be more than 1048576 bytes"}]
    limited.create(r.CONFIGMAPS, configmap(data={"a": "x" * MAX_DATA_BYTES}))  # the limit itself is fine


def test_secret_data_over_1_mib_is_invalid_decoded(limited: ObjectTracker) -> None:
    at_limit = base64.b64encode(b"\1" * MAX_DATA_BYTES).decode()  # 1.33 MiB as JSON, 1 MiB of data
    stored = limited.create(r.SECRETS, {"apiVersion": "v1", "kind": "Secret",
                                        "metadata": {"name": "s", "namespace": "default"}, "data": {"k": at_limit}})
    with pytest.raises(errors.InvalidError) as exc:
        limited.update(r.SECRETS, {**stored, "data": {"k": at_limit, "more": "eA=="}})
    assert exc.value.message == 'Secret "s" is invalid: data: Too long: may not be more than 1048576 bytes'
    assert limited.get(r.SECRETS, "default", "s") == stored


def test_a_fake_clientset_refuses_them_only_when_asked() -> None:
    two_mib = configmap(data={"a": "x" * 2 * MIB})
    plain = FakeClientset()  # as client-go's fake: stored
    assert len(plain.core_v1().config_maps("default").create(two_mib)["data"]["a"]) == 2 * MIB
    strict = FakeClientset(cluster_limits=True)
    with pytest.raises(errors.InvalidError):
        strict.core_v1().config_maps("default").create(two_mib)
    with pytest.raises(errors.ApiError) as exc:
        strict.core_v1().pods("default").create(big_pod("p", 2 * MIB))
    assert_etcd_refused(exc)
