"""List: ordering, selectors, resourceVersion, pagination and expired continue tokens."""

from __future__ import annotations

import pytest
from fake_tracker_helpers import make_pod

from apis import errors
from apis import resources as r
from apis.fake import ObjectTracker
from apis.watch import ListOptions


def _names(result: dict) -> list[str]:
    return [f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}" for o in result["items"]]


def test_list_is_sorted_by_namespace_then_name_and_carries_current_rv(tracker: ObjectTracker) -> None:
    for ns, name in [("b", "x"), ("a", "z"), ("a", "y")]:
        tracker.create(r.PODS, make_pod(name, namespace=ns), ns)
    tracker.create(r.CONFIGMAPS, {"metadata": {"name": "bump"}}, "a")
    result = tracker.list(r.PODS)
    assert result["kind"] == "PodList" and result["apiVersion"] == "v1"
    assert _names(result) == ["a/y", "a/z", "b/x"]
    assert result["metadata"]["resourceVersion"] == tracker.resource_version()
    assert "continue" not in result["metadata"]
    assert _names(tracker.list(r.PODS, "a")) == ["a/y", "a/z"]


def test_label_selectors(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("a", labels={"app": "web", "tier": "fe"}), "default")
    tracker.create(r.PODS, make_pod("b", labels={"app": "db"}), "default")
    tracker.create(r.PODS, make_pod("c"), "default")
    assert _names(tracker.list(r.PODS, "", ListOptions(label_selector="app=web"))) == ["default/a"]
    assert _names(tracker.list(r.PODS, "", ListOptions(label_selector="app in (web,db),!tier"))) == ["default/b"]
    assert _names(tracker.list(r.PODS, "", ListOptions(label_selector="app!=web"))) == ["default/b", "default/c"]
    with pytest.raises(errors.BadRequestError):
        tracker.list(r.PODS, "", ListOptions(label_selector="app in web"))


def test_field_selectors(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("a", spec={"nodeName": "n1", "containers": []}), "default")
    tracker.create(r.PODS, make_pod("b", spec={"nodeName": "n2", "containers": []}), "default")
    b = tracker.get(r.PODS, "default", "b")
    b["status"] = {"phase": "Running"}
    tracker.update(r.PODS, b, subresource="status")
    assert _names(tracker.list(r.PODS, "", ListOptions(field_selector="spec.nodeName=n1"))) == ["default/a"]
    assert _names(tracker.list(r.PODS, "", ListOptions(field_selector="status.phase!=Running"))) == ["default/a"]
    assert _names(tracker.list(r.PODS, "", ListOptions(field_selector="metadata.name=b,metadata.namespace=default"))) == [
        "default/b"
    ]


def test_unsupported_field_label_is_a_bad_request(tracker: ObjectTracker) -> None:
    with pytest.raises(errors.BadRequestError) as exc:
        tracker.list(r.PODS, "", ListOptions(field_selector="spec.foo=bar"))
    assert str(exc.value) == "field label not supported: spec.foo"
    with pytest.raises(errors.BadRequestError, match="field label not supported: spec.nodeName"):
        tracker.list(r.CONFIGMAPS, "", ListOptions(field_selector="spec.nodeName=x"))
    with pytest.raises(errors.BadRequestError, match="field label not supported"):
        tracker.watch(r.PODS, "", ListOptions(field_selector="x=y"))
    with pytest.raises(errors.BadRequestError, match="invalid field selector"):
        tracker.list(r.PODS, "", ListOptions(field_selector="no-operator"))


def test_pagination_is_a_consistent_snapshot(tracker: ObjectTracker) -> None:
    for i in range(5):
        tracker.create(r.PODS, make_pod(f"p{i}"), "default")
    first = tracker.list(r.PODS, "", ListOptions(limit=2))
    assert _names(first) == ["default/p0", "default/p1"]
    assert first["metadata"]["remainingItemCount"] == 3
    list_rv = first["metadata"]["resourceVersion"]
    # writes between pages are not seen by the continued list
    tracker.delete(r.PODS, "default", "p3")
    tracker.create(r.PODS, make_pod("p2a"), "default")
    second = tracker.list(r.PODS, "", ListOptions(limit=2, continue_=first["metadata"]["continue"]))
    assert _names(second) == ["default/p2", "default/p3"]
    assert second["metadata"]["resourceVersion"] == list_rv
    third = tracker.list(r.PODS, "", ListOptions(limit=2, continue_=second["metadata"]["continue"]))
    assert _names(third) == ["default/p4"]
    assert "continue" not in third["metadata"]


def test_selector_lists_have_no_remaining_count(tracker: ObjectTracker) -> None:
    for i in range(3):
        tracker.create(r.PODS, make_pod(f"p{i}", labels={"a": "b"}), "default")
    page = tracker.list(r.PODS, "", ListOptions(limit=1, label_selector="a=b"))
    assert page["metadata"]["continue"] and "remainingItemCount" not in page["metadata"]


def test_expired_continue_token_is_gone() -> None:
    tracker = ObjectTracker(watch_history=5)
    for i in range(3):
        tracker.create(r.PODS, make_pod(f"p{i}"), "default")
    page = tracker.list(r.PODS, "", ListOptions(limit=1))
    for i in range(6):  # push the list's RV out of the history ("compaction")
        tracker.create(r.CONFIGMAPS, {"metadata": {"name": f"c{i}"}}, "default")
    with pytest.raises(errors.GoneError) as exc:
        tracker.list(r.PODS, "", ListOptions(limit=1, continue_=page["metadata"]["continue"]))
    assert exc.value.status == 410 and exc.value.reason == "Expired"
    assert errors.is_resource_expired(exc.value)
    assert exc.value.message.startswith("The provided continue parameter is too old to display a consistent list result.")


def test_bad_continue_token(tracker: ObjectTracker) -> None:
    with pytest.raises(errors.BadRequestError, match="continue key is not valid"):
        tracker.list(r.PODS, "", ListOptions(limit=1, continue_="garbage!"))


def test_list_at_exact_resource_version(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("a"), "default")
    rv = tracker.resource_version()
    tracker.create(r.PODS, make_pod("b"), "default")
    old = tracker.list(r.PODS, "", ListOptions(resource_version=rv, resource_version_match="Exact"))
    assert _names(old) == ["default/a"] and old["metadata"]["resourceVersion"] == rv
    assert _names(tracker.list(r.PODS, "", ListOptions(resource_version="0"))) == ["default/a", "default/b"]
    with pytest.raises(errors.BadRequestError):
        tracker.list(r.PODS, "", ListOptions(resource_version="abc"))


def test_a_first_page_at_a_non_zero_resource_version_is_exact() -> None:
    # limit + resourceVersion X without resourceVersionMatch: served at exactly X (410 once X is compacted)
    tracker = ObjectTracker(watch_history=5)
    tracker.create(r.PODS, make_pod("a"), "default")
    rv = tracker.resource_version()
    tracker.create(r.PODS, make_pod("b"), "default")
    page = tracker.list(r.PODS, "", ListOptions(resource_version=rv, limit=10))
    assert _names(page) == ["default/a"] and page["metadata"]["resourceVersion"] == rv
    assert _names(tracker.list(r.PODS, "", ListOptions(resource_version=rv))) == ["default/a", "default/b"]
    assert _names(tracker.list(r.PODS, "", ListOptions(resource_version="0", limit=10))) == ["default/a", "default/b"]
    not_older = ListOptions(resource_version=rv, resource_version_match="NotOlderThan", limit=10)
    assert _names(tracker.list(r.PODS, "", not_older)) == ["default/a", "default/b"]
    for i in range(6):
        tracker.create(r.CONFIGMAPS, {"metadata": {"name": f"c{i}"}}, "default")
    with pytest.raises(errors.GoneError):
        tracker.list(r.PODS, "", ListOptions(resource_version=rv, limit=10))
