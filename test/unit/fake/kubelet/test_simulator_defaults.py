"""PodSimulator's start-up default (``start_delay``): a pod without a valid start-delay annotation spends it Pending,
its containers ``ContainerCreating``; the annotation still wins."""

from __future__ import annotations

from apis.fake import ObjectTracker
from apis.resources import PODS
from apis.watch import ListOptions
from sandbox.simulator import PodSimulator
from sandbox.steering import ANNOTATION_START_DELAY


def _pod(name: str, **annotations: str) -> dict:
    return {"metadata": {"name": name, "annotations": annotations}, "spec": {"containers": [{"name": "c", "image": "i"}]}}


def _states_until_running(tracker: ObjectTracker, name: str, rv: str) -> list[tuple[str, str]]:
    """(phase, first container's waiting reason) of every version of the pod until it runs (a bounded watch)."""
    watch = tracker.watch(PODS, "default", ListOptions(resource_version=rv, field_selector=f"metadata.name={name}",
                                                       timeout_seconds=10))
    states = []
    try:
        for event in watch:
            status = event.object.get("status") or {}
            waiting = ((status.get("containerStatuses") or [{}])[0].get("state") or {}).get("waiting") or {}
            states.append((status.get("phase", ""), waiting.get("reason", "")))
            if status.get("phase") == "Running":
                break
    finally:
        watch.stop()
    return states


def test_the_default_start_delay_shows_containers_being_created_then_runs() -> None:
    tracker = ObjectTracker()
    sim = PodSimulator(tracker, tick=0.01, start_delay=0.2).start()
    try:
        rv = tracker.resource_version()
        tracker.create(PODS, _pod("default-delay"), "default")
        tracker.create(PODS, _pod("bad-annotation", **{ANNOTATION_START_DELAY: "soon"}), "default")
        tracker.create(PODS, _pod("at-once", **{ANNOTATION_START_DELAY: "0"}), "default")
        for name in ("default-delay", "bad-annotation"):
            states = _states_until_running(tracker, name, rv)
            assert ("Pending", "ContainerCreating") in states and states[-1][0] == "Running", (name, states)
        states = _states_until_running(tracker, "at-once", rv)
        assert ("Pending", "ContainerCreating") not in states and states[-1][0] == "Running"
    finally:
        sim.stop()
