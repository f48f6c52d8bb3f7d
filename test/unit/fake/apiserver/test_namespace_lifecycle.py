"""The sandbox's NamespaceLifecycle admission and the wire form of a Status, without HTTP."""

from __future__ import annotations

import pytest

from apis import errors
from apis import resources as r
from apis.fake import ObjectTracker
from sandbox.apiserver.admission import NamespaceLifecycle
from sandbox.apiserver.request import ResourceRequest
from sandbox.apiserver.wire import wire_status


def _req(gvr: r.GroupVersionResource, namespace: str = "", name: str = "") -> ResourceRequest:
    return ResourceRequest(r.lookup(gvr), namespace, name, None, False)


@pytest.fixture
def tracker() -> ObjectTracker:
    t = ObjectTracker()
    t.create(r.NAMESPACES, {"metadata": {"name": "default"}})
    return t


def test_enabled_refuses_missing_namespaces_on_create_and_update_only(tracker: ObjectTracker) -> None:
    lifecycle = NamespaceLifecycle(tracker, enabled=True)
    lifecycle.admit("create", _req(r.CONFIGMAPS, "default"), "c")
    for operation in ("create", "update"):
        with pytest.raises(errors.NotFoundError, match='namespaces "gone" not found'):
            lifecycle.admit(operation, _req(r.CONFIGMAPS, "gone"), "c")
    lifecycle.admit("delete", _req(r.CONFIGMAPS, "gone"), "c")
    lifecycle.admit("create", _req(r.NODES), "n")  # cluster-scoped kinds have no namespace


def test_disabled_lets_missing_namespaces_and_immortal_deletions_through(tracker: ObjectTracker) -> None:
    lifecycle = NamespaceLifecycle(tracker, enabled=False)
    lifecycle.admit("create", _req(r.CONFIGMAPS, "gone"), "c")
    lifecycle.admit("delete", _req(r.NAMESPACES), "default")


def test_immortal_and_terminating_namespaces(tracker: ObjectTracker) -> None:
    lifecycle = NamespaceLifecycle(tracker, enabled=True)
    with pytest.raises(errors.ForbiddenError, match='namespaces "kube-system" is forbidden: this namespace may not be deleted'):
        lifecycle.admit("delete", _req(r.NAMESPACES), "kube-system")
    lifecycle.admit("delete", _req(r.NAMESPACES), "kube-node-lease")
    tracker.create(r.NAMESPACES, {"metadata": {"name": "leaving", "finalizers": ["example.com/hold"]}})
    tracker.delete(r.NAMESPACES, "", "leaving")
    for enabled in (True, False):
        with pytest.raises(errors.ForbiddenError) as err:
            NamespaceLifecycle(tracker, enabled).admit("create", _req(r.CONFIGMAPS, "leaving"), "c")
        assert err.value.causes == [
            {"type": "NamespaceTerminating", "message": "namespace leaving is being terminated", "field": "metadata.namespace"}
        ]
    NamespaceLifecycle(tracker, True).admit("update", _req(r.CONFIGMAPS, "leaving"), "c")


def test_wire_status_names_cause_types_reason_and_omits_an_unknown_reason() -> None:
    status = errors.new_invalid("Pod", "p", [{"type": "FieldValueInvalid", "field": "metadata.name", "message": "m"}]).to_status()
    wired = wire_status(status)
    assert wired["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "metadata.name", "message": "m"}]
    assert status["details"]["causes"][0]["type"] == "FieldValueInvalid"  # not changed
    assert "reason" not in wire_status(errors.ApiError(500, "", "boom").to_status())
