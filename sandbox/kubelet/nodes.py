"""The nodes the simulated kubelets run: registration, the Ready condition and addresses, shaped like a kubelet's
node status."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.errors import ApiError, is_already_exists, is_conflict
from apis.fake.tracker.validation import is_dns1123_subdomain
from apis.logs import get_logger
from apis.resources import NODES
from sandbox.tracker_api import TrackerAPI

__all__ = ["SimulatedNodes", "KUBELET_VERSION", "node_names_in"]

log = get_logger(__name__)

KUBELET_VERSION = "v1.30.0-sandbox"
_MAX_CONFLICT_RETRIES = 10
_MAX_DEPTH = 12


def node_names_in(obj: Mapping[str, Any]) -> list[str]:
    """Every ``nodeName`` string in ``obj``'s spec (a Dataset's, a worker template's …), in order, each once."""
    names: list[str] = []

    def walk(value: object, depth: int) -> None:
        if depth > _MAX_DEPTH:
            return
        if isinstance(value, Mapping):
            node = value.get("nodeName")
            if isinstance(node, str) and node and node not in names:
                names.append(node)
            for item in value.values():
                walk(item, depth + 1)
        elif isinstance(value, list):
            for item in value:
                walk(item, depth + 1)

    walk(obj.get("spec") or {}, 0)
    return names


class SimulatedNodes:
    """Registers nodes and sets their readiness through the tracker; thread-safe."""

    def __init__(self, tracker: TrackerAPI, auto_register: bool = True) -> None:
        self.tracker = tracker
        self.auto_register = auto_register
        self._lock = threading.Lock()
        self._ips: dict[str, str] = {}
        self._next_ip = itertools.count()

    def add(self, name: str, ready: bool = True) -> dict[str, Any]:
        """Register a node (or set the readiness of an existing one); returns the stored node."""
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
            },
            "spec": {},
        }
        try:
            self.tracker.create(NODES, node)
        except ApiError as err:
            if not is_already_exists(err):
                raise
        return self.set_ready(name, ready)

    def register_named(self, obj: Mapping[str, Any]) -> None:
        """Lenient nodes: register (Ready) every node ``obj`` names that does not exist yet; a name that cannot be a
        node is left alone."""
        for name in node_names_in(obj):
            if self.tracker.peek(NODES, "", name) is None and not is_dns1123_subdomain(name):
                log.info("sandbox kubelet registering node named by an object", key=name,
                         object=f"{meta.namespace(obj)}/{meta.name(obj)}")
                self.add(name)

    def set_ready(self, name: str, ready: bool) -> dict[str, Any]:
        """Set the node's Ready condition (status subresource); raises NotFoundError for an unknown node."""
        for _ in range(_MAX_CONFLICT_RETRIES):
            node = self.tracker.get(NODES, "", name)
            updated = dict(node)
            updated["status"] = self._status(name, node.get("status") or {}, ready)
            try:
                return self.tracker.update(NODES, updated, subresource="status")
            except ApiError as err:
                if not is_conflict(err):
                    raise
        raise RuntimeError(f"node {name}: too many conflicts setting readiness")

    def ip(self, name: str) -> str:
        """The node's InternalIP (stable per name while the node exists)."""
        with self._lock:
            if name not in self._ips:
                n = next(self._next_ip)
                self._ips[name] = f"192.168.{n // 250 % 256}.{n % 250 + 2}"
            return self._ips[name]

    def forget(self, name: str) -> None:
        """Drop what is kept about a node that was deleted (its address)."""
        with self._lock:
            self._ips.pop(name, None)

    def ready(self, name: str) -> bool | None:
        """The node's readiness; None when it does not exist (and is not auto-registered)."""
        node = self.tracker.peek(NODES, "", name)
        if node is None:
            if not self.auto_register:
                return None
            log.info("sandbox kubelet registering node named by a pod", key=name)
            node = self.add(name)
        for cond in (node.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "Ready":
                return bool(cond.get("status") == "True")
        return False

    def _status(self, name: str, old: Mapping[str, Any], ready: bool) -> dict[str, Any]:
        now = meta.now_rfc3339()
        status_text = "True" if ready else "False"
        previous = next((c for c in old.get("conditions") or [] if c.get("type") == "Ready"), None)
        since = previous.get("lastTransitionTime", now) if previous and previous.get("status") == status_text else now
        capacity = {"cpu": "8", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}
        return {
            **old,
            "conditions": [
                {
                    "type": "Ready",
                    "status": status_text,
                    "reason": "KubeletReady" if ready else "KubeletNotReady",
                    "message": "kubelet is posting ready status" if ready else "sandbox: node set NotReady",
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": since,
                }
            ],
            "addresses": [{"type": "InternalIP", "address": self.ip(name)}, {"type": "Hostname", "address": name}],
            "capacity": capacity,
            "allocatable": capacity,
            "nodeInfo": {
                "kubeletVersion": KUBELET_VERSION,
                "containerRuntimeVersion": "sandbox://1.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        }
