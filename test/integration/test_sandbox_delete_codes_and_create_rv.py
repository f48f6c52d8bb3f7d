"""Over real HTTP: DELETE answers 200 (object gone or marked) and 202 only for a marked object when the request
said ``orphanDependents=false``; the legacy field maps to a propagation policy; a POST carrying a
resourceVersion is refused with 500 as etcd3 refuses it."""

from __future__ import annotations

import pytest
from sandbox_http import RawClient

from apis import errors
from apis.clientset import Clientset
from apis.resources import CONFIGMAPS, DEPLOYMENTS, PODS

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False)]

PODS_PATH = "/api/v1/namespaces/default/pods"
CM_PATH = "/api/v1/namespaces/default/configmaps"
DEPLOY_PATH = "/apis/apps/v1/namespaces/default/deployments"


def _held_pod(sandbox, name: str) -> dict:
    pod = {"metadata": {"name": name, "finalizers": ["example.com/hold"]}, "spec": {"containers": [{"name": "c"}]}}
    return sandbox.tracker.create(PODS, pod, "default")


def _owned_cm(sandbox, name: str, owner: dict) -> None:
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": owner["metadata"]["name"],
           "uid": owner["metadata"]["uid"], "blockOwnerDeletion": True}
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": name, "ownerReferences": [ref]}}, "default")


def test_delete_of_an_object_held_by_finalizers_answers_200_with_the_marked_object(sandbox) -> None:
    http = RawClient(sandbox.url)
    _held_pod(sandbox, "plain")
    reply = http.request("DELETE", f"{PODS_PATH}/plain")
    assert reply.status == 200 and reply.json()["metadata"]["deletionTimestamp"]
    _held_pod(sandbox, "explicit")
    reply = http.request("DELETE", f"{PODS_PATH}/explicit", {"propagationPolicy": "Background"})
    assert reply.status == 200 and reply.json()["metadata"]["deletionTimestamp"]


def test_foreground_delete_answers_200_with_the_owner_marked(sandbox) -> None:
    http = RawClient(sandbox.url)
    owner = sandbox.tracker.create(DEPLOYMENTS, {"metadata": {"name": "fg", "finalizers": ["example.com/hold"]},
                                                 "spec": {"replicas": 1}}, "default")
    _owned_cm(sandbox, "fg-child", owner)
    reply = http.request("DELETE", f"{DEPLOY_PATH}/fg", {"propagationPolicy": "Foreground"})
    assert reply.status == 200
    assert reply.json()["metadata"]["deletionTimestamp"] and "foregroundDeletion" in reply.json()["metadata"]["finalizers"]


@pytest.mark.parametrize("how", ["body", "query"])
def test_orphan_dependents_false_answers_202_only_while_the_object_remains(sandbox, how: str) -> None:
    http = RawClient(sandbox.url)

    def delete(name: str):
        if how == "body":
            return http.request("DELETE", f"{PODS_PATH}/{name}", {"kind": "DeleteOptions", "orphanDependents": False})
        return http.request("DELETE", f"{PODS_PATH}/{name}?orphanDependents=false")

    _held_pod(sandbox, f"held-{how}")
    reply = delete(f"held-{how}")
    assert reply.status == 202 and reply.json()["metadata"]["deletionTimestamp"]
    sandbox.tracker.create(PODS, {"metadata": {"name": f"free-{how}"}, "spec": {"containers": [{"name": "c"}]}}, "default")
    reply = delete(f"free-{how}")
    assert reply.status == 200 and reply.json()["metadata"]["name"] == f"free-{how}"


def test_orphan_dependents_true_orphans(sandbox) -> None:
    http = RawClient(sandbox.url)
    owner = sandbox.tracker.create(DEPLOYMENTS, {"metadata": {"name": "o"}, "spec": {"replicas": 1}}, "default")
    _owned_cm(sandbox, "o-child", owner)
    reply = http.request("DELETE", f"{DEPLOY_PATH}/o", {"orphanDependents": True})
    assert reply.status == 200 and reply.json()["status"] == "Success"
    child = sandbox.tracker.get(CONFIGMAPS, "default", "o-child")
    assert "ownerReferences" not in child["metadata"]


def test_orphan_dependents_false_collects_dependents(sandbox) -> None:
    owner = sandbox.tracker.create(DEPLOYMENTS, {"metadata": {"name": "b"}, "spec": {"replicas": 1}}, "default")
    _owned_cm(sandbox, "b-child", owner)
    reply = RawClient(sandbox.url).request("DELETE", f"{DEPLOY_PATH}/b?orphanDependents=false")
    assert reply.status == 200  # deleted at once: 200 even with orphanDependents=false
    with pytest.raises(errors.NotFoundError):
        sandbox.tracker.get(CONFIGMAPS, "default", "b-child")


def test_bad_delete_options(sandbox) -> None:
    http = RawClient(sandbox.url)
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "x"}}, "default")
    both = http.request("DELETE", f"{CM_PATH}/x", {"orphanDependents": True, "propagationPolicy": "Orphan"})
    assert both.status == 422 and "cannot be both set" in both.json()["message"]
    assert http.request("DELETE", f"{CM_PATH}/x", {"orphanDependents": "yes"}).status == 400
    assert http.request("DELETE", f"{CM_PATH}/x?orphanDependents=maybe").status == 400
    assert sandbox.tracker.get(CONFIGMAPS, "default", "x")["metadata"]["name"] == "x"


def test_post_with_a_resource_version_is_refused_with_500_and_no_reason(sandbox) -> None:
    http = RawClient(sandbox.url)
    reply = http.request("POST", CM_PATH, {"metadata": {"name": "rv", "resourceVersion": "12"}})
    assert reply.status == 500
    body = reply.json()
    assert body["message"] == "resourceVersion should not be set on objects to be created" and "reason" not in body
    assert http.request("POST", CM_PATH, {"metadata": {"name": "rv", "resourceVersion": "-1"}}).status == 201
    cms = Clientset.from_kubeconfig(sandbox.kubeconfig).core_v1().config_maps("default")
    with pytest.raises(errors.ApiError) as caught:
        cms.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rv2", "resourceVersion": "3"}})
    assert caught.value.status == 500
