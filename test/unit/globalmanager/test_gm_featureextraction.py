"""FeatureExtractionService controller with the fake clientset: the worker Deployment and Service with Sedna's exact
contract, status from the Deployment's health (Go Sedna's 3-deployments, nil-replicas and empty-mount bugs fixed),
spec updates in place, self-healing, cascade, a missing Model, and ``ownerInfo`` reports."""

from __future__ import annotations

from typing import Any

import pytest
from sedna_test_helpers import NS, env_of, model, s3_secret

from apis import meta
from apis import resources as r
from apis.sedna.v1alpha1 import FeatureExtractionService
from globalmanager.controllers.featureextraction import KIND as FEATURE_EXTRACTION
from globalmanager.controllers.featureextraction.workers import worker_param

NAME = "test-fe"
DEPLOY = f"{NAME}-deployment-fe"


def fe_service(name: str = NAME, **spec_extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "kafkaSupport": True,
        "model": {"name": "fe-model"},
        "replicas": 2,
        "selector": {"matchLabels": {"app": "fe"}},
        "template": {"metadata": {"labels": {"app": "fe"}},
                     "spec": {"containers": [{"name": "fe", "image": "fe:v1", "env": [{"name": "input_shape", "value": "256,128"}]}]}},
    }
    spec.update(spec_extra)
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "FeatureExtractionService",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


@pytest.fixture
def fe(make_sedna_harness):
    def make(*objects: dict[str, Any], with_model: bool = True) -> Any:
        refs = (model("fe-model", "/models/fe/m3l.pth"),) if with_model else ()
        h = make_sedna_harness(FEATURE_EXTRACTION, r.FEATURE_EXTRACTION_SERVICES, *objects, *refs,
                               lc_server="http://lc:9100")
        h.refresh()
        return h
    return make


def started(fe, service: dict[str, Any] | None = None) -> Any:
    h = fe(service or fe_service())
    assert h.sync(meta.name(service or fe_service())) is None
    h.refresh()
    return h


def set_health(h, available: bool = True, failed: bool = False) -> None:
    conditions = [{"type": "Available", "status": "True" if available else "False"}]
    if failed:
        conditions.append({"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                           "message": f'ReplicaSet "{DEPLOY}-1" has timed out progressing.'})
    h.set_status(r.DEPLOYMENTS, DEPLOY, {"conditions": conditions})
    h.refresh()


def types(h, name: str = NAME) -> list[str]:
    return [c["type"] for c in h.conditions(name)]


def test_creates_the_deployment_and_service_with_sednas_contract(fe):
    h = started(fe)
    svc = h.job(NAME)
    (d,) = h.objects(r.DEPLOYMENTS)
    assert meta.name(d) == DEPLOY and meta.is_controlled_by(d, svc)
    labels = {"featureextractionservice.sedna.io/name": NAME, "featureextractionservice.sedna.io/uid": meta.uid(svc),
              "featureextractionservice.sedna.io/worker-type": "fe", "app.sedna.io": f"{NAME}-fe-svc"}
    assert meta.labels(d) == labels
    assert d["spec"]["selector"] == {"matchLabels": labels}  # Sedna keeps only replicas and template of the spec
    assert d["spec"]["template"]["metadata"]["labels"] == {"app": "fe", **labels}
    assert d["spec"]["replicas"] == 2
    env = env_of(d)
    worker_name = env.pop("WORKER_NAME")
    assert len(worker_name) == 5 and worker_name.isalnum()
    assert env == {"input_shape": "256,128", "NAMESPACE": NS, "SERVICE_NAME": NAME, "LC_SERVER": "http://lc:9100",
                   "KAFKA_ENABLED": "true", "MODEL_URL": "/home/data/models/fe/m3l.pth", "DATA_PATH_PREFIX": "/home/data"}
    pod_spec = d["spec"]["template"]["spec"]
    assert pod_spec["volumes"] == [{"name": "models-fez", "hostPath": {"path": "/models/fe/", "type": "Directory"}}]
    assert pod_spec["containers"][0]["volumeMounts"] == [{"name": "models-fez", "mountPath": "/home/data/models/fe/"}]
    (service,) = h.objects(r.SERVICES)
    assert meta.name(service) == f"{NAME}-fe" and meta.is_controlled_by(service, svc)
    assert service["spec"]["ports"] == [{"name": "tcp-0", "protocol": "TCP", "port": 6000, "targetPort": 6000}]
    assert service["spec"]["selector"]["featureextractionservice.sedna.io/worker-type"] == "fe"
    status = svc["status"]
    assert status["startTime"] and status["active"] == 1 and status["failed"] == 0 and types(h) == ["Pending"]


def test_a_healthy_service_is_never_failed_by_counting_3_deployments(fe):
    """Go Sedna wanted as many Deployments as its spec type has fields (3): every service Failed at its 2nd sync."""
    h = started(fe)
    h.sync(NAME)
    h.sync(NAME)
    assert types(h) == ["Pending"]
    set_health(h)
    h.sync(NAME)
    status = h.job(NAME)["status"]
    assert types(h) == ["Pending", "Running"] and status["active"] == 1 and status["failed"] == 0


def test_without_replicas_the_deployment_leaves_them_to_the_api_server(fe):
    """Go Sedna dereferenced a nil spec.replicas (a panic)."""
    svc = fe_service()
    del svc["spec"]["replicas"]
    h = started(fe, svc)
    assert "replicas" not in h.client(r.DEPLOYMENTS).get(DEPLOY)["spec"]
    assert types(h) == ["Pending"]


def test_the_worker_has_exactly_the_model_mount():
    """Go Sedna prepended an empty mount (append(make([]WorkerMount, 1), ...))."""
    svc, plain = fe_service(), fe_service(kafkaSupport=False)
    spec, plain_spec = (FeatureExtractionService.from_dict(s).spec for s in (svc, plain))
    assert spec is not None and plain_spec is not None
    param = worker_param(svc, spec, model("fe-model", "s3://bucket/fe/model.pth", credential="s3"), s3_secret("s3"),
                         "http://lc")
    assert [m.env_name for m in param.mounts] == ["MODEL_URL"]
    assert "KAFKA_ENABLED" not in worker_param(plain, plain_spec, model("m"), None, "http://lc").env


def test_status_follows_the_deployment_and_recovers(fe):
    h = started(fe)
    set_health(h, available=False, failed=True)
    h.sync(NAME)
    cond = h.conditions(NAME)[-1]
    assert cond["type"] == "Failed" and cond["reason"] == "workerFailed" and "timed out progressing" in cond["message"]
    assert h.job(NAME)["status"]["failed"] == 1 and h.job(NAME)["status"]["active"] == 0
    assert ("Warning", "workerFailed", cond["message"]) in h.events()
    set_health(h)
    h.sync(NAME)
    assert types(h) == ["Pending", "Failed", "Running"] and h.job(NAME)["status"]["failed"] == 0


def test_spec_changes_update_the_deployment_in_place(fe):
    h = started(fe)
    worker_name = env_of(h.client(r.DEPLOYMENTS).get(DEPLOY))["WORKER_NAME"]
    h.update_spec(NAME, lambda spec: spec.update(replicas=5))
    h.refresh()
    h.cs.clear_actions()
    h.sync(NAME)
    (update,) = h.actions("update", "deployments")
    d = h.client(r.DEPLOYMENTS).get(DEPLOY)
    assert d["spec"]["replicas"] == 5 and env_of(d)["WORKER_NAME"] == worker_name  # scaled, not rolled
    h.update_spec(NAME, lambda spec: spec["template"]["spec"]["containers"][0].update(image="fe:v2"))
    h.refresh()
    h.cs.clear_actions()
    h.sync(NAME)
    assert len(h.actions("update", "deployments")) == 1
    d = h.client(r.DEPLOYMENTS).get(DEPLOY)
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "fe:v2" and d["spec"]["replicas"] == 5
    assert h.actions("create", "deployments") == [] and h.actions("delete", "deployments") == []
    h.refresh()
    h.cs.clear_actions()
    h.sync(NAME)
    assert h.actions("update", "deployments") == []  # up to date


def test_self_healing_at_most_once_per_5_seconds_and_cascade(fe):
    h = started(fe)
    first = h.client(r.DEPLOYMENTS).get(DEPLOY)
    h.client(r.DEPLOYMENTS).delete(DEPLOY)
    h.client(r.SERVICES).delete(f"{NAME}-fe")
    h.cs.clear_actions()
    h.controller.delete_deployment(first)
    assert len(h.actions("create", "deployments")) == 1
    second = h.client(r.DEPLOYMENTS).get(DEPLOY)
    h.client(r.DEPLOYMENTS).delete(DEPLOY)
    h.controller.delete_deployment(second)
    h.refresh()
    h.sync(NAME)
    assert len(h.actions("create", "deployments")) == 1  # within 5 s: waits
    assert h.names(r.SERVICES) == [f"{NAME}-fe"]  # the Service is made again by sync
    h.timer.advance(5.1)
    h.sync(NAME)
    assert len(h.actions("create", "deployments")) == 2
    h.refresh()
    h.timer.advance(5.1)
    doomed = h.client(r.DEPLOYMENTS).get(DEPLOY)
    h.cs.clear_actions()
    h.jobs.delete(NAME)
    assert h.names(r.DEPLOYMENTS) == [] and h.names(r.SERVICES) == []  # ownerReferences cascade
    h.controller.delete_deployment(doomed)  # the cache still has the service; the API server says it is gone
    for gvr in (r.DEPLOYMENTS, r.SERVICES):  # the workers' deletion seen before the service's
        h.factory.for_resource(gvr).informer().get_indexer().replace([], "")
    h.sync(NAME)
    assert h.actions("create", "deployments") == [] and h.actions("create", "services") == []


def test_a_missing_model_fails_the_service_until_it_appears(fe):
    h = fe(fe_service(), with_model=False)
    h.sync(NAME)
    cond = h.conditions(NAME)[-1]
    assert (cond["type"], cond["reason"]) == ("Failed", "ModelNotFound") and "fe-model" in cond["message"]
    assert h.names(r.DEPLOYMENTS) == []
    h.client(r.MODELS).create(model("fe-model"))
    h.refresh()
    h.controller.wake_referencing(r.MODELS, h.client(r.MODELS).get("fe-model"))
    assert h.controller.queue.get()[0] == f"{NS}/{NAME}"
    h.sync(NAME)
    assert h.names(r.DEPLOYMENTS) == [DEPLOY] and types(h) == ["Failed", "Pending"]


def test_invalid_spec_is_reported(fe):
    h = fe(fe_service(model={}))
    h.sync(NAME)
    cond = h.conditions(NAME)[-1]
    assert (cond["reason"], cond["message"]) == ("InvalidSpec", "spec.model.name is required")


def test_owner_info_reports_become_metrics(fe):
    h = started(fe)
    h.edge.report("cloud-node", NS, "featureextractionservice", NAME, {
        "phase": "inference", "status": "running", "output": {"ownerInfo": {"frames": 12, "updateTime": "t"}}})
    assert h.job(NAME)["status"]["metrics"] == [{"key": "frames", "value": "12"}]
    assert types(h) == ["Pending"]


def test_a_spec_the_typed_view_rejects_is_an_invalid_spec_naming_the_field(fe):
    """It used to raise from the Model index and every sync (AttributeError), retried for good, with no status."""
    h = fe(fe_service(model="fe-model"))
    assert h.sync(NAME) is None
    cond = h.conditions(NAME)[-1]
    assert (cond["type"], cond["reason"]) == ("Failed", "InvalidSpec") and cond["message"].startswith("spec.model:")
    assert h.names(r.DEPLOYMENTS) == [] and h.names(r.SERVICES) == []
