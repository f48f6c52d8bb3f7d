"""ObjectSearchService and ObjectTrackingService controllers with the fake clientset: the ReID/user Deployments and
Services and the tracking pods with Sedna's exact contract, status from their health (``podFailed`` /
``deploymentFailed``), self-healing at most once per 5 s, spec changes, and the cascade Sedna #444 lacked."""

from __future__ import annotations

from typing import Any

import pytest
from sedna_test_helpers import NS, env_of

from apis import meta
from apis import resources as r
from globalmanager.controllers.objectsearch import KIND as OBJECT_SEARCH
from globalmanager.controllers.objecttracking import KIND as OBJECT_TRACKING

NAME = "test-os"
REID, USER = f"{NAME}-deployment-reidworker", f"{NAME}-deployment-userworker"


def template(image: str, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": image}]}
    if node:
        spec["nodeName"] = node
    return {"spec": spec}


def os_service(kind: str = "ObjectSearchService", name: str = NAME) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "trackingWorkers": [{"template": template("track:v1", "edge-1")}, {"template": template("track:v1", "edge-2")}],
        "reidWorkers": {"replicas": 2, "selector": {"matchLabels": {"app": "reid"}},
                        "template": {"metadata": {"labels": {"app": "reid"}}, **template("reid:v1")}},
    }
    if kind == "ObjectSearchService":
        spec["userWorker"] = {"template": template("user:v1", "cloud")}
    return {"apiVersion": "sedna.io/v1alpha1", "kind": kind, "metadata": {"name": name, "namespace": NS}, "spec": spec}


@pytest.fixture
def objs(make_sedna_harness):
    def make(*objects: dict[str, Any]) -> Any:
        h = make_sedna_harness(OBJECT_SEARCH, r.OBJECT_SEARCH_SERVICES, *(objects or (os_service(),)))
        h.refresh()
        return h
    return make


def started(objs) -> Any:
    h = objs()
    assert h.sync(NAME) is None
    h.refresh()
    return h


def pods(h) -> list[dict[str, Any]]:
    return sorted(h.objects(r.PODS), key=lambda p: meta.annotations(p)["sedna.io/tracking-worker-index"])


def run_everything(h, ready: bool = True) -> None:
    for name in h.names(r.DEPLOYMENTS):
        h.set_status(r.DEPLOYMENTS, name, {"conditions": [{"type": "Available", "status": "True"}]})
    for pod in h.objects(r.PODS):
        h.set_status(r.PODS, meta.name(pod), {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True" if ready else "False"}]})
    h.refresh()


def types(h) -> list[str]:
    return [c["type"] for c in h.conditions(NAME)]


def test_creates_reid_and_user_deployments_services_and_tracking_pods_as_sedna(objs):
    h = started(objs)
    svc = h.job(NAME)
    assert h.names(r.DEPLOYMENTS) == [REID, USER]
    reid, user = (h.client(r.DEPLOYMENTS).get(n) for n in (REID, USER))
    prefix = "objectsearchservice.sedna.io/"
    for d, worker_type in ((reid, "reidworker"), (user, "userworker")):
        labels = {prefix + "name": NAME, prefix + "uid": meta.uid(svc), prefix + "worker-type": worker_type,
                  "app.sedna.io": f"{NAME}-{worker_type}-svc"}
        assert meta.is_controlled_by(d, svc) and meta.labels(d) == labels and d["spec"]["selector"]["matchLabels"] == labels
    assert reid["spec"]["replicas"] == 2 and "env" not in reid["spec"]["template"]["spec"]["containers"][0]
    assert user["spec"]["replicas"] == 1
    user_env = env_of(user)
    assert user_env.pop("WORKER_NAME").startswith("userworker-")
    assert user_env == {"NAMESPACE": NS, "SERVICE_NAME": NAME}
    services = {meta.name(s): s for s in h.objects(r.SERVICES)}
    assert sorted(services) == [f"{NAME}-reidworker", f"{NAME}-userworker"]
    assert services[f"{NAME}-reidworker"]["spec"]["ports"][0] == {"name": "tcp-0", "protocol": "TCP", "port": 9378, "targetPort": 9378}
    assert services[f"{NAME}-userworker"]["spec"]["ports"][0]["port"] == 9379
    tracking = pods(h)
    assert [p["spec"]["nodeName"] for p in tracking] == ["edge-1", "edge-2"]
    for pod in tracking:
        assert pod["metadata"]["generateName"] == f"{NAME}-trackingworker-" and meta.is_controlled_by(pod, svc)
        assert meta.labels(pod)[prefix + "worker-type"] == "trackingworker"
        env = env_of(pod)
        assert env.pop("WORKER_NAME").startswith("trackingworker-")
        assert env == {"NAMESPACE": NS, "SERVICE_NAME": NAME, "USERWORKER_URL": f"{NAME}-userworker.{NS}:9379",
                       "EDGEMESH_URL": f"{NAME}-reidworker.{NS}:9378"}
    status = svc["status"]
    assert types(h) == ["Pending"] and status["active"] == 4 and status["failed"] == 0


def test_running_once_every_worker_is_up_then_pod_failed_and_deployment_failed(objs):
    h = started(objs)
    run_everything(h, ready=False)
    h.sync(NAME)
    assert types(h) == ["Pending"] and h.job(NAME)["status"]["active"] == 4
    run_everything(h)
    h.sync(NAME)
    assert types(h) == ["Pending", "Running"]
    first = pods(h)[0]
    h.set_status(r.PODS, meta.name(first), {"phase": "Failed", "reason": "Error"})
    h.refresh()
    h.sync(NAME)
    cond = h.conditions(NAME)[-1]
    assert (cond["type"], cond["reason"]) == ("Failed", "podFailed") and meta.name(first) in cond["message"]
    assert h.job(NAME)["status"]["failed"] == 1 and ("Warning", "podFailed", cond["message"]) in h.events()
    h.client(r.PODS).delete(meta.name(first))  # the operator removes the failed pod: it is replaced
    h.controller.delete_pod(first)
    h.refresh()
    h.sync(NAME)
    run_everything(h)
    h.sync(NAME)
    assert types(h)[-1] == "Running"
    h.set_status(r.DEPLOYMENTS, REID, {"conditions": [{"type": "ReplicaFailure", "status": "True", "message": "quota"}]})
    h.refresh()
    h.sync(NAME)
    cond = h.conditions(NAME)[-1]
    assert (cond["reason"], cond["message"]) == ("deploymentFailed", f"the worker of service failed: deployment {REID}: quota")


def test_a_deleted_tracking_pod_or_deployment_comes_back_at_most_once_per_5_seconds(objs):
    h = started(objs)
    victim = pods(h)[1]
    h.client(r.PODS).delete(meta.name(victim))
    h.controller.delete_pod(victim)  # as the informer delivers it
    h.refresh()
    h.cs.clear_actions()
    h.sync(NAME)
    (create,) = h.actions("create", "pods")
    assert meta.annotations(create.object)["sedna.io/tracking-worker-index"] == "1"
    assert create.object["spec"]["nodeName"] == "edge-2"
    h.refresh()
    again = pods(h)[1]
    h.client(r.PODS).delete(meta.name(again))
    h.controller.delete_pod(again)
    h.refresh()
    h.sync(NAME)
    assert len(h.actions("create", "pods")) == 1  # deleted again within 5 s: not yet
    h.timer.advance(5.1)
    h.sync(NAME)
    assert len(h.actions("create", "pods")) == 2
    h.refresh()
    reid = h.client(r.DEPLOYMENTS).get(REID)
    h.client(r.DEPLOYMENTS).delete(REID)
    h.controller.delete_deployment(reid)
    assert [a.object["metadata"]["name"] for a in h.actions("create", "deployments")] == [REID]


def test_deleting_the_service_deletes_every_worker_and_none_comes_back(objs):
    """Sedna #444: the tracking pods stayed behind."""
    h = started(objs)
    for pod in h.objects(r.PODS):
        h.controller.add_pod(pod)  # as the informer delivers the new pods
    doomed_pod, doomed_deployment = pods(h)[0], h.client(r.DEPLOYMENTS).get(USER)
    h.cs.clear_actions()
    h.jobs.delete(NAME)
    assert h.objects(r.PODS) == [] and h.names(r.DEPLOYMENTS) == [] and h.names(r.SERVICES) == []
    h.controller.delete_pod(doomed_pod)
    h.controller.delete_deployment(doomed_deployment)  # the cache still has the service
    for gvr in (r.PODS, r.DEPLOYMENTS, r.SERVICES):  # the workers' deletion seen before the service's
        h.factory.for_resource(gvr).informer().get_indexer().replace([], "")
    h.sync(NAME)  # the cache still has the service; the API server says it is gone
    h.refresh()
    h.sync(NAME)
    assert h.actions("create", "pods") == [] and h.actions("create", "deployments") == []


def test_spec_changes_replace_changed_tracking_pods_and_update_deployments(objs):
    h = started(objs)
    kept, changed = pods(h)
    h.update_spec(NAME, lambda spec: (
        spec["trackingWorkers"][1]["template"]["spec"]["containers"][0].update(image="track:v2"),
        spec["trackingWorkers"].append({"template": template("track:v1", "edge-3")}),
        spec["reidWorkers"].update(replicas=3),
        spec["userWorker"]["template"]["spec"]["containers"][0].update(image="user:v2")))
    h.refresh()
    h.cs.clear_actions()
    h.sync(NAME)
    assert [a.name for a in h.actions("delete", "pods")] == [meta.name(changed)]
    created = sorted(h.actions("create", "pods"), key=lambda a: a.object["spec"]["nodeName"])
    assert [(a.object["spec"]["nodeName"], a.object["spec"]["containers"][0]["image"]) for a in created] == [
        ("edge-2", "track:v2"), ("edge-3", "track:v1")]
    assert meta.name(kept) in h.names(r.PODS)
    updated = {a.object["metadata"]["name"]: a.object for a in h.actions("update", "deployments")}
    assert updated[USER]["spec"]["template"]["spec"]["containers"][0]["image"] == "user:v2"
    assert h.client(r.DEPLOYMENTS).get(REID)["spec"]["replicas"] == 3
    h.update_spec(NAME, lambda spec: spec["trackingWorkers"].pop())
    h.refresh()
    h.sync(NAME)
    assert len(h.objects(r.PODS)) == 2  # the removed tracking worker's pod is deleted
    assert h.job(NAME)["status"]["failed"] == 0


def test_invalid_spec_is_reported(objs):
    bad = os_service()
    del bad["spec"]["userWorker"]["template"]
    h = objs(bad)
    h.sync(NAME)
    cond = h.conditions(NAME)[-1]
    assert (cond["type"], cond["reason"], cond["message"]) == ("Failed", "InvalidSpec", "spec.userWorker.template is required")
    assert h.objects(r.PODS) == [] and h.names(r.DEPLOYMENTS) == []


@pytest.mark.parametrize("field, value", [("trackingWorkers", "x"), ("reidWorkers", ["x"])])
def test_a_spec_the_typed_view_rejects_is_an_invalid_spec_naming_the_field(objs, field, value):
    """It used to raise from every sync (AttributeError), retried for good, with no status."""
    bad = os_service()
    bad["spec"][field] = value
    h = objs(bad)
    assert h.sync(NAME) is None
    cond = h.conditions(NAME)[-1]
    assert (cond["type"], cond["reason"]) == ("Failed", "InvalidSpec") and cond["message"].startswith(f"spec.{field}:")
    assert h.objects(r.PODS) == [] and h.names(r.DEPLOYMENTS) == [] and h.names(r.SERVICES) == []


def test_object_tracking_is_object_search_without_the_user_worker(make_sedna_harness):
    h = make_sedna_harness(OBJECT_TRACKING, r.OBJECT_TRACKING_SERVICES, os_service("ObjectTrackingService"))
    h.refresh()
    h.sync(NAME)
    h.refresh()
    svc = h.job(NAME)
    assert h.names(r.DEPLOYMENTS) == [REID] and h.names(r.SERVICES) == [f"{NAME}-reidworker"]
    tracking = h.objects(r.PODS)
    assert len(tracking) == 2
    for pod in tracking:
        assert meta.labels(pod)["objecttrackingservice.sedna.io/worker-type"] == "trackingworker"
        env = env_of(pod)
        assert env.pop("WORKER_NAME").startswith("trackingworker-")
        assert env == {"NAMESPACE": NS, "SERVICE_NAME": NAME, "EDGEMESH_URL": f"{NAME}-reidworker.{NS}:9378"}
    run_everything(h)
    h.sync(NAME)
    assert [c["type"] for c in h.conditions(NAME)] == ["Pending", "Running"]
    assert h.job(NAME)["status"]["active"] == 3 and meta.uid(svc)
    h.jobs.delete(NAME)
    assert h.objects(r.PODS) == [] and h.names(r.DEPLOYMENTS) == []
