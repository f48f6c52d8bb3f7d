"""End to end: every sample of ``charts/sedna/samples/`` (and the Models, Datasets and Secret in ``references/``) on
the sandbox with a real ``sedna-gm``: each kind whose controller is registered reaches its state — a service
``Running``, a job ``Succeeded`` (job templates get ``sandbox.sedna.io/run-seconds`` so their pods end), an
incremental/lifelong learning job started (its first ``Train``/``Waiting`` condition: those jobs never finish). A
kind whose controller is not registered yet is skipped, and checked as soon as one is."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import REPO, http_get, start_gm, wait_for

from apis import errors, resources, yamlutil
from globalmanager.controllers.registry import registered

pytestmark = pytest.mark.e2e

SAMPLES = REPO / "charts" / "sedna" / "samples"
RUN_SECONDS = {"sandbox.sedna.io/run-seconds": "1"}


def _last_condition(obj: dict[str, Any]) -> dict[str, Any]:
    return ((obj.get("status") or {}).get("conditions") or [{}])[-1]


def running(obj: dict[str, Any]) -> bool:
    return _last_condition(obj).get("type") == "Running"


def succeeded(obj: dict[str, Any]) -> bool:
    return (obj.get("status") or {}).get("phase") == "Succeeded"


def started(obj: dict[str, Any]) -> bool:
    first = ((obj.get("status") or {}).get("conditions") or [{}])[0]
    return (first.get("stage"), first.get("type")) == ("Train", "Waiting")


# kind → (registry name of its controller, what its sample reaches)
TARGETS: dict[str, tuple[str, Callable[[dict[str, Any]], bool]]] = {
    "JointInferenceService": ("JointInference", running),
    "FeatureExtractionService": ("FeatureExtraction", running),
    "ObjectSearchService": ("ObjectSearch", running),
    "ObjectTrackingService": ("ObjectTracking", running),
    "FederatedLearningJob": ("FederatedLearning", succeeded),
    "ReidJob": ("Reid", succeeded),
    "VideoAnalyticsJob": ("VideoAnalytics", succeeded),
    "ElasticAIJob": ("ElasticAIJob", succeeded),
    "IncrementalLearningJob": ("IncrementalLearning", started),
    "LifelongLearningJob": ("LifelongLearning", started),
}
REFERENCED_ONLY = ("Dataset", "Model")  # applied for the others; nothing to reach


def _load(path: Path) -> list[dict[str, Any]]:
    return yamlutil.load_all(path.read_text())


def _samples() -> dict[str, dict[str, Any]]:
    return {obj["kind"]: obj for path in sorted(SAMPLES.glob("*.yaml")) for obj in _load(path)}


def _finishing(obj: dict[str, Any]) -> dict[str, Any]:
    """A job whose pods end after a second: the steering annotation on every pod template (on the ElasticAIJob
    itself, which passes it to its master)."""
    if obj["kind"] == "ElasticAIJob":
        obj["metadata"]["annotations"] = {**(obj["metadata"].get("annotations") or {}), **RUN_SECONDS}
        return obj

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            template = node.get("template")
            if isinstance(template, dict) and isinstance(template.get("spec"), dict):
                md = template.setdefault("metadata", {})
                md["annotations"] = {**(md.get("annotations") or {}), **RUN_SECONDS}
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(obj["spec"])
    return obj


def _client(cs: Any, obj: dict[str, Any]) -> Any:
    gvr = resources.lookup_kind(obj["apiVersion"], obj["kind"]).gvr
    return cs.resource(gvr, obj["metadata"].get("namespace", "default"))


@pytest.fixture(scope="module")
def applied(module_procs, module_cluster) -> Iterator[Any]:
    """``sedna-gm`` running, then every reference and sample created in ``default``."""
    kubeconfig, cs = module_cluster
    gm, url = start_gm(module_procs, "gm", kubeconfig, "--no-leader-elect")
    wait_for("sedna-gm ready", lambda: http_get(url + "/readyz")[0] == 200 or gm.poll() is not None, timeout=60)
    assert gm.poll() is None, module_procs.log("gm")
    for path in sorted((SAMPLES / "references").glob("*.yaml")):
        for obj in _load(path):
            _client(cs, obj).create(obj)
    for kind, obj in sorted(_samples().items()):
        if TARGETS.get(kind, ("", None))[1] is succeeded:
            obj = _finishing(obj)
        _client(cs, obj).create(obj)
    yield cs
    assert gm.poll() is None, module_procs.log("gm")


def test_every_sample_kind_has_a_target():
    assert sorted(set(_samples()) - set(REFERENCED_ONLY)) == sorted(TARGETS)


@pytest.mark.parametrize("kind", sorted(TARGETS))
def test_the_sample_reaches_its_state(applied, module_procs, kind):
    controller, reached = TARGETS[kind]
    if controller not in registered():
        pytest.skip(f"no {controller} controller registered yet")
    sample = _samples()[kind]
    client = _client(applied, sample)

    def current() -> dict[str, Any]:
        try:
            return client.get(sample["metadata"]["name"])
        except errors.NotFoundError:
            return {}

    obj = wait_for(f"{kind} {sample['metadata']['name']} to reach {reached.__name__}", current, check=reached,
                   timeout=90, interval=0.2)
    assert reached(obj), module_procs.log("gm")[-3000:]
