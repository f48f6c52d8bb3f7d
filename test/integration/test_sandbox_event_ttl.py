"""The sandbox expires Events like kube-apiserver's ``--event-ttl``: without any other write, a watcher sees the
DELETED event once the TTL ran out (the server sweeps about once a second)."""

from __future__ import annotations

import pytest
from sandbox_http import RawClient

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False, event_ttl=0.5)]

EVENTS = "/api/v1/namespaces/default/events"


def test_an_expired_event_is_deleted_and_watchers_hear_of_it(sandbox) -> None:
    c = RawClient(sandbox.url, timeout=10)
    ev = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Test",
        "message": "expires",
    }
    created = c.request("POST", EVENTS, ev)
    assert created.status == 201
    rv = created.json()["metadata"]["resourceVersion"]
    events = c.watch_events(f"{EVENTS}?watch=1&resourceVersion={rv}&timeoutSeconds=8", limit=1)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("DELETED", "e1")]
    assert c.get(EVENTS).json()["items"] == []
