"""apis.record.EventRecorder under failures: a lost connection never raises, and no lock is held across an HTTP call."""

from __future__ import annotations

import threading

from apis.fake import FakeClientset
from apis.http_transport import ApiConnectionRefusedError, ApiConnectionTimeoutError
from apis.record import EventRecorder

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u"}}
OTHER = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q", "namespace": "default", "uid": "v"}}


def test_connection_errors_on_create_and_patch_are_logged_not_raised():
    cs = FakeClientset()
    rec = EventRecorder(cs, "sedna-gm")
    assert rec.event(POD, "Normal", "R", "m")["count"] == 1
    cs.prepend_reactor("patch", "events", lambda a: (True, None, ApiConnectionTimeoutError("PATCH", "u", "timeout")))
    assert rec.event(POD, "Normal", "R", "m") is None
    cs.prepend_reactor("create", "events", lambda a: (True, None, ApiConnectionRefusedError("POST", "u", "refused")))
    assert rec.event(POD, "Warning", "Other", "m") is None


def test_unexpected_errors_are_logged_not_raised():
    cs = FakeClientset()
    cs.prepend_reactor("create", "events", lambda a: (True, None, RuntimeError("bug in a reactor")))
    assert EventRecorder(cs, "sedna-gm").event(POD, "Normal", "R", "m") is None


def test_a_slow_event_write_does_not_block_events_about_other_objects():
    cs = FakeClientset()
    rec = EventRecorder(cs, "sedna-gm")
    entered, release = threading.Event(), threading.Event()

    def slow_create(action):
        if action.object["involvedObject"]["name"] == "p":
            entered.set()
            release.wait(10)  # an API server that takes its time
        return False, None, None

    cs.prepend_reactor("create", "events", slow_create)
    slow = threading.Thread(target=rec.event, args=(POD, "Normal", "R", "m"))
    slow.start()
    try:
        assert entered.wait(5)
        other = threading.Thread(target=rec.event, args=(OTHER, "Normal", "R", "m"))
        other.start()
        other.join(5)
        assert not other.is_alive(), "the recorder held its lock across the HTTP call"
    finally:
        release.set()
        slow.join(10)
    assert sorted(e["involvedObject"]["name"] for e in cs.core_v1().events("default").list()["items"]) == ["p", "q"]


def test_the_runtime_name_is_the_library_recorder():
    import globalmanager.runtime

    assert globalmanager.runtime.EventRecorder is EventRecorder
