"""``ensure_worker`` (the create-a-worker protocol, once) and the real ``recreated_pods``/``prevent_recreation`` of
``KindContext``, through a ``JobController`` of a small kind declared here, on a FakeClientset whose informer caches
are filled by hand and a fake recreation timer."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from sedna_test_helpers import FakeTimer

from apis import errors, meta
from apis.fake import FakeClientset
from apis.resources import ELASTIC_AI_JOBS, PODS
from globalmanager.runtime import JobController, Kind, KindContext
from informers import DeletedFinalStateUnknown, SharedInformerFactory

NS = "ns"
KEY = f"{NS}/j"


def _sync_nothing(ctx: KindContext[None], key: str, job: dict[str, Any]) -> None:
    return None


# owns and recreates the pods of ElasticAIJobs; syncs nothing by itself
POD_KIND: Kind[None] = Kind(name="Pods", resource=ELASTIC_AI_JOBS, sync=_sync_nothing, owns=(PODS,), recreates=(PODS,))


class Harness:
    def __init__(self) -> None:
        self.cs = FakeClientset({"apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob",
                                 "metadata": {"name": "j", "namespace": NS}})
        self.timer = FakeTimer()
        self.c = JobController(POD_KIND, self.cs, SharedInformerFactory(self.cs), 1, registry=CollectorRegistry(),
                               recreation_timer=self.timer)
        self.ctx = self.c.ctx
        self.job = self.ctx.typed(self.cs.elasticdl_v1alpha1().elastic_ai_jobs(NS).get("j"))
        self.c.job_informer.informer().get_indexer().add(self.job)

    def pod(self, name: str = "") -> dict[str, Any]:
        md: dict[str, Any] = {"namespace": NS, "ownerReferences": [meta.new_controller_ref(self.job)]}
        if name:
            md["name"] = name
        else:
            md["generateName"] = "j-worker-"
        return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": {"containers": [{"name": "w", "image": "i"}]}}

    def ensure(self, **kwargs: Any) -> Any:
        return self.ctx.ensure_worker(self.job, PODS, "j-worker", self.pod, **kwargs)

    def creates(self) -> int:
        return sum(1 for a in self.cs.actions() if a.verb == "create" and a.resource == "pods")

    def cache(self, pod: dict[str, Any]) -> None:
        """The informer shows ``pod``: in its cache, then its add handler."""
        self.ctx.indexer(PODS).add(pod)
        self.c.add_pod(pod)

    def uncache(self, pod: dict[str, Any]) -> None:
        self.ctx.indexer(PODS).delete(pod)
        self.cs.core_v1().pods(NS).delete(meta.name(pod))


@pytest.fixture
def h() -> Any:
    harness = Harness()
    yield harness
    harness.c.queue.shut_down()


def test_a_first_worker_is_created_and_an_expected_one_not_created_twice(h):
    first = h.ensure()
    assert first.created is not None and not first.recreation and h.creates() == 1
    assert h.ctx.creations_pending(h.job, PODS) == 1
    again = h.ensure()  # the cache has not shown the first one yet
    assert again.pending and again.on_its_way and again.created is None and h.creates() == 1
    h.cache(first.created)
    assert h.ctx.creations_pending(h.job, PODS) == 0
    # another slot is not held up by this slot's expectation
    other = h.ctx.ensure_worker(h.job, PODS, "j-other", h.pod)
    assert other.created is not None and h.creates() == 2


def test_a_recreation_in_a_slot_is_throttled_to_one_per_ttl(h):
    first = h.ensure()
    h.cache(first.created)
    h.uncache(first.created)  # deleted from under the job
    second = h.ensure()  # the slot had a worker: a re-creation, counted against the TTL
    assert second.created is not None and second.recreation and h.creates() == 2
    assert "ns/j-worker" in h.ctx.recreated_pods
    h.cache(second.created)
    h.uncache(second.created)
    h.timer.advance(4.0)
    third = h.ensure()
    assert third.created is None and third.wait == pytest.approx(1.0) and third.on_its_way and h.creates() == 2
    h.timer.advance(1.1)
    fourth = h.ensure()
    assert fourth.created is not None and fourth.recreation and h.creates() == 3


def test_a_slot_the_delete_handler_claimed_is_not_created_again_by_sync(h):
    h.ctx.mark_recreated(h.job, PODS, "j-worker")  # the delete handler brought the worker back moments ago
    creation = h.ensure(recreation=True)
    assert creation.created is None and creation.wait == pytest.approx(5.0) and h.creates() == 0


def test_no_worker_once_the_job_is_gone_or_being_deleted(h):
    h.cs.elasticdl_v1alpha1().elastic_ai_jobs(NS).delete("j")  # the cache still has it
    creation = h.ensure(recreation=True)
    assert creation.created is None and not creation.on_its_way and h.creates() == 0
    assert "ns/j-worker" not in h.ctx.recreated_pods  # nothing created: the slot is not counted


def test_a_failed_build_does_not_count_against_the_ttl(h):
    def broken() -> dict[str, Any]:
        raise errors.ApiError("no")

    with pytest.raises(errors.ApiError):
        h.ctx.ensure_worker(h.job, PODS, "j-worker", broken, recreation=True)
    assert "ns/j-worker" not in h.ctx.recreated_pods and h.creates() == 0


def test_prevent_recreation_a_replacement_is_neither_limited_nor_counted(h):
    first = h.ensure()
    h.cache(first.created)
    h.uncache(first.created)
    assert h.ensure().recreation  # counted: the slot is claimed for 5 s
    h.ctx.prevent_recreation.add(KEY)  # the job's workers are being replaced on purpose
    replacement = h.ensure()
    assert replacement.created is None and replacement.pending  # the re-creation is still on its way
    h.ctx.job_state(h.job).expected.clear()
    replacement = h.ensure()
    assert replacement.created is not None and not replacement.recreation and h.creates() == 3


def test_delete_pod_honours_the_real_prevent_recreation_and_recreated_pods(h):
    pod = h.cs.core_v1().pods(NS).create(h.pod("j-master"))
    h.cs.core_v1().pods(NS).delete("j-master")
    h.ctx.prevent_recreation.add(KEY)
    h.c.delete_pod(pod)
    assert h.creates() == 1  # only the test's own create
    h.ctx.prevent_recreation.discard(KEY)
    h.c.delete_pod(DeletedFinalStateUnknown("ns/j-master", pod))
    assert h.creates() == 2 and "ns/j-master" in h.ctx.recreated_pods
    h.cs.core_v1().pods(NS).delete("j-master")
    h.c.delete_pod(pod)  # deleted again at once: not recreated in a loop
    assert h.creates() == 2
    h.timer.advance(5.1)
    assert "ns/j-master" not in h.ctx.recreated_pods


def test_recreated_pods_and_prevent_recreation_are_dropped_with_the_job(h):
    h.ctx.mark_recreated(h.job, PODS, "j-master")
    h.ctx.prevent_recreation.add(KEY)
    other = {"metadata": {"name": "k", "namespace": NS, "uid": "other"}}
    h.ctx.mark_recreated(other, PODS, "k-master")
    h.c.delete_job(h.job)
    assert "ns/j-master" not in h.ctx.recreated_pods and KEY not in h.ctx.prevent_recreation
    assert "ns/k-master" in h.ctx.recreated_pods  # another job's entries stay


def test_a_lookup_that_finds_the_worker_meets_its_expectation(h):
    """A worker of a fixed name seen in the cache by a lookup (not only by the add handler) is no longer expected:
    once it goes, its slot gets a new one instead of waiting out the expectation timeout."""
    first = h.ctx.ensure_worker(h.job, PODS, "j-master", lambda: h.pod("j-master"))
    h.ctx.indexer(PODS).add(first.created)  # cached; its add event not handled yet
    assert h.ctx.get_cached(PODS, NS, "j-master") is not None
    h.uncache(first.created)
    h.timer.advance(5.1)
    again = h.ctx.ensure_worker(h.job, PODS, "j-master", lambda: h.pod("j-master"))
    assert again.created is not None and again.recreation and h.creates() == 2


def test_a_worker_delivered_after_the_sync_listed_the_pods_is_still_pending_for_that_sync(h):
    """The race of a sync with the informer: the sync lists the job's pods, then the created worker reaches the cache
    and its add handler meets the expectation. For that sync the worker is in neither (not listed, no longer
    expected) unless the expectations it had when it listed still count: it must see the worker pending and not
    create it again."""
    first = h.ensure()
    with h.ctx.sync_scope(h.job):
        listed = h.ctx.owned(PODS, h.job)
        assert listed == []
        h.cache(first.created)  # delivered now: the add handler meets the expectation
        assert h.ctx.creations_pending(h.job, PODS) == 1
        again = h.ensure()
        assert again.pending and again.created is None and h.creates() == 1
    # the next sync lists it
    with h.ctx.sync_scope(h.job):
        assert [meta.name(p) for p in h.ctx.owned(PODS, h.job)] == [meta.name(first.created)]
        assert h.ctx.creations_pending(h.job, PODS) == 0
