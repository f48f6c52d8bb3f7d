"""Fixtures of the worker simulator's unit tests: a FakeClientset, an LC stand-in and a started simulator; and a
guard: no test may leave a log call that failed (``--- Logging error ---``, e.g. a worker thread writing to a test's
closed stream) or an exception that ended a thread (issue 27 item 14). The hooks are installed for the whole session
(at collection) but record only once the first worker simulator test started: what another directory's test left is
not ours to blame (pytest's own thread-exception warning reports it there)."""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit.workers import RecordingLC

from apis.fake import FakeClientset
from workersim import LCClient, WorkerSimulator

# what went wrong outside the test's own code, from any thread, since the last test ended (installed for the whole
# session, so that a failure between two tests is seen by the next one)
_failures: list[str] = []
_armed = threading.Event()  # set by the first worker simulator test's guard
_handle_error = logging.Handler.handleError
_thread_excepthook = threading.excepthook


def _record_logging_error(self: logging.Handler, record: logging.LogRecord) -> None:
    if _armed.is_set():
        _failures.append(f"logging error in thread {threading.current_thread().name}: {record.getMessage()!r}")
    _handle_error(self, record)


def _record_thread_exception(args: threading.ExceptHookArgs) -> None:
    if _armed.is_set():
        where = "".join(traceback.format_tb(args.exc_traceback)) if args.exc_traceback else ""
        _failures.append(f"thread {args.thread.name if args.thread else '?'} died: {args.exc_type.__name__}: "
                         f"{args.exc_value}\n{where}")
    _thread_excepthook(args)


logging.Handler.handleError = _record_logging_error  # type: ignore[method-assign]
threading.excepthook = _record_thread_exception


@pytest.fixture(autouse=True)
def _no_logging_error_nor_dead_thread() -> Iterator[None]:
    _armed.set()
    yield
    failures = list(_failures)
    _failures.clear()
    assert failures == [], "\n".join(failures)


@pytest.fixture
def lc() -> Iterator[RecordingLC]:
    server = RecordingLC()
    yield server
    server.close()


@pytest.fixture
def rootfs(tmp_path: Path) -> Path:
    path = tmp_path / "edge-1"
    path.mkdir()
    return path


@pytest.fixture
def cs() -> FakeClientset:
    return FakeClientset()


@pytest.fixture
def make_simulator(cs: FakeClientset, lc: RecordingLC, rootfs: Path) -> Iterator[Any]:
    """``make_simulator(**WorkerSimulator kwargs)``: started, synced, stopped after the test. Defaults: every node's LC
    is ``lc``, node ``edge-1``'s rootfs is ``rootfs``, reports are retried 3 times 10 ms apart."""
    started: list[WorkerSimulator] = []

    def make(**kwargs: Any) -> WorkerSimulator:
        kwargs.setdefault("default_lc", lc.url)
        kwargs.setdefault("rootfs", {"edge-1": rootfs})
        kwargs.setdefault("lc_client", LCClient(attempts=3, retry_wait=0.01, timeout=5))
        simulator = WorkerSimulator(kwargs.pop("clientset", cs), **kwargs).start()
        started.append(simulator)
        from testkit import wait_for

        wait_for("the simulator's first pod list", simulator.has_synced, timeout=10)
        return simulator

    yield make
    for simulator in started:
        simulator.stop()
        # nothing of a worker outlives stop(): a thread left running would log into a closed test stream
        assert simulator.worker_threads() == []


@pytest.fixture
def run_pod(cs: FakeClientset) -> Any:
    """``run_pod(pod) -> created pod``: create it and set it Running through ``pods/status``, as a kubelet would."""
    from sandbox.kubelet.status import running_status

    def run(pod: dict[str, Any]) -> dict[str, Any]:
        pods = cs.core_v1().pods(pod["metadata"]["namespace"])
        created = pods.create(pod)
        return pods.update_status({**created, "status": running_status(created, "10.244.0.2", "192.168.0.2")})

    return run


@pytest.fixture
def phase(cs: FakeClientset) -> Any:
    """``phase(pod) -> str``: the pod's current phase."""

    def get(pod: dict[str, Any]) -> str:
        meta = pod["metadata"]
        return cs.core_v1().pods(meta["namespace"]).get(meta["name"]).get("status", {}).get("phase", "")

    return get
