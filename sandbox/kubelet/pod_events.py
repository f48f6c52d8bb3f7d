"""The Events a scheduler and a kubelet write about a pod, with kube's reasons, types and messages (release 1.30):
``Scheduled`` and ``FailedScheduling`` (``default-scheduler``), ``Pulled``, ``Created``, ``Started``, ``BackOff``
and ``Killing`` (``kubelet``, with the node as ``source.host`` and the container as ``involvedObject.fieldPath``).
What ``kubectl describe pod`` then lists."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta
from sandbox.events import record_event
from sandbox.tracker_api import TrackerAPI

__all__ = ["PodEvents"]

SCHEDULER = "default-scheduler"
KUBELET = "kubelet"


def _containers(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [c for c in (pod.get("spec") or {}).get("containers") or [] if isinstance(c, Mapping)]


def _field_path(container: Mapping[str, Any]) -> str:
    return f"spec.containers{{{container.get('name', '')}}}"


class PodEvents:
    """Records the lifecycle Events of pods through ``tracker`` (a failed write is dropped, as the recorder drops
    it)."""

    def __init__(self, tracker: TrackerAPI) -> None:
        self.tracker = tracker

    def _record(self, pod: Mapping[str, Any], event_type: str, reason: str, message: str, component: str,
                host: str = "", field_path: str = "") -> None:
        subject = {"apiVersion": "v1", "kind": "Pod", "metadata": pod.get("metadata") or {}}
        record_event(self.tracker, subject, event_type, reason, message, component, host=host, field_path=field_path)

    def scheduled(self, pod: Mapping[str, Any], node: str) -> None:
        name = f"{meta.namespace(pod)}/{meta.name(pod)}"
        self._record(pod, "Normal", "Scheduled", f"Successfully assigned {name} to {node}", SCHEDULER)

    def failed_scheduling(self, pod: Mapping[str, Any], node: str, nodes_known: int) -> None:
        """The pod is bound to a node that does not exist (strict nodes): it stays Pending, as on a cluster."""
        self._record(pod, "Warning", "FailedScheduling",
                     f'0/{nodes_known} nodes are available: pod is bound to node "{node}", which does not exist.',
                     SCHEDULER)

    def started(self, pod: Mapping[str, Any], node: str) -> None:
        """Each container's image found, container created and started."""
        for container in _containers(pod):
            name, path = container.get("name", ""), _field_path(container)
            image = container.get("image", "")
            self._record(pod, "Normal", "Pulled", f'Container image "{image}" already present on machine', KUBELET,
                         node, path)
            self._record(pod, "Normal", "Created", f"Created container {name}", KUBELET, node, path)
            self._record(pod, "Normal", "Started", f"Started container {name}", KUBELET, node, path)

    def back_off(self, pod: Mapping[str, Any], node: str) -> None:
        for container in _containers(pod):
            what = f"{meta.name(pod)}_{meta.namespace(pod)}({meta.uid(pod)})"
            self._record(pod, "Warning", "BackOff",
                         f"Back-off restarting failed container {container.get('name', '')} in pod {what}",
                         KUBELET, node, _field_path(container))

    def killing(self, pod: Mapping[str, Any], node: str) -> None:
        for container in _containers(pod):
            self._record(pod, "Normal", "Killing", f"Stopping container {container.get('name', '')}", KUBELET, node,
                         _field_path(container))
