"""What a flow is made of: ``Flow`` (a sample, what shows the controller did its work, the ``Step``s that follow)
and ``FlowRun`` (one flow under way), and ``prepare``: the objects a sample refers to, created in the flow's
namespace (Models, Datasets with their files on the edge node, S3 credential Secrets), and its worker templates
steered (short delays, two rounds)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apis import errors, meta
from apis.resources import lookup_kind

from ..learning import job_history
from ..procs import REPO, metric_value

__all__ = [
    "CREDENTIAL",
    "DATASET_LINES",
    "SAMPLES_DIR",
    "WORKER_STEERING",
    "Flow",
    "FlowRun",
    "Step",
    "create_if_absent",
    "load_sample",
    "prepare",
    "replace_file",
    "templates",
    "write_lines",
]

SAMPLES_DIR = REPO / "charts" / "sedna" / "samples"
DATASET_LINES = 5
CREDENTIAL = "e2e-s3"  # the S3 credential Secret of the Models a sample refers to
WORKER_STEERING = {  # workersim / pod simulator annotations on every worker template
    "sandbox.sedna.io/start-delay-seconds": "0",  # the flows are not about start-up time: pods run at once
    "sandbox.sedna.io/worker-delay-seconds": "0.2",
    "sandbox.sedna.io/worker-rounds": "2",
    "sandbox.sedna.io/worker-period-seconds": "0.5",
}


@dataclass
class FlowRun:
    """One flow under way: the clientset, the namespace, the object (as created), the GM's metrics URL, the edge
    nodes' rootfs and the sandbox's fault knobs (``sandbox.faults.Faults``, to arm conflicts)."""

    cs: Any
    namespace: str
    obj: dict[str, Any]
    gm_url: str
    controller: str
    baseline: float = 0.0  # the controller's work-queue adds before the object was created
    gm_log: Callable[[], str] = lambda: ""  # the GM's JSON log so far
    rootfs: dict[str, Path] = field(default_factory=dict)
    faults: Any = None
    memo: dict[str, Any] = field(default_factory=dict)  # what a step's action leaves for its ``done``

    @property
    def name(self) -> str:
        return meta.name(self.obj)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def client(self, gvr: Any = None) -> Any:
        """The client of ``gvr`` (default: the flow's kind) in the flow's namespace."""
        return self.cs.resource(gvr or lookup_kind(self.obj["apiVersion"], self.obj["kind"]).gvr, self.namespace)

    def current(self) -> dict[str, Any]:
        return self.client().get(self.name)

    def status(self) -> dict[str, Any]:
        return self.current().get("status") or {}

    def conditions(self) -> list[dict[str, Any]]:
        """The object's conditions; a learning job's every condition so far (our GM prunes its finished rounds)."""
        if self.obj["kind"] in ("IncrementalLearningJob", "LifelongLearningJob"):
            resource = "incremental_learning_jobs" if self.obj["kind"] == "IncrementalLearningJob" else "lifelong_learning_jobs"
            return job_history(self.cs, resource, self.namespace, meta.name(self.obj)).conditions()
        return self.status().get("conditions") or []

    def owned(self, gvr: Any) -> list[dict[str, Any]]:
        """The flow object's ``gvr`` objects (controller-owned by it), not being deleted."""
        uid = meta.uid(self.obj)
        return [o for o in self.client(gvr).list()["items"] if meta.deletion_timestamp(o) is None
                and (meta.get_controller_of(o) or {}).get("uid") == uid]

    def queued(self) -> float:
        """Keys added to the controller's work queue so far."""
        return metric_value(self.gm_url + "/metrics", "workqueue_adds_total", name=self.controller) or 0.0

    def idle(self) -> bool:
        """Nothing waits in the controller's work queue."""
        return metric_value(self.gm_url + "/metrics", "workqueue_depth", name=self.controller) == 0


@dataclass(frozen=True)
class Step:
    """What the test does next — ``change`` the object (in place, then written with ``update``) and/or an
    ``action`` (delete a worker, grow a dataset...) — and what shows the controller carried it out."""

    change: Callable[[dict[str, Any]], None] | None
    done: Callable[[FlowRun], bool]
    action: Callable[[FlowRun], None] | None = None


@dataclass(frozen=True)
class Flow:
    """A controller's flow: ``setup`` (before the object exists), create the sample (``adjust``-ed), wait for
    ``done``, then each step in turn; the test then deletes it."""

    sample: str
    done: Callable[[FlowRun], bool]
    annotations: dict[str, str] = field(default_factory=dict)  # on the sample object
    steps: tuple[Step, ...] = ()
    adjust: Callable[[dict[str, Any]], None] | None = None  # the sample made to run in the sandbox (triggers...)
    setup: Callable[[FlowRun], None] | None = None

    def object_for(self, cs: Any, namespace: str, rootfs: dict[str, Path]) -> dict[str, Any]:
        """The sample as this flow creates it in ``namespace``, with what it refers to created first."""
        obj = load_sample(self.sample)
        if self.adjust is not None:
            self.adjust(obj)
        obj = prepare(cs, namespace, obj, rootfs)
        obj["metadata"].setdefault("annotations", {}).update(self.annotations)
        return obj


def load_sample(name: str) -> dict[str, Any]:
    import yaml

    return yaml.safe_load((SAMPLES_DIR / name).read_text())


def templates(spec: Any) -> Iterator[dict[str, Any]]:
    """Every pod template (a ``template`` mapping) in ``spec``, at any depth."""
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key == "template" and isinstance(value, dict):
                yield value
            else:
                yield from templates(value)
    elif isinstance(spec, list):
        for item in spec:
            yield from templates(item)


def _references(spec: Any, out: dict[str, set[str]]) -> None:
    """Model and Dataset names a spec refers to (``model``, ``initialModel``, ``pretrainedModel``, ``dataset``…)
    and the Secrets of ``credentialName``."""
    if isinstance(spec, dict):
        for key, value in spec.items():
            lowered = key.lower()
            if isinstance(value, dict) and isinstance(value.get("name"), str) and lowered.endswith("model"):
                out["models"].add(value["name"])
            elif isinstance(value, dict) and isinstance(value.get("name"), str) and lowered.endswith("dataset"):
                out["datasets"].add(value["name"])
            elif key == "credentialName" and isinstance(value, str):
                out["secrets"].add(value)
            else:
                _references(value, out)
    elif isinstance(spec, list):
        for item in spec:
            _references(item, out)


def _nodes(spec: Any) -> list[str]:
    return [t["spec"]["nodeName"] for t in templates(spec) if (t.get("spec") or {}).get("nodeName")]


def create_if_absent(cs: Any, obj: dict[str, Any]) -> None:
    """Create ``obj`` (in its ``metadata.namespace``) unless an object of that name is there already."""
    info = lookup_kind(obj["apiVersion"], obj["kind"])
    try:
        cs.resource(info.gvr, obj["metadata"].get("namespace", "")).create(obj)
    except errors.AlreadyExistsError:
        pass


def prepare(cs: Any, namespace: str, sample: dict[str, Any], rootfs: dict[str, Path]) -> dict[str, Any]:
    """Create what ``sample`` refers to in ``namespace`` and return the sample ready to create there (steered)."""
    obj = meta.deep_copy(sample)
    obj["metadata"]["namespace"] = namespace
    refs: dict[str, set[str]] = {"models": set(), "datasets": set(), "secrets": set()}
    _references(obj.get("spec") or {}, refs)
    if obj.get("kind") == "Dataset" and obj["spec"].get("nodeName") in rootfs:  # the sample's own index file
        write_lines(rootfs[obj["spec"]["nodeName"]], obj["spec"]["url"])
    if refs["models"]:
        refs["secrets"].add(CREDENTIAL)
    for secret in sorted(refs["secrets"]):
        create_if_absent(cs, {"apiVersion": "v1", "kind": "Secret",
                              "metadata": {"name": secret, "namespace": namespace,
                                           "annotations": {"s3-endpoint": "127.0.0.1:9", "s3-usehttps": "0"}},
                              "stringData": {"ACCESS_KEY_ID": "e2e", "SECRET_ACCESS_KEY": "e2e-secret"}})
    edge_nodes = [n for n in _nodes(obj.get("spec")) if n in rootfs] or sorted(rootfs)
    for i, name in enumerate(sorted(refs["datasets"])):
        node = edge_nodes[i % len(edge_nodes)]
        url = f"/data/{namespace}/{name}/index.txt"
        write_lines(rootfs[node], url)
        create_if_absent(cs, {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset",
                              "metadata": {"name": name, "namespace": namespace},
                              "spec": {"url": url, "format": "txt", "nodeName": node}})
    for name in sorted(refs["models"]):
        url = f"/models/{namespace}/{name}/model.pb"
        for root in rootfs.values():
            path = root / url.lstrip("/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("model\n")
        create_if_absent(cs, {"apiVersion": "sedna.io/v1alpha1", "kind": "Model",
                              "metadata": {"name": name, "namespace": namespace},
                              "spec": {"url": url, "format": "pb", "credentialName": CREDENTIAL}})
    for template in templates(obj.get("spec") or {}):
        annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
        for key, value in WORKER_STEERING.items():
            annotations.setdefault(key, value)  # what ``adjust`` set stays
    return obj


def write_lines(root: Path, url: str, start: int = 0, count: int = DATASET_LINES) -> None:
    """Samples ``start`` … ``start + count - 1`` in the index file at host path ``url`` under ``root``: a new file
    from sample 0, appended to the file from any other; replaced in one step, so an LC never counts half of it."""
    path = root / url.lstrip("/")
    before = path.read_text() if start and path.exists() else ""
    replace_file(path, before + "".join(f"sample-{i}.jpg\n" for i in range(start, start + count)))


def replace_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (and its directory) in one step, through a ``.partial`` file renamed over it: a
    reader (an LC counting a Dataset) sees the old content or the new one, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    os.replace(partial, path)
