"""``RunningLC``: a whole ``LocalController`` in this process (worker API on a free port, database and rootfs under a
temporary directory), connected to a GM written in the test (``FakeGM``) or to any address; ``lc_resource``: what
an LC (in this process or another) holds in its database; ``RecordingManager``: a manager that records the worker
reports it is given (for ``delivery.WorkerReports`` on its own)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from localcontroller.app import LocalController
from localcontroller.config import LCConfig
from localcontroller.store import Store
from localcontroller.worker import WorkerMessage

from .edgepeers import FakeGM
from .procs import http_get
from .wait import wait_for

__all__ = ["RecordingManager", "RunningLC", "lc_resource"]


class RecordingManager:
    """A manager of ``kind`` whose ``messages`` are the worker reports it was given, in order."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.messages: list[WorkerMessage] = []

    def add_worker_message(self, message: WorkerMessage) -> None:
        self.messages.append(message)


class RunningLC:
    """Node ``edge-1``, rootfs ``<tmp>/rootfs`` (with ``data/``), dataset check period 0.2 s; ``close()`` stops it
    and returns its exit code."""

    def __init__(self, tmp: Path, gm: FakeGM | None, db: Path | None = None, gm_address: str = "") -> None:
        self.rootfs = tmp / "rootfs"
        (self.rootfs / "data").mkdir(parents=True, exist_ok=True)
        cfg = LCConfig(gm_url=f"ws://{gm.address if gm else gm_address}/", node_name="edge-1",
                       rootfs=str(self.rootfs), bind_host="127.0.0.1", bind_port=0,
                       health_probe_host="127.0.0.1", health_probe_port=0,
                       db_path=str(db or tmp / "lc.db"), dataset_check_period=0.2)
        self.lc = LocalController(cfg, CollectorRegistry())
        self.stop = threading.Event()
        self.code: int | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="running-lc", daemon=True)
        self.thread.start()
        wait_for("the worker API", lambda: self.lc.server._httpd is not None)

    def _run(self) -> None:
        try:
            self.code = self.lc.run(self.stop)
        except BaseException as exc:  # kept for close(), which raises it in the test's thread
            self.error = exc

    def wait_connected(self) -> None:
        wait_for("connected to the GM", lambda: http_get(self.url + "/readyz")[0] == 200)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.lc.server.port}"

    def close(self) -> int:
        self.stop.set()
        self.thread.join(15)
        assert not self.thread.is_alive(), "the LC did not stop within 15 s"
        if self.error is not None:
            raise AssertionError("the LC's run() raised") from self.error
        assert self.code is not None
        return self.code


def lc_resource(rootfs: Path, kind: str, namespace: str, name: str) -> Any:
    """The object a running ``sedna-lc`` with this rootfs (and the default ``--db``) holds in its database, as the
    GM sent it; ``None`` when it holds none."""
    path = rootfs / "var/lib/sedna/database.db"
    if not path.exists():
        return None
    store = Store(str(path))
    try:
        return store.get_resource(kind.lower(), namespace, name)
    finally:
        store.close()
