"""``JobController``'s priorities: adds and updates of owned objects (pods, Deployments) that are not being deleted
queue their job at low priority (``Queue.add_low_priority``); job adds/updates/deletions and owned deletions queue it
at normal priority, ahead of every low key. Driven at the handler level over a FakeClientset with hand-filled
caches; the controller's queue is read with ``get`` (nothing runs in the background)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from apis import meta
from apis.fake import FakeClientset
from apis.resources import DEPLOYMENTS, ELASTIC_AI_JOBS, PODS
from globalmanager.runtime import JobController, Kind, KindContext
from informers import DeletedFinalStateUnknown, SharedInformerFactory

API_VERSION = "elasticdl.org/v1alpha1"


def _job(name: str, rv: str = "1", generation: int = 1) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": "ElasticAIJob",
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": rv,
                         "generation": generation}}


def _owned(kind: str, name: str, owner: dict[str, Any], rv: str = "1", **metadata: Any) -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv, **metadata,
                                       "ownerReferences": [{"apiVersion": API_VERSION, "kind": "ElasticAIJob",
                                                            "name": meta.name(owner), "uid": meta.uid(owner),
                                                            "controller": True}]}}


def _pod(owner: dict[str, Any], rv: str, phase: str = "Running", **metadata: Any) -> dict[str, Any]:
    pod = _owned("Pod", f"{meta.name(owner)}-worker", owner, rv, **metadata)
    pod["status"] = {"phase": phase}
    return pod


def _deployment(owner: dict[str, Any], rv: str, replicas: int = 1, **metadata: Any) -> dict[str, Any]:
    d = _owned("Deployment", f"{meta.name(owner)}-deploy", owner, rv, **metadata)
    d["spec"] = {"replicas": replicas, "template": {"spec": {"containers": [{"name": "w", "image": "i"}]}}}
    return d


SYNCED: list[str] = []  # the keys the kind's sync got, in order (emptied by the fixture)


def _synced(ctx: KindContext[None], key: str, job: dict[str, Any]) -> None:
    SYNCED.append(key)


@pytest.fixture
def controller() -> Iterator[JobController[None]]:
    """A controller of a kind owning pods and Deployments (recreating neither), with jobs a, b, c, d cached."""
    SYNCED.clear()
    cs = FakeClientset()
    kind: Kind[None] = Kind(name="Prioritised", resource=ELASTIC_AI_JOBS, sync=_synced, owns=(PODS, DEPLOYMENTS))
    c = JobController(kind, cs, SharedInformerFactory(cs), 1, registry=CollectorRegistry())
    for name in ("a", "b", "c", "d"):
        c.job_informer.informer().get_indexer().add(_job(name))
    yield c
    c.queue.shut_down()


def handed_out(c: JobController[Any]) -> list[str]:
    """Every key waiting in the controller's queue, in the order its workers would get them (each marked done)."""
    keys = []
    while c.queue.len() > 0:
        key, shutdown = c.queue.get()
        assert not shutdown
        keys.append(key)
        c.queue.done(key)
    return keys


A, B, C = _job("a"), _job("b"), _job("c")


def test_a_new_job_is_handed_out_before_a_job_woken_earlier_by_its_pods_update(controller) -> None:
    controller.update_pod(_pod(A, "1"), _pod(A, "2"))
    assert controller.queue.len() == 1
    controller.add_job(B)
    assert controller.queue.len() == 2
    assert handed_out(controller) == ["ns/b", "ns/a"]


def test_a_job_update_is_handed_out_before_jobs_woken_by_pod_adds(controller) -> None:
    controller.add_pod(_pod(A, "1"))
    controller.add_pod(_pod(C, "1"))
    controller.update_job(_job("b", rv="1"), _job("b", rv="2", generation=2))
    assert controller.queue.len() == 3
    assert handed_out(controller) == ["ns/b", "ns/a", "ns/c"]  # low keys among themselves: in order


def test_deployment_adds_and_updates_queue_their_job_at_low_priority(controller) -> None:
    controller.add_deployment(_deployment(A, "1"))
    controller.update_deployment(_deployment(C, "1"), _deployment(C, "2", replicas=2))  # its spec changed
    controller.add_job(B)
    assert controller.queue.len() == 3
    assert handed_out(controller) == ["ns/b", "ns/a", "ns/c"]


def test_a_pod_deletion_queues_its_job_at_normal_priority(controller) -> None:
    controller.add_pod(_pod(C, "1"))  # low, first
    controller.delete_pod(_pod(A, "2"))
    controller.add_pod(_pod(_job("d"), "1"))  # low, later
    assert controller.queue.len() == 3
    assert handed_out(controller) == ["ns/a", "ns/c", "ns/d"]


def test_a_pod_deletion_seen_as_a_tombstone_queues_its_job_at_normal_priority(controller) -> None:
    controller.add_pod(_pod(C, "1"))
    controller.delete_pod(DeletedFinalStateUnknown("ns/a-worker", _pod(A, "2")))
    assert handed_out(controller) == ["ns/a", "ns/c"]


def test_a_deployment_deletion_queues_its_job_at_normal_priority(controller) -> None:
    controller.add_pod(_pod(C, "1"))
    controller.delete_deployment(_deployment(A, "2"))
    assert handed_out(controller) == ["ns/a", "ns/c"]


def test_a_pod_deletion_raises_its_job_already_queued_by_a_pod_update(controller) -> None:
    controller.update_pod(_pod(A, "1"), _pod(A, "2"))  # a: low
    controller.add_pod(_pod(C, "1"))  # c: low, after a
    controller.add_job(B)  # b: normal
    controller.delete_pod(_pod(A, "3"))  # a: raised, behind b
    assert controller.queue.len() == 3  # a counted once
    assert handed_out(controller) == ["ns/b", "ns/a", "ns/c"]


def test_a_job_update_raises_its_job_already_queued_by_a_pod_update(controller) -> None:
    controller.add_pod(_pod(A, "1"))
    controller.add_pod(_pod(C, "1"))
    controller.update_job(_job("c", rv="1"), _job("c", rv="2", generation=2))
    assert handed_out(controller) == ["ns/c", "ns/a"]


def test_a_pod_update_does_not_lower_a_job_queued_at_normal_priority(controller) -> None:
    controller.add_job(A)
    controller.add_pod(_pod(C, "1"))
    controller.update_pod(_pod(A, "1"), _pod(A, "2"))  # a is pending at normal priority: stays there
    assert controller.queue.len() == 2
    assert handed_out(controller) == ["ns/a", "ns/c"]


def test_owned_objects_being_deleted_queue_their_job_at_normal_priority(controller) -> None:
    controller.add_pod(_pod(C, "1"))
    controller.update_pod(_pod(A, "1"), _pod(A, "2", deletionTimestamp="2026-01-02T03:04:05Z"))
    controller.add_deployment(_deployment(B, "1", deletionTimestamp="2026-01-02T03:04:05Z"))
    assert handed_out(controller) == ["ns/a", "ns/b", "ns/c"]


def test_a_pod_update_while_its_job_syncs_queues_it_again_at_low_priority(controller) -> None:
    controller.add_job(A)
    assert controller.queue.get() == ("ns/a", False)  # a worker syncs a
    controller.update_pod(_pod(A, "1"), _pod(A, "2"))  # a: again, low, once the sync is done
    controller.add_job(B)
    assert controller.queue.len() == 1
    controller.queue.done("ns/a")
    assert controller.queue.len() == 2
    assert handed_out(controller) == ["ns/b", "ns/a"]


def test_the_workers_sync_the_new_job_first(controller) -> None:
    controller.update_pod(_pod(A, "1"), _pod(A, "2"))
    controller.add_job(B)
    assert controller.process_next_work_item() and controller.process_next_work_item()
    assert SYNCED == ["ns/b", "ns/a"]
    assert controller.queue.len() == 0
