"""ObjectTracker object semantics: identity fields, RVs, optimistic concurrency, status subresource, finalizers."""

from __future__ import annotations

import re

import pytest
from fake_tracker_helpers import make_pod, make_widget, widget_crd

from apis import errors
from apis import resources as r
from apis.fake import ObjectTracker
from apis.resources import GroupVersionResource

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def test_create_sets_identity_fields_and_rv_increases_across_kinds(tracker: ObjectTracker) -> None:
    pod = tracker.create(r.PODS, make_pod("a"), "default")
    cm = tracker.create(r.CONFIGMAPS, {"metadata": {"name": "c"}, "data": {"k": "v"}}, "default")
    md = pod["metadata"]
    assert re.fullmatch(r"[0-9a-f-]{36}", md["uid"])
    assert RFC3339.match(md["creationTimestamp"])
    assert "generation" not in md  # pods have no generation before Kubernetes 1.33
    assert pod["apiVersion"] == "v1" and pod["kind"] == "Pod"
    assert pod["status"] == {"phase": "Pending"}
    assert int(cm["metadata"]["resourceVersion"]) > int(md["resourceVersion"])
    assert "generation" not in cm["metadata"]
    assert cm["kind"] == "ConfigMap"
    assert tracker.resource_version() == cm["metadata"]["resourceVersion"]


def test_create_ignores_given_uid_but_add_keeps_it(tracker: ObjectTracker) -> None:
    obj = make_pod("a")
    obj["metadata"].update(uid="given", creationTimestamp="2020-01-01T00:00:00Z")
    created = tracker.create(r.PODS, obj, "default")
    assert created["metadata"]["uid"] != "given"
    seeded = tracker.add({**make_pod("b"), "metadata": {"name": "b", "uid": "u-b", "creationTimestamp": "2020-01-01T00:00:00Z"}})
    assert seeded["metadata"]["uid"] == "u-b"
    assert seeded["metadata"]["namespace"] == "default"
    assert seeded["metadata"]["creationTimestamp"] == "2020-01-01T00:00:00Z"


def test_generate_name(tracker: ObjectTracker) -> None:
    obj = make_pod("")
    obj["metadata"] = {"generateName": "worker-", "namespace": "default"}
    a = tracker.create(r.PODS, obj, "default")
    b = tracker.create(r.PODS, obj, "default")
    assert re.fullmatch(r"worker-[a-z0-9]{5}", a["metadata"]["name"])
    assert a["metadata"]["name"] != b["metadata"]["name"]


def test_name_required(tracker: ObjectTracker) -> None:
    with pytest.raises(errors.InvalidError) as exc:
        tracker.create(r.PODS, {"metadata": {}, "spec": {}}, "default")
    assert exc.value.causes[0]["field"] == "metadata.name"


def test_already_exists_and_not_found_messages(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("a"), "default")
    with pytest.raises(errors.AlreadyExistsError) as exc:
        tracker.create(r.PODS, make_pod("a"), "default")
    assert str(exc.value) == 'pods "a" already exists'
    with pytest.raises(errors.NotFoundError) as exc2:
        tracker.get(r.PODS, "default", "nope")
    assert str(exc2.value) == 'pods "nope" not found'
    with pytest.raises(errors.NotFoundError) as exc3:
        tracker.get(r.DEPLOYMENTS, "default", "nope")
    assert str(exc3.value) == 'deployments.apps "nope" not found'
    with pytest.raises(errors.NotFoundError):
        tracker.get(r.PODS, "other", "a")  # exact namespace match
    with pytest.raises(errors.NotFoundError):
        tracker.update(r.PODS, make_pod("ghost"), "default")
    with pytest.raises(errors.NotFoundError):
        tracker.delete(r.PODS, "default", "ghost")


def test_unknown_resource_and_type_mismatch(tracker: ObjectTracker) -> None:
    with pytest.raises(errors.NotFoundError, match="could not find the requested resource"):
        tracker.resource_info(r.GroupVersionResource("nope.io", "v1", "things"))
    with pytest.raises(errors.BadRequestError, match="does not match the expected kind"):
        tracker.create(r.PODS, {"kind": "Service", "metadata": {"name": "x"}}, "default")
    with pytest.raises(errors.BadRequestError, match="namespace"):
        tracker.create(r.PODS, make_pod("a", namespace="one"), "two")


def test_cluster_scoped_objects_have_no_namespace(tracker: ObjectTracker) -> None:
    node = tracker.create(r.NODES, {"metadata": {"name": "n1", "namespace": "junk"}})
    assert "namespace" not in node["metadata"]
    assert tracker.get(r.NODES, "", "n1")["metadata"]["name"] == "n1"


def test_returned_objects_are_copies(tracker: ObjectTracker) -> None:
    created = tracker.create(r.PODS, make_pod("a"), "default")
    created["metadata"]["labels"] = {"mutated": "yes"}
    got = tracker.get(r.PODS, "default", "a")
    assert "labels" not in got["metadata"]
    got["spec"]["containers"].clear()
    assert tracker.get(r.PODS, "default", "a")["spec"]["containers"]


def test_update_stale_rv_conflicts_and_missing_rv_is_unconditional(tracker: ObjectTracker) -> None:
    first = tracker.create(r.PODS, make_pod("a"), "default")
    first["metadata"]["labels"] = {"v": "1"}
    second = tracker.update(r.PODS, first)
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    first["metadata"]["labels"] = {"v": "stale"}
    with pytest.raises(errors.ConflictError) as exc:
        tracker.update(r.PODS, first)
    assert errors.is_conflict(exc.value)
    assert str(exc.value) == (
        'Operation cannot be fulfilled on pods "a": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    del first["metadata"]["resourceVersion"]
    third = tracker.update(r.PODS, first)
    assert third["metadata"]["labels"] == {"v": "stale"}


def test_generation_bumps_only_on_spec_change(tracker: ObjectTracker) -> None:
    dep = tracker.create(r.DEPLOYMENTS, {"metadata": {"name": "a"}, "spec": {"replicas": 1}}, "default")
    assert dep["metadata"]["generation"] == 1
    dep["metadata"]["labels"] = {"x": "y"}
    dep = tracker.update(r.DEPLOYMENTS, dep)
    assert dep["metadata"]["generation"] == 1
    dep["spec"]["replicas"] = 2
    dep = tracker.update(r.DEPLOYMENTS, dep)
    assert dep["metadata"]["generation"] == 2
    dep["status"] = {"replicas": 2}
    dep = tracker.update(r.DEPLOYMENTS, dep, subresource="status")
    assert dep["metadata"]["generation"] == 2 and dep["status"] == {"replicas": 2}


def test_noop_update_writes_nothing(tracker: ObjectTracker) -> None:
    pod = tracker.create(r.PODS, make_pod("a"), "default")
    again = tracker.update(r.PODS, pod)
    assert again["metadata"]["resourceVersion"] == pod["metadata"]["resourceVersion"]
    assert tracker.resource_version() == pod["metadata"]["resourceVersion"]


def test_status_subresource_rules_on_pods(tracker: ObjectTracker) -> None:
    pod = tracker.create(r.PODS, make_pod("a"), "default")
    pod["status"] = {"phase": "Running"}
    pod["metadata"]["labels"] = {"a": "b"}
    main = tracker.update(r.PODS, pod)
    assert main["status"] == {"phase": "Pending"}  # main resource ignores status
    assert main["metadata"]["labels"] == {"a": "b"}
    main["status"] = {"phase": "Succeeded"}
    main["spec"]["containers"][0]["image"] = "changed"
    main["metadata"]["labels"] = {"a": "changed"}
    st = tracker.update(r.PODS, main, subresource="status")
    assert st["status"] == {"phase": "Succeeded"}
    assert st["spec"]["containers"][0]["image"] == "busybox"  # status ignores everything else
    assert st["metadata"]["labels"] == {"a": "b"}


def test_status_subresource_unknown_where_not_served(tracker: ObjectTracker) -> None:
    cm = tracker.create(r.CONFIGMAPS, {"metadata": {"name": "c"}, "data": {}}, "default")
    with pytest.raises(errors.NotFoundError):
        tracker.update(r.CONFIGMAPS, cm, subresource="status")
    with pytest.raises(errors.NotFoundError):
        tracker.update(r.PODS, make_pod("a"), subresource="scale")


def test_kind_without_status_subresource_updates_status_with_main_resource(tracker: ObjectTracker) -> None:
    tracker.register_crd(widget_crd(status=False))
    widgets = GroupVersionResource("example.com", "v1", "widgets")
    widget = tracker.create(widgets, make_widget("w"), "default")
    widget["status"] = {"anything": True}
    assert tracker.update(widgets, widget)["status"] == {"anything": True}


def test_builtin_fields_the_kind_does_not_have_are_dropped_as_decoding_drops_them(tracker: ObjectTracker) -> None:
    lease = tracker.create(r.LEASES, {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a", "typo": 1}}, "default")
    assert lease["spec"] == {"holderIdentity": "a"}
    lease["status"] = {"anything": True}  # Lease has no status
    assert "status" not in tracker.update(r.LEASES, lease)
    assert tracker.unknown_fields(r.LEASES, {"spec": {"holderIdentity": "a", "typo": 1}, "status": {}}) == ["spec.typo", "status"]


def test_finalizers_defer_deletion_until_last_one_is_removed(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("a", finalizers=["x/one", "x/two"]), "default")
    marked = tracker.delete(r.PODS, "default", "a")
    assert RFC3339.match(marked["metadata"]["deletionTimestamp"])
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 0
    assert "generation" not in marked["metadata"]  # pods have none; kinds with one get it bumped
    stored = tracker.get(r.PODS, "default", "a")
    assert stored["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]
    again = tracker.delete(r.PODS, "default", "a")  # deleting again changes nothing
    assert again["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    stored["metadata"]["finalizers"] = ["x/one", "x/two", "x/new"]
    with pytest.raises(errors.InvalidError, match="no new finalizers can be added"):
        tracker.update(r.PODS, stored)
    stored["metadata"]["finalizers"] = ["x/two"]
    stored["metadata"]["deletionTimestamp"] = None  # cannot be cleared by an update
    stored = tracker.update(r.PODS, stored)
    assert stored["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]
    stored["metadata"]["finalizers"] = []
    tracker.update(r.PODS, stored)
    with pytest.raises(errors.NotFoundError):
        tracker.get(r.PODS, "default", "a")


def test_delete_preconditions(tracker: ObjectTracker) -> None:
    pod = tracker.create(r.PODS, make_pod("a"), "default")
    with pytest.raises(errors.ConflictError, match="Precondition failed: UID in precondition: wrong"):
        tracker.delete(r.PODS, "default", "a", preconditions={"uid": "wrong"})
    with pytest.raises(errors.ConflictError, match="ResourceVersion in precondition: 0"):
        tracker.delete(r.PODS, "default", "a", preconditions={"resourceVersion": "0"})
    md = pod["metadata"]
    gone = tracker.delete(r.PODS, "default", "a", preconditions={"uid": md["uid"], "resourceVersion": md["resourceVersion"]})
    assert gone["metadata"]["uid"] == md["uid"]
    with pytest.raises(errors.BadRequestError, match="propagationPolicy"):
        tracker.delete(r.PODS, "default", "a", propagation_policy="Sideways")


def test_update_with_other_uid_conflicts(tracker: ObjectTracker) -> None:
    pod = tracker.create(r.PODS, make_pod("a"), "default")
    pod["metadata"]["uid"] = "someone-else"
    with pytest.raises(errors.ConflictError, match="UID in precondition"):
        tracker.update(r.PODS, pod)


def test_add_expands_lists_and_requires_type(tracker: ObjectTracker) -> None:
    out = tracker.add({"apiVersion": "v1", "kind": "PodList", "items": [make_pod("a"), make_pod("b")]})
    assert [i["metadata"]["name"] for i in out["items"]] == ["a", "b"]
    with pytest.raises(errors.BadRequestError):
        tracker.add({"metadata": {"name": "x"}})
    with pytest.raises(errors.NotFoundError, match='no matches for kind "Gizmo"'):
        tracker.add({"apiVersion": "v1", "kind": "Gizmo", "metadata": {"name": "x"}})


def test_concurrent_writers_get_unique_increasing_rvs(tracker: ObjectTracker) -> None:
    import threading

    rvs: list[int] = []
    lock = threading.Lock()

    def writer(prefix: str) -> None:
        for i in range(50):
            obj = tracker.create(r.CONFIGMAPS, {"metadata": {"name": f"{prefix}-{i}"}}, "default")
            with lock:
                rvs.append(int(obj["metadata"]["resourceVersion"]))

    threads = [threading.Thread(target=writer, args=(f"w{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert sorted(rvs) == list(range(1, 201))


def test_create_and_update_answer_a_copy_unless_asked_for_the_stored_object(tracker: ObjectTracker) -> None:
    copied = tracker.create(r.PODS, make_pod("a"), "default")
    copied["metadata"]["labels"] = {"changed": "by the caller"}  # a copy: the store does not see it
    assert "labels" not in (tracker.peek(r.PODS, "default", "a") or {})["metadata"]
    stored = tracker.create(r.PODS, make_pod("b"), "default", copy=False)
    assert stored is tracker.peek(r.PODS, "default", "b")
    updated = tracker.update(r.PODS, {**stored, "status": {"phase": "Running"}}, "default", subresource="status",
                             copy=False)
    assert updated is tracker.peek(r.PODS, "default", "b") and updated["status"]["phase"] == "Running"
    assert tracker.update(r.PODS, {**updated}, "default") is not tracker.peek(r.PODS, "default", "b")


def test_a_trusted_write_stores_what_it_was_given_and_is_still_admitted(tracker: ObjectTracker) -> None:
    pod = make_pod("a")
    pod["spec"]["containers"][0]["imagePullPolcy"] = "Always"  # an untrusted write would drop it (decoding check)
    stored = tracker.create(r.PODS, pod, "default", copy=False, trusted=True)
    assert stored is pod and stored["spec"]["containers"][0]["imagePullPolcy"] == "Always"
    status = {"phase": "Running"}
    updated = tracker.update(r.PODS, {**stored, "metadata": dict(stored["metadata"]), "status": status}, "default",
                             subresource="status", copy=False, trusted=True)
    assert updated["status"] is status and updated is tracker.peek(r.PODS, "default", "a")
    untrusted_status = {"phase": "Succeeded"}
    again = tracker.update(r.PODS, {**updated, "status": untrusted_status}, "default", subresource="status",
                           copy=False)
    assert again["status"] == untrusted_status and again["status"] is not untrusted_status
    with pytest.raises(errors.ApiError) as invalid:  # admission still applies
        tracker.create(r.PODS, make_pod("Not_A_Name"), "default", trusted=True)
    assert invalid.value.status == 422


def test_a_write_reports_the_unknown_fields_its_decoding_walk_dropped(tracker: ObjectTracker) -> None:
    pod = make_pod("a")
    pod["spec"]["containers"][0]["imagePullPolcy"] = "Always"
    unknown: list[str] = []
    created = tracker.create(r.PODS, pod, "default", unknown=unknown)
    assert unknown == ["spec.containers[0].imagePullPolcy"]
    assert unknown == tracker.unknown_fields(r.PODS, pod)  # what fieldValidation's own walk finds
    assert "imagePullPolcy" not in created["spec"]["containers"][0]
    unknown.clear()
    tracker.update(r.PODS, {**created, "bogus": 1}, "default", subresource="status", unknown=unknown)
    assert unknown == ["bogus"]
