"""Filtering handler rules, listers (client-go wording of NotFound) and the informer factory over the fake clientset."""

from __future__ import annotations

import random
import threading

import pytest
from informer_test_helpers import FakeClock, pod
from testkit import wait_for

from apis import errors
from apis import resources as r
from apis.client import ClientsetBase
from apis.fake import FakeClientset
from informers import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    FilteringResourceEventHandler,
    Indexer,
    Lister,
    ResourceEventHandlerFuncs,
    SharedInformerFactory,
    lister_for,
    meta_namespace_index_func,
)
from informers.backoff import Backoff


class Calls:
    def __init__(self):
        self.calls = []

    def on_add(self, obj, is_in_initial_list):
        self.calls.append(("add", obj["val"], is_in_initial_list))

    def on_update(self, old, new):
        self.calls.append(("update", old["val"], new["val"]))

    def on_delete(self, obj):
        self.calls.append(("delete", obj.obj["val"] if isinstance(obj, DeletedFinalStateUnknown) else obj["val"]))


def test_filtering_handler_rules():
    inner = Calls()

    def keep(o):
        o = o.obj if isinstance(o, DeletedFinalStateUnknown) else o
        return o["val"] > 0

    h = FilteringResourceEventHandler(keep, inner)
    h.on_add({"val": 1}, True)
    h.on_add({"val": -1}, False)
    h.on_update({"val": 1}, {"val": 2})  # both pass
    h.on_update({"val": -1}, {"val": 3})  # enters the set -> add
    h.on_update({"val": 4}, {"val": -4})  # leaves the set -> delete of the old
    h.on_update({"val": -5}, {"val": -6})  # neither -> dropped
    h.on_delete(DeletedFinalStateUnknown("k", {"val": 7}))
    h.on_delete({"val": -8})
    assert inner.calls == [("add", 1, True), ("update", 1, 2), ("add", 3, False), ("delete", 4), ("delete", 7)]


def test_resource_event_handler_funcs_are_optional():
    got = []
    h = ResourceEventHandlerFuncs(add_func=got.append)
    h.on_add({"a": 1}, True)
    h.on_update({}, {})
    h.on_delete({})
    assert got == [{"a": 1}]
    with pytest.raises(TypeError, match="has no on_add"):
        FilteringResourceEventHandler(lambda o: True, object())


def _indexer(*objs):
    idx = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    for o in objs:
        idx.add(o)
    return idx


def test_listers_get_list_and_not_found_message():
    idx = _indexer(pod("a", "1", "ns1", {"app": "x"}), pod("b", "1", "ns1", {"app": "y"}), pod("c", "1", "ns2"))
    pods = lister_for(idx, r.PODS)
    assert pods.pods("ns1").get("a")["metadata"]["name"] == "a"
    with pytest.raises(errors.NotFoundError) as exc:
        pods.pods("ns1").get("c")
    assert str(exc.value) == 'pod "c" not found' and exc.value.status == 404 and errors.is_not_found(exc.value)
    assert sorted(o["metadata"]["name"] for o in pods.list()) == ["a", "b", "c"]
    assert [o["metadata"]["name"] for o in pods.list("app=x")] == ["a"]
    assert [o["metadata"]["name"] for o in pods.pods("ns1").list({"app": "y"})] == ["b"]
    assert sorted(o["metadata"]["name"] for o in pods.namespaced("ns1").list()) == ["a", "b"]
    assert pods.pods("none").list() == []
    with pytest.raises(TypeError):
        pods.list(42)


def test_namespace_all_lists_every_namespace_and_get_by_key_names_the_key():
    idx = _indexer(pod("a", "1", "ns1", {"app": "x"}), pod("c", "1", "ns2", {"app": "x"}), {"metadata": {"name": "n"}})
    pods = lister_for(idx, r.PODS)
    # client-go ListAllByNamespace(NamespaceAll) falls back to ListAll
    assert sorted(o["metadata"]["name"] for o in pods.pods("").list()) == ["a", "c", "n"]
    assert sorted(o["metadata"]["name"] for o in pods.namespaced("").list("app=x")) == ["a", "c"]
    with pytest.raises(errors.NotFoundError) as exc:
        pods.get("ns1/x")
    assert str(exc.value) == 'pod "ns1/x" not found'  # the name as given, as the generic lister does


def test_typed_sedna_and_cluster_scoped_listers():
    job = {"apiVersion": "sedna.io/v1alpha1", "kind": "IncrementalLearningJob",
           "metadata": {"name": "j", "namespace": "default"}}
    jobs = lister_for(_indexer(job), r.INCREMENTAL_LEARNING_JOBS)
    assert jobs.incremental_learning_jobs("default").get("j") is job
    with pytest.raises(errors.NotFoundError, match='incrementallearningjob.sedna.io "x" not found'):
        jobs.incremental_learning_jobs("default").get("x")
    nodes = lister_for(_indexer({"metadata": {"name": "n1"}}), r.NODES)
    assert nodes.get("n1")["metadata"]["name"] == "n1"
    with pytest.raises(errors.NotFoundError, match='node "n2" not found'):
        nodes.get("n2")
    deps = lister_for(_indexer(), r.DEPLOYMENTS)
    with pytest.raises(errors.NotFoundError, match='deployment.apps "d" not found'):
        deps.deployments("ns").get("d")
    generic = Lister(_indexer(), "widget")
    with pytest.raises(errors.NotFoundError, match='widget "w" not found'):
        generic.namespaced("ns").get("w")
    eai = lister_for(_indexer(), r.ELASTIC_AI_JOBS)
    assert eai.elastic_ai_jobs("ns").list() == []


def _new_pod(name, ns="default", **labels):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "img"}]}}


def _fast_options():
    clock = FakeClock()
    return {"reflector_options": {"clock": clock, "backoff": Backoff(clock=clock, rng=random.Random(0))}}


def test_factory_over_fake_clientset():
    cs = FakeClientset(_new_pod("a", app="x"), _new_pod("b", ns="other"))
    f = SharedInformerFactory(cs, informer_options=_fast_options())
    pods = f.core_v1().pods()
    assert f.core_v1().pods() is pods and f.for_resource(r.PODS) is pods
    jobs = f.sedna_v1alpha1().incremental_learning_jobs()
    added = []
    pods.informer().add_event_handler(ResourceEventHandlerFuncs(add_func=lambda o: added.append(o["metadata"]["name"])))
    stop = threading.Event()
    f.start(stop)
    f.start(stop)  # idempotent
    synced = f.wait_for_cache_sync(stop)
    assert synced == {r.PODS: True, r.INCREMENTAL_LEARNING_JOBS: True}
    assert pods.lister().pods("default").get("a")["metadata"]["name"] == "a"
    assert jobs.lister().incremental_learning_jobs("default").list() == []
    cs.core_v1().pods("default").create(_new_pod("c"))
    wait_for("'c' in added", lambda: "c" in added)
    leases = f.coordination_v1().leases()  # created after start: needs another start
    assert f.wait_for_cache_sync(stop).keys() == {r.PODS, r.INCREMENTAL_LEARNING_JOBS}
    f.start(stop)
    assert f.wait_for_cache_sync(stop)[r.LEASES]
    assert leases.informer().has_synced()
    stop.set()
    f.shutdown(timeout=10)
    assert pods.informer().is_stopped()
    f.start(stop)  # no-op after shutdown
    assert not [t for t in threading.enumerate() if t.name.startswith(("informer-", "reflector-"))]


def test_factory_namespace_tweak_and_transform():
    cs = FakeClientset(_new_pod("a", app="x"), _new_pod("b", app="y"), _new_pod("c", ns="other", app="x"))

    def tweak(options):
        options.label_selector = "app=x"

    def transform(obj):
        obj = dict(obj)
        obj.pop("spec", None)
        return obj

    f = SharedInformerFactory(cs, namespace="default", tweak_list_options=tweak, transform=transform,
                              informer_options=_fast_options())
    pods = f.core_v1().pods()
    nodes = f.core_v1().nodes()  # cluster-scoped: no namespace applied
    stop = threading.Event()
    f.start(stop)
    assert all(f.wait_for_cache_sync(stop).values())
    assert [o["metadata"]["name"] for o in pods.lister().list()] == ["a"]
    assert "spec" not in pods.lister().pods("default").get("a")
    assert nodes.lister().list() == []
    stop.set()
    f.shutdown(timeout=10)


def test_factory_scoping_applies_to_the_watch_too():
    cs = FakeClientset(_new_pod("a", app="x"))

    def tweak(options):
        options.label_selector = "app=x"

    f = SharedInformerFactory(cs, namespace="default", tweak_list_options=tweak, informer_options=_fast_options())
    pods = f.core_v1().pods()
    stop = threading.Event()
    f.start(stop)
    assert all(f.wait_for_cache_sync(stop).values())
    cs.core_v1().pods("other").create(_new_pod("elsewhere", ns="other", app="x"))
    cs.core_v1().pods("default").create(_new_pod("unlabelled", app="y"))
    cs.core_v1().pods("default").create(_new_pod("control", app="x"))  # created last: once seen, the others would be
    try:
        wait_for("'control' in {o['metadata']['name'] for o in pods.lister().list()}", lambda: "control" in {o["metadata"]["name"] for o in pods.lister().list()})
        assert sorted(o["metadata"]["name"] for o in pods.lister().list()) == ["a", "control"]
        assert sorted(pods.informer().get_indexer().list_keys()) == ["default/a", "default/control"]
    finally:
        stop.set()
        f.shutdown(timeout=10)


def test_factory_gives_every_informer_its_own_backoff():
    clock = FakeClock()
    shared = Backoff(clock=clock, rng=random.Random(0))
    f = SharedInformerFactory(FakeClientset(), informer_options={"reflector_options": {"clock": clock,
                                                                                       "backoff": shared}})
    backoffs = [f.core_v1().pods().informer()._reflector_options["backoff"],
                f.core_v1().nodes().informer()._reflector_options["backoff"]]
    assert backoffs[0] is not backoffs[1] and shared not in backoffs
    assert all(b.clock is clock and (b.initial, b.cap) == (shared.initial, shared.cap) for b in backoffs)
    backoffs[0].next_delay()
    backoffs[0].next_delay()
    assert 0.8 <= backoffs[1].next_delay() < 1.6  # the other informer's failures do not lengthen its delays


class _MiniClientset(ClientsetBase):
    """A clientset over FakeClientset resource clients, to check the factory needs only ClientsetBase."""

    def __init__(self, inner):
        self.inner = inner
        self.requested = []

    def resource(self, gvr, namespace=""):
        self.requested.append((gvr, namespace))
        return self.inner.resource(gvr, namespace)


def test_factory_uses_clientset_resource():
    cs = _MiniClientset(FakeClientset())
    f = SharedInformerFactory(cs, namespace="ns1", informer_options=_fast_options())
    f.apps_v1().deployments()
    f.core_v1().nodes()
    f.elasticdl_v1alpha1().elastic_ai_jobs()
    assert cs.requested == [(r.DEPLOYMENTS, "ns1"), (r.NODES, ""), (r.ELASTIC_AI_JOBS, "ns1")]
    with pytest.raises(TypeError):
        f.for_resource("pods")


def _cache_state(informer):
    return {k: (o["metadata"]["resourceVersion"], o["metadata"].get("labels", {}).get("v"))
            for k in informer.get_indexer().list_keys()
            for o in [informer.get_indexer().get_by_key(k)[0]]}


def _tracker_state(cs):
    items = cs.core_v1().pods("").list()["items"]
    return {f"{o['metadata']['namespace']}/{o['metadata']['name']}":
            (o["metadata"]["resourceVersion"], o["metadata"].get("labels", {}).get("v")) for o in items}


def test_convergence_with_forced_watch_ends_and_expired_history():
    cs = FakeClientset(watch_history=5)  # tiny history: re-watches after a disruption often get 410
    f = SharedInformerFactory(cs, informer_options=_fast_options())
    informer = f.core_v1().pods().informer()
    deletes = []
    informer.add_event_handler(ResourceEventHandlerFuncs(delete_func=deletes.append))
    stop = threading.Event()
    f.start(stop)
    assert f.wait_for_cache_sync(stop)[r.PODS]
    rng = random.Random(7)
    client = cs.core_v1().pods("default")
    alive: set[str] = set()
    for step in range(300):
        roll = rng.random()
        if roll < 0.4 or not alive:
            name = f"p{step}"
            client.create(_new_pod(name, v="0"))
            alive.add(name)
        elif roll < 0.8:
            name = rng.choice(sorted(alive))
            client.patch(name, {"metadata": {"labels": {"v": str(step)}}})
        else:
            name = rng.choice(sorted(alive))
            client.delete(name)
            alive.discard(name)
        if step % 37 == 0:
            cs.tracker.close_watches()
    wait_for("_cache_state(informer) == _tracker_state(cs)", lambda: _cache_state(informer) == _tracker_state(cs), timeout=15)
    assert informer.last_sync_resource_version() != ""
    stop.set()
    f.shutdown(timeout=10)
