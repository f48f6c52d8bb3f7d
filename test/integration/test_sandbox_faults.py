"""Fault injection over real HTTP: dropped watches, seeded 429/500, 410 on re-watch, latency."""

from __future__ import annotations

import pytest
from sandbox_http import RawClient

from apis.resources import CONFIGMAPS

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False)]

CM_PATH = "/api/v1/namespaces/default/configmaps"


def _seed_configmaps(sandbox, n: int) -> None:
    for i in range(n):
        sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": f"cm-{i}"}}, "default")


def test_drop_watch_after_seconds(sandbox) -> None:
    sandbox.faults.drop_watch_after = 0.2
    events = RawClient(sandbox.url).watch_events(CM_PATH + "?watch=1")  # no timeoutSeconds: the fault ends it
    assert events == [] and sandbox.faults.stats.dropped_watches == 1


def test_drop_watch_after_events(sandbox) -> None:
    _seed_configmaps(sandbox, 5)
    sandbox.faults.drop_watch_after_events = 2
    events = RawClient(sandbox.url).watch_events(CM_PATH + "?watch=1")
    assert [e["object"]["metadata"]["name"] for e in events] == ["cm-0", "cm-1"]
    assert sandbox.faults.stats.dropped_watches == 1


def test_drop_watch_after_events_lowered_below_what_a_live_watch_sent_ends_it(sandbox) -> None:
    _seed_configmaps(sandbox, 2)
    sandbox.faults.drop_watch_after_events = 5
    names = []
    for _, event in RawClient(sandbox.url).stream(CM_PATH + "?watch=1"):
        if event is None:
            break
        names.append(event["object"]["metadata"]["name"])
        if len(names) == 2:
            sandbox.faults.drop_watch_after_events = 1  # the watch has sent 2 already
    assert names == ["cm-0", "cm-1"] and sandbox.faults.stats.dropped_watches == 1


def test_error_rate_is_deterministic_with_seed_and_spares_discovery(sandbox) -> None:
    http = RawClient(sandbox.url)
    sandbox.faults.error_rate = 0.5

    def codes() -> list[int]:
        sandbox.faults.seed = 42
        return [http.get(CM_PATH).status for _ in range(30)]

    first = codes()
    assert first == codes()
    assert {200, 429, 500} == set(first)
    sandbox.faults.error_rate = 1.0
    throttled = next(r for r in (http.get(CM_PATH) for _ in range(50)) if r.status == 429)
    assert throttled.headers["retry-after"] == "1" and throttled.json()["reason"] == "TooManyRequests"
    for path in ("/version", "/healthz", "/readyz", "/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1"):
        assert http.get(path).status == 200, path
    sandbox.faults.error_rate = 0.0
    assert http.get(CM_PATH).status == 200


def test_gone_on_rewatch(sandbox) -> None:
    http = RawClient(sandbox.url)
    _seed_configmaps(sandbox, 1)
    rv = http.get(CM_PATH).json()["metadata"]["resourceVersion"]
    sandbox.faults.gone_on_rewatch = True
    events = http.watch_events(f"{CM_PATH}?watch=1&resourceVersion={rv}")
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["code"] == 410 and status["reason"] == "Expired"
    assert status["message"].startswith(f"too old resource version: {rv} (")
    fresh = http.watch_events(f"{CM_PATH}?watch=1&resourceVersion=0", limit=1)  # a fresh watch is unaffected
    assert fresh[0]["type"] == "ADDED" and sandbox.faults.stats.gone_rewatches == 1


def test_latency_is_applied(sandbox) -> None:
    http = RawClient(sandbox.url)
    sandbox.faults.latency_ms = 1
    assert http.get(CM_PATH).status == 200 and http.get("/version").status == 200
    assert http.get("/healthz").status == 200  # health probes are never delayed
    assert sandbox.faults.stats.delayed_requests == 2


def test_a_conflict_armed_for_one_object_answers_its_next_write_once(sandbox) -> None:
    """``conflict_next_write``: the next PUT/PATCH of that object's status is a 409 (kube's message), then writes
    go through; reads and other objects' writes are never touched."""
    from apis.clientset import Clientset
    from apis.errors import ConflictError

    cs = Clientset.from_kubeconfig(sandbox.kubeconfig)
    pods = cs.core_v1().pods("default")
    for name in ("p", "q"):
        pods.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                     "spec": {"containers": [{"name": "c", "image": "i"}]}})
    sandbox.faults.conflict_next_write("pods", "default", "p", "status")
    assert sandbox.faults.conflict_pending("pods", "default", "p", "status")
    pod = pods.get("p")  # reads are never refused
    pods.update(pod)  # the object, not its status subresource
    pods.update_status(pods.get("q"))  # another object
    with pytest.raises(ConflictError) as refused:
        pods.update_status(pods.get("p"))
    assert refused.value.message == ('Operation cannot be fulfilled on pods "p": the object has been modified; please '
                                     "apply your changes to the latest version and try again")
    assert not sandbox.faults.conflict_pending("pods", "default", "p", "status")
    pods.patch("p", {"status": {"message": "x"}}, subresource="status")  # once only
    assert sandbox.faults.stats.conflicts == 1
    cs.close()
