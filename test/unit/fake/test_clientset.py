"""FakeClientset: every verb over the tracker, recorded actions, reactors and watch reactors."""

from __future__ import annotations

import threading

import pytest
from fake_tracker_helpers import make_pod

from apis import ClientsetBase, ResourceClient, errors
from apis import resources as r
from apis.fake import Action, FakeClientset, ObjectTracker
from apis.watch import ListOptions

TIMEOUT = 2.0


def test_is_a_clientset_seeded_through_tracker_add() -> None:
    cs = FakeClientset(make_pod("a"), {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    assert isinstance(cs, ClientsetBase) and isinstance(cs.tracker, ObjectTracker)
    pods = cs.core_v1().pods("default")
    assert isinstance(pods, ResourceClient)
    assert pods.get("a")["metadata"]["uid"]
    assert cs.core_v1().nodes().get("n1")["kind"] == "Node"
    assert cs.actions()[0].verb == "get"  # seeding records nothing


def test_every_verb(tmp_path: object) -> None:
    cs = FakeClientset()
    pods = cs.core_v1().pods("ns")
    created = pods.create(make_pod("a", namespace="ns", labels={"app": "x"}))
    assert created["metadata"]["resourceVersion"]
    created["metadata"]["labels"]["v"] = "2"
    updated = pods.update(created)
    assert updated["metadata"]["labels"]["v"] == "2"
    updated["status"] = {"phase": "Running"}
    assert pods.update_status(updated)["status"]["phase"] == "Running"
    assert pods.patch("a", {"metadata": {"annotations": {"k": "v"}}})["metadata"]["annotations"] == {"k": "v"}
    assert pods.patch("a", {"status": {"phase": "Succeeded"}}, subresource="status")["status"]["phase"] == "Succeeded"
    pods.create(make_pod("b", namespace="ns"))
    listed = pods.list(label_selector="app=x")
    assert [p["metadata"]["name"] for p in listed["items"]] == ["a"]
    assert listed["metadata"]["resourceVersion"] == cs.tracker.resource_version()
    assert len(cs.core_v1().pods("").list(ListOptions())["items"]) == 2
    with pods.watch(resource_version="0") as w:  # type: ignore[attr-defined]
        assert {w.next_event(TIMEOUT).object["metadata"]["name"] for _ in range(2)} == {"a", "b"}
    assert pods.delete("a")["metadata"]["name"] == "a"
    pods.delete_collection()
    assert pods.list()["items"] == []
    with pytest.raises(errors.NotFoundError):
        pods.get("a")
    with pytest.raises(ValueError, match="patch_type"):
        pods.patch("a", {}, patch_type="xml")
    with pytest.raises(TypeError):
        pods.list(ListOptions(), limit=1)


def test_results_are_copies_the_caller_may_mutate() -> None:
    cs = FakeClientset(make_pod("a"))
    got = cs.core_v1().pods("default").get("a")
    got["spec"]["containers"].clear()
    assert cs.core_v1().pods("default").get("a")["spec"]["containers"]


def test_actions_are_recorded_in_order_and_can_be_cleared() -> None:
    cs = FakeClientset()
    pods = cs.core_v1().pods("ns")
    obj = make_pod("a", namespace="ns")
    pods.create(obj)
    pods.list(limit=5)
    pods.patch("a", b'{"metadata":{"labels":{"x":"y"}}}')
    pods.update_status(pods.get("a"))
    with pytest.raises(errors.NotFoundError):
        pods.delete("nope")
    cs.core_v1().pods("").delete_collection(label_selector="x=y")
    pods.watch().stop()
    actions = cs.actions()
    assert [(a.verb, a.resource, a.subresource) for a in actions] == [
        ("create", "pods", None),
        ("list", "pods", None),
        ("patch", "pods", None),
        ("get", "pods", None),
        ("update", "pods", "status"),
        ("delete", "pods", None),
        ("delete-collection", "pods", None),
        ("watch", "pods", None),
    ]
    create = actions[0]
    assert create.namespace == "ns" and create.name == "a" and create.object == obj
    obj["metadata"]["name"] = "changed-later"
    assert cs.actions()[0].object["metadata"]["name"] == "a"  # recorded copies
    assert actions[1].options is not None and actions[1].options.limit == 5
    assert actions[2].patch_type == "merge" and actions[2].name == "a"
    assert actions[6].namespace == "" and actions[6].options.label_selector == "x=y"
    assert actions[4].matches("update", "pods/status") and actions[4].matches("UPDATE", "pods")
    assert not actions[3].matches("get", "pods/status") and not actions[3].matches("list", "pods")
    cs.clear_actions()
    assert cs.actions() == []


def test_reactors_prepend_wins_and_wildcards() -> None:
    cs = FakeClientset(make_pod("a"))
    seen: list[str] = []
    cs.add_reactor("get", "pods", lambda a: (True, {"from": "added"}, None))
    cs.prepend_reactor("get", "pods", lambda a: (True, {"from": "prepended"}, None))

    def observe(action: Action) -> tuple[bool, object, BaseException | None]:
        seen.append(f"{action.verb}:{action.resource}")
        return False, None, None

    cs.prepend_reactor("*", "*", observe)
    assert cs.core_v1().pods("default").get("a") == {"from": "prepended"}
    assert cs.core_v1().pods("default").list()["items"]  # unhandled → tracker
    assert seen == ["get:pods", "list:pods"]


def test_add_reactor_runs_before_the_tracker_and_unhandled_falls_through() -> None:
    cs = FakeClientset()
    cs.add_reactor("create", "pods", lambda a: (False, None, None))
    created = cs.core_v1().pods("default").create(make_pod("a"))
    assert created["metadata"]["uid"]
    cs.add_reactor("create", "*", lambda a: (True, a.object, None))
    echoed = cs.core_v1().pods("default").create(make_pod("b"))
    assert "uid" not in echoed["metadata"]
    with pytest.raises(errors.NotFoundError):
        cs.core_v1().pods("default").get("b")


def test_error_injection() -> None:
    cs = FakeClientset(make_pod("a"))
    conflict = errors.new_conflict("pods", "a", "injected")
    cs.prepend_reactor("update", "pods", lambda a: (True, None, conflict))
    pod = cs.core_v1().pods("default").get("a")
    with pytest.raises(errors.ConflictError) as exc:
        cs.core_v1().pods("default").update(pod)
    assert exc.value is conflict
    assert cs.actions()[-1].verb == "update"


def test_subresource_reactor_matching() -> None:
    cs = FakeClientset(make_pod("a"))
    cs.prepend_reactor("update", "pods/status", lambda a: (True, None, errors.InternalError("status down")))
    pods = cs.core_v1().pods("default")
    pod = pods.get("a")
    pod["metadata"]["labels"] = {"ok": "1"}
    assert pods.update(pod)["metadata"]["labels"] == {"ok": "1"}  # main resource unaffected
    with pytest.raises(errors.InternalError, match="status down"):
        pods.update_status(pod)


def test_reactor_may_call_the_clientset_without_deadlock() -> None:
    cs = FakeClientset(make_pod("a"))

    depth: list[int] = []

    def count_then_decline(action: Action) -> tuple[bool, object, BaseException | None]:
        if depth:  # the nested call falls through to the tracker
            return False, None, None
        depth.append(1)
        other = cs.core_v1().pods(action.namespace).get("a")  # re-entrant call
        other["metadata"]["annotations"] = {"seen-by-reactor": "yes"}
        return True, other, None

    cs.prepend_reactor("get", "pods", count_then_decline)
    result: list[dict] = []
    t = threading.Thread(target=lambda: result.append(cs.core_v1().pods("default").get("a")))
    t.start()
    t.join(timeout=TIMEOUT)
    assert not t.is_alive()
    assert result[0]["metadata"]["annotations"] == {"seen-by-reactor": "yes"}


def test_reactor_may_mutate_the_action_seen_by_the_tracker() -> None:
    cs = FakeClientset()

    def label_it(action: Action) -> tuple[bool, object, BaseException | None]:
        action.object.setdefault("metadata", {})["labels"] = {"added-by": "reactor"}
        return False, None, None

    cs.prepend_reactor("create", "pods", label_it)
    created = cs.core_v1().pods("default").create(make_pod("a"))
    assert created["metadata"]["labels"] == {"added-by": "reactor"}
    assert "labels" not in cs.actions()[0].object["metadata"]  # the recorded action is untouched


def test_bad_reactor_answer_is_a_clear_error() -> None:
    cs = FakeClientset()
    cs.prepend_reactor("list", "*", lambda a: True)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match=r"must return \(handled, object, error\)"):
        cs.core_v1().pods("").list()


def test_watch_reactors() -> None:
    cs = FakeClientset(make_pod("a"))
    started = threading.Event()

    def note_start(action: Action) -> tuple[bool, object, BaseException | None]:
        started.set()
        return False, None, None

    cs.prepend_watch_reactor("pods", note_start)
    with cs.core_v1().pods("").watch() as w:  # type: ignore[attr-defined]
        assert started.is_set()
        assert w.next_event(TIMEOUT).object["metadata"]["name"] == "a"
    cs.prepend_watch_reactor("*", lambda a: (True, None, errors.TooManyRequestsError("slow down")))
    with pytest.raises(errors.TooManyRequestsError):
        cs.core_v1().pods("").watch()
    sentinel_watch = cs.tracker.watch(r.NODES)
    cs.prepend_watch_reactor("nodes", lambda a: (True, sentinel_watch, None))
    assert cs.core_v1().nodes().watch() is sentinel_watch
    sentinel_watch.stop()
    cs.add_watch_reactor("*", lambda a: (True, None, None))  # appended after the others: never reached for nodes
    assert cs.core_v1().nodes().watch() is sentinel_watch


def test_namespaced_single_object_calls_need_a_namespace() -> None:
    cs = FakeClientset(make_pod("a"))
    with pytest.raises(ValueError, match="namespace is required"):
        cs.core_v1().pods("").get("a")
    with pytest.raises(ValueError, match="cluster-scoped"):
        cs.resource(r.NODES, "default")
    with pytest.raises(errors.NotFoundError):
        cs.resource(r.GroupVersionResource("nope.io", "v1", "things"))


def test_watch_history_is_configurable() -> None:
    cs = FakeClientset(watch_history=5)
    for i in range(8):
        cs.core_v1().config_maps("default").create({"metadata": {"name": f"c{i}"}})
    with cs.core_v1().config_maps("").watch(resource_version="1") as w:  # type: ignore[attr-defined]
        ev = w.next_event(TIMEOUT)
        assert ev.type == "ERROR" and ev.object["code"] == 410


def test_sedna_kinds_are_served() -> None:
    cs = FakeClientset()
    jobs = cs.sedna_v1alpha1().incremental_learning_jobs("default")
    job = jobs.create({"metadata": {"name": "j"}, "spec": {"dataset": {"name": "d"}}})
    assert job["apiVersion"] == "sedna.io/v1alpha1" and job["kind"] == "IncrementalLearningJob"
    job["status"] = {"state": "Running"}
    assert jobs.update_status(job)["status"] == {"state": "Running"}
