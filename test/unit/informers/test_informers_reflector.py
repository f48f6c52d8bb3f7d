"""Port of client-go tools/cache reflector_test.go (release-1.32) with a fake ListWatch and fake watches."""

from __future__ import annotations

import random
import threading

import pytest
from informer_test_helpers import FakeClock, FakeWatch, pod, status
from testkit import wait_for
from testkit.logs import capture_library_logs

from apis import errors
from informers import DeltaFIFO, ListWatch, Reflector, Store
from informers.backoff import Backoff
from informers.reflector import MIN_WATCH_TIMEOUT


def pod_list(rv: str, *items, cont: str = "") -> dict:
    md = {"resourceVersion": rv}
    if cont:
        md["continue"] = cont
    return {"kind": "PodList", "metadata": md, "items": list(items)}


class FakeLW:
    """Records every list/watch call; answers with the given functions."""

    def __init__(self, list_fn=None, watch_fn=None):
        self.lists: list = []
        self.watches: list = []
        self.watch_objs: list[FakeWatch] = []
        self.list_fn = list_fn or (lambda o: pod_list("1"))
        self.watch_fn = watch_fn
        self.watch_created = threading.Condition()

    def list(self, options):
        self.lists.append(options)
        return self.list_fn(options)

    def watch(self, options):
        self.watches.append(options)
        w = self.watch_fn(options) if self.watch_fn else FakeWatch()
        with self.watch_created:
            self.watch_objs.append(w)
            self.watch_created.notify_all()
        return w

    def wait_watches(self, n: int, timeout: float = 5.0) -> FakeWatch:
        with self.watch_created:
            assert self.watch_created.wait_for(lambda: len(self.watch_objs) >= n, timeout), "watch not started"
            return self.watch_objs[n - 1]


def reflector(lw, store=None, clock=None, **kw) -> Reflector:
    clock = clock or FakeClock()
    return Reflector(lw, store if store is not None else Store(), clock=clock,
                     backoff=Backoff(clock=clock, rng=random.Random(1)), rng=random.Random(2), **kw)


def run_in_thread(fn, *args) -> threading.Thread:
    t = threading.Thread(target=fn, args=args, daemon=True)
    t.start()
    return t


def wait_no_supervisor_left() -> None:
    wait_for("no reflector supervisor thread left",
             lambda: not [t for t in threading.enumerate() if t.name.startswith("reflector-supervisor")], timeout=5)


def test_stop_watch_unblocks_list_and_watch():
    lw = FakeLW()
    r = reflector(lw)
    stop = threading.Event()
    t = run_in_thread(r.list_and_watch, stop)
    w = lw.wait_watches(1)
    stop.set()
    t.join(5)
    assert not t.is_alive()
    assert w.stopped.is_set()
    wait_no_supervisor_left()


def test_run_stops_promptly_while_blocked_in_watch():
    lw = FakeLW()
    r = reflector(lw, clock=None)
    stop = threading.Event()
    t = run_in_thread(r.run, stop)
    w = lw.wait_watches(1)
    stop.set()
    t.join(5)
    assert not t.is_alive() and w.stopped.is_set()
    wait_no_supervisor_left()


def test_list_and_watch_with_events_rewatches_from_last_rv():
    created = []

    def watch_fn(options):
        w = FakeWatch()
        created.append(w)
        return w

    lw = FakeLW(lambda o: pod_list("1"), watch_fn)
    s = DeltaFIFO()
    r = reflector(lw, s)
    stop = threading.Event()
    t = run_in_thread(r.list_and_watch, stop)
    ids = ["foo", "bar", "baz", "qux", "zoo"]
    for i, name in enumerate(ids):
        w = lw.wait_watches(i + 1)
        w.add(pod(name, str(i + 2)))
        w.close()  # clean close after an event: re-watch, no relist
    lw.wait_watches(len(ids) + 1)
    stop.set()
    t.join(5)
    assert [o.resource_version for o in lw.watches] == ["1", "2", "3", "4", "5", "6"]
    assert len(lw.lists) == 1 and lw.lists[0].resource_version == "0"
    assert all(o.allow_watch_bookmarks for o in lw.watches)
    for name in ids:
        deltas, ok = s.get_by_key(f"ns/{name}")
        assert ok and deltas[0].type == "Added"
    assert r.last_sync_resource_version() == "6"


def test_list_and_watch_applies_event_types_and_initial_list():
    lw = FakeLW(lambda o: pod_list("10", pod("a", "9"), pod("b", "9")))
    store = Store()
    r = reflector(lw, store)
    stop = threading.Event()
    t = run_in_thread(r.list_and_watch, stop)
    w = lw.wait_watches(1)
    w.modify(pod("a", "11"))
    w.delete(pod("b", "12"))
    w.add(pod("c", "13"))
    w.bookmark("14")
    w.close()
    lw.wait_watches(2)
    stop.set()
    t.join(5)
    assert sorted(store.list_keys()) == ["ns/a", "ns/c"]
    assert store.get_by_key("ns/a")[0]["metadata"]["resourceVersion"] == "11"
    assert lw.watches[1].resource_version == "14"  # the bookmark advanced the RV


def test_list_error_raises_and_run_backs_off_then_relists():
    calls = []

    def list_fn(options):
        calls.append(options.resource_version)
        if len(calls) < 3:
            raise errors.InternalError("boom")
        return pod_list("5", pod("a", "5"))

    lw = FakeLW(list_fn)
    clock = FakeClock()
    r = reflector(lw, Store(), clock=clock)
    with pytest.raises(errors.InternalError, match="boom") as exc:  # the API error itself, as Go's %w
        r.list_and_watch(threading.Event())
    assert errors.is_internal_error(exc.value) and any("failed to list" in n for n in exc.value.__notes__)
    stop = threading.Event()
    handled = []
    r.watch_error_handler = lambda refl, err: handled.append((refl, err))
    t = run_in_thread(r.run, stop)
    lw.wait_watches(1)
    stop.set()
    t.join(5)
    assert not t.is_alive()
    assert len(handled) == 1 and handled[0][0] is r and errors.is_internal_error(handled[0][1])
    assert any("failed to list" in n for n in handled[0][1].__notes__)
    assert calls == ["0", "0", "0"]
    assert len(clock.sleeps) >= 1


def test_run_never_tight_loops_against_failing_server():
    lw = FakeLW(lambda o: (_ for _ in ()).throw(errors.ServiceUnavailableError("down")))
    stop = threading.Event()
    clock = FakeClock(stop_after=12, stop_event=stop)
    r = reflector(lw, Store(), clock=clock, watch_error_handler=lambda r, e: None)
    r.run(stop)
    assert len(lw.lists) == 12  # exactly one attempt per backoff step, never more
    d = clock.sleeps
    expected_base = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, 30, 30, 30, 30]
    assert len(d) == len(expected_base)
    for got, base in zip(d, expected_base, strict=True):
        assert base <= got < 2 * base


def test_backoff_resets_after_two_healthy_minutes():
    clock = FakeClock()
    b = Backoff(clock=clock, rng=random.Random(0))
    first = [b.next_delay() for _ in range(4)]
    assert 6.4 <= first[-1] < 12.8
    clock.t += 121
    assert 0.8 <= b.next_delay() < 1.6
    never_zero = Backoff(clock=clock, rng=random.Random(0), jitter_factor=0)
    assert [never_zero.next_delay() for _ in range(8)] == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]


def test_410_on_list_relists_at_empty_rv():
    def list_fn(options):
        if options.resource_version == "0":
            raise errors.GoneError(410, "Expired", "too old resource version")
        return pod_list("7")

    lw = FakeLW(list_fn)
    r = reflector(lw)
    r._list(threading.Event())
    assert [o.resource_version for o in lw.lists] == ["0", ""]
    assert r.last_sync_resource_version() == "7"


@pytest.mark.parametrize(
    "err",
    [
        errors.from_status(status(504, "Timeout", "Too large resource version",
                                  [{"type": "ResourceVersionTooLarge", "message": "Too large resource version"}])),
        errors.from_status(status(504, "Timeout", "Too large resource version: 10, current: 5")),
    ],
)
def test_too_large_rv_on_list_relists_at_empty_rv(err):
    def list_fn(options):
        if options.resource_version == "10":
            raise err
        return pod_list("11")

    lw = FakeLW(list_fn)
    r = reflector(lw)
    r._last_sync_rv = "10"
    r._list(threading.Event())
    assert [o.resource_version for o in lw.lists] == ["10", ""]


def test_expired_exact_rv_then_unavailable_flag_cleared():
    state = {"n": 0}

    def list_fn(options):
        state["n"] += 1
        if options.resource_version == "10":
            raise errors.GoneError("expired")
        return pod_list("20")

    lw = FakeLW(list_fn)
    r = reflector(lw)
    r._last_sync_rv = "10"
    r._list(threading.Event())
    r._list(threading.Event())
    assert [o.resource_version for o in lw.lists] == ["10", "", "20"]


def test_410_during_watch_relists_at_last_synced_rv():
    lw = FakeLW(lambda o: pod_list("1"))
    r = reflector(lw)
    stop = threading.Event()
    t = run_in_thread(r.list_and_watch, stop)
    w = lw.wait_watches(1)
    w.add(pod("a", "5"))
    w.error(status(410, "Expired", "too old resource version: 1 (5)"))
    t.join(5)
    assert not t.is_alive()  # the watch ended, list_and_watch returned (run would back off and relist)
    assert w.stopped.is_set()
    r._list(threading.Event())
    assert [o.resource_version for o in lw.lists] == ["0", "5"]
    assert lw.lists[1].limit is None  # relist at an exact RV: no limit so the watch cache serves it


@pytest.mark.parametrize(("exc", "failures"), [
    (errors.TooManyRequestsError("slow down"), 3),
    (ConnectionRefusedError("refused"), 1),
    (OSError(111, "Connection refused"), 1),
])
def test_429_or_connection_refused_on_watch_start_backs_off_and_rewatches_without_relist(exc, failures):
    n = {"watch": 0}

    def watch_fn(options):
        n["watch"] += 1
        if n["watch"] <= failures:
            raise exc
        return FakeWatch()

    lw = FakeLW(watch_fn=watch_fn)
    clock = FakeClock()
    r = reflector(lw, clock=clock)
    stop = threading.Event()
    t = run_in_thread(r.list_and_watch, stop)
    lw.wait_watches(1)
    stop.set()
    t.join(5)
    assert len(lw.lists) == 1 and len(lw.watches) == failures + 1
    assert len(clock.sleeps) == failures


def test_429_error_event_during_watch_backs_off_and_rewatches():
    lw = FakeLW()
    clock = FakeClock()
    r = reflector(lw, clock=clock)
    stop = threading.Event()
    t = run_in_thread(r.list_and_watch, stop)
    w = lw.wait_watches(1)
    w.error(status(429, "TooManyRequests"))
    lw.wait_watches(2)
    stop.set()
    t.join(5)
    assert len(lw.lists) == 1 and len(clock.sleeps) == 1


def test_other_watch_start_error_raises():
    def watch_fn(options):
        raise errors.ForbiddenError("no watch for you")

    r = reflector(FakeLW(watch_fn=watch_fn))
    with pytest.raises(errors.ForbiddenError):
        r.list_and_watch(threading.Event())
    wait_no_supervisor_left()


def test_very_short_watch_counts_as_failure():
    lw = FakeLW()
    r = reflector(lw)
    stop = threading.Event()
    with capture_library_logs() as logs:
        t = run_in_thread(r.list_and_watch, stop)
        lw.wait_watches(1).close()  # closed at once with nothing delivered (fake clock: zero duration)
        t.join(5)
    assert not t.is_alive() and len(lw.watches) == 1  # no re-watch: run() backs off and relists
    ended = [e for e in logs if e["event"] == "watch ended with error"]
    assert len(ended) == 1 and ended[0]["error"].startswith("very short watch: ")


def test_watch_timeout_is_randomized_in_range():
    lw = FakeLW()
    r = Reflector(lw, Store(), rng=random.Random(5))
    values = {r._watch_timeout() for _ in range(200)}
    assert min(values) >= MIN_WATCH_TIMEOUT and max(values) < 2 * MIN_WATCH_TIMEOUT
    assert len(values) > 50


def test_silent_watch_is_restarted_without_relist():
    lw = FakeLW()
    r = Reflector(lw, Store(), min_watch_timeout=0, watch_inactivity_margin=0.05)
    stop = threading.Event()
    t = run_in_thread(r.list_and_watch, stop)
    first = lw.wait_watches(1)
    lw.wait_watches(2)
    stop.set()
    t.join(5)
    assert first.stopped.is_set() and len(lw.lists) == 1


def test_resync_calls_store_resync_when_should_resync():
    class CountingStore(Store):
        def __init__(self):
            super().__init__()
            self.resyncs = threading.Semaphore(0)

        def resync(self):
            self.resyncs.release()

    s = CountingStore()
    lw = FakeLW()
    allowed = {"v": False}
    r = Reflector(lw, s, resync_period=0.01, should_resync=lambda: allowed["v"])
    stop = threading.Event()
    t = run_in_thread(r.list_and_watch, stop)
    lw.wait_watches(1)
    assert not s.resyncs.acquire(timeout=0.1)  # should_resync says no
    allowed["v"] = True
    for _ in range(3):
        assert s.resyncs.acquire(timeout=5)
    stop.set()
    t.join(5)
    assert not t.is_alive()


def test_resync_error_ends_the_watch():
    class BadResync(Store):
        def resync(self):
            raise RuntimeError("resync failed")

    lw = FakeLW()
    r = Reflector(lw, BadResync(), resync_period=0.01)
    stop = threading.Event()
    t = run_in_thread(r.list_and_watch, stop)
    w = lw.wait_watches(1)
    t.join(5)
    assert not t.is_alive() and w.stopped.is_set()
    stop.set()


def test_pagination_and_page_size_choice():
    pages = {
        None: pod_list("10", pod("a", "1"), cont="p2"),
        "p2": pod_list("10", pod("b", "1"), cont="p3"),
        "p3": pod_list("10", pod("c", "1")),
    }
    lw = FakeLW(lambda o: pages[o.continue_])
    store = Store()
    r = reflector(lw, store)
    r._list(threading.Event())
    assert sorted(store.list_keys()) == ["ns/a", "ns/b", "ns/c"]
    assert [(o.resource_version, o.limit, o.continue_) for o in lw.lists] == [
        ("0", 500, None), (None, 500, "p2"), (None, 500, "p3")]
    assert r.last_sync_resource_version() == "10"
    # the RV="0" list came back paginated (watch cache off): later relists keep paginating
    lw.lists.clear()
    r._list(threading.Event())
    assert lw.lists[0].resource_version == "10" and lw.lists[0].limit == 500


def test_explicit_page_size_and_no_limit_for_exact_rv():
    lw = FakeLW(lambda o: pod_list("10"))
    r = reflector(lw, page_size=7)
    r._list(threading.Event())
    r._list(threading.Event())
    assert [o.limit for o in lw.lists] == [7, 7]
    lw2 = FakeLW(lambda o: pod_list("10"))
    r2 = reflector(lw2)
    r2._list(threading.Event())
    r2._list(threading.Event())
    assert [(o.resource_version, o.limit) for o in lw2.lists] == [("0", 500), ("10", None)]


def test_continue_expired_on_later_page_falls_back_to_full_list():
    def list_fn(o):
        if o.continue_ is None and o.limit:
            return pod_list("10", pod("a", "1"), cont="p2")
        if o.continue_ == "p2":
            raise errors.GoneError(410, "Expired", "continue token expired")
        return pod_list("12", pod("a", "1"), pod("b", "1"), pod("c", "1"))

    lw = FakeLW(list_fn)
    store = Store()
    r = reflector(lw, store)
    r._list(threading.Event())
    assert [(o.resource_version, o.limit, o.continue_) for o in lw.lists] == [
        ("0", 500, None), (None, 500, "p2"), ("0", None, None)]
    assert len(store.list()) == 3 and r.last_sync_resource_version() == "12"


def test_expired_on_first_page_is_an_error_for_the_pager():
    from informers.pager import ListPager

    def fn(o):
        raise errors.GoneError("expired")

    with pytest.raises(errors.GoneError):
        ListPager(fn).list(ListWatch_options())


def ListWatch_options():
    from apis.watch import ListOptions

    return ListOptions(resource_version="5")


def test_list_watch_from_resource_applies_selectors_and_tweak():
    from apis.watch import ListOptions

    seen = []

    class RC:
        def list(self, options):
            seen.append(("list", options))
            return pod_list("1")

        def watch(self, options):
            seen.append(("watch", options))
            return FakeWatch()

    def tweak(o):
        o.limit = 3

    lw = ListWatch.from_resource(RC(), label_selector="app=x", field_selector="spec.nodeName=n1", tweak_list_options=tweak)
    original = ListOptions(resource_version="0")
    lw.list(original)
    lw.watch(ListOptions(resource_version="1"))
    assert original.label_selector is None  # callers' options are never mutated
    for _, o in seen:
        assert o.label_selector == "app=x" and o.field_selector == "spec.nodeName=n1" and o.limit == 3
    lw2 = ListWatch.from_resource(RC(), tweak_list_options=lambda o: ListOptions(label_selector="new=1"))
    lw2.list(ListOptions())
    assert seen[-1][1].label_selector == "new=1"
