"""ReidJob and VideoAnalyticsJob controllers with the fake clientset: the worker pod (and VA's Model mount and Service)
with Sedna's exact contract, phases and conditions from the pod, ``backoffLimit`` and ``activeDeadlineSeconds``,
self-healing at most once per 5 s, spec changes, cascade, and edge reports shown as conditions."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sedna_test_helpers import NOW, NS, env_of, model, s3_secret

from apis import meta
from apis import resources as r
from globalmanager.controllers.reid import KIND as REID
from globalmanager.controllers.videoanalytics import KIND as VIDEO_ANALYTICS

NAME = "test-job"


def job(kind: str = "ReidJob", **spec_extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "kafkaSupport": True,
        "template": {"metadata": {"annotations": {"note": "kept"}},
                     "spec": {"nodeName": "cloud-1", "restartPolicy": "Never",
                              "containers": [{"name": "w", "image": "w:v1", "env": [{"name": "fps", "value": "5"}]}]}},
    }
    if kind == "VideoAnalyticsJob":
        spec["model"] = {"name": "detector"}
    spec.update(spec_extra)
    return {"apiVersion": "sedna.io/v1alpha1", "kind": kind, "metadata": {"name": NAME, "namespace": NS}, "spec": spec}


@pytest.fixture
def reid(make_sedna_harness):
    def make(*objects: dict[str, Any], **spec_extra: Any) -> Any:
        h = make_sedna_harness(REID, r.REID_JOBS, job(**spec_extra), *objects, lc_server="http://lc:9100")
        h.refresh()
        return h
    return make


@pytest.fixture
def va(make_sedna_harness):
    def make(*objects: dict[str, Any], **spec_extra: Any) -> Any:
        h = make_sedna_harness(VIDEO_ANALYTICS, r.VIDEO_ANALYTICS_JOBS, job("VideoAnalyticsJob", **spec_extra),
                               *objects, lc_server="http://lc:9100")
        h.refresh()
        return h
    return make


def step(h) -> Any:
    """One sync, then the caches catch up (and the informer's add handlers run for new pods)."""
    h.sync(NAME)
    h.refresh()
    for pod in h.objects(r.PODS):
        h.controller.ctx.observe_creation(r.PODS, pod)
    return h


def the_pod(h) -> dict[str, Any]:
    (pod,) = [p for p in h.objects(r.PODS) if meta.deletion_timestamp(p) is None]
    return pod


def set_phase(h, pod: dict[str, Any], phase: str, **status: Any) -> None:
    h.set_status(r.PODS, meta.name(pod), {"phase": phase, **status})
    h.refresh()


def status(h) -> dict[str, Any]:
    return h.job(NAME)["status"]


def test_reid_pod_is_sednas(reid):
    h = step(reid())
    pod, j = the_pod(h), h.job(NAME)
    assert pod["metadata"]["generateName"] == f"{NAME}-reid-" and meta.is_controlled_by(pod, j)
    assert meta.labels(pod) == {"reidjob.sedna.io/name": NAME, "reidjob.sedna.io/uid": meta.uid(j),
                                "reidjob.sedna.io/worker-type": "reid"}
    assert meta.annotations(pod)["note"] == "kept" and pod["spec"]["restartPolicy"] == "Never"
    env = env_of(pod)
    assert len(env.pop("WORKER_NAME")) == 5
    assert env == {"fps": "5", "JOB_NAME": NAME, "NAMESPACE": NS, "LC_SERVER": "http://lc:9100", "KAFKA_ENABLED": "true"}
    assert status(h)["phase"] == "Running" and status(h)["active"] == 1 and status(h)["startTime"] == NOW
    assert h.objects(r.SERVICES) == []


def test_success_completes_the_job_for_good(reid):
    h = step(reid())
    set_phase(h, the_pod(h), "Succeeded")
    step(h)
    st = status(h)
    assert st["phase"] == "Succeeded" and st["succeeded"] == 1 and st["active"] == 0 and st["completionTime"] == NOW
    (cond,) = st["conditions"]
    assert cond["type"] == "Completed" and cond["lastHeartbeatTime"] and cond["lastTransitionTime"]
    assert ("Normal", "Completed", "ReidJob completed") in h.events()
    h.cs.clear_actions()
    h.sync(NAME)
    assert h.cs.actions() == []


def test_failed_pods_are_retried_up_to_backoff_limit(reid):
    h = step(reid(backoffLimit=1))
    set_phase(h, the_pod(h), "Failed")
    step(h)  # 1 failure ≤ 1: a new pod
    assert len(h.objects(r.PODS)) == 2 and status(h)["phase"] == "Running" and status(h)["failed"] == 1
    assert "conditions" not in status(h)
    retry = [p for p in h.objects(r.PODS) if (p.get("status") or {}).get("phase") != "Failed"][0]
    set_phase(h, retry, "Failed")
    step(h)
    st = status(h)
    assert st["phase"] == "Failed" and st["failed"] == 2 and len(h.objects(r.PODS)) == 2
    cond = st["conditions"][-1]
    assert (cond["type"], cond["reason"], cond["message"]) == (
        "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    assert ("Warning", "BackoffLimitExceeded", cond["message"]) in h.events()


def test_a_retry_waits_5_seconds_after_the_last_new_pod(reid):
    h = step(reid())
    set_phase(h, the_pod(h), "Failed")
    step(h)
    fresh = [p for p in h.objects(r.PODS) if (p.get("status") or {}).get("phase") != "Failed"][0]
    set_phase(h, fresh, "Failed")
    step(h)
    assert len(h.objects(r.PODS)) == 2  # the second retry waits for the 5 s
    h.timer.advance(5.1)
    step(h)
    assert len(h.objects(r.PODS)) == 3 and status(h)["failed"] == 2 and status(h)["phase"] == "Running"


def test_on_failure_restarts_count_against_the_backoff_limit(reid):
    spec_template = job()["spec"]["template"]
    spec_template["spec"]["restartPolicy"] = "OnFailure"
    h = step(reid(backoffLimit=2, template=spec_template))
    set_phase(h, the_pod(h), "Running", containerStatuses=[{"name": "w", "restartCount": 3}])
    step(h)
    cond = status(h)["conditions"][-1]
    assert cond["reason"] == "BackoffLimitExceeded" and h.objects(r.PODS) == []  # the running pod is deleted


def test_active_deadline_fails_the_job_and_deletes_its_pod(reid, mocker):
    h = step(reid(activeDeadlineSeconds=60))
    spy = mocker.spy(h.controller.queue, "add_after")
    step(h)
    spy.assert_called_once_with(f"{NS}/{NAME}", 60.0)  # synced again when the deadline passes
    h.set_status(r.REID_JOBS, NAME, {**status(h), "startTime": "2026-01-02T03:03:05Z"})  # started 60 s ago
    h.refresh()
    step(h)
    st = status(h)
    cond = st["conditions"][-1]
    assert (st["phase"], cond["reason"], cond["message"]) == (
        "Failed", "DeadlineExceeded", "Job was active longer than specified deadline")
    assert h.objects(r.PODS) == [] and st["active"] == 0
    assert ("Warning", "DeadlineExceeded", cond["message"]) in h.events()


def test_a_deleted_pod_is_replaced_at_most_once_per_5_seconds_never_after_the_job(reid):
    h = step(reid())
    first = the_pod(h)
    h.client(r.PODS).delete(meta.name(first))
    h.controller.delete_pod(first)
    h.refresh()
    h.cs.clear_actions()
    step(h)
    assert len(h.actions("create", "pods")) == 1
    second = the_pod(h)
    h.client(r.PODS).delete(meta.name(second))
    h.controller.delete_pod(second)
    h.refresh()
    step(h)
    assert len(h.actions("create", "pods")) == 1 and status(h)["active"] == 0
    h.timer.advance(5.1)
    step(h)
    assert len(h.actions("create", "pods")) == 2
    h.timer.advance(5.1)
    h.jobs.delete(NAME)
    assert h.objects(r.PODS) == []  # cascade
    h.factory.for_resource(r.PODS).informer().get_indexer().replace([], "")  # the pod's deletion seen first
    h.sync(NAME)  # the cache still has the job; the API server says it is gone
    assert len(h.actions("create", "pods")) == 2


def test_a_new_template_replaces_the_running_pod_but_a_new_backoff_limit_does_not(reid):
    h = step(reid())
    first = the_pod(h)
    h.update_spec(NAME, lambda spec: spec.update(backoffLimit=2))
    h.refresh()
    h.cs.clear_actions()
    step(h)
    assert h.actions("delete", "pods") == [] and h.actions("create", "pods") == []
    h.update_spec(NAME, lambda spec: spec["template"]["spec"]["containers"][0].update(image="w:v2"))
    h.refresh()
    h.cs.clear_actions()
    step(h)
    assert [a.name for a in h.actions("delete", "pods")] == [meta.name(first)]
    (create,) = h.actions("create", "pods")
    assert create.object["spec"]["containers"][0]["image"] == "w:v2"


def test_edge_reports_become_conditions_with_data_that_never_finish_the_job(reid):
    h = step(reid())
    report = {"phase": "inference", "status": "completed", "output": {"ownerInfo": {"matches": 3}}}
    h.edge.report("cloud-1", NS, "reidjob", NAME, report)
    cond = status(h)["conditions"][-1]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Completed", "True", "ReportedByEdge")
    assert json.loads(cond["data"]) == report and "cloud-1" in cond["message"]
    h.edge.report("cloud-1", NS, "reidjob", NAME, {**report, "output": {"ownerInfo": {"matches": 4}}})
    (cond,) = status(h)["conditions"]  # the same type again: updated in place
    assert json.loads(cond["data"])["output"]["ownerInfo"]["matches"] == 4
    h.edge.report("cloud-1", NS, "reidjob", NAME, {"status": "bogus"})
    assert len(status(h)["conditions"]) == 1
    h.refresh()
    set_phase(h, the_pod(h), "Succeeded")
    step(h)  # the edge's Completed did not finish the job: the GM still completes it from the pod
    st = status(h)
    assert st["phase"] == "Succeeded" and [c["type"] for c in st["conditions"]] == ["Completed", "Completed"]
    assert st["conditions"][-1].get("reason") is None


def test_a_worker_alternating_its_reports_keeps_one_condition_per_type(reid):
    h = step(reid())
    for n in range(50):  # a year of a worker switching between running and ready
        h.edge.report("cloud-1", NS, "reidjob", NAME, {"phase": "inference", "status": ("running", "ready")[n % 2],
                                                       "output": {"ownerInfo": {"n": n}}})
    conditions = status(h)["conditions"]
    assert [c["type"] for c in conditions] == ["Running", "Ready"]
    assert json.loads(conditions[-1]["data"])["output"]["ownerInfo"]["n"] == 49


def test_va_pod_mounts_its_model_and_gets_its_service(va):
    h = step(va(model("detector", "s3://models/yolo.pth", credential="s3"), s3_secret("s3")))
    pod, j = the_pod(h), h.job(NAME)
    assert pod["metadata"]["generateName"] == f"{NAME}-videoanalytics-"
    assert meta.labels(pod)["videoanalyticsjob.sedna.io/worker-type"] == "videoanalytics"
    env = env_of(pod)
    assert len(env.pop("WORKER_NAME")) == 5
    assert env == {"fps": "5", "JOB_NAME": NAME, "NAMESPACE": NS, "MODEL_NAME": "detector", "LC_SERVER": "http://lc:9100",
                   "KAFKA_ENABLED": "true", "MODEL_URL": "/downloads/models/yolo.pth"}
    init = pod["spec"]["initContainers"][0]
    assert init["args"] == ["s3://models/yolo.pth", "/downloads/models/"]
    assert {e["name"] for e in init["env"]} >= {"S3_ENDPOINT_URL", "ACCESS_KEY_ID", "SECRET_ACCESS_KEY"}
    (svc,) = h.objects(r.SERVICES)
    assert meta.name(svc) == f"{NAME}-videoanalytics" and meta.is_controlled_by(svc, j)
    assert svc["spec"]["ports"] == [{"name": "tcp-0", "protocol": "TCP", "port": 4000, "targetPort": 4000}]
    h.client(r.SERVICES).delete(meta.name(svc))
    h.refresh()
    step(h)
    assert h.names(r.SERVICES) == [f"{NAME}-videoanalytics"]  # made again while the job runs
    h.jobs.delete(NAME)
    assert h.objects(r.PODS) == [] and h.objects(r.SERVICES) == []
    h.factory.for_resource(r.SERVICES).informer().get_indexer().replace([], "")  # the Service's deletion seen first
    h.cs.clear_actions()
    h.sync(NAME)  # the cache still has the job and its running pod; the API server says the job is gone
    assert h.actions("create", "services") == [] and h.actions("create", "pods") == []


def test_va_waits_pending_for_its_model(va):
    h = step(va())
    st = status(h)
    assert st["phase"] == "Pending" and "conditions" not in st and h.objects(r.PODS) == []
    assert any(e[1] == "ModelNotFound" for e in h.events())
    h.client(r.MODELS).create(model("detector", "/models/yolo.pth"))
    h.refresh()
    h.controller.wake_referencing(r.MODELS, h.client(r.MODELS).get("detector"))
    assert h.controller.queue.get()[0] == f"{NS}/{NAME}"
    step(h)
    assert env_of(the_pod(h))["MODEL_URL"] == "/home/data/models/yolo.pth" and status(h)["phase"] == "Running"
    h.update_spec(NAME, lambda spec: None)
    h.client(r.MODELS).update({**h.client(r.MODELS).get("detector"), "spec": {"url": "/models/v2.pth", "format": "pth"}})
    h.refresh()
    h.cs.clear_actions()
    step(h)  # the Model changed: the running pod is rebuilt
    assert len(h.actions("delete", "pods")) == 1
    assert env_of(h.actions("create", "pods")[0].object)["MODEL_URL"] == "/home/data/models/v2.pth"


def test_a_running_va_pod_keeps_running_when_its_model_goes(va):
    h = step(va(model("detector", "/models/yolo.pth")))
    pod = the_pod(h)
    h.client(r.MODELS).delete("detector")
    h.refresh()
    h.cs.clear_actions()
    step(h)
    assert h.actions("delete", "pods") == [] and meta.name(the_pod(h)) == meta.name(pod)
    assert status(h)["phase"] == "Running" and status(h)["active"] == 1
    set_phase(h, pod, "Succeeded")
    step(h)
    assert status(h)["phase"] == "Succeeded"
