"""The scale subresource (Deployments, ReplicaSets, custom resources), pods/log, and events.k8s.io/v1 Events over the
core/v1 Event store, with kubectl, the official client and raw HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes import client, config
from sandbox_http import RawClient
from testkit.kubectl import MAIN_KUBECTL, Kubectl, requires_kubectl

from apis import meta
from apis.resources import DEPLOYMENTS, EVENTS, PODS, REPLICA_SETS

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False)]

DEPLOY = "/apis/apps/v1/namespaces/default/deployments"
EV1 = "/apis/events.k8s.io/v1/namespaces/default/events"
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "workers.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "workers", "singular": "worker", "kind": "Worker"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "subresources": {"status": {}, "scale": {
                               "specReplicasPath": ".spec.size", "statusReplicasPath": ".status.running",
                               "labelSelectorPath": ".status.selector"}},
                           "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}


@pytest.fixture
def http(sandbox) -> RawClient:
    return RawClient(sandbox.url)


@pytest.fixture
def api(sandbox):
    cfg = client.Configuration()
    config.load_kube_config(config_file=sandbox.kubeconfig, client_configuration=cfg)
    with client.ApiClient(cfg) as api_client:
        yield api_client


def _deployment(sandbox, replicas: int = 1) -> dict:
    return sandbox.tracker.create(DEPLOYMENTS, {"metadata": {"name": "web"}, "spec": {
        "replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}}, "default")


def test_scale_subresource_get_put_patch(sandbox, http: RawClient) -> None:
    dep = _deployment(sandbox)
    scale = http.get(f"{DEPLOY}/web/scale").json()
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 1} and scale["status"] == {"replicas": 0, "selector": "app=web"}
    assert scale["metadata"]["uid"] == dep["metadata"]["uid"]

    scale["spec"]["replicas"] = 4
    put = http.request("PUT", f"{DEPLOY}/web/scale", scale)
    assert put.status == 200 and put.json()["spec"]["replicas"] == 4
    assert sandbox.tracker.get(DEPLOYMENTS, "default", "web")["spec"]["replicas"] == 4
    stale = http.request("PUT", f"{DEPLOY}/web/scale", scale)  # the old resourceVersion
    assert stale.status == 409 and stale.json()["reason"] == "Conflict"

    patched = http.request("PATCH", f"{DEPLOY}/web/scale", {"spec": {"replicas": 2}},
                           content_type="application/merge-patch+json")
    assert patched.status == 200 and patched.json()["spec"]["replicas"] == 2
    bad = http.request("PATCH", f"{DEPLOY}/web/scale", {"spec": {"replicas": -1}},
                       content_type="application/merge-patch+json")
    assert bad.status == 422 and bad.json()["details"]["causes"][0]["field"] == "spec.replicas"
    assert sandbox.tracker.get(DEPLOYMENTS, "default", "web")["spec"]["replicas"] == 2
    missing = http.get(f"{DEPLOY}/nope/scale")
    assert missing.status == 404 and 'deployments.apps "nope" not found' in missing.json()["message"]

    apps = {r["name"]: r for r in http.get("/apis/apps/v1").json()["resources"]}
    assert apps["deployments/scale"]["kind"] == "Scale" and apps["deployments/scale"]["group"] == "autoscaling"
    assert apps["replicasets/scale"]["verbs"] == ["get", "patch", "update"]


def test_scale_json_patch_that_replaces_the_whole_scale_with_a_non_object_is_a_400(sandbox, http: RawClient) -> None:
    _deployment(sandbox, replicas=3)
    answer = http.request("PATCH", f"{DEPLOY}/web/scale", [{"op": "replace", "path": "", "value": 5}],
                          content_type="application/json-patch+json")
    assert answer.status == 400 and answer.json()["message"] == "the patched object is not a JSON object"
    assert sandbox.tracker.get(DEPLOYMENTS, "default", "web")["spec"]["replicas"] == 3


def test_scale_of_replicasets_and_custom_resources(sandbox, http: RawClient, api) -> None:
    sandbox.tracker.create(REPLICA_SETS, {"metadata": {"name": "rs"}, "spec": {
        "replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}}, "default")
    scaled = client.AppsV1Api(api).patch_namespaced_replica_set_scale("rs", "default", {"spec": {"replicas": 3}})
    assert scaled.spec.replicas == 3
    assert sandbox.tracker.get(REPLICA_SETS, "default", "rs")["spec"]["replicas"] == 3

    assert http.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD).status == 201
    path = "/apis/example.com/v1/namespaces/default/workers"
    created = http.request("POST", path, {"apiVersion": "example.com/v1", "kind": "Worker", "metadata": {"name": "w"},
                                          "spec": {"size": 1}})
    assert created.status == 201
    with_status = {**created.json(), "status": {"running": 1, "selector": "app=w"}}
    assert http.request("PUT", f"{path}/w/status", with_status).status == 200
    scale = http.get(f"{path}/w/scale").json()
    assert scale["spec"] == {"replicas": 1} and scale["status"] == {"replicas": 1, "selector": "app=w"}
    put = http.request("PUT", f"{path}/w/scale", {**scale, "spec": {"replicas": 5}})
    assert put.status == 200 and http.get(f"{path}/w").json()["spec"]["size"] == 5


@requires_kubectl
def test_kubectl_scale_and_logs(sandbox, tmp_path: Path) -> None:
    k = Kubectl(MAIN_KUBECTL, sandbox.kubeconfig, tmp_path / "cache")
    _deployment(sandbox)
    assert "deployment.apps/web scaled" in k("scale", "deploy/web", "--replicas=3").stdout
    assert sandbox.tracker.get(DEPLOYMENTS, "default", "web")["spec"]["replicas"] == 3

    sandbox.tracker.create(PODS, {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
                           "default")
    logs = k("logs", "p", check=False)
    assert logs.returncode != 0 and "has no container logs" in logs.stderr and "BadRequest" in logs.stderr
    missing = k("logs", "nope", check=False)
    assert missing.returncode != 0 and 'pods "nope" not found' in missing.stderr


def _event_v1(name: str, **extra) -> dict:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "sedna.io/gm",
            "reportingInstance": "gm-0", "action": "Sync", "reason": "Created", "type": "Normal",
            "note": "created worker", "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}, **extra}


def test_events_v1_and_core_v1_share_one_store(sandbox, http: RawClient) -> None:
    created = http.request("POST", EV1, _event_v1("e1"))
    assert created.status == 201, created.body
    body = created.json()
    assert body["apiVersion"] == "events.k8s.io/v1" and body["note"] == "created worker"
    core = sandbox.tracker.get(EVENTS, "default", "e1")
    assert core["message"] == "created worker" and core["involvedObject"]["name"] == "p"
    assert core["reportingComponent"] == "sedna.io/gm" and "note" not in core

    sandbox.tracker.create(EVENTS, {"metadata": {"name": "e2"}, "involvedObject": {"kind": "Pod", "name": "q"},
                                    "reason": "Pulled", "message": "pulled", "type": "Normal", "count": 2,
                                    "source": {"component": "kubelet"}}, "default")
    listed = http.get(EV1).json()
    assert listed["apiVersion"] == "events.k8s.io/v1" and listed["kind"] == "EventList"
    e2 = next(e for e in listed["items"] if e["metadata"]["name"] == "e2")
    assert e2["note"] == "pulled" and e2["deprecatedCount"] == 2 and e2["deprecatedSource"] == {"component": "kubelet"}
    selected = http.get(EV1 + "?fieldSelector=regarding.name%3Dq").json()["items"]
    assert [e["metadata"]["name"] for e in selected] == ["e2"]

    invalid = http.request("POST", EV1, {"metadata": {"name": "bad"}, "reason": "X", "type": "Odd"})
    assert invalid.status == 422
    fields = {c["field"] for c in invalid.json()["details"]["causes"]}
    assert {"eventTime", "reportingController", "reportingInstance", "action", "type"} <= fields

    patched = http.request("PATCH", f"{EV1}/e1", {"series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"}},
                           content_type="application/merge-patch+json")
    assert patched.status == 200 and sandbox.tracker.get(EVENTS, "default", "e1")["series"]["count"] == 2
    immutable = http.request("PATCH", f"{EV1}/e1", {"note": "changed"}, content_type="application/merge-patch+json")
    assert immutable.status == 422 and immutable.json()["details"]["causes"][0]["field"] == "message"

    applied = http.request("PATCH", f"{EV1}/e4?fieldManager=test", _event_v1("e4"),
                           content_type="application/apply-patch+yaml")
    assert applied.status == 201 and sandbox.tracker.get(EVENTS, "default", "e4")["message"] == "created worker"
    missing = http.request("PATCH", f"{EV1}/nope", {"note": "x"}, content_type="application/merge-patch+json")
    assert missing.status == 404

    events = http.watch_events(EV1 + "?watch=1&timeoutSeconds=1")
    assert {e["object"]["apiVersion"] for e in events} == {"events.k8s.io/v1"}
    deleted = http.request("DELETE", f"{EV1}/e1")
    assert deleted.status == 200 and deleted.json()["status"] == "Success"
    assert [meta.name(e) for e in sandbox.tracker.list(EVENTS, "default")["items"]] == ["e2", "e4"]


def test_events_v1_with_the_official_client(sandbox, api) -> None:
    events = client.EventsV1Api(api)
    events.create_namespaced_event("default", _event_v1("e3"))
    got = events.read_namespaced_event("e3", "default")
    assert got.note == "created worker" and got.regarding.name == "p"
    assert client.CoreV1Api(api).read_namespaced_event("e3", "default").message == "created worker"


def test_batch_v1_jobs_and_cronjobs_are_served(sandbox, api) -> None:
    batch = client.BatchV1Api(api)
    job = batch.create_namespaced_job("default", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                                                  "spec": {"template": {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}}})
    assert job.metadata.generation == 1
    job.status = client.V1JobStatus(succeeded=1)
    assert batch.replace_namespaced_job_status("j", "default", job).status.succeeded == 1
    batch.create_namespaced_cron_job("default", {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
                                                 "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {
                                                     "template": {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}}}}})
    assert [c.metadata.name for c in batch.list_namespaced_cron_job("default").items] == ["c"]
