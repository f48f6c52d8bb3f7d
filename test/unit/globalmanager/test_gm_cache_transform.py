"""What sedna-gm's informers cache: ``strip_unread_fields`` drops ``managedFields`` everywhere and the
last-applied annotation of the custom resources, never changes an object in place, and the GM's own informer
factory applies it to what is cached and to what handlers get, while the controllers still reconcile."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from testkit import wait_for

from apis import meta
from apis.fake import FakeClientset
from apis.resources import ELASTIC_AI_JOBS, PODS
from globalmanager.app import GlobalManager
from globalmanager.config import GMConfig
from globalmanager.runtime.cachetransform import LAST_APPLIED_ANNOTATION, strip_unread_fields
from informers import ResourceEventHandlerFuncs

MANAGED = [
    {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1", "time": "2026-01-02T03:04:05Z",
     "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}},
    {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2026-01-02T03:04:06Z",
     "fieldsType": "FieldsV1", "subresource": "status", "fieldsV1": {"f:status": {"f:phase": {}}}},
]


def with_server_fields(obj: dict[str, Any], applied: bool = True) -> dict[str, Any]:
    """``obj`` as kube-apiserver serves it after a ``kubectl apply``: managedFields and the last-applied annotation."""
    out = meta.deep_copy(obj)
    md = out.setdefault("metadata", {})
    md["managedFields"] = meta.deep_copy(MANAGED)
    if applied:
        md.setdefault("annotations", {})[LAST_APPLIED_ANNOTATION] = '{"apiVersion":"x","kind":"y"}'
    return out


JOB = {"apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob",
       "metadata": {"name": "mnist", "namespace": "default", "annotations": {"team": "vision"}},
       "spec": {"jobArgs": ["--model_zoo /model_zoo"], "master": {"image": "elasticdl:ci"}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "labels": {"app": "a"}},
       "spec": {"containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Running"}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
              "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}


def test_managed_fields_go_from_every_object_and_nothing_else_changes():
    for obj in (POD, DEPLOYMENT, JOB):
        served = with_server_fields(obj, applied=False)
        before = meta.deep_copy(served)
        stripped = strip_unread_fields(served)
        assert "managedFields" not in stripped["metadata"]
        assert stripped == obj  # all the rest is there
        assert served == before  # the given object is not changed


def test_last_applied_goes_from_custom_resources_only():
    job = strip_unread_fields(with_server_fields(JOB))
    assert job["metadata"]["annotations"] == {"team": "vision"}
    # built-in kinds are written back whole (Deployments, HPAs) or recreated (pods, Deployments): they keep it
    for obj in (POD, DEPLOYMENT):
        kept = strip_unread_fields(with_server_fields(obj))
        assert LAST_APPLIED_ANNOTATION in kept["metadata"]["annotations"]
        assert "managedFields" not in kept["metadata"]


def test_an_object_with_nothing_to_strip_is_returned_as_it_is_and_stripping_is_idempotent():
    assert strip_unread_fields(POD) is POD
    once = strip_unread_fields(with_server_fields(JOB))
    assert strip_unread_fields(once) is once
    for odd in (None, "x", {"metadata": None}, {"kind": "Pod"}):
        assert strip_unread_fields(odd) is odd


def test_the_stripped_copy_shares_spec_and_status():
    served = with_server_fields(POD)
    stripped = strip_unread_fields(served)
    assert stripped["spec"] is served["spec"] and stripped["status"] is served["status"]


class CacheProbe:
    """A controller that only records what the shared informers hand to handlers."""

    name = "CacheProbe"

    def __init__(self, ctx: Any) -> None:
        self.factory = ctx.informer_factory
        self.seen: list[dict[str, Any]] = []
        self.synced = threading.Event()  # read by sedna-gm: readiness, and the edge server waits for every controller
        self.informers = [self.factory.for_resource(gvr).informer() for gvr in (PODS, ELASTIC_AI_JOBS)]
        for informer in self.informers:
            informer.add_event_handler(ResourceEventHandlerFuncs(
                add_func=self.seen.append, update_func=lambda _old, new: self.seen.append(new)))

    def run(self, stop: threading.Event) -> None:
        wait_for("the probe's caches", lambda: all(i.has_synced() for i in self.informers))
        self.synced.set()
        stop.wait()

    def cached(self) -> list[dict[str, Any]]:
        return [obj for informer in self.informers for obj in informer.get_indexer().list()]


@pytest.fixture
def probe(register_controller):
    probes: list[CacheProbe] = []
    register_controller("CacheProbe", lambda ctx: probes.append(CacheProbe(ctx)) or probes[-1])
    return probes


def test_sedna_gm_caches_and_hands_out_stripped_objects_and_its_controllers_still_reconcile(probe):
    job = with_server_fields(JOB)
    foreign = with_server_fields(POD)  # a pod of nobody, applied with kubectl
    cs = FakeClientset(job, foreign)
    cfg = GMConfig(controllers=["ElasticAIJob", "CacheProbe"])
    cfg.websocket.address, cfg.websocket.port = "127.0.0.1", 0
    gm = GlobalManager(cfg, clientset=cs, registry=CollectorRegistry())
    stop = threading.Event()
    runner = threading.Thread(target=gm.run_controllers, args=(stop,), daemon=True)
    runner.start()
    try:
        jobs, pods = cs.resource(ELASTIC_AI_JOBS, "default"), cs.resource(PODS, "default")
        # the server keeps what the cache drops
        assert "managedFields" in jobs.get("mnist")["metadata"] and "managedFields" in pods.get("p")["metadata"]
        master = wait_for("the master pod", lambda: next(iter(
            p for p in pods.list()["items"] if meta.name(p) == "elasticdl-mnist-master"), None))
        running = meta.deep_copy(master)
        running["status"] = {"phase": "Running"}
        running["metadata"]["managedFields"] = meta.deep_copy(MANAGED)
        pods.update_status(running)
        wait_for("the job to follow its master", lambda: (jobs.get("mnist").get("status") or {}).get("phase")
                 == "Running")

        (p,) = probe
        names = {meta.name(o) for o in p.cached()}
        assert {"mnist", "p", "elasticdl-mnist-master"} <= names
        for obj in [*p.cached(), *p.seen]:
            assert "managedFields" not in obj["metadata"], meta.name(obj)
        by_name = {meta.name(o): o for o in p.cached()}
        assert LAST_APPLIED_ANNOTATION not in meta.annotations(by_name["mnist"])
        assert meta.annotations(by_name["mnist"])["team"] == "vision"
        assert LAST_APPLIED_ANNOTATION in meta.annotations(by_name["p"])  # a built-in kind keeps it
        # status writes from the stripped cache never dropped the annotation on the server
        assert LAST_APPLIED_ANNOTATION in meta.annotations(jobs.get("mnist"))
    finally:
        stop.set()
        runner.join(15)
