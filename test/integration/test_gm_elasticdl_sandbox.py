"""The ElasticAIJob kind's controller in-process against the sandbox API server over HTTP, with the pod simulator."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from testkit import wait_for

from apis import errors, meta
from apis.clientset import Clientset
from apis.record import EventRecorder
from globalmanager.controllers.elasticdl.controller import KIND
from globalmanager.runtime.jobcontroller import JobController
from informers import SharedInformerFactory

CRDS = str(Path(__file__).resolve().parents[2] / "charts" / "sedna" / "crds")
pytestmark = [pytest.mark.integration, pytest.mark.sandbox(crd_dirs=[CRDS])]


def job(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "elasticdl.org/v1alpha1",
        "kind": "ElasticAIJob",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
        "spec": {"jobArgs": ["--model_zoo /model_zoo"], "master": {"image": "elasticdl:ci"}, "worker": {"count": 1}},
    }


@pytest.fixture
def running_controller(sandbox):
    cs = Clientset.from_kubeconfig(sandbox.kubeconfig)
    factory = SharedInformerFactory(cs)
    controller = JobController(KIND, cs, factory, 2, recorder=EventRecorder(cs, "sedna-gm"), registry=CollectorRegistry())
    stop = threading.Event()
    factory.start(stop)
    thread = threading.Thread(target=controller.run, args=(stop,))
    thread.start()
    # the controller's start-up lines are written during setup: pytest stops capturing between a test's phases, so a
    # line written then would reach the terminal
    assert controller.synced.wait(15), "the controller's caches did not sync"
    yield controller, cs
    stop.set()
    thread.join(15)
    factory.shutdown(timeout=5)
    cs.close()
    assert not thread.is_alive()


def phase(cs, name: str) -> str:
    return (cs.elasticdl_v1alpha1().elastic_ai_jobs("default").get(name).get("status") or {}).get("phase") or ""


def test_job_runs_to_succeeded(running_controller):
    _, cs = running_controller
    jobs = cs.elasticdl_v1alpha1().elastic_ai_jobs("default")
    jobs.create(job("mnist", {"sandbox.sedna.io/run-seconds": "1"}))
    wait_for("Succeeded", lambda: phase(cs, "mnist") == "Succeeded")
    status = jobs.get("mnist")["status"]
    types = {c["type"]: c["status"] for c in status["conditions"]}
    assert types == {"Created": "True", "Running": "False", "Succeeded": "True"}
    assert status["startTime"] and status["completionTime"]
    assert status["replicaStatuses"]["master"] == {"active": 0, "succeeded": 1, "failed": 0}
    # the Events are recorded after the status write that the wait above saw
    wait_for("the job's Events", lambda: {"SuccessfulCreate", "Succeeded"}
             <= {e["reason"] for e in cs.core_v1().events("default").list()["items"]}, timeout=10)


def test_master_deleted_by_hand_is_recreated_and_job_deletion_leaves_nothing(running_controller):
    _, cs = running_controller
    pods = cs.core_v1().pods("default")
    jobs = cs.elasticdl_v1alpha1().elastic_ai_jobs("default")
    jobs.create(job("longrun"))  # the simulated master runs until deleted
    wait_for("Running", lambda: phase(cs, "longrun") == "Running")
    first_uid = meta.uid(pods.get("elasticdl-longrun-master"))
    pods.delete("elasticdl-longrun-master")

    def recreated() -> bool:
        try:
            return meta.uid(pods.get("elasticdl-longrun-master")) != first_uid
        except errors.NotFoundError:
            return False

    wait_for("the master to be recreated", recreated)
    wait_for("Running again", lambda: phase(cs, "longrun") == "Running")
    jobs.delete("longrun")

    def gone() -> bool:
        try:
            pods.get("elasticdl-longrun-master")
            return False
        except errors.NotFoundError:
            return True

    wait_for("the master to be garbage-collected", gone)
    # a late delete event must not bring it back: once the controller has seen a pod of a job created now run (its
    # pods' events come in order), it has handled the master's delete event
    jobs.create(job("marker"))
    wait_for("the marker job to run", lambda: phase(cs, "marker") == "Running")
    assert gone()


def test_the_controller_has_started_when_a_test_begins(running_controller):
    # its start-up lines belong to the setup's captured output: pytest does not capture between a test's phases,
    # where CI saw "waiting for caches to sync" reach the terminal
    controller, _ = running_controller
    assert controller.synced.is_set()
