"""Fixtures for the sedna-gm unit tests: the ElasticAIJob kind run by a ``JobController`` over a FakeClientset whose informer caches
are filled by hand (as Go unit tests do with ``informer.GetIndexer().Add``), so nothing runs in the background."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

# the tests import their shared steps and fakes from the *_test_helpers.py modules next to this file (importable
# through pyproject.toml's ``pythonpath``)
from sedna_test_helpers import FakeTimer

from apis import meta
from apis.fake import FakeClientset
from apis.record import EventRecorder
from apis.resources import PODS
from globalmanager.controllers import register
from globalmanager.controllers.elasticdl.controller import KIND as ELASTIC_AI_JOB
from globalmanager.controllers.registry import unregister
from globalmanager.runtime.jobcontroller import JobController
from informers import SharedInformerFactory

NS = "default"


def job_dict(name: str = "mnist", **spec_overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "jobArgs": ["--model_zoo /model_zoo", "--minibatch_size 64"],
        "master": {"image": "elasticdl:ci", "resource_request": "cpu=1,memory=1024Mi"},
        "worker": {"count": 2, "resource_request": "cpu=1,memory=1024Mi"},
        "ps": {"count": 1},
    }
    spec.update(spec_overrides)
    return {
        "apiVersion": "elasticdl.org/v1alpha1",
        "kind": "ElasticAIJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


class Harness:
    """The ElasticAIJob kind's controller, whose caches mirror the fake clientset only when ``refresh()`` is called."""

    def __init__(self, *objects: dict[str, Any]) -> None:
        self.cs = FakeClientset(*objects)
        self.factory = SharedInformerFactory(self.cs)
        self.timer = FakeTimer()
        self.registry = CollectorRegistry()
        self.controller: JobController[None] = JobController(
            ELASTIC_AI_JOB,
            self.cs,
            self.factory,
            1,
            recorder=EventRecorder(self.cs, "sedna-gm"),
            registry=self.registry,
            recreation_timer=self.timer,
            now=lambda: "2026-01-02T03:04:05Z",
        )

    @property
    def jobs(self) -> Any:
        return self.cs.elasticdl_v1alpha1().elastic_ai_jobs(NS)

    @property
    def pods(self) -> Any:
        return self.cs.core_v1().pods(NS)

    def refresh(self) -> None:
        """Make the controller's caches equal to the fake API server's state."""
        for informer, items, api_version in (
            (self.controller.job_informer.informer(), self.jobs.list()["items"], "elasticdl.org/v1alpha1"),
            (self.controller.owned_informers[PODS].informer(), self.pods.list()["items"], "v1"),
        ):
            for item in items:
                item.setdefault("apiVersion", api_version)
            informer.get_indexer().replace(items, "")

    def job(self, name: str = "mnist") -> dict[str, Any]:
        return self.jobs.get(name)

    def pod_names(self) -> list[str]:
        return sorted(meta.name(p) for p in self.pods.list()["items"])

    def events(self) -> list[dict[str, Any]]:
        return self.cs.core_v1().events(NS).list()["items"]

    def set_pod_phase(self, name: str, phase: str, **status: Any) -> dict[str, Any]:
        pod = self.pods.get(name)
        pod["status"] = {"phase": phase, **status}
        return self.pods.update_status(pod)

    def creates(self, resource: str = "pods") -> list[Any]:
        return [a for a in self.cs.actions() if a.verb == "create" and a.resource == resource]

    def delete_pod_by_hand(self, name: str) -> dict[str, Any]:
        """Delete pod ``name`` as ``kubectl delete pod`` would and hand the controller its informer's delete event;
        returns the pod as it was."""
        pod = self.pods.get(name)
        self.pods.delete(name)
        self.controller.delete_pod(pod)
        return pod


def replica_pod(job: dict[str, Any], role: str, index: int, phase: str = "Running") -> dict[str, Any]:
    """A worker/ps pod as the ElasticDL master launches it (owned by the master pod, labelled with the job)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"elasticdl-{meta.name(job)}-{role}-{index}",
            "namespace": NS,
            "labels": {
                "app": "elasticdl",
                "elasticdl-job-name": meta.name(job),
                "elasticdl-replica-type": role,
                "elasticdl-replica-index": str(index),
            },
        },
        "spec": {"containers": [{"name": "main", "image": "elasticdl:ci"}]},
        "status": {"phase": phase},
    }


@pytest.fixture
def make_harness() -> Any:
    """Build harnesses; their controllers' queues (and any delaying thread) are shut down after the test."""
    made: list[Harness] = []

    def make(*objects: dict[str, Any]) -> Harness:
        harness = Harness(*objects)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.controller.queue.shut_down()


@pytest.fixture
def new_job() -> Any:
    return job_dict


@pytest.fixture
def new_replica_pod() -> Any:
    return replica_pod


@pytest.fixture
def make_sedna_harness() -> Any:
    """Build ``sedna_test_helpers.Harness`` objects; their queues are shut down after the test."""
    from sedna_test_helpers import Harness

    made: list[Any] = []

    def make(controller_cls: Any, job_resource: Any, *objects: dict[str, Any], **kwargs: Any) -> Any:
        harness = Harness(controller_cls, job_resource, *objects, **kwargs)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


@pytest.fixture
def make_learning_harness() -> Any:
    """Build ``learningjob_test_helpers.LearningHarness`` objects (IL/LL controllers); closed after the test."""
    from learningjob_test_helpers import LearningHarness

    made: list[Any] = []

    def make(kind: str, *objects: dict[str, Any], **kwargs: Any) -> Any:
        harness = LearningHarness(kind, *objects, **kwargs)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


@pytest.fixture
def register_controller() -> Iterator[Callable[[str, Callable[[Any], Any]], None]]:
    """``register_controller(name, factory)``: add a controller to sedna-gm's registry for this test only (it is
    unregistered at teardown)."""
    names: list[str] = []

    def add(name: str, factory: Callable[[Any], Any]) -> None:
        register(name, factory)
        names.append(name)

    yield add
    for name in reversed(names):
        unregister(name)
