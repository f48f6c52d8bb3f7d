"""``SandboxAPIServer``: the server object, its HTTP connections and its start-up (CRDs, default namespaces,
the pod simulator); see the package doc for what it serves."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from apis import meta, yamlutil
from apis.errors import ApiError, is_already_exists
from apis.fake.tracker import ObjectTracker
from apis.fake.tracker.ttl import DEFAULT_EVENT_TTL
from apis.logs import get_logger
from apis.resources import CUSTOM_RESOURCE_DEFINITIONS, NAMESPACES
from apis.watch import Watch
from sandbox.faults import Faults
from sandbox.simulator import PodSimulator

from .handler import SandboxRequestHandler
from .rbac import AccessControl

__all__ = ["DEFAULT_NAMESPACES", "SANDBOX_TOKEN", "SandboxAPIServer", "load_crd_files"]

log = get_logger(__name__)

SANDBOX_TOKEN = "sandbox-token"
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
EVENT_SWEEP_INTERVAL = 1.0  # seconds between sweeps of expired Events


class _HTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer that remembers its connections so that ``stop`` can close them and join their threads."""

    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 drops the SYNs of a burst of clients (informers starting together),
    # which then stall for seconds in TCP retransmission; kube-apiserver listens with the system's maximum.
    request_queue_size = socket.SOMAXCONN

    def __init__(self, address: tuple[str, int], sandbox: SandboxAPIServer) -> None:
        self.sandbox = sandbox
        self._next_sweep = 0.0
        self._conn_lock = threading.Lock()
        self._conns: dict[threading.Thread, socket.socket] = {}
        super().__init__(address, SandboxRequestHandler)

    def service_actions(self) -> None:
        """Called by ``serve_forever`` between requests: sweep expired Events about once a second, so that they go
        (and watchers hear of it) even when nothing is written."""
        now = time.monotonic()
        if now >= self._next_sweep:
            self._next_sweep = now + EVENT_SWEEP_INTERVAL
            try:
                self.sandbox.tracker.expire_events()
            except Exception:
                log.exception("sandbox event expiry failed; retrying at the next sweep")

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread, args=(request, client_address), name="sandbox-conn", daemon=True
        )
        with self._conn_lock:
            self._conns[thread] = request
        thread.start()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._conn_lock:
                self._conns.pop(threading.current_thread(), None)

    def close_connections(self, timeout: float) -> None:
        """Shut every open connection down (wakes readers blocked on keep-alive) and join the handler threads."""
        with self._conn_lock:
            conns = list(self._conns.items())
        for _, sock in conns:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread, _ in conns:
            thread.join(timeout)


class SandboxAPIServer:
    """A Kubernetes-compatible HTTP API server over an ``ObjectTracker`` (see the module doc).

    ``crd_dirs`` (every CRD in their YAML files) and ``crds`` (CRD objects, e.g. ``apis.sedna.crds.all_crds()``) are
    registered at start. ``kubelet=True`` starts a ``PodSimulator`` on the same tracker. ``faults`` (a ``Faults``)
    may be changed while the server runs. ``watch_history`` bounds the replayable watch history and ``event_ttl``
    (seconds; None or 0: never) is how long Events live after their last write, when the server creates the
    tracker; expired Events are swept about once a second. ``namespace_lifecycle`` (default on): objects are
    created only in namespaces that exist, as kube-apiserver's NamespaceLifecycle admission plugin requires; off is
    the lenient mode (any namespace).
    ``rbac`` (default off): requests need a known bearer token and are authorized by the RBAC objects stored
    (``access``, an ``apiserver.rbac.AccessControl``); ServiceAccount tokens come from ``issue_token``.
    ``strict_nodes`` (default off): only ``nodes`` (and the simulator's default node) exist, a pod bound to another
    stays Pending; off, a pod's node is registered Ready. ``pod_start_delay``: seconds a pod spends Pending
    (ContainerCreating) unless its annotation says otherwise. ``pod_logs_dir``: ``pods/log`` serves
    ``<dir>/<namespace>/<pod>.log``.
    """

    def __init__(
        self,
        tracker: ObjectTracker | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        crd_dirs: Sequence[str | os.PathLike[str]] = (),
        crds: Sequence[Mapping[str, Any]] = (),
        kubelet: bool = True,
        faults: Faults | None = None,
        watch_history: int = 1000,
        namespace_lifecycle: bool = True,
        event_ttl: float | None = DEFAULT_EVENT_TTL,
        rbac: bool = False,
        strict_nodes: bool = False,
        nodes: Sequence[str] = (),
        pod_start_delay: float = 0.0,
        pod_logs_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if tracker is None:
            tracker = ObjectTracker(watch_history=watch_history, event_ttl=event_ttl, cluster_limits=True)
        self.tracker = tracker
        self.host = host
        self.faults = faults if faults is not None else Faults()
        self.crd_dirs = [Path(d) for d in crd_dirs]
        self.crds = [meta.deep_copy(crd) for crd in crds]
        self.stopping = threading.Event()
        # On by default, as kube-apiserver's NamespaceLifecycle admission: objects only in namespaces that exist.
        self.namespace_lifecycle = namespace_lifecycle
        self.access = AccessControl(tracker, SANDBOX_TOKEN, rbac=rbac)
        self.kubelet: Any = None
        if kubelet:
            self.kubelet = PodSimulator(tracker, strict_nodes=strict_nodes, nodes=nodes, start_delay=pod_start_delay)
        self.pod_logs_dir = Path(pod_logs_dir) if pod_logs_dir is not None else None
        self._requested_port = port
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._watch_lock = threading.Lock()
        self._watches: set[Watch] = set()

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def start(self) -> SandboxAPIServer:
        """Load CRDs, seed the default namespaces, start the simulator and listen; returns once listening."""
        if self._httpd is not None:
            raise RuntimeError("SandboxAPIServer already started")
        for crd in [*load_crd_files(self.crd_dirs), *(meta.deep_copy(crd) for crd in self.crds)]:
            self._apply_crd(crd)
        for ns in DEFAULT_NAMESPACES:
            try:
                self.tracker.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            except ApiError as err:
                if not is_already_exists(err):
                    raise
        self.access.bootstrap()
        self._httpd = _HTTPServer((self.host, self._requested_port), self)
        if self.kubelet is not None:
            self.kubelet.start()
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="sandbox-apiserver", daemon=True
        )
        self._thread.start()
        log.info("sandbox API server listening", url=self.url)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Close open watches and connections, stop the simulator, join every thread. Idempotent."""
        if self._httpd is None or self.stopping.is_set():
            return
        self.stopping.set()
        with self._watch_lock:
            watches = list(self._watches)
        for watch in watches:
            watch.stop()
        if self.kubelet is not None:
            self.kubelet.stop()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd.close_connections(timeout)
        if self._thread is not None:
            self._thread.join(timeout)
        log.info("sandbox API server stopped", url=self.url)

    def __enter__(self) -> SandboxAPIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("SandboxAPIServer is not started")
        return int(self._httpd.server_address[1])

    @property
    def server_address_text(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.server_address_text}"

    @property
    def rbac(self) -> bool:
        return self.access.rbac

    def issue_token(self, namespace: str, name: str, expiration_seconds: int = 3600) -> str:
        """A bearer token of ServiceAccount ``namespace/name`` (which must exist), as the TokenRequest API issues."""
        return self.access.issue_token(namespace, name, expiration_seconds).token

    def write_kubeconfig(
        self, path: str | os.PathLike[str], namespace: str = "default", token: str = SANDBOX_TOKEN
    ) -> Path:
        """Write a kubeconfig (context ``sandbox``, plain http) pointing at this server, authenticating with
        ``token`` (default: the admin token, allowed everything)."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "sandbox", "cluster": {"server": self.url}}],
            "users": [{"name": "sandbox", "user": {"token": token}}],
            "contexts": [
                {"name": "sandbox", "context": {"cluster": "sandbox", "user": "sandbox", "namespace": namespace}}
            ],
            "current-context": "sandbox",
            "preferences": {},
        }
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(yaml.safe_dump(config, sort_keys=False))
        return out

    # -- used by the request handler ------------------------------------------------------------------------------
    def track_watch(self, watch: Watch) -> None:
        with self._watch_lock:
            self._watches.add(watch)
        if self.stopping.is_set():  # raced with stop(): end it now
            watch.stop()

    @property
    def open_watches(self) -> int:
        """How many watch streams are being served right now."""
        with self._watch_lock:
            return len(self._watches)

    def untrack_watch(self, watch: Watch) -> None:
        with self._watch_lock:
            self._watches.discard(watch)

    def _apply_crd(self, crd: dict[str, Any]) -> None:
        name = meta.name(crd)
        try:
            self.tracker.create(CUSTOM_RESOURCE_DEFINITIONS, crd)
        except ApiError as err:
            if not is_already_exists(err):
                raise
            current = self.tracker.get(CUSTOM_RESOURCE_DEFINITIONS, "", name)
            crd.setdefault("metadata", {})["resourceVersion"] = meta.resource_version(current)
            self.tracker.update(CUSTOM_RESOURCE_DEFINITIONS, crd)
        log.info("sandbox loaded CRD", name=name)


def load_crd_files(dirs: Iterable[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """Every CustomResourceDefinition document in the ``*.yaml``/``*.yml`` files of ``dirs`` (sorted by file name).

    Other documents are skipped; a missing directory or malformed YAML raises ``ValueError`` naming the file.
    """
    crds: list[dict[str, Any]] = []
    for directory in dirs:
        d = Path(directory)
        if not d.is_dir():
            raise ValueError(f"CRD directory {d} does not exist or is not a directory")
        for file in sorted([*d.glob("*.yaml"), *d.glob("*.yml")]):
            try:
                docs = yamlutil.load_all(file.read_text())
            except (yaml.YAMLError, UnicodeDecodeError) as exc:
                raise ValueError(f"malformed YAML in {file}: {exc}") from None
            for doc in docs:
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    crds.append(doc)
                elif doc is not None:
                    log.warning("skipping a document that is not a CRD", file=str(file), kind=(doc or {}).get("kind"))
    return crds
