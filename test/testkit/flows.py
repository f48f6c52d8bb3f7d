"""Each registered sedna-gm controller driven through its flow by its sample from ``charts/sedna/samples/``.

``FLOWS`` maps a controller's registry name to its ``Flow``: the sample to apply, what shows that the controller did
its work, and the spec changes (``Step``) to make next, each with what shows it was carried out. A controller added
to the registry without an entry here fails ``test/e2e/test_chart_rbac_e2e.py`` with a message naming this file: add its sample and a
``Flow``. ``prepare`` creates what a sample refers to (Models, Datasets with their files on the edge node, S3
credential Secrets) and steers the simulated workers (short delays, two rounds).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apis import errors, meta
from apis.resources import lookup_kind

from .procs import REPO, metric_value

__all__ = ["FLOWS", "SAMPLES_DIR", "Flow", "FlowRun", "Step", "load_sample", "prepare"]

SAMPLES_DIR = REPO / "charts" / "sedna" / "samples"
DATASET_LINES = 5
CREDENTIAL = "e2e-s3"  # the S3 credential Secret of the Models a sample refers to
WORKER_STEERING = {  # workersim / pod simulator annotations on every worker template
    "sandbox.sedna.io/worker-delay-seconds": "0.2",
    "sandbox.sedna.io/worker-rounds": "2",
    "sandbox.sedna.io/worker-period-seconds": "0.5",
}


@dataclass
class FlowRun:
    """One flow under way: the clientset, the namespace, the created object and the GM's metrics URL."""

    cs: Any
    namespace: str
    obj: dict[str, Any]
    gm_url: str
    controller: str
    baseline: float = 0.0  # the controller's work-queue adds before the object was created
    gm_log: Callable[[], str] = lambda: ""  # the GM's JSON log so far


    def current(self) -> dict[str, Any]:
        info = lookup_kind(self.obj["apiVersion"], self.obj["kind"])
        return self.cs.resource(info.gvr, self.namespace).get(meta.name(self.obj))

    def status(self) -> dict[str, Any]:
        return self.current().get("status") or {}

    def queued(self) -> float:
        """Keys added to the controller's work queue so far."""
        return metric_value(self.gm_url + "/metrics", "workqueue_adds_total", name=self.controller) or 0.0

    def idle(self) -> bool:
        """Nothing waits in the controller's work queue."""
        return metric_value(self.gm_url + "/metrics", "workqueue_depth", name=self.controller) == 0


@dataclass(frozen=True)
class Step:
    """A change made to the object (in place, then written with ``update``) and what shows it was carried out."""

    change: Callable[[dict[str, Any]], None]
    done: Callable[[FlowRun], bool]


@dataclass(frozen=True)
class Flow:
    """A controller's flow: create the sample, wait for ``done``, then each step in turn; the test then deletes it."""

    sample: str
    done: Callable[[FlowRun], bool]
    annotations: dict[str, str] = field(default_factory=dict)  # on the sample object
    steps: tuple[Step, ...] = ()


def phase_is(phase: str) -> Callable[[FlowRun], bool]:
    return lambda run: run.status().get("phase") == phase


def last_condition_is(kind: str) -> Callable[[FlowRun], bool]:
    def check(run: FlowRun) -> bool:
        conditions = run.status().get("conditions") or []
        return bool(conditions) and conditions[-1].get("type") == kind
    return check


def _learning_started(run: FlowRun) -> bool:
    """An IL/LL job's first condition, Train/Waiting, is there, and its controller has nothing queued."""
    conditions = run.status().get("conditions") or []
    return bool(conditions) and (conditions[0].get("stage"), conditions[0].get("type")) == ("Train", "Waiting") \
        and run.idle()


def _ll_train_now(obj: dict[str, Any]) -> None:
    spec = obj["spec"]
    spec["trainSpec"]["trigger"] = {"checkPeriodSeconds": 1,
                                    "condition": {"operator": "ge", "threshold": 1, "metric": "num_of_samples"}}
    spec["outputDir"] = "/output/lifelong"
    spec.pop("credentialName", None)
    annotations = spec["trainSpec"]["template"].setdefault("metadata", {}).setdefault("annotations", {})
    annotations["sandbox.sedna.io/worker-delay-seconds"] = "3"  # the GM sees the train pod run


def _annotated(key: str) -> Callable[[FlowRun], bool]:
    return lambda run: bool(meta.annotations(run.current()).get(key))


def processed(run: FlowRun) -> bool:
    """The controller took the object from its queue and is done with it."""
    return run.queued() > run.baseline and run.idle()


def _label_templates(value: str) -> Callable[[dict[str, Any]], None]:
    def change(obj: dict[str, Any]) -> None:
        for template in _templates(obj.get("spec") or {}):
            template.setdefault("metadata", {}).setdefault("labels", {})["sedna-e2e/rollout"] = value
    return change


def _rolled_out(generation: int) -> Callable[[FlowRun], bool]:
    def check(run: FlowRun) -> bool:
        current = run.current()
        conditions = (current.get("status") or {}).get("conditions") or []
        return current["metadata"].get("generation", 1) >= generation and run.idle() and bool(conditions) and (
            conditions[-1].get("type") == "Running")
    return check


def _ji_scale_up(obj: dict[str, Any]) -> None:
    """A new edge template and a larger HPA: the edge Deployment and the HPA are updated."""
    _label_templates("2")(obj)
    obj["spec"]["edgeWorker"]["hpa"]["maxReplicas"] = 3


def _ji_drop_hpa(obj: dict[str, Any]) -> None:
    """Another edge template and no HPA: the Deployment is updated again (the same Event, now patched: count 2)
    and the HPA deleted."""
    _label_templates("3")(obj)
    del obj["spec"]["edgeWorker"]["hpa"]


def _hpa_gone(run: FlowRun) -> bool:
    from apis.resources import HORIZONTAL_POD_AUTOSCALERS

    hpas = run.cs.resource(HORIZONTAL_POD_AUTOSCALERS, run.namespace).list()["items"]
    return _rolled_out(3)(run) and not hpas


def _eaij_new_args(obj: dict[str, Any]) -> None:
    obj["spec"]["jobArgs"].append("--log_level DEBUG")


def _master_of_generation(generation: int) -> Callable[[FlowRun], bool]:
    """The master pod rebuilt for the job's ``generation`` (the old one deleted by the controller) is running."""
    def check(run: FlowRun) -> bool:
        from apis.resources import PODS

        pods = run.cs.resource(PODS, run.namespace).list()["items"]
        return any(meta.annotations(p).get("elasticdl.org/job-generation") == str(generation)
                   and (p.get("status") or {}).get("phase") == "Running" for p in pods)
    return check


FLOWS: dict[str, Flow] = {
    # the master runs long enough for a spec change: the controller deletes it and builds the new generation's
    "ElasticAIJob": Flow("elasticaijob.yaml", phase_is("Running"), {"sandbox.sedna.io/run-seconds": "600"},
                         steps=(Step(_eaij_new_args, _master_of_generation(2)),)),
    "Dataset": Flow("dataset.yaml", lambda run: run.status().get("numberOfSamples") == DATASET_LINES),
    "Model": Flow("model.yaml", processed),
    "JointInference": Flow("jointinferenceservice.yaml", last_condition_is("Running"),
                           steps=(Step(_ji_scale_up, _rolled_out(2)), Step(_ji_drop_hpa, _hpa_gone))),
    "FederatedLearning": Flow("federatedlearningjob.yaml", phase_is("Succeeded")),
    # the samples' train triggers wait for 500 samples at night: the job starts (IL: its inference pod, annotated
    # with the hot-update config) and waits for them
    "IncrementalLearning": Flow("incrementallearningjob.yaml", lambda run: _learning_started(run) and bool(
        meta.annotations(run.current()).get("sedna.io/model-hot-update-config"))),
    # then a trigger that fires at once and a host-path output (the sample's is in S3): a round starts, the GM
    # creates the train pod and, once it runs, patches the job with its node
    "LifelongLearning": Flow("lifelonglearningjob.yaml", lambda run: _learning_started(run),
                             steps=(Step(_ll_train_now, _annotated("sedna.io/Train")),)),
    "FeatureExtraction": Flow("featureextractionservice.yaml", last_condition_is("Running")),
    "ObjectSearch": Flow("objectsearchservice.yaml", last_condition_is("Running")),
    "ObjectTracking": Flow("objecttrackingservice.yaml", last_condition_is("Running")),
    "Reid": Flow("reidjob.yaml", phase_is("Succeeded")),
    "VideoAnalytics": Flow("videoanalyticsjob.yaml", phase_is("Succeeded")),
}


def load_sample(name: str) -> dict[str, Any]:
    import yaml

    return yaml.safe_load((SAMPLES_DIR / name).read_text())


def _templates(spec: Any) -> Iterator[dict[str, Any]]:
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key == "template" and isinstance(value, dict):
                yield value
            else:
                yield from _templates(value)
    elif isinstance(spec, list):
        for item in spec:
            yield from _templates(item)


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
    return [t["spec"]["nodeName"] for t in _templates(spec) if (t.get("spec") or {}).get("nodeName")]


def _create(cs: Any, obj: dict[str, Any]) -> None:
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
        _write_lines(rootfs[obj["spec"]["nodeName"]], obj["spec"]["url"])
    if refs["models"]:
        refs["secrets"].add(CREDENTIAL)
    for secret in sorted(refs["secrets"]):
        _create(cs, {"apiVersion": "v1", "kind": "Secret",
                     "metadata": {"name": secret, "namespace": namespace,
                                  "annotations": {"s3-endpoint": "127.0.0.1:9", "s3-usehttps": "0"}},
                     "stringData": {"ACCESS_KEY_ID": "e2e", "SECRET_ACCESS_KEY": "e2e-secret"}})
    edge_nodes = [n for n in _nodes(obj.get("spec")) if n in rootfs] or sorted(rootfs)
    for i, name in enumerate(sorted(refs["datasets"])):
        node = edge_nodes[i % len(edge_nodes)]
        url = f"/data/{name}/index.txt"
        _write_lines(rootfs[node], url)
        _create(cs, {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset",
                     "metadata": {"name": name, "namespace": namespace},
                     "spec": {"url": url, "format": "txt", "nodeName": node}})
    for name in sorted(refs["models"]):
        url = f"/models/{name}/model.pb"
        for root in rootfs.values():
            path = root / url.lstrip("/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("model\n")
        _create(cs, {"apiVersion": "sedna.io/v1alpha1", "kind": "Model",
                     "metadata": {"name": name, "namespace": namespace},
                     "spec": {"url": url, "format": "pb", "credentialName": CREDENTIAL}})
    for template in _templates(obj.get("spec") or {}):
        template.setdefault("metadata", {}).setdefault("annotations", {}).update(WORKER_STEERING)
    return obj


def _write_lines(root: Path, url: str) -> None:
    path = root / url.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"sample-{i}.jpg\n" for i in range(DATASET_LINES)))
