"""The nodes a job names (``globalmanager.runtime.references.named_nodes``): worker templates anywhere in the spec,
the stage annotations and the Dataset's node, each once, with where the job names it; and ``NodeCheck`` over real
informers on a FakeClientset."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from testkit import wait_for

from apis import meta
from apis.fake import FakeClientset
from apis.resources import INCREMENTAL_LEARNING_JOBS, NODES
from globalmanager.runtime.references import MissingReference, NodeCheck, named_nodes
from informers import SharedInformerFactory


def _template(node: str) -> dict:
    return {"spec": {"nodeName": node, "containers": []}}


def test_templates_annotations_and_the_dataset_name_nodes_in_order_each_once() -> None:
    job = {
        "metadata": {"name": "j", "annotations": {"sedna.io/Train": "edge-2", "sedna.io/Deploy": "edge-9"}},
        "spec": {
            "trainSpec": {"template": _template("edge-2")},
            "evalSpec": {"template": _template("edge-3")},
            "trainingWorkers": [{"template": _template("edge-4")}, {"template": {"spec": {}}}],
        },
    }
    dataset = {"metadata": {"name": "ds"}, "spec": {"nodeName": "edge-1"}}
    assert named_nodes(job, dataset) == [
        ("edge-2", "spec.trainSpec.template.spec.nodeName"),
        ("edge-3", "spec.evalSpec.template.spec.nodeName"),
        ("edge-4", "spec.trainingWorkers[0].template.spec.nodeName"),
        ("edge-9", "annotation sedna.io/Deploy"),
        ("edge-1", "dataset ds spec.nodeName"),
    ]


def test_a_job_without_nodes_names_none() -> None:
    assert named_nodes({"metadata": {}, "spec": {"template": "not a template"}}) == []


# -- NodeCheck over real informers on a FakeClientset ----------------------------------------------------------------
class _Controller:
    """What NodeCheck uses: an informer factory, the job informer, and a loop that enqueues and collects cache
    syncs."""

    def __init__(self, cs: FakeClientset, namespace: str = "") -> None:
        self.informer_factory = SharedInformerFactory(cs, namespace=namespace)
        self.job_informer = self.informer_factory.for_resource(INCREMENTAL_LEARNING_JOBS)
        self.cache_syncs: list[Any] = [self.job_informer.informer().has_synced]
        self.woken: list[str] = []

    def enqueue_controller(self, job: Any, immediate: bool = False) -> None:
        self.woken.append(meta.name(job))

    def add_cache_sync(self, has_synced: Any) -> None:
        self.cache_syncs.append(has_synced)

    def node_check(self) -> NodeCheck:
        return NodeCheck(self.informer_factory, self.job_informer, self)  # type: ignore[arg-type]


def _job(name: str, node: str) -> dict:
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "IncrementalLearningJob",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"trainSpec": {"template": _template(node)}}}


@pytest.fixture
def running() -> Any:
    stop = threading.Event()
    started: list[_Controller] = []

    def start(controller: _Controller) -> _Controller:
        controller.informer_factory.start(stop)
        wait_for("caches", lambda: all(sync() for sync in controller.cache_syncs))
        started.append(controller)
        return controller

    yield start
    stop.set()
    for controller in started:
        controller.informer_factory.shutdown(5)


def test_no_node_at_all_means_nothing_to_check(running: Any) -> None:
    controller = _Controller(FakeClientset())
    check = controller.node_check()
    running(controller)
    check.check(_job("j", "edge-nope"))  # a fake API without nodes: nothing to check against


def test_a_missing_node_is_named_and_its_arrival_wakes_the_job(running: Any) -> None:
    cs = FakeClientset()
    cs.tracker.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "edge-1"}})
    controller = _Controller(cs)
    check = controller.node_check()
    job = cs.tracker.create(INCREMENTAL_LEARNING_JOBS, _job("j", "edge-nope"), "default")
    running(controller)
    check.check(_job("ok", "edge-1"))
    with pytest.raises(MissingReference) as missing:
        check.check(job)
    assert missing.value.reason == "NodeNotFound"
    assert str(missing.value) == "node edge-nope (spec.trainSpec.template.spec.nodeName) not found"
    cs.tracker.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "edge-nope"}})
    wait_for("the job woken by its node", lambda: controller.woken == ["j"])
    check.check(job)


def test_a_gm_scoped_to_a_namespace_does_not_check_nodes(running: Any) -> None:
    cs = FakeClientset()
    cs.tracker.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "edge-1"}})
    controller = _Controller(cs, namespace="default")
    check = controller.node_check()
    running(controller)
    check.check(_job("j", "edge-nope"))
    assert not any(a.resource == "nodes" for a in cs.actions())
