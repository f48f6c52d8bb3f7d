"""LC → Dataset: ``{"numberOfSamples": N}`` → ``status.numberOfSamples`` and ``status.updateTime`` (Go Sedna's
``dataset/upstream.go``), written through the status subresource with conflict retry, touching only those fields."""

from __future__ import annotations

from apis import errors, meta
from apis.client import ClientsetBase
from globalmanager.runtime.edge import InvalidReport, UpstreamMessage
from globalmanager.runtime.status import update_status
from informers import Lister

__all__ = ["apply_report", "number_of_samples"]


def number_of_samples(message: UpstreamMessage) -> int:
    value = message.content.get("numberOfSamples")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidReport(f"numberOfSamples must be a non-negative integer, got {value!r}")
    return value


def apply_report(clientset: ClientsetBase, lister: Lister, message: UpstreamMessage) -> bool:
    """Write the report onto the Dataset; False when the Dataset is gone."""
    count = number_of_samples(message)
    try:
        dataset = lister.namespaced(message.namespace).get(message.name)
    except errors.NotFoundError:
        return False
    now = meta.now_rfc3339()

    def mutate(obj: dict) -> bool:
        status = obj.get("status")
        if not isinstance(status, dict):
            status = obj["status"] = {}
        status["numberOfSamples"] = count
        status["updateTime"] = now
        return True

    client = clientset.sedna_v1alpha1().datasets(message.namespace)
    return update_status(client, dataset, mutate) is not None
