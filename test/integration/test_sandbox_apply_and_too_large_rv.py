"""Over real HTTP: server-side apply answers 201 when it creates, and future resourceVersions answer
"Too large resource version" (504) on list and as an ERROR event on watch."""

from __future__ import annotations

import pytest
from sandbox_http import RawClient

from apis import errors
from apis.clientset import Clientset
from apis.resources import CONFIGMAPS

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False)]

CM_PATH = "/api/v1/namespaces/default/configmaps"
APPLIED = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: {value}\n"


def _apply(http: RawClient, value: str):
    return http.request(
        "PATCH", f"{CM_PATH}/applied?fieldManager=test", APPLIED.format(value=value), "application/apply-patch+yaml"
    )


def test_apply_answers_201_when_it_creates_and_200_when_it_updates(sandbox) -> None:
    http = RawClient(sandbox.url)
    created = _apply(http, "v1")
    assert created.status == 201 and created.json()["data"] == {"k": "v1"}
    updated = _apply(http, "v2")
    assert updated.status == 200 and updated.json()["data"] == {"k": "v2"}
    assert updated.json()["metadata"]["uid"] == created.json()["metadata"]["uid"]
    merged = http.request("PATCH", f"{CM_PATH}/missing", {"data": {"a": "b"}}, "application/merge-patch+json")
    assert merged.status == 404  # only apply creates


def test_apply_through_the_clientset_creates_then_updates(sandbox) -> None:
    cms = Clientset.from_kubeconfig(sandbox.kubeconfig).core_v1().config_maps("default")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cs-applied"}, "data": {"k": "1"}}
    first = cms.patch("cs-applied", body, patch_type="apply")
    second = cms.patch("cs-applied", {**body, "data": {"k": "2"}}, patch_type="apply")
    assert first["metadata"]["uid"] == second["metadata"]["uid"] and second["data"] == {"k": "2"}


@pytest.mark.parametrize("match", ["Exact", "NotOlderThan"])
def test_list_at_a_future_rv_is_a_too_large_timeout(sandbox, match: str) -> None:
    sandbox.tracker.too_large_rv_wait = 0.1
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "cm"}}, "default")
    future = int(sandbox.tracker.resource_version()) + 100
    reply = RawClient(sandbox.url).get(f"{CM_PATH}?resourceVersion={future}&resourceVersionMatch={match}")
    assert reply.status == 504
    status = reply.json()
    assert status["reason"] == "Timeout" and "Too large resource version" in status["message"]
    assert status["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"  # metav1.StatusCause on the wire

    cms = Clientset.from_kubeconfig(sandbox.kubeconfig).core_v1().config_maps("default")
    with pytest.raises(errors.RequestTimeoutError) as info:
        cms.list(resource_version=str(future), resource_version_match=match)
    assert errors.is_too_large_resource_version(info.value)


def test_watch_at_a_future_rv_gets_one_too_large_error_event(sandbox) -> None:
    sandbox.tracker.too_large_rv_wait = 0.1
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "cm"}}, "default")
    current = int(sandbox.tracker.resource_version())
    events = RawClient(sandbox.url).watch_events(f"{CM_PATH}?watch=1&resourceVersion={current + 100}", limit=5)
    assert [e["type"] for e in events] == ["ERROR"]  # then the server ended the stream
    status = events[0]["object"]
    assert status["code"] == 504
    assert f"Too large resource version: {current + 100}, current: {current}" in status["message"]
    assert errors.is_too_large_resource_version(errors.from_status(status))

    cms = Clientset.from_kubeconfig(sandbox.kubeconfig).core_v1().config_maps("default")
    w = cms.watch(resource_version=str(current + 100), timeout_seconds=10)
    try:
        got = [e for e in w]
    finally:
        w.stop()
    assert [e.type for e in got] == ["ERROR"]
    assert errors.is_too_large_resource_version(errors.from_status(got[0].object))
