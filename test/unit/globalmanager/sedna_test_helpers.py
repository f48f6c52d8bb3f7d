"""A Sedna controller over a FakeClientset whose informer caches mirror the fake API server only on ``refresh()``
(as Go unit tests fill ``informer.GetIndexer()``), so nothing runs in the background and every step is explicit."""

from __future__ import annotations

import functools
from typing import Any

from prometheus_client import CollectorRegistry

from apis import meta
from apis import resources as r
from apis.fake import FakeClientset
from apis.record import EventRecorder
from globalmanager.runtime.edge import RecordingEdgeLink
from globalmanager.runtime.jobcontroller import JobController
from globalmanager.runtime.kind import Kind
from informers import SharedInformerFactory

NS = "default"
NOW = "2026-01-02T03:04:05Z"


class FakeTimer:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def model(name: str, url: str = "/models/m.pb", credential: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"url": url, "format": "pb"}
    if credential:
        spec["credentialName"] = credential
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "Model", "metadata": {"name": name, "namespace": NS}, "spec": spec}


def dataset(name: str, url: str = "/data/train.txt", node: str = "edge-node-1", credential: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"url": url, "format": "txt", "nodeName": node}
    if credential:
        spec["credentialName"] = credential
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": name, "namespace": NS}, "spec": spec}


def s3_secret(name: str = "s3-secret") -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": NS, "annotations": {"s3-endpoint": "minio.local:9000", "s3-usehttps": "0"}},
        "data": {"ACCESS_KEY_ID": "QUtJRA==", "SECRET_ACCESS_KEY": "U0VDUkVU"},  # AKID, SECRET
    }


def env_of(obj: dict[str, Any]) -> dict[str, str]:
    """The first container's env as a dict (a pod, or a Deployment's template)."""
    spec = obj["spec"]["template"]["spec"] if obj.get("kind") == "Deployment" or "template" in obj["spec"] else obj["spec"]
    return {e["name"]: e.get("value") for e in spec["containers"][0].get("env") or []}


class Harness:
    """``controller_cls(cs, factory, 1, ...)`` with an edge link, a fake timer and fixed time."""

    def __init__(self, controller_cls: Any, job_resource: Any, *objects: dict[str, Any], **kwargs: Any) -> None:
        self.cs = FakeClientset(*objects)
        self.factory = SharedInformerFactory(self.cs)
        self.timer = FakeTimer()
        self.edge = RecordingEdgeLink()
        self.job_resource = job_resource
        build = functools.partial(JobController, controller_cls) if isinstance(controller_cls, Kind) else controller_cls
        self.controller = build(
            self.cs, self.factory, 1, recorder=EventRecorder(self.cs, "sedna-gm"), registry=CollectorRegistry(),
            recreation_timer=self.timer, now=lambda: NOW, edge=self.edge, **kwargs,
        )

    def client(self, gvr: Any) -> Any:
        return self.cs.resource(gvr, NS)

    @property
    def jobs(self) -> Any:
        return self.client(self.job_resource)

    def refresh(self) -> None:
        """Make every informer cache of the controller equal to the fake API server's state."""
        gvrs = [self.job_resource, *self.controller.owned_informers, r.MODELS, r.DATASETS]
        for gvr in gvrs:
            info = r.lookup(gvr)
            items = self.cs.resource(gvr, "").list()["items"]
            for item in items:
                item.setdefault("apiVersion", info.gvk.api_version)
                item.setdefault("kind", info.kind)
            self.factory.for_resource(gvr).informer().get_indexer().replace(items, "")

    def sync(self, name: str) -> Any:
        return self.controller.sync(f"{NS}/{name}")

    def job(self, name: str) -> dict[str, Any]:
        return self.jobs.get(name)

    def objects(self, gvr: Any) -> list[dict[str, Any]]:
        return self.client(gvr).list()["items"]

    def names(self, gvr: Any) -> list[str]:
        return sorted(meta.name(o) for o in self.objects(gvr))

    def events(self) -> list[tuple[str, str, str]]:
        return [(e["type"], e["reason"], e["message"]) for e in self.cs.core_v1().events(NS).list()["items"]]

    def actions(self, verb: str, resource: str) -> list[Any]:
        return [a for a in self.cs.actions() if a.verb == verb and a.resource == resource]

    def conditions(self, name: str) -> list[dict[str, Any]]:
        return (self.job(name).get("status") or {}).get("conditions") or []

    def set_status(self, gvr: Any, name: str, status: dict[str, Any]) -> dict[str, Any]:
        obj = self.client(gvr).get(name)
        obj["status"] = status
        return self.client(gvr).update_status(obj)

    def update_spec(self, name: str, change: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """Apply ``change(spec)`` to the job through the API; returns (old, new) as handlers receive them."""
        old = self.job(name)
        new = meta.deep_copy(old)
        change(new["spec"])
        return old, self.jobs.update(new)

    def close(self) -> None:
        self.controller.queue.shut_down()
