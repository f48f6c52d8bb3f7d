"""A reflector whose API server restarted empty: the watch at the old resourceVersion is refused as "too large", the
next list reads the latest state at once, refused re-watches during the outage do not lengthen the wait before that
relist, and the informer tells handlers about objects gone or replaced (also under a recycled resourceVersion)."""

from __future__ import annotations

import random
import threading

import pytest
from informer_test_helpers import BOUND, FakeClock, FakeWatch, Source, pod
from testkit import wait_for

from apis import errors
from apis.http_transport import ApiConnectionRefusedError
from informers import (
    DeletedFinalStateUnknown,
    ListWatch,
    Reflector,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    Store,
)
from informers.backoff import Backoff

TOO_LARGE = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 504, "reason": "Timeout",
             "message": "Timeout: Too large resource version: 36, current: 20",
             "details": {"causes": [{"type": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                         "retryAfterSeconds": 1}}


def pod_list(rv, *items):
    return {"kind": "PodList", "metadata": {"resourceVersion": rv}, "items": list(items)}


@pytest.mark.parametrize("how", ["error event", "watch start refused"])
def test_a_watch_refused_for_a_too_large_rv_relists_from_the_latest_state_at_once(how):
    lists, watches = [], []

    def list_fn(options):
        lists.append(options.resource_version)
        return pod_list("36" if len(lists) == 1 else "20", pod("a", "5"))

    def watch_fn(options):
        watches.append(options.resource_version)
        if how == "watch start refused":
            raise errors.from_status(TOO_LARGE)
        w = FakeWatch()
        w.error(TOO_LARGE)
        return w

    clock = FakeClock()
    r = Reflector(ListWatch(list_fn, watch_fn), Store(), clock=clock, backoff=Backoff(clock=clock))
    stop = threading.Event()
    for _ in range(2):  # what run() does: list_and_watch, (back off,) list_and_watch
        try:
            r.list_and_watch(stop)
        except errors.ApiError as exc:
            assert how == "watch start refused" and errors.is_too_large_resource_version(exc)
    assert watches == ["36", "20"]
    # the relist asks for the latest state, not for "36" (which would wait for the server and fail the same way)
    assert lists[:2] == ["0", ""]


def test_refused_re_watches_during_an_outage_do_not_lengthen_the_wait_before_the_relist():
    refusals = {"n": 0}

    def watch_fn(options):
        if refusals["n"] < 6:  # the server is down for a while
            refusals["n"] += 1
            raise ApiConnectionRefusedError("GET", "http://api/pods?watch=1", "connection refused")
        w = FakeWatch()
        w.error(TOO_LARGE)  # back, empty
        return w

    clock = FakeClock()
    r = Reflector(ListWatch(lambda o: pod_list("36"), watch_fn), Store(), clock=clock,
                  backoff=Backoff(clock=clock, rng=random.Random(0)))
    r.list_and_watch(threading.Event())
    assert refusals["n"] == 6
    assert len(clock.sleeps) == 6 and clock.sleeps[-1] >= 0.8 * 2**5  # the re-watches backed off exponentially
    # ... but on their own backoff: the relist that follows waits a first step, not the seventh
    assert 0.8 <= r.backoff.next_delay() < 1.6


def uid_pod(name, rv, uid):
    obj = pod(name, rv)
    obj["metadata"]["uid"] = uid
    return obj


def test_the_informer_reports_what_a_relist_after_a_restart_removed_and_replaced():
    src = Source(uid_pod("a", "5", "uid-1"), uid_pod("b", "6", "uid-2"), rv="36")
    clock = FakeClock()
    inf = SharedIndexInformer(src.lw, reflector_options={"clock": clock, "backoff": Backoff(clock=clock)})
    seen = []
    inf.add_event_handler(ResourceEventHandlerFuncs(
        add_func=lambda o: seen.append(("add", o["metadata"]["name"], o["metadata"]["uid"])),
        update_func=lambda old, new: seen.append(("update", new["metadata"]["name"], new["metadata"]["uid"])),
        delete_func=lambda o: seen.append(("delete", o.key if isinstance(o, DeletedFinalStateUnknown)
                                           else o["metadata"]["name"], type(o).__name__)),
    ))
    stop = threading.Event()
    t = threading.Thread(target=inf.run, args=(stop,), daemon=True)
    t.start()
    try:
        wait_for("len(src.watches) == 1", lambda: len(src.watches) == 1, timeout=BOUND)
        # the server restarts empty; "a" is recreated with another uid under the same resourceVersion, "c" is new
        src.objs = [uid_pod("a", "5", "uid-9"), uid_pod("c", "7", "uid-3")]
        src.rv = "20"
        src.watches[0].error(TOO_LARGE)
        wait_for("len(seen) == 5", lambda: len(seen) == 5, timeout=BOUND)
    finally:
        stop.set()
        t.join(BOUND)
    assert seen[:2] == [("add", "a", "uid-1"), ("add", "b", "uid-2")]
    assert sorted(seen[2:]) == [("add", "c", "uid-3"), ("delete", "ns/b", "DeletedFinalStateUnknown"),
                                ("update", "a", "uid-9")]  # same resourceVersion, another object: not a resync
    assert sorted(o["metadata"]["uid"] for o in inf.get_indexer().list()) == ["uid-3", "uid-9"]
