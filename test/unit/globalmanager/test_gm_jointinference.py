"""JointInferenceService controller with the fake clientset: workers and their exact contract, status from the
Deployments' health, missing Models, spec updates in place (Sedna's ``Test_updateService``), self-healing, cascade,
downstream and upstream."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sedna_test_helpers import NS, env_of, model, s3_secret

from apis import meta
from apis import resources as r
from globalmanager.controllers.jointinference import KIND as JOINT_INFERENCE
from globalmanager.runtime.edge import DELETE, INSERT, UPDATE
from reconcile import Result

NAME = "test-ji-service"
CLOUD_DEPLOY = f"{NAME}-deployment-cloud"
EDGE_DEPLOY = f"{NAME}-deployment-edge"
HPAS = r.HORIZONTAL_POD_AUTOSCALERS


def service(name: str = NAME, **edge_extra: Any) -> dict[str, Any]:
    edge = {
        "model": {"name": "test-edge-model"},
        "hardExampleMining": {"name": "IBT", "parameters": [{"key": "param1", "value": "value1"}]},
        "template": {"spec": {"nodeName": "edge-node-1",
                              "containers": [{"name": "edge-container", "image": "edge-image:v1"}]}},
    }
    edge.update(edge_extra)
    return {
        "apiVersion": "sedna.io/v1alpha1", "kind": "JointInferenceService",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "edgeWorker": edge,
            "cloudWorker": {"model": {"name": "test-cloud-model"},
                            "template": {"spec": {"containers": [{"name": "cloud-container", "image": "cloud-image:v1"}]}}},
        },
    }


MODELS = (model("test-cloud-model", "s3://models/big/model.pb", credential="s3-secret"),
          model("test-edge-model", "/models/little/model.pb"), s3_secret())


@pytest.fixture
def ji(make_sedna_harness):
    def make(*objects: dict[str, Any], with_models: bool = True) -> Any:
        h = make_sedna_harness(JOINT_INFERENCE, r.JOINT_INFERENCE_SERVICES, *objects,
                               *(MODELS if with_models else ()), lc_server="http://lc:9100")
        h.refresh()
        return h
    return make


def started(ji, *objects: dict[str, Any], **edge_extra: Any) -> Any:
    h = ji(service(**edge_extra), *objects)
    assert h.sync(NAME) is None
    h.refresh()
    return h


def make_available(h, name: str, available: bool = True) -> None:
    h.set_status(r.DEPLOYMENTS, name, {"observedGeneration": 1, "availableReplicas": 1 if available else 0, "conditions": [
        {"type": "Available", "status": "True" if available else "False", "reason": "MinimumReplicasAvailable"},
        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]})


def make_failed(h, name: str) -> None:
    h.set_status(r.DEPLOYMENTS, name, {"conditions": [
        {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"},
        {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
         "message": f'ReplicaSet "{name}-x" has timed out progressing.'}]})


def last(h) -> dict[str, Any]:
    return h.conditions(NAME)[-1]


def test_creates_cloud_deployment_service_and_edge_deployment_with_sednas_env(ji):
    h = started(ji)
    svc = h.job(NAME)
    assert h.names(r.DEPLOYMENTS) == [CLOUD_DEPLOY, EDGE_DEPLOY]
    cloud, edge = (h.client(r.DEPLOYMENTS).get(n) for n in (CLOUD_DEPLOY, EDGE_DEPLOY))
    for d, worker_type in ((cloud, "cloud"), (edge, "edge")):
        assert meta.is_controlled_by(d, svc)
        labels = {"jointinferenceservice.sedna.io/name": NAME, "jointinferenceservice.sedna.io/uid": meta.uid(svc),
                  "jointinferenceservice.sedna.io/worker-type": worker_type,
                  "app.sedna.io": f"{NAME}-{worker_type.capitalize()}-svc"}
        assert meta.labels(d) == labels and d["spec"]["selector"]["matchLabels"] == labels
        assert d["spec"]["template"]["metadata"]["labels"] == labels
        assert "replicas" not in d["spec"]
    cloud_env, edge_env = env_of(cloud), env_of(edge)
    assert cloud_env.pop("WORKER_NAME").startswith("cloudworker-")
    assert cloud_env == {"BIG_MODEL_BIND_PORT": "5000", "NAMESPACE": NS, "SERVICE_NAME": NAME, "JOB_NAME": NAME,
                         "MODEL_URL": "/downloads/models/big/model.pb"}
    assert edge_env.pop("WORKER_NAME").startswith("edgeworker-")
    assert edge_env == {
        "DATA_PATH_PREFIX": "/home/data", "BIG_MODEL_IP": f"{NAME}-cloud.{NS}", "BIG_MODEL_PORT": "5000",
        "HEM_NAME": "IBT", "HEM_PARAMETERS": '[{"key":"param1","value":"value1"}]', "LC_SERVER": "http://lc:9100",
        "NAMESPACE": NS, "SERVICE_NAME": NAME, "JOB_NAME": NAME, "MODEL_URL": "/home/data/models/little/model.pb"}
    # the cloud model is in S3: downloaded by the storage initializer with the model's credentials
    init = cloud["spec"]["template"]["spec"]["initContainers"][0]
    assert init["image"] == "kubeedge/sedna-storage-initializer:v0.3.0"
    assert init["args"] == ["s3://models/big/model.pb", "/downloads/models/big/"]
    assert {e["name"]: e["value"] for e in init["env"]} == {
        "S3_ENDPOINT_URL": "http://minio.local:9000", "ACCESS_KEY_ID": "AKID", "SECRET_ACCESS_KEY": "SECRET",
        "INDIRECT_URL_MARK": "@"}
    assert "ACCESS_KEY_ID" not in cloud_env  # downloaded mounts give credentials to the initializer only
    edge_volumes = edge["spec"]["template"]["spec"]["volumes"]
    assert edge_volumes == [{"name": "models-littlez", "hostPath": {"path": "/models/little/", "type": "Directory"}}]
    (svc_obj,) = h.objects(r.SERVICES)
    assert meta.name(svc_obj) == f"{NAME}-cloud" and meta.is_controlled_by(svc_obj, svc)
    assert svc_obj["spec"]["ports"] == [{"name": "tcp-0", "protocol": "TCP", "port": 5000, "targetPort": 5000}]
    assert svc_obj["spec"]["selector"]["jointinferenceservice.sedna.io/worker-type"] == "cloud"
    status = svc["status"]
    assert status["startTime"] and status["active"] == 2 and status["failed"] == 0
    assert [c["type"] for c in status["conditions"]] == ["Pending"]
    (created,) = [e[2] for e in h.events() if e[1] == "SuccessfulCreate"]  # one Event for the sync's creations
    assert created.count("deployment ") == 2 and f"service {NAME}-cloud" in created, created


def test_status_follows_deployment_health_and_a_failed_service_recovers(ji):
    h = started(ji)
    make_available(h, CLOUD_DEPLOY)
    h.refresh()
    h.sync(NAME)
    assert last(h)["type"] == "Pending"  # one worker still progressing: not a failure
    make_available(h, EDGE_DEPLOY)
    h.refresh()
    h.sync(NAME)
    assert last(h)["type"] == "Running" and h.job(NAME)["status"]["active"] == 2
    make_failed(h, EDGE_DEPLOY)
    h.refresh()
    h.sync(NAME)
    cond = last(h)
    assert cond["type"] == "Failed" and cond["reason"] == "workerFailed" and "timed out progressing" in cond["message"]
    status = h.job(NAME)["status"]
    assert status["active"] == 1 and status["failed"] == 1
    assert ("Warning", "workerFailed", cond["message"]) in h.events()
    h.sync(NAME)
    assert len(h.conditions(NAME)) == 3  # a repeated sync appends nothing
    make_available(h, EDGE_DEPLOY)
    h.refresh()
    h.sync(NAME)
    assert [c["type"] for c in h.conditions(NAME)] == ["Pending", "Running", "Failed", "Running"]
    assert h.job(NAME)["status"]["failed"] == 0


def test_a_missing_model_fails_the_service_until_the_model_appears(ji):
    h = ji(service(), model("test-cloud-model"), with_models=False)
    h.sync(NAME)
    cond = last(h)
    assert cond["type"] == "Failed" and cond["reason"] == "ModelNotFound"
    assert "model default/test-edge-model of the edge worker not found" in cond["message"]
    assert h.names(r.DEPLOYMENTS) == [CLOUD_DEPLOY]  # the cloud worker does not wait for the edge model
    assert ("Warning", "ModelNotFound", cond["message"]) in h.events()
    # the Model informer wakes exactly the services that use it (found through the job index)
    other = service("other")
    other["spec"]["edgeWorker"]["model"]["name"] = "unrelated"
    h.jobs.create(other)
    h.client(r.MODELS).create(model("test-edge-model"))
    h.refresh()
    h.controller.wake_referencing(r.MODELS, h.client(r.MODELS).get("test-edge-model"))
    assert h.controller.queue.len() == 1 and h.controller.queue.get()[0] == f"{NS}/{NAME}"
    h.sync(NAME)
    assert h.names(r.DEPLOYMENTS) == [CLOUD_DEPLOY, EDGE_DEPLOY]
    assert last(h)["type"] == "Pending"


def test_update_service_updates_only_the_changed_worker_in_place(ji):
    """Sedna's Test_updateService: the HEM parameter changes from value1 to value2."""
    h = started(ji)
    old, new = h.update_spec(NAME, lambda spec: spec["edgeWorker"]["hardExampleMining"]["parameters"][0].update(value="value2"))
    assert meta.generation(new) == 2
    h.cs.clear_actions()
    h.controller.update_job(old, new)
    h.refresh()
    h.sync(NAME)
    updates = h.actions("update", "deployments")
    assert [a.object["metadata"]["name"] for a in updates] == [EDGE_DEPLOY]
    edge = h.client(r.DEPLOYMENTS).get(EDGE_DEPLOY)
    assert env_of(edge)["HEM_PARAMETERS"] == '[{"key":"param1","value":"value2"}]'
    assert h.actions("create", "deployments") == [] and h.actions("delete", "deployments") == []
    assert h.job(NAME)["spec"]["edgeWorker"]["hardExampleMining"]["parameters"][0]["value"] == "value2"
    assert [a for a in h.cs.actions() if a.resource == "jointinferenceservices" and a.verb == "update"
            and a.subresource != "status"] == []  # the service itself is never written back
    h.refresh()
    h.cs.clear_actions()
    h.sync(NAME)
    assert h.actions("update", "deployments") == []  # up to date now


def test_hpa_follows_the_spec(ji):
    hpa = {"minReplicas": 1, "maxReplicas": 3,
           "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]}
    h = started(ji, hpa=hpa)
    (obj,) = h.objects(HPAS)
    assert meta.name(obj) == f"hpa-{EDGE_DEPLOY}"
    assert obj["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": EDGE_DEPLOY}
    assert obj["spec"]["maxReplicas"] == 3 and obj["spec"]["minReplicas"] == 1 and obj["spec"]["metrics"] == hpa["metrics"]
    assert meta.labels(obj)["jointinferenceservice.sedna.io/worker-type"] == "edge"
    h.update_spec(NAME, lambda spec: spec["edgeWorker"]["hpa"].update(maxReplicas=5))
    h.refresh()
    h.cs.clear_actions()
    h.sync(NAME)
    assert h.client(HPAS).get(f"hpa-{EDGE_DEPLOY}")["spec"]["maxReplicas"] == 5
    assert h.actions("update", "deployments") == []  # an HPA change does not restart the worker
    h.update_spec(NAME, lambda spec: (spec["edgeWorker"].pop("hpa"), spec["cloudWorker"].update(hpa={"maxReplicas": 2})))
    h.refresh()
    h.sync(NAME)
    assert h.names(HPAS) == [f"hpa-{CLOUD_DEPLOY}"]


def test_a_deleted_deployment_is_recreated_at_most_once_per_5_seconds_and_never_after_the_service(ji):
    h = started(ji)
    first = h.client(r.DEPLOYMENTS).get(EDGE_DEPLOY)
    h.client(r.DEPLOYMENTS).delete(EDGE_DEPLOY)
    h.cs.clear_actions()
    h.controller.delete_deployment(first)
    assert [a.object["metadata"]["name"] for a in h.actions("create", "deployments")] == [EDGE_DEPLOY]
    assert h.controller.queue.len() == 1
    # deleted again at once: neither the handler nor the sync recreates it within 5 s
    second = h.client(r.DEPLOYMENTS).get(EDGE_DEPLOY)
    h.client(r.DEPLOYMENTS).delete(EDGE_DEPLOY)
    h.controller.delete_deployment(second)
    h.refresh()
    h.sync(NAME)
    assert len(h.actions("create", "deployments")) == 1
    h.timer.advance(5.1)
    h.sync(NAME)
    assert len(h.actions("create", "deployments")) == 2 and EDGE_DEPLOY in h.names(r.DEPLOYMENTS)
    # the service is deleted: its cascade removes the Deployments, and they are not recreated
    h.refresh()
    h.timer.advance(5.1)
    h.cs.clear_actions()
    doomed = h.client(r.DEPLOYMENTS).get(CLOUD_DEPLOY)
    h.jobs.delete(NAME)
    assert h.names(r.DEPLOYMENTS) == [] and h.names(r.SERVICES) == []  # ownerReferences cascade
    h.controller.delete_deployment(doomed)  # the cache still has the service
    assert h.actions("create", "deployments") == []


def test_downstream_goes_to_the_edge_node(ji):
    h = ji(service())
    svc = h.job(NAME)
    h.controller.add_job(svc)
    assert [(m.node, m.operation, m.obj["kind"]) for m in h.edge.sent] == [("edge-node-1", INSERT, "JointInferenceService")]
    old, new = h.update_spec(NAME, lambda spec: spec["edgeWorker"]["template"]["spec"].update(nodeName="edge-node-2"))
    h.controller.update_job(old, new)
    h.controller.delete_job(new)
    assert [(m.node, m.operation) for m in h.edge.sent[1:]] == [
        ("edge-node-1", DELETE), ("edge-node-2", UPDATE), ("edge-node-2", DELETE)]


def test_upstream_owner_info_becomes_metrics_without_clobbering_conditions(ji):
    h = started(ji)
    stale = h.job(NAME)  # the controller's cache is behind: the report is applied on a fresh copy
    h.set_status(r.JOINT_INFERENCE_SERVICES, NAME, {**stale["status"], "conditions": [*stale["status"]["conditions"],
                 {"type": "Running", "status": "True"}]})
    h.edge.report("edge-node-1", NS, "JointInferenceService", NAME, {
        "phase": "inference", "status": "running",
        "output": {"ownerInfo": {"inferenceNumber": 10, "hardExampleNumber": 2, "uploadCloudRatio": 0.2,
                                 "startTime": "t0", "updateTime": "t1"}}})
    status = h.job(NAME)["status"]
    assert status["metrics"] == [{"key": "hardExampleNumber", "value": "2"}, {"key": "inferenceNumber", "value": "10"},
                                 {"key": "uploadCloudRatio", "value": "0.2"}]
    assert [c["type"] for c in status["conditions"]] == ["Pending", "Running"]
    # a report without ownerInfo changes nothing; a GM status write keeps the metrics
    h.edge.report("edge-node-1", NS, "jointinferenceservice", NAME, {"phase": "inference", "status": "running"})
    make_available(h, CLOUD_DEPLOY)
    h.refresh()
    h.sync(NAME)
    assert h.job(NAME)["status"]["metrics"] == status["metrics"]


def test_a_name_too_long_for_the_cloud_service_is_an_invalid_spec(ji):
    long_name = "j" * 60
    h = ji(service(long_name))
    h.sync(long_name)
    cond = h.conditions(long_name)[-1]
    assert cond["type"] == "Failed" and cond["reason"] == "InvalidSpec" and "metadata.name" in cond["message"]
    assert h.names(r.DEPLOYMENTS) == []
    assert ("Warning", "InvalidSpec", cond["message"]) in h.events()


def test_a_spec_the_typed_view_rejects_is_an_invalid_spec_naming_the_field(ji):
    """It used to raise from the Model index and every sync (AttributeError), retried for good, with no status."""
    bad = service()
    bad["spec"]["cloudWorker"] = "oops"
    h = ji(bad)
    assert h.sync(NAME) is None
    cond = last(h)
    assert (cond["type"], cond["reason"]) == ("Failed", "InvalidSpec") and cond["message"].startswith("spec.cloudWorker:")
    assert h.job(NAME)["status"]["failed"] == 2
    assert h.names(r.DEPLOYMENTS) == [] and h.names(r.SERVICES) == []
    h.controller.add_job(h.job(NAME))  # not sent to the edge: its node cannot be read
    assert h.edge.sent == []


def test_label_values_derived_from_a_long_name_stay_valid(ji):
    name = "n" * 55  # the Service name <name>-cloud fits, the label <name>-Cloud-svc would not
    h = ji(service(name))
    h.sync(name)
    d = h.client(r.DEPLOYMENTS).get(f"{name}-deployment-cloud")
    app = meta.labels(d)["app.sedna.io"]
    assert len(app) <= 63 and app.startswith("n" * 40) and app != f"{name}-Cloud-svc"
    assert meta.labels(d)["jointinferenceservice.sedna.io/name"] == name


def test_a_missing_secret_is_retried_with_backoff(ji):
    h = ji(service(), model("test-cloud-model", "s3://b/m", credential="nope"), model("test-edge-model"), with_models=False)
    assert h.sync(NAME) == Result(requeue=True)  # the key keeps its rate-limit history: retried with growing waits
    assert last(h)["reason"] == "SecretNotFound"
    h.controller.queue.add(f"{NS}/{NAME}")
    h.controller.process_next_work_item()  # as a worker runs it: requeued after its rate-limited delay
    assert h.controller.queue.num_requeues(f"{NS}/{NAME}") == 1


def test_hem_parameters_json_matches_go(ji):
    from apis.sedna.v1alpha1 import HardExampleMining
    from globalmanager.controllers.jointinference.workers import hem_parameters

    assert hem_parameters(None) == "null"
    assert hem_parameters(HardExampleMining.from_dict({"name": "IBT"})) == "null"
    assert hem_parameters(HardExampleMining.from_dict({"parameters": []})) == "[]"
    params = [{"key": "a<b", "value": "x&y"}]
    assert json.loads(hem_parameters(HardExampleMining.from_dict({"parameters": params}))) == params
    assert "\\u003c" in hem_parameters(HardExampleMining.from_dict({"parameters": params}))
    # IncrementalLearning passes its plain deploySpec
    assert hem_parameters({"hardExampleMining": {"name": "IBT"}}) == "null"
    assert json.loads(hem_parameters({"hardExampleMining": {"parameters": params}})) == params
