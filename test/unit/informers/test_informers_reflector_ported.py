"""More ports of client-go tools/cache reflector_test.go (release-1.32) and regression tests for review findings:
dict-subclass watch objects, list errors reaching the handler as API errors, stop during a LIST, resync errors."""

from __future__ import annotations

import random
import threading
import time

from informer_test_helpers import FakeClock, FakeWatch, pod, status
from testkit import wait_for
from testkit.logs import capture_library_logs

from apis import errors
from informers import ListWatch, Reflector, SharedIndexInformer, Store, default_watch_error_handler
from informers.backoff import Backoff
from informers.pager import ListPager, ListStoppedError
from informers.reflector import VeryShortWatchError, WatchSupervisor

BOUND = 10.0  # generous bound for every blocking wait: a broken test fails instead of hanging


def pod_list(rv: str, *items, cont: str = "") -> dict:
    md = {"resourceVersion": rv}
    if cont:
        md["continue"] = cont
    return {"kind": "PodList", "metadata": md, "items": list(items)}


def fast_reflector(lw, store, clock=None, **kw) -> Reflector:
    clock = clock or FakeClock()
    return Reflector(lw, store, clock=clock, backoff=Backoff(clock=clock, rng=random.Random(1)),
                     rng=random.Random(2), **kw)


def run_in_thread(fn, *args) -> threading.Thread:
    t = threading.Thread(target=fn, args=args, daemon=True)
    t.start()
    return t


def store_state(store) -> dict[str, str]:
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in store.list()}


# -- bug 1: objects that are dict subclasses ---------------------------------------------------------------------------
class View(dict):
    """A dict subclass, as a typed view or a custom decoder may produce."""


def test_watch_events_with_dict_subclass_objects_are_applied():
    watches: list[FakeWatch] = []

    def watch_fn(options):
        watches.append(FakeWatch())
        return watches[-1]

    store = Store()
    r = fast_reflector(ListWatch(lambda o: pod_list("1"), watch_fn), store)
    stop = threading.Event()
    t = run_in_thread(r.list_and_watch, stop)
    wait_for("the first watch", lambda: watches, timeout=BOUND, interval=0.005)
    watches[0].add(View(pod("a", "2")))
    watches[0].modify(View(pod("a", "3")))
    watches[0].bookmark("4")
    watches[0].close()
    wait_for("the re-watch", lambda: len(watches) >= 2, timeout=BOUND, interval=0.005)
    stop.set()
    t.join(BOUND)
    assert not t.is_alive()
    assert store_state(store) == {"a": "3"} and type(store.list()[0]) is View
    assert r.last_sync_resource_version() == "4"


# -- bug 3: list errors keep their API error identity (Go wraps with %w) -------------------------------------------------
def test_shared_informer_error_handling_list_error_keeps_its_api_error():
    """Port of TestSharedInformerErrorHandling, with the error kind checked by the apis.errors predicates."""
    denied = errors.ForbiddenError("pods is forbidden: Access Denied")
    lw = ListWatch(lambda o: (_ for _ in ()).throw(denied), lambda o: FakeWatch())
    clock = FakeClock()
    inf = SharedIndexInformer(lw, 1.0, reflector_options={"clock": clock, "backoff": Backoff(clock=clock)})
    received: list[BaseException] = []
    got_one = threading.Event()

    def handler(reflector, err):
        received.append(err)
        got_one.set()

    inf.set_watch_error_handler(handler)
    stop = threading.Event()
    t = run_in_thread(inf.run, stop)
    assert got_one.wait(BOUND), "the watch error handler was never called"
    stop.set()
    t.join(BOUND)
    assert not t.is_alive()
    err = received[0]
    assert "Access Denied" in str(err)
    assert errors.is_forbidden(err) and isinstance(err, errors.ForbiddenError) and err.status == 403
    assert any("failed to list" in note for note in getattr(err, "__notes__", ()))
    assert not inf.has_synced()


def test_default_handler_treats_an_expired_list_error_as_expired():
    gone = errors.GoneError(410, "Expired", "too old resource version")
    r = fast_reflector(ListWatch(lambda o: (_ for _ in ()).throw(gone), lambda o: FakeWatch()), Store())
    try:
        r.list_and_watch(threading.Event())
    except errors.GoneError as e:
        raised = e
    else:
        raise AssertionError("list_and_watch did not raise")
    assert raised is gone and errors.is_expired_or_gone(raised)
    with capture_library_logs() as logs:
        default_watch_error_handler(r, raised)
    assert [(e["event"], e["log_level"]) for e in logs] == [("watch closed", "debug")]
    assert "failed to list" in logs[0]["context"]


# -- bug 4: a stop interrupts a LIST in progress --------------------------------------------------------------------------
class BlockingList:
    """A list call that blocks until released (bounded), like a hung API server."""

    def __init__(self, result):
        self.entered = threading.Event()
        self.release = threading.Event()
        self.finished = threading.Event()
        self.result = result
        self.calls = 0

    def __call__(self, options):
        self.calls += 1
        self.entered.set()
        self.release.wait(BOUND)
        self.finished.set()
        return self.result


def test_stop_interrupts_a_list_in_progress_and_discards_its_result():
    blocking = BlockingList(pod_list("7", pod("a", "7")))
    watch_calls = []
    store = Store()
    r = fast_reflector(ListWatch(blocking, lambda o: watch_calls.append(o) or FakeWatch()), store)
    stop = threading.Event()
    t = run_in_thread(r.run, stop)
    assert blocking.entered.wait(BOUND)
    stop.set()
    t.join(BOUND / 2)  # the list is still blocked: run must not wait for it
    assert not t.is_alive()
    blocking.release.set()
    assert blocking.finished.wait(BOUND)
    # the list worker left behind is the last thread that could touch the store: once it ended, a (wrong) late
    # replace would have shown
    for worker in [t for t in threading.enumerate() if t.name == f"reflector-list-{r.name}"]:
        worker.join(BOUND)
        assert not worker.is_alive()
    assert store.list() == [] and r.last_sync_resource_version() == "" and watch_calls == []


def test_informer_run_returns_when_stopped_during_its_first_list():
    blocking = BlockingList(pod_list("1"))
    clock = FakeClock()
    inf = SharedIndexInformer(ListWatch(blocking, lambda o: FakeWatch()),
                              reflector_options={"clock": clock, "backoff": Backoff(clock=clock)})
    stop = threading.Event()
    t = run_in_thread(inf.run, stop)
    assert blocking.entered.wait(BOUND)
    stop.set()
    t.join(BOUND / 2)
    try:
        assert not t.is_alive() and inf.is_stopped() and not inf.has_synced()
    finally:
        blocking.release.set()
    assert blocking.finished.wait(BOUND)


def test_pager_checks_stop_between_pages():
    stop = threading.Event()
    pages = []

    def page_fn(options):
        pages.append(options.continue_)
        stop.set()  # stopped while the first page was being fetched
        return pod_list("10", pod("a", "1"), cont="p2")

    try:
        ListPager(page_fn).list(ListWatch_options(), stop)
    except ListStoppedError as e:
        assert "p2" in str(e)
    else:
        raise AssertionError("the pager went on after stop")
    assert pages == [None]


def ListWatch_options():
    from apis.watch import ListOptions

    return ListOptions(resource_version="0")


# -- bug 6: a resync error never leaves a watch without a supervisor ------------------------------------------------------
class GatedClock:
    """Real time, but a backoff sleep blocks until the test opens the gate (bounded)."""

    def __init__(self):
        self.gate = threading.Event()
        self.sleeps = 0

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds, stop_event) -> bool:
        self.sleeps += 1
        self.gate.wait(BOUND)
        return stop_event.is_set()


def test_resync_error_during_429_backoff_ends_list_and_watch():
    resync_failed = threading.Event()
    resyncs = []

    class BadResync(Store):
        def resync(self):
            resyncs.append(1)
            resync_failed.set()
            raise RuntimeError("resync failed")

    watches = []

    def watch_fn(options):
        watches.append(options)
        if len(watches) == 1:
            raise errors.TooManyRequestsError("slow down")
        return FakeWatch()  # a watch nobody would ever stop without a supervisor

    clock = GatedClock()
    r = Reflector(ListWatch(lambda o: pod_list("1"), watch_fn), BadResync(), resync_period=0.02, clock=clock,
                  backoff=Backoff(clock=clock))
    stop = threading.Event()
    t = run_in_thread(r.list_and_watch, stop)
    assert resync_failed.wait(BOUND)  # fails while list_and_watch is backing off after the 429
    clock.gate.set()
    t.join(BOUND)
    alive = t.is_alive()
    stop.set()
    t.join(BOUND)
    assert not alive, "list_and_watch kept running after the resync error"
    assert len(watches) == 1 and resyncs == [1]


def test_supervisor_stops_a_new_watch_once_a_resync_failed():
    r = fast_reflector(ListWatch(lambda o: pod_list("1"), lambda o: FakeWatch()), Store())
    supervisor = WatchSupervisor(r, threading.Event())
    supervisor.resync_error = RuntimeError("resync failed")
    w = FakeWatch()
    supervisor.set_watch(w, 300)
    assert w.stopped.is_set()


def test_reflector_resync():
    """Port of TestReflectorResync: the resync error ends the watch, ListAndWatch returns normally."""
    iterations = []

    class FailingOnSecondResync(Store):
        def resync(self):
            iterations.append(1)
            if len(iterations) == 2:
                raise RuntimeError("expected resync reached")

    r = Reflector(ListWatch(lambda o: pod_list("0"), lambda o: FakeWatch()), FailingOnSecondResync(),
                  resync_period=0.001)
    done = threading.Event()
    result = {}

    def call():
        result["value"] = r.list_and_watch(threading.Event())
        done.set()

    run_in_thread(call)
    assert done.wait(BOUND)
    assert result["value"] is None  # the resync error is not propagated
    # no resync may happen after the failing one: the watch supervisor (the thread that resyncs) has ended
    assert [t for t in r._threads if t.is_alive()] == []
    assert len(iterations) == 2


# -- TestReflectorWatchStoppedBefore / After ----------------------------------------------------------------------------
def test_reflector_watch_stopped_before():
    def never(options):
        raise AssertionError("called unexpectedly")

    stop = threading.Event()
    stop.set()
    r = fast_reflector(ListWatch(never, never), Store())
    assert r._watch_loop(stop, WatchSupervisor(r, stop)) is None


def test_reflector_watch_stopped_after():
    stop = threading.Event()
    watchers: list[FakeWatch] = []

    def watch_fn(options):
        threading.Timer(0.01, stop.set).start()  # stopped after the watch has started
        watchers.append(FakeWatch())  # never sends anything
        return watchers[-1]

    def never(options):
        raise AssertionError("list called unexpectedly")

    r = fast_reflector(ListWatch(never, watch_fn), Store())
    supervisor = WatchSupervisor(r, stop)
    supervisor.start()
    try:
        assert r._watch_loop(stop, supervisor) is None
    finally:
        supervisor.cancel()
        supervisor.join(BOUND)
    assert len(watchers) == 1 and watchers[0].stopped.is_set()


# -- TestReflectorListAndWatchWithErrors, through run() -----------------------------------------------------------------
def test_reflector_list_and_watch_with_errors_carries_the_rv_over_failures():
    list_error = RuntimeError("a list error")
    watch_error = RuntimeError("a watch error")
    gone = status(410, "Expired", "too old resource version")
    # (expected RV asked for, list answer or error); the store must hold exactly the list's items before each list
    lists = [
        ("0", pod_list("1")),
        ("3", pod_list("3", pod("foo", "2"), pod("bar", "3"))),
        ("5", list_error),
        ("5", pod_list("5", pod("bar", "3"), pod("qux", "5"))),
        ("5", pod_list("5", pod("bar", "3"), pod("qux", "5"))),
        ("6", pod_list("6", pod("bar", "3"), pod("qux", "5"), pod("baz", "6"))),
    ]
    # each watch: events, then a 410 ERROR event (the watch ends, run backs off and relists), or an error at start
    watches = [
        [("add", pod("foo", "2")), ("add", pod("bar", "3"))],
        [("delete", pod("foo", "4")), ("add", pod("qux", "5"))],
        watch_error,
        [("add", pod("baz", "6"))],
    ]
    store = Store()
    seen_lists, seen_watches, mismatches = [], [], []
    last_list_done = threading.Event()

    def list_fn(options):
        expected_rv, answer = lists[len(seen_lists)]
        seen_lists.append(options.resource_version)
        if isinstance(answer, BaseException):
            raise answer
        want = {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in answer["items"]}
        if store_state(store) != want:
            mismatches.append((len(seen_lists) - 1, store_state(store), want))
        if len(seen_lists) == len(lists):
            last_list_done.set()
        return answer

    def watch_fn(options):
        script = watches[len(seen_watches)] if len(seen_watches) < len(watches) else []
        seen_watches.append(options.resource_version)
        if isinstance(script, BaseException):
            raise script
        w = FakeWatch()
        for kind, obj in script:
            getattr(w, kind)(obj)
        if len(seen_watches) <= len(watches):
            w.error(gone)
        return w

    handled = []
    r = fast_reflector(ListWatch(list_fn, watch_fn), store, watch_error_handler=lambda refl, e: handled.append(e))
    stop = threading.Event()
    t = run_in_thread(r.run, stop)
    assert last_list_done.wait(BOUND)
    wait_for("five watches", lambda: len(seen_watches) >= 5, timeout=BOUND, interval=0.005)
    stop.set()
    t.join(BOUND)
    assert not t.is_alive()
    assert mismatches == []
    assert seen_lists == [rv for rv, _ in lists]
    assert seen_watches == ["1", "3", "5", "5", "6"]
    assert handled == [list_error, watch_error]  # the very objects raised, like errors.Is
    assert store_state(store) == {"bar": "3", "qux": "5", "baz": "6"}


# -- TestReflectorReplacesStoreOnUnsafeDelete -----------------------------------------------------------------------------
def test_reflector_replaces_store_on_unsafe_delete():
    pods = [pod("foo-1", "1"), pod("foo-2", "2"), pod("foo-3", "3")]
    answers = [pod_list("3", *pods), pod_list("5", *pods)]
    corrupt = pod("foo", "4")
    seen_lists = []

    def list_fn(options):
        seen_lists.append(options.resource_version)
        return answers[min(len(seen_lists), len(answers)) - 1]

    first = threading.Event()

    def watch_fn(options):
        w = FakeWatch()
        if not first.is_set():
            first.set()
            w.add(corrupt)
            # the object became corrupt and was unsafe-deleted: the watch sends an error, the RV moved on to 5
            w.error(status(500, "StoreReadError",
                           "failed to prepare current and previous objects: corrupt object has been deleted"))
        return w

    checks = []

    class Hooked(Store):
        def replace(self, items, resource_version=""):
            if resource_version == "5":
                checks.append(("before", self.get_by_key("ns/foo")[1], self.get_by_key("ns/foo-1")[1]))
            super().replace(items, resource_version)
            if resource_version == "5":
                checks.append(("after", self.get_by_key("ns/foo")[1], self.get_by_key("ns/foo-1")[1]))

    store = Hooked()
    r = fast_reflector(ListWatch(list_fn, watch_fn), store)
    stop = threading.Event()
    t = run_in_thread(r.run, stop)
    wait_for("the relist at RV 5", lambda: r.last_sync_resource_version() == "5", timeout=BOUND, interval=0.005)
    stop.set()
    t.join(BOUND)
    assert not t.is_alive()
    assert r.last_sync_resource_version() == "5"
    assert seen_lists[:2] == ["0", "4"]  # relisted at the RV of the last event seen
    assert checks == [("before", True, True), ("after", False, True)]
    assert sorted(store.list_keys()) == ["ns/foo-1", "ns/foo-2", "ns/foo-3"]


def test_only_an_empty_watch_closing_within_a_second_is_very_short():
    clock = FakeClock()
    r = fast_reflector(ListWatch(lambda o: pod_list("1"), lambda o: FakeWatch()), Store(), clock=clock)

    def closed_watch(*events):
        w = FakeWatch()
        for obj in events:
            w.add(obj)
        w.close()
        return w

    def handle(w, started):
        return r._handle_watch(w, started, 300, threading.Event(), WatchSupervisor(r, threading.Event()))

    assert isinstance(handle(closed_watch(), clock.now()), VeryShortWatchError)
    assert handle(closed_watch(pod("a", "2")), clock.now()) is None  # delivered something
    assert handle(closed_watch(), clock.now() - 1.0) is None  # lasted a second


def test_resource_version_updater_is_told_only_about_watch_events():
    class RVStore(Store):
        def __init__(self):
            super().__init__()
            self.updates = []

        def update_resource_version(self, rv):
            self.updates.append(rv)

    watches: list[FakeWatch] = []

    def watch_fn(options):
        watches.append(FakeWatch())
        return watches[-1]

    store = RVStore()
    r = fast_reflector(ListWatch(lambda o: pod_list("5", pod("a", "5")), watch_fn), store)
    listed = r._list(threading.Event())
    assert store.updates == [] and r.last_sync_resource_version() == "5"  # client-go: not after a LIST
    assert listed is True
    stop = threading.Event()
    t = run_in_thread(r.list_and_watch, stop)
    wait_for("the first watch", lambda: watches, timeout=BOUND, interval=0.005)
    watches[0].add(pod("b", "6"))
    watches[0].bookmark("7")
    wait_for("two RV updates", lambda: len(store.updates) >= 2, timeout=BOUND, interval=0.005)
    stop.set()
    t.join(BOUND)
    assert not t.is_alive() and store.updates == ["6", "7"]
